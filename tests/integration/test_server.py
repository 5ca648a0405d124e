"""Server and connection commands."""
import contextlib
import glob
import os
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from conftest import KVROCKS_BIN, REDIS_BIN, Kvrocks, RawClient, encode, free_port, wait_ready, wait_until


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
        r.config_set("unixsocket", "/tmp/x.sock")
    with pytest.raises(redis.ResponseError, match="Unknown option"):
        r.config_set("nosuchoption", 1)
    got = r.config_get("slowlog-*")
    assert len(got) == 2
    r.config_set("maxclients", 10000)
    multi = r.execute_command("CONFIG", "GET", "maxclients", "timeout")
    assert len(multi) in (2, 4)


def test_config_get_never_sees_a_value_half_set(kvrocks_server):
    """CONFIG SET on one worker while CONFIG GET runs on the other: every reply
    holds one whole value (a string copied while it was assigned came out torn,
    a 30000-byte reply holding the 65536-byte value's 'a's, 35 times in 1800 gets)."""
    values = [b"a" * 65536, b"b" * 30000]
    setter, getter = RawClient(kvrocks_server.port), RawClient(kvrocks_server.port)  # one on each worker
    setter.call("CONFIG", "SET", "masterauth", values[1])
    whole = {encode(["masterauth", v]) for v in values}
    sets = b"".join(encode(["CONFIG", "SET", "masterauth", v]) for v in values * 50)

    def set_in_batches():
        for _ in range(20):
            setter.send_raw(sets)
            for _ in range(100):
                setter.read_reply()

    thread = threading.Thread(target=set_in_batches)
    thread.start()
    torn = 0
    while thread.is_alive():
        getter.send_raw(encode(["CONFIG", "GET", "masterauth"]) * 20)
        torn += sum(getter.read_reply() not in whole for _ in range(20))
    thread.join()
    setter.call("CONFIG", "SET", "masterauth", "")
    setter.close()
    getter.close()
    assert torn == 0


def start_with_conf(srv, tmp_path, text):
    """Starts srv with a config file holding text; returns the file's path."""
    conf = tmp_path / "kv.conf"
    conf.write_text(text)
    srv.conf = str(conf)
    srv.start()
    return conf


