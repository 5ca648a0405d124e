"""Server and connection commands."""
import glob
import os
import resource
import socket
import subprocess
import time

import pytest
import redis

from conftest import KVROCKS_BIN, Kvrocks, RawClient


def test_ping_echo_time(r):
    assert r.ping()
    assert r.echo("hi") == b"hi"
    secs, usecs = r.time()
    assert abs(secs - time.time()) < 5 and 0 <= usecs < 1_000_000


def test_info_sections(r):
    info = r.info()
    for field in ("redis_version", "kvrocks_version", "tcp_port", "uptime_in_seconds", "connected_clients",
                  "used_memory", "loading", "total_commands_processed", "keyspace_hits", "role",
                  "used_cpu_user", "block_cache_capacity"):
        assert field in info, field
    assert info["redis_version"] == "7.0.0"
    assert info["role"] == "master"
    assert info["loading"] == 0
    r.config_resetstat()
    assert "cmdstat_get" not in r.info("commandstats")
    r.get("x")
    assert "cmdstat_get" in r.info("commandstats")
    assert set(r.info("replication").keys()) >= {"role", "connected_slaves", "master_replid", "master_repl_offset"}
    r.set("hit", 1)
    before = r.info("stats")
    r.get("hit")
    r.get("miss")
    after = r.info("stats")
    assert after["keyspace_hits"] == before["keyspace_hits"] + 1
    assert after["keyspace_misses"] == before["keyspace_misses"] + 1


def test_config_get_set(r):
    assert r.config_get("maxclients") == {"maxclients": "10000"} or r.config_get("maxclients") == {
        b"maxclients": b"10000"}
    r.config_set("maxclients", 500)
    assert list(r.config_get("maxclients").values())[0] in ("500", b"500")
    with pytest.raises(redis.ResponseError, match="argument couldn't be parsed into an integer"):
        r.config_set("maxclients", "abc")
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        r.config_set("port", 1)
    with pytest.raises(redis.ResponseError, match="Unknown option"):
        r.config_set("nosuchoption", 1)
    got = r.config_get("slowlog-*")
    assert len(got) == 2
    r.config_set("maxclients", 10000)
    multi = r.execute_command("CONFIG", "GET", "maxclients", "timeout")
    assert len(multi) in (2, 4)


def test_config_rewrite(fresh_server, tmp_path):
    conf = tmp_path / "kv.conf"
    conf.write_text("# my comment\nmaxclients 100\ntimeout 0\n")
    srv = fresh_server
    srv.conf = str(conf)
    srv.start()
    c = srv.client()
    c.config_set("maxclients", 200)
    c.config_set("slowlog-max-len", 7)
    assert c.config_rewrite()
    text = conf.read_text()
    assert "# my comment" in text
    assert "maxclients 200" in text
    assert "slowlog-max-len 7" in text
    srv.restart()
    assert list(srv.client().config_get("maxclients").values())[0] in ("200", b"200")


def test_config_rewrite_without_file(r):
    with pytest.raises(redis.ResponseError, match="without a config file"):
        r.config_rewrite()


def test_client_commands(kvrocks_server):
    a = kvrocks_server.client()
    b = RawClient(kvrocks_server.port)
    assert a.client_setname("alpha")
    assert a.client_getname() in ("alpha", b"alpha")
    with pytest.raises(redis.ResponseError, match="Client names cannot contain spaces"):
        a.client_setname("bad name")
    my_id = a.client_id()
    b_id = int(b.call("CLIENT", "ID")[1:-2])
    listing = a.client_list()
    ids = {int(c["id"]) for c in listing}
    assert my_id in ids and b_id in ids
    assert any(c["name"] == "alpha" for c in listing)
    assert "id=%d" % my_id in str(a.execute_command("CLIENT", "INFO"))
    assert a.execute_command("CLIENT", "KILL", "ID", b_id) == 1
    assert b.closed()
    assert a.execute_command("CLIENT", "KILL", "ID", 999999) == 0
    with pytest.raises(redis.ResponseError, match="No such client"):
        a.execute_command("CLIENT", "KILL", "1.2.3.4:5")
    only = a.execute_command("CLIENT", "LIST", "ID", my_id)
    assert f"id={my_id}" in str(only) and str(only).count("id=") == 1