@contextlib.contextmanager
def redis_with_conf(tmp_path, text):
    """redis-server running with a config file holding text (under tmp_path/ref):
    yields its port and the file's path, and stops it on leaving."""
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    conf = ref_dir / "redis.conf"
    conf.write_text(text)
    port = free_port()
    proc = subprocess.Popen([REDIS_BIN, str(conf), "--port", str(port), "--save", "", "--dir", str(ref_dir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc)
        yield port, conf
    finally:
        proc.terminate()
        proc.wait()


def test_config_rewrite(fresh_server, tmp_path):
    srv = fresh_server
    conf = start_with_conf(srv, tmp_path, "# my comment\nmaxclients 100\ntimeout 0\n")
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


def test_config_rewrite_writes_what_redis_writes(fresh_server, tmp_path):
    """As Redis' CONFIG REWRITE (the same steps run on redis-server): sizes in gb/mb/kb,
    a master's replicaof line blanked, options at their default values not added, added
    ones after one "Generated" comment. (kvrocks writes client-output-buffer-limit as
    one line of all three classes where Redis writes a line per non-default class.)"""
    text = "proto-max-bulk-len 512mb\nreplicaof 127.0.0.1 1\n"
    srv = fresh_server
    conf = start_with_conf(srv, tmp_path, text)
    with redis_with_conf(tmp_path, text) as (ref_port, ref_conf):
        for c in (srv.client(), redis.Redis(port=ref_port)):
            c.replicaof("no", "one")
            c.config_set("client-query-buffer-limit", "2gb")
            c.config_set("hll-sparse-max-bytes", "1536")
            c.config_set("client-output-buffer-limit", "pubsub 64mb 16mb 30")
            assert c.config_rewrite()
            assert c.config_rewrite()
        ref_lines = ref_conf.read_text().splitlines()
    lines = conf.read_text().splitlines()
    assert lines[:2] == ref_lines[:2] == ["proto-max-bulk-len 512mb", ""]
    assert lines.count("# Generated by CONFIG REWRITE") == 1
    for line in ("client-query-buffer-limit 2gb", "hll-sparse-max-bytes 1536"):
        assert line in lines and line in ref_lines
    assert "client-output-buffer-limit normal 0 0 0 slave 256mb 64mb 60 pubsub 64mb 16mb 30" in lines
    c = srv.client()
    names = {line.split()[0] for line in lines if line and not line.startswith("#")}
    assert not names & {"aclfile", "databases", "timeout", "disable-thp"}  # defaults stay out
    before = c.config_get("*")
    srv.restart()
    c = srv.client()
    assert c.config_get("*") == before
    assert c.execute_command("ROLE")[0] in ("master", b"master")
    c.replicaof("127.0.0.1", "1")
    assert c.config_rewrite()
    assert "replicaof 127.0.0.1 1" in conf.read_text().splitlines()
    c.replicaof("no", "one")


def test_config_rewrite_keeps_one_line_per_option_as_redis(fresh_server, tmp_path):
    """Redis' CONFIG REWRITE writes an option on its first line (an alias's too) and
    blanks its later lines, and writes every run of blank lines as one: the same
    steps on redis-server give the same file up to the "Generated" line."""
    text = "maxclients 100\n# c\nmaxclients 200\nslaveof 127.0.0.1 1\nreplicaof 127.0.0.1 2\n\n\ntimeout 5\n"
    srv = fresh_server
    conf = start_with_conf(srv, tmp_path, text)
    files = []
    with redis_with_conf(tmp_path, text) as (ref_port, ref_conf):
        for c in (srv.client(), redis.Redis(port=ref_port)):
            assert c.config_rewrite()
        files.append((conf.read_text(), ref_conf.read_text()))
        for c in (srv.client(), redis.Redis(port=ref_port)):
            c.replicaof("no", "one")
            assert c.config_rewrite()
        files.append((conf.read_text(), ref_conf.read_text()))
    for ours, theirs in files:
        head = ours.split("# Generated by CONFIG REWRITE")[0]
        assert head == theirs.split("# Generated by CONFIG REWRITE")[0]
    assert files[0][0].startswith("maxclients 200\n# c\n\nreplicaof 127.0.0.1 2\n\ntimeout 5\n")
    assert files[1][0].startswith("maxclients 200\n# c\n\ntimeout 5\n")


def test_config_rewrite_writes_acl_users_as_redis(fresh_server, tmp_path):
    """Redis' CONFIG REWRITE writes every ACL user (ACL LIST's lines, default included)
    over the file's user lines in order, the rest after the "Generated" line, so users
    made with ACL SETUSER survive a restart; the same steps on redis-server give the
    same file lines."""
    text = "bind 127.0.0.1\nuser bob on nopass +@all\n"
    srv = fresh_server
    conf = start_with_conf(srv, tmp_path, text)
    with redis_with_conf(tmp_path, text) as (ref_port, ref_conf):
        for c in (srv.client(), redis.Redis(port=ref_port)):
            assert c.acl_setuser("alice", enabled=True, passwords=["+pw"], keys=["*"], commands=["+@all"])
            assert c.config_rewrite()
        users = [line for line in conf.read_text().splitlines() if line.startswith("user ")]
        ref_users = [line for line in ref_conf.read_text().splitlines() if line.startswith("user ")]
        assert users == ref_users
        assert conf.read_text().splitlines()[1].startswith("user alice on #")
        before = srv.client().acl_list()
        srv.restart()
        assert srv.client().acl_list() == before


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
    assert info.startswith(b"*2\r\n*10\r\n$3\r\nget\r\n:2\r\n") and info.endswith(b"$-1\r\n")
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


def test_monitor_order_of_scripts_and_transactions_as_redis(kvrocks_server, redis_ref):
    """MONITOR lines without their timestamps and client addresses, kvrocks against
    redis-server: a script before the calls it makes ("[0 lua]"), a transaction's
    commands once they ran, EXEC after them, no administrative commands."""
    def lines(port):
        m, c = RawClient(port), RawClient(port)
        assert m.call("MONITOR") == b"+OK\r\n"
        c.call("EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])", "1", "mk", "v")
        c.call("MULTI")
        c.call("SET", "mk", "w")
        c.call("INCR", "mc")
        c.call("EXEC")
        c.call("FUNCTION", "LOAD", "REPLACE", "#!lua name=monlib\n"
               "redis.register_function('monf', function(keys) return redis.call('del', keys[1]) end)")
        c.call("FCALL", "monf", "1", "mk")
        c.call("CONFIG", "GET", "maxclients")  # administrative: never shown
        c.call("CLIENT", "KILL", "ID", "999999")
        c.call("CLIENT", "ID")  # CLIENT ID is not administrative
        c.call("PING")
        out = []
        while True:
            line = m.read_reply().decode()
            out.append(line.split(" ", 1)[1].replace(c.sock.getsockname()[0] + ":%d" % c.sock.getsockname()[1], "C"))
            if '"PING"' in line:
                break
        m.close()
        c.close()
        return out

    got = lines(kvrocks_server.port)
    assert got == lines(redis_ref.port)
    assert got[:3] == ['[0 C] "EVAL" "redis.call(\'set\', KEYS[1], ARGV[1]) return redis.call(\'get\', KEYS[1])" '
                       '"1" "mk" "v"\r\n', '[0 lua] "set" "mk" "v"\r\n', '[0 lua] "get" "mk"\r\n']


def test_select_in_redis_py(kvrocks_server):
    c = kvrocks_server.client(db=5)
    c.set("five", 5)
    assert kvrocks_server.client(db=0).get("five") is None
    assert c.get("five") == b"5"
    c.flushdb()


def latest_rocksdb_options(srv):
    """RocksDB's newest OPTIONS file: it writes one at open and after every change,
    as OPTIONS-<n>.dbtmp renamed to OPTIONS-<n> (zero-padded numbers), and deletes
    older ones: the newest complete one is read, again if it went away in between."""
    for _ in range(50):
        names = [f for f in glob.glob(os.path.join(srv.dir, "db", "OPTIONS-*")) if f.rsplit("-", 1)[1].isdigit()]
        try:
            return open(max(names)).read()
        except FileNotFoundError:
            time.sleep(0.05)
    raise AssertionError("no OPTIONS file could be read")


def subkey_cf_options(srv):
    text = latest_rocksdb_options(srv)
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


def test_rocksdb_options_set_at_run_time_reach_rocksdb():
    """CONFIG SET of the rocksdb.* options marked [runtime] in kvrocks.conf changes the
    running database (RocksDB's SetOptions / SetDBOptions), as its OPTIONS file shows;
    the others stay immutable, and a malformed compression list is refused."""
    srv = Kvrocks(extra=["--rocksdb.blob-gc-age-cutoff", "40", "--rocksdb.blob-gc-min-garbage-ratio", "0"]).start()
    try:
        c = srv.client()
        wait_blob_gc(c, 1)
        assert c.execute_command("CONFIG", "SET", "rocksdb.write-buffer-size", "16mb",
                                 "rocksdb.compression", "no:LZ4", "rocksdb.min-blob-size", "2048",
                                 "rocksdb.level0-slowdown-writes-trigger", "24",
                                 "rocksdb.max-background-jobs", "3", "rocksdb.blob-gc-age-cutoff", "0",
                                 "rocksdb.target-file-size-base", "32mb",
                                 "rocksdb.rate-limiter-bytes-per-sec", "100mb") in (b"OK", "OK")
        text = latest_rocksdb_options(srv)
        subkey = subkey_cf_options(srv)
        assert "write_buffer_size=16777216" in subkey
        assert "compression_per_level=kNoCompression:" + ":".join(["kLZ4Compression"] * 6) in subkey
        assert "min_blob_size=2048" in subkey
        assert "level0_slowdown_writes_trigger=24" in subkey
        assert "target_file_size_base=33554432" in subkey and "max_bytes_for_level_base=134217728" in subkey
        assert "max_background_jobs=3" in text
        assert "max_total_wal_size=67108864" in text
        assert subkey.count("blob_garbage_collection_age_cutoff=0.000000") == 1
        wait_blob_gc(c, 0)  # no file is old enough to collect
        assert c.config_get("rocksdb.compression") == {"rocksdb.compression": "no:LZ4"}

        # Refused before anything is set: the earlier option keeps its value too.
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("CONFIG", "SET", "rocksdb.write-buffer-size", "32mb", "rocksdb.compression", "no:lz5")
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'rocksdb.compression') - "
                                "argument must be 1 to 7 of no, snappy, lz4, zstd separated by ':'")
        assert "write_buffer_size=16777216" in subkey_cf_options(srv)
        assert c.config_get("rocksdb.write-buffer-size") == {"rocksdb.write-buffer-size": "16777216"}
        for immutable in ("rocksdb.bloom-filter-bits", "rocksdb.enable-blob-files", "rocksdb.wal-compression",
                          "rocksdb.max-open-files", "rocksdb.use-direct-reads"):
            value = c.config_get(immutable)[immutable]
            with pytest.raises(redis.ResponseError, match="can't set immutable config"):
                c.config_set(immutable, value)
        c.set("k", "v")
        assert c.get("k") == b"v"
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


def thread_stat_field(pid, field):
    """{thread name: set of values} of a numeric field of each thread's /proc stat
    (field counted from 0 after the name: 16 is the nice value, 38 the scheduling policy)."""
    values = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended since the listing (RocksDB's short-lived ones)
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        values.setdefault(name, set()).add(int(stat[stat.rindex(")") + 2:].split()[field]))
    return values


def start_and_compact(extra):
    """A server started with extra whose flush and compaction threads have run jobs."""
    srv = Kvrocks(extra=extra).start()
    c = srv.client()
    for i in range(3):
        c.mset({f"k{i}-{j}": "v" * 100 for j in range(1000)})
        c.execute_command("COMPACT")
    return srv


@pytest.mark.parametrize("policy, number", [(None, os.SCHED_OTHER), ("normal", os.SCHED_OTHER),
                                            ("batch", os.SCHED_BATCH)])
def test_sched_policy(policy, number):
    """sched-policy sets the scheduling policy of every thread: workers, RocksDB's
    flush and compaction threads, the others; normal by default. (With
    rocksdb.low-priority-compaction yes RocksDB puts its compaction threads at
    SCHED_OTHER, nice 19, when they first run a job.)"""
    srv = start_and_compact(["--rocksdb.low-priority-compaction", "no"] +
                            (["--sched-policy", policy] if policy else []))
    try:
        c = srv.client()
        policies = thread_stat_field(srv.proc.pid, 38)
        for name in ("worker-0", "worker-1", "rocksdb:high", "rocksdb:low"):
            assert name in policies
        assert set().union(*policies.values()) == {number}, policies
        assert c.config_get("sched-policy") == {"sched-policy": policy or "normal"}
        with pytest.raises(redis.ResponseError, match="can't set immutable config"):
            c.config_set("sched-policy", "normal")
    finally:
        srv.cleanup()


def test_sched_policy_refuses_unknown_policies():
    d = tempfile.mkdtemp(prefix="kvrocks-test-")
    try:
        r = subprocess.run([KVROCKS_BIN, "--port", str(free_port()), "--dir", d, "--sched-policy", "fifo"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode != 0
        assert "sched-policy" in r.stderr and "normal, batch" in r.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)


def start_with_slow_compactions():
    """A server with one worker (so every client shares it) holding 4 MB in SSTs, its
    compaction I/O then limited to 64 KB/s: a COMPACT takes about a minute. (The limit
    set at run time used to limit nothing: RocksDB's limiter kept the unlimited rate's
    tokens, so the COMPACT took 40 ms and the tests saw its block only by luck.)"""
    srv = Kvrocks(extra=["--workers", "1"]).start()
    c = srv.client()
    for i in range(4):
        c.mset({f"k{i}-{j}": os.urandom(512).hex() for j in range(1000)})
    c.execute_command("COMPACT")
    c.set("fresh", "v")
    c.config_set("rocksdb.rate-limiter-bytes-per-sec", 64 * 1024)
    return srv, c


def test_compact_waits_without_holding_up_its_worker():
    """The client of a COMPACT waits for it blocked, as on a blocking command, while
    its worker serves the others; CLIENT UNBLOCK cannot end that wait (it is for the
    server's work, not for a key)."""
    srv, c = start_with_slow_compactions()
    try:
        waiter = RawClient(srv.port)
        wid = int(waiter.call("CLIENT", "ID")[1:-2])
        waiter.send_raw(encode(["COMPACT"]))
        wait_until(lambda: c.info("clients")["blocked_clients"] == 1, 10, "COMPACT to wait")
        assert c.ping() and c.get("fresh") == b"v"
        entry = next(e for e in c.client_list() if int(e["id"]) == wid)
        assert "b" in entry["flags"] and entry["cmd"] == "compact"
        assert c.client_unblock(wid) is False and c.client_unblock(wid, error=True) is False
        c.config_set("rocksdb.rate-limiter-bytes-per-sec", 0)
        assert waiter.read_reply() == b"+OK\r\n"
        assert waiter.call("PING") == b"+PONG\r\n"
        assert c.info("clients")["blocked_clients"] == 0
        # In a transaction the worker runs it, as Redis runs blocking commands there.
        p = c.pipeline(transaction=True)
        p.execute_command("COMPACT")
        p.get("fresh")
        assert p.execute() == [b"OK", b"v"]
    finally:
        srv.cleanup()


def test_sigterm_cancels_a_compact_being_waited_for():
    srv, c = start_with_slow_compactions()
    waiter = RawClient(srv.port)
    waiter.send_raw(encode(["COMPACT"]))
    wait_until(lambda: c.info("clients")["blocked_clients"] == 1, 10, "COMPACT to wait")
    try:
        # Within 20 s (else stop() kills it), not the minute the compaction would take.
        assert srv.stop(signal.SIGTERM, timeout=20) == 0
    finally:
        srv.cleanup()


@pytest.mark.parametrize("low", [True, False])
def test_low_priority_compaction(low):
    """rocksdb.low-priority-compaction runs RocksDB's compaction threads at nice 19
    (each lowers itself when it first runs a job); workers and the flush thread keep nice 0."""
    srv = start_and_compact(["--rocksdb.low-priority-compaction", "yes" if low else "no"])
    try:
        c = srv.client()
        nices = thread_stat_field(srv.proc.pid, 16)
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