def test_slowlog(r):
    r.config_set("slowlog-log-slower-than", 0)
    r.slowlog_reset()
    r.set("slow", "x" * 200)
    entries = r.slowlog_get(10)
    assert any(str(e["command"]).lower().find("set slow") >= 0 for e in entries)
    assert r.slowlog_len() >= 1
    raw = r.execute_command("SLOWLOG", "GET", -1)
    assert len(raw) >= 1
    r.config_set("slowlog-log-slower-than", -1)
    r.slowlog_reset()
    r.get("x")
    assert r.slowlog_len() == 0
    r.config_set("slowlog-log-slower-than", 10000)
    with pytest.raises(redis.ResponseError, match="count should be greater than or equal to -1"):
        r.execute_command("SLOWLOG", "GET", -2)


def test_command_introspection(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    n = int(c.call("COMMAND", "COUNT")[1:-2])
    assert n >= 60
    info = c.call("COMMAND", "INFO", "get", "nosuch")
    assert info.startswith(b"*2\r\n*10\r\n$3\r\nget\r\n:2\r\n") and info.endswith(b"*-1\r\n")
    listed = c.call("COMMAND", "LIST")
    assert b"$10\r\nconfig|get\r\n" in listed  # subcommands too, as in Redis
    assert int(listed[1:listed.index(b"\r\n")]) > n
    assert c.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "incrby*") == \
        b"*2\r\n$6\r\nincrby\r\n$11\r\nincrbyfloat\r\n"
    assert c.call("COMMAND", "DOCS", "set").startswith(b"*2\r\n$3\r\nset\r\n")
    assert c.call("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert c.call("COMMAND").startswith(b"*%d\r\n" % n)
    c.close()


def test_monitor_sees_other_clients(kvrocks_server):
    m = RawClient(kvrocks_server.port)
    assert m.call("MONITOR") == b"+OK\r\n"
    c = RawClient(kvrocks_server.port)
    c.call("SET", "mon", "a b\x01")
    line = m.read_reply()
    assert line.startswith(b"+") and b'"SET" "mon" "a b\\x01"' in line
    m.close()
    c.close()


def test_select_in_redis_py(kvrocks_server):
    c = kvrocks_server.client(db=5)
    c.set("five", 5)
    assert kvrocks_server.client(db=0).get("five") is None
    assert c.get("five") == b"5"
    c.flushdb()


def subkey_cf_options(srv):
    latest = max(glob.glob(os.path.join(srv.dir, "db", "OPTIONS-*")))  # zero-padded numbers
    text = open(latest).read()
    subkey = text[text.index('[CFOptions "default"]'):]  # the subkey CF is RocksDB's default one
    return subkey[:subkey.index("[TableOptions")]


def test_blob_gc_age_cutoff_reaches_rocksdb():
    """rocksdb.blob-gc-age-cutoff (percent, 0 = off) is what RocksDB runs with; with the
    default rocksdb.blob-gc-min-garbage-ratio GC starts off (no garbage yet)."""
    for value, ratio, enabled, cutoff in (("0", "0", "false", "0.000000"), ("40", "0", "true", "0.400000"),
                                          ("40", "25", "false", "0.400000")):
        srv = Kvrocks(extra=["--rocksdb.blob-gc-age-cutoff", value,
                             "--rocksdb.blob-gc-min-garbage-ratio", ratio]).start()
        try:
            c = srv.client()
            assert c.config_get("rocksdb.blob-gc-age-cutoff") == {"rocksdb.blob-gc-age-cutoff": value}
            subkey = subkey_cf_options(srv)
            assert f"enable_blob_garbage_collection={enabled}" in subkey
            assert f"blob_garbage_collection_age_cutoff={cutoff}" in subkey
        finally:
            srv.cleanup()


def blob_gc_state(c):
    info = c.info("rocksdb")
    return info["blob_gc_enabled"], info["blob_garbage_size"], info["blob_files_size"]


def wait_blob_gc(c, enabled):
    deadline = time.time() + 15
    while blob_gc_state(c)[0] != enabled:
        assert time.time() < deadline, f"blob GC never became {enabled}: {blob_gc_state(c)}"
        time.sleep(0.1)


def test_blob_gc_runs_only_while_blob_files_hold_garbage():
    """Blob GC moves live values out of old blob files, a rewrite worth doing only to
    free space: it switches on when rocksdb.blob-gc-min-garbage-ratio percent of the
    blob bytes are garbage and off again once compaction has removed them."""
    srv = Kvrocks(extra=["--rocksdb.blob-gc-age-cutoff", "100", "--rocksdb.blob-gc-min-garbage-ratio", "20"]).start()
    try:
        c = srv.client()
        p = c.pipeline(transaction=False)
        for i in range(3000):
            p.set(f"k{i}", os.urandom(8192))
        p.execute()
        c.execute_command("COMPACT")
        time.sleep(1.5)  # several checks of the garbage share
        assert blob_gc_state(c)[:2] == (0, 0)
        # Overwriting every other value leaves the first blob file half garbage.
        for i in range(0, 3000, 2):
            p.set(f"k{i}", os.urandom(8192))
        p.execute()
        c.execute_command("COMPACT")
        wait_blob_gc(c, 1)
        # With GC on, RocksDB compacts what refers to that file by itself (the force
        # threshold follows the ratio): the live values move and the old file goes.
        wait_blob_gc(c, 0)
        enabled, garbage, size = blob_gc_state(c)
        assert garbage == 0 and size < 3000 * 8192 * 1.1
        assert all(len(c.get(f"k{i}")) == 8192 for i in range(0, 3000, 7))
        # 0 runs GC whatever the garbage, from the next check on.
        assert c.config_set("rocksdb.blob-gc-min-garbage-ratio", 0)
        wait_blob_gc(c, 1)
    finally:
        srv.cleanup()


def test_blob_gc_ratio_set_while_gc_is_on_moves_the_force_threshold():
    """With an age cutoff of 1% no blob file is old enough for GC to move, so the
    garbage stays and GC stays on; a new ratio still reaches RocksDB's force threshold."""
    srv = Kvrocks(extra=["--rocksdb.blob-gc-age-cutoff", "1", "--rocksdb.blob-gc-min-garbage-ratio", "20"]).start()
    try:
        c = srv.client()
        p = c.pipeline(transaction=False)
        for step in (1, 2):  # the second round turns half of the first blob file into garbage
            for i in range(0, 2000, step):
                p.set(f"k{i}", os.urandom(8192))
            p.execute()
            c.execute_command("COMPACT")
        wait_blob_gc(c, 1)
        assert "blob_garbage_collection_force_threshold=0.200000" in subkey_cf_options(srv)
        assert c.config_set("rocksdb.blob-gc-min-garbage-ratio", 30)
        deadline = time.time() + 15
        while "blob_garbage_collection_force_threshold=0.300000" not in subkey_cf_options(srv):
            assert time.time() < deadline, subkey_cf_options(srv)
            time.sleep(0.1)
        assert blob_gc_state(c)[0] == 1
    finally:
        srv.cleanup()


def wait_blob_compression(c, enabled):
    deadline = time.time() + 15
    while c.info("rocksdb")["blob_compression_enabled"] != enabled:
        assert time.time() < deadline, f"blob compression never became {enabled}: {c.info('rocksdb')}"
        time.sleep(0.1)


def test_blob_compression_runs_only_while_big_values_compress():
    """Blobs are compressed while a sample of the big values written shrinks by
    rocksdb.blob-compression-min-saving percent, not while it does not (random
    bytes); every value reads back either way. 0 compresses always."""
    srv = Kvrocks().start()
    try:
        c = srv.client()
        assert c.info("rocksdb")["blob_compression_enabled"] == 1
        assert c.info("rocksdb")["blob_compression_sampled_saving"] == -1
        written = {}
        p = c.pipeline(transaction=False)

        def write(prefix, make):
            for i in range(1024):
                written[f"{prefix}{i}"] = make(i)
                p.set(f"{prefix}{i}", written[f"{prefix}{i}"])
            p.execute()

        def write_until(prefix, make, enabled, saving_ok):
            # A round of samples can straddle two phases (its estimate mixes both
            # kinds of values), so a phase writes until an estimate shows only its own.
            for batch in range(8):
                write(f"{prefix}{batch}-", make)
                deadline = time.time() + 5
                while time.time() < deadline:
                    info = c.info("rocksdb")
                    saving = info["blob_compression_sampled_saving"]
                    if info["blob_compression_enabled"] == enabled and saving_ok(saving):
                        return
                    time.sleep(0.1)
            raise AssertionError(f"blob compression never became {enabled}: {c.info('rocksdb')}")

        random_bytes = lambda i: os.urandom(8192)  # noqa: E731
        text = lambda i: (b"kvrocks %d " % i) * 800  # noqa: E731
        write_until("random", random_bytes, 0, lambda saving: 0 <= saving < 5)
        c.execute_command("COMPACT")
        assert "blob_compression_type=kNoCompression" in subkey_cf_options(srv)
        write_until("text", text, 1, lambda saving: saving > 90)
        c.execute_command("COMPACT")
        assert "blob_compression_type=kLZ4Compression" in subkey_cf_options(srv)
        write_until("random-again", random_bytes, 0, lambda saving: saving < 5)
        assert c.config_set("rocksdb.blob-compression-min-saving", 0)
        wait_blob_compression(c, 1)
        write("random-at-zero", random_bytes)
        time.sleep(2.5)
        assert c.info("rocksdb")["blob_compression_enabled"] == 1
        c.execute_command("COMPACT")
        for k, v in written.items():
            p.get(k)
        assert p.execute() == list(written.values())
    finally:
        srv.cleanup()


def test_second_server_on_the_same_port_fails_to_start():
    """As with redis-server: the port is taken, the second server exits with an
    error (no shared listening port), and the first keeps every connection."""
    first = Kvrocks().start()
    second = Kvrocks()
    second.port = first.port
    try:
        first.client().set("k", "first")
        with open(second.log_path, "wb") as log:
            proc = subprocess.run([KVROCKS_BIN, "--port", str(first.port), "--dir", second.dir, "--bind", "127.0.0.1"],
                                  stdout=log, stderr=log, timeout=30)
        assert proc.returncode != 0
        assert b"Address already in use" in open(second.log_path, "rb").read()
        for _ in range(20):
            assert first.client().get("k") == b"first"
    finally:
        second.cleanup()
        first.cleanup()


def test_maxclients_fits_the_open_files_limit():
    """As redis-server does: when 'ulimit -n' cannot hold maxclients (and here
    RocksDB's open files) and the server may not raise it, both are cut to fit,
    with a warning; clients over the cut get Redis' error, and CONFIG SET
    maxclients beyond what fits is refused with Redis' text."""
    srv = Kvrocks(extra=["--maxclients", "10000"])
    srv.start(preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (600, 600)))
    socks = []
    try:
        c = srv.client()
        maxclients = int(c.config_get("maxclients")["maxclients"])
        files = int(c.config_get("rocksdb.max-open-files")["rocksdb.max-open-files"])
        soft = resource.prlimit(srv.proc.pid, resource.RLIMIT_NOFILE)[0]
        if soft >= 10000 + 4096 + 128:  # the server was allowed to raise it
            assert (maxclients, files) == (10000, 4096)
            return
        assert soft == 600, soft
        assert 1 <= maxclients and maxclients + files + 128 <= soft
        assert b"maxclients has been reduced to %d" % maxclients in open(srv.log_path, "rb").read()
        with pytest.raises(redis.ResponseError, match="not able to handle the specified number of clients, "
                                                      f"try with {maxclients}$"):
            c.config_set("maxclients", 100000)
        for _ in range(maxclients - 1):  # c holds one connection
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"PING\r\n")
            assert s.recv(64) == b"+PONG\r\n"
            socks.append(s)
        extra = socket.create_connection(("127.0.0.1", srv.port))
        assert extra.recv(64) == b"-ERR max number of clients reached\r\n"
        extra.close()
        for s in socks[: maxclients // 2]:
            s.close()
        socks = socks[maxclients // 2:]
        c.config_set("maxclients", maxclients // 2)
        assert c.ping()
    finally:
        for s in socks:
            s.close()
        srv.cleanup()


def proc_fields(path):
    """Fields of a /proc file of "Name: value" lines, as strings."""
    with open(path) as f:
        return {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in f if ":" in line)}


@pytest.mark.parametrize("disable", [True, False])
def test_disable_thp(disable):
    """disable-thp yes turns transparent huge pages off for the process (prctl), as Redis'
    disable-thp does; with no, jemalloc's memory (memtables, block cache) gets huge pages
    wherever the kernel's THP mode is not "never"."""
    srv = Kvrocks(extra=["--disable-thp", "yes" if disable else "no"]).start()
    try:
        c = srv.client()
        for i in range(20):
            c.mset({f"k{i}-{j}": "v" * 100 for j in range(5000)})
        status = proc_fields(f"/proc/{srv.proc.pid}/status")
        if "THP_enabled" in status:
            assert status["THP_enabled"] == ("0" if disable else "1")
        thp_mode = "[never]"  # a kernel without THP has no such file
        if os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"):
            with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
                thp_mode = f.read()
        if not disable and "[never]" not in thp_mode:
            huge_kb = int(proc_fields(f"/proc/{srv.proc.pid}/smaps_rollup")["AnonHugePages"].split()[0])
            assert huge_kb > 0
        assert c.config_get("disable-thp") == {"disable-thp": "yes" if disable else "no"}
    finally:
        srv.cleanup()


def thread_nices(pid):
    """{thread name: set of nice values} of a process, from /proc."""
    nices = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            stat = f.read()
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        nice = int(stat[stat.rindex(")") + 2:].split()[16])  # field 19 of stat(5)
        nices.setdefault(name, set()).add(nice)
    return nices


@pytest.mark.parametrize("low", [True, False])
def test_low_priority_compaction(low):
    """rocksdb.low-priority-compaction runs RocksDB's compaction threads at nice 19
    (each lowers itself when it first runs a job); workers and the flush thread keep nice 0."""
    srv = Kvrocks(extra=["--rocksdb.low-priority-compaction", "yes" if low else "no"]).start()
    try:
        c = srv.client()
        for i in range(3):
            c.mset({f"k{i}-{j}": "v" * 100 for j in range(1000)})
            c.execute_command("COMPACT")
        nices = thread_nices(srv.proc.pid)
        if low:
            assert 19 in nices["rocksdb:low"] and nices["rocksdb:low"] <= {0, 19}
        else:
            assert nices["rocksdb:low"] == {0}
        assert nices["rocksdb:high"] == {0}
        assert nices["worker-0"] == {0}
        assert c.config_get("rocksdb.low-priority-compaction") == {"rocksdb.low-priority-compaction":
                                                                   "yes" if low else "no"}
    finally:
        srv.cleanup()
