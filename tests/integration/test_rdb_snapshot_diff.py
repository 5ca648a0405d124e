"""RDB snapshots served over Redis' replication protocol: `redis-cli --rdb`
(REPLCONF rdb-only 1, SYNC) and `--functions-rdb` against kvrocks, the file
loaded by Debian's redis-server 7.0 and compared with a redis-server that ran
the same writes; PSYNC from an rdb-only client, plain SYNC, and the replies of
REPLCONF, SYNC and PSYNC compared with redis-server 7.0's."""
import os
import socket
import subprocess
import threading
import time

import pytest

from conftest import Differ, Kvrocks, RawClient, RealRedis, encode

REDIS_CLI = "/usr/bin/redis-cli" if os.path.exists("/usr/bin/redis-cli") else "redis-cli"
FAR_FUTURE_MS = 4102444800000  # 2100-01-01: the same absolute expiry on both servers

LIBRARY = "#!lua name=snaplib\nredis.register_function('snapf', function(keys, args) return args[1] end)"


def fill(d):
    """Every type in small and big encodings, in three databases, on both servers."""
    big = "v" * 300
    script = [
        ("SET", "int", "12345"), ("SET", "str", "hello"), ("SET", "long", "abc" * 3000),
        ("SET", "bin", b"\x00\xff\r\n".decode("latin-1") * 10), ("SET", "neg", "-7"),
        ("RPUSH", "smalllist", "a", "1", "b"), ("RPUSH", "biglist", *[big + str(i) for i in range(200)]),
        ("HSET", "smallhash", "f", "v", "n", "5"), ("HSET", "bighash", *sum([[f"f{i}", big] for i in range(150)], [])),
        ("SADD", "intset", "1", "2", "300000"), ("SADD", "smallset", "a", "b"),
        ("SADD", "bigset", *[f"m{i}" for i in range(300)]),
        ("ZADD", "smallzset", "1.5", "a", "-2", "b"), ("ZADD", "bigzset", *sum([[str(i / 3), f"m{i}"] for i in range(200)], [])),
        ("PFADD", "hll", *[f"e{i}" for i in range(50)]), ("SETBIT", "bits", "1000", "1"),
        ("GEOADD", "geo", "13.361389", "38.115556", "Palermo"),
        ("XADD", "stream", "1-1", "f", "v"), ("XADD", "stream", "2-1", "g", "w"),
        ("XGROUP", "CREATE", "stream", "grp", "0"), ("XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "stream", ">"),
        ("SET", "expiring", "x"), ("PEXPIREAT", "expiring", str(FAR_FUTURE_MS)),
        ("HSET", "expiringhash", "f", "v"), ("PEXPIREAT", "expiringhash", str(FAR_FUTURE_MS)),
        ("SELECT", "5"), ("SET", "db5key", "five"), ("LPUSH", "db5list", "x"),
        ("SELECT", "15"), ("ZADD", "db15z", "1", "one"),
        ("SELECT", "0"), ("FUNCTION", "LOAD", LIBRARY),
    ]
    for cmd in script:
        d(*cmd)


def redis_cli(port, *args):
    return subprocess.run([REDIS_CLI, "-p", str(port), *args], capture_output=True, timeout=60)


def loaded(path):
    """A redis-server 7.0 started on the RDB file at path."""
    return RealRedis(["--dir", os.path.dirname(path), "--dbfilename", os.path.basename(path)])


def read_snapshot(sock_client):
    """Reads what a SYNC or PSYNC is answered with: (the line before the payload
    or None, the RDB payload); newlines sent while the RDB is written are skipped."""
    c = sock_client
    preamble = None
    while True:
        while not c.buf:
            c._fill()
        if c.buf.startswith(b"\n"):
            c.buf = c.buf[1:]
            continue
        end = c._line_end(0)
        line, c.buf = c.buf[:end], c.buf[end + 2:]
        if line.startswith(b"$"):
            break
        assert preamble is None, line
        preamble = line
    n = int(line[1:])
    while len(c.buf) < n:
        c._fill()
    payload, c.buf = c.buf[:n], c.buf[n:]
    return preamble, payload


@pytest.fixture
def d(kvrocks_server, redis_ref):
    diff = Differ(kvrocks_server.port, redis_ref.port)
    diff.both("FUNCTION", "FLUSH")
    yield diff
    diff.both("FUNCTION", "FLUSH")
    diff.close()


def test_redis_cli_rdb_loads_into_redis_as_the_same_data(d, kvrocks_server, redis_ref, tmp_path):
    fill(d)
    path = str(tmp_path / "snap.rdb")
    out = redis_cli(kvrocks_server.port, "--rdb", path)
    assert out.returncode == 0, out.stderr
    assert b"Transfer finished with success" in out.stderr
    copy = loaded(path)
    try:
        c, ref = copy.client(), redis_ref.client()
        for db in (0, 5, 15):
            c.execute_command("SELECT", db)
            ref.execute_command("SELECT", db)
            keys = sorted(ref.keys("*"))
            assert sorted(c.keys("*")) == keys, db
            for k in keys:
                assert c.execute_command("DEBUG", "DIGEST-VALUE", k) == \
                    ref.execute_command("DEBUG", "DIGEST-VALUE", k), k
                assert c.pttl(k) == ref.pttl(k) or abs(c.pttl(k) - ref.pttl(k)) < 60000, k
        assert c.execute_command("DEBUG", "DIGEST") == ref.execute_command("DEBUG", "DIGEST")
        c.execute_command("SELECT", 0)
        ref.execute_command("SELECT", 0)
        assert c.execute_command("FUNCTION", "LIST", "WITHCODE") == ref.execute_command("FUNCTION", "LIST", "WITHCODE")
        assert c.execute_command("XINFO", "GROUPS", "stream") == ref.execute_command("XINFO", "GROUPS", "stream")
    finally:
        copy.cleanup()
    # The temporary RDB is gone once sent.
    assert not [f for f in os.listdir(kvrocks_server.dir) if f.startswith("temp-sync-")]


def test_functions_rdb_holds_the_functions_only(d, kvrocks_server, tmp_path):
    fill(d)
    path = str(tmp_path / "functions.rdb")
    out = redis_cli(kvrocks_server.port, "--functions-rdb", path)
    assert out.returncode == 0, out.stderr
    copy = loaded(path)
    try:
        c = copy.client()
        assert c.dbsize() == 0
        assert c.fcall("snapf", 0, "hi") == b"hi"
    finally:
        copy.cleanup()


def test_psync_of_an_rdb_only_client_gets_fullresync_and_the_rdb(d, kvrocks_server, tmp_path):
    fill(d)
    kv = kvrocks_server.client()
    before = kv.info("stats")
    c = RawClient(kvrocks_server.port)
    assert c.call("REPLCONF", "rdb-only", "1") == b"+OK\r\n"
    c.send_raw(encode(["PSYNC", "8de1a2b3c4d5e6f708192a3b4c5d6e7f80918273", "100"]))
    preamble, payload = read_snapshot(c)
    replid, offset = kv.info("replication")["master_replid"], kv.info("replication")["master_repl_offset"]
    assert preamble == b"+FULLRESYNC %s %d" % (replid.encode(), offset)
    assert payload.startswith(b"REDIS0010") and payload[-9:-8] == b"\xff"
    assert c.closed()  # closed once the RDB is sent, as Redis does with rdb-only replicas
    after = kv.info("stats")
    assert after["sync_full"] == before["sync_full"] + 1
    assert after["sync_partial_err"] == before["sync_partial_err"] + 1  # a replid that is not "?"
    assert after["total_net_repl_output_bytes"] >= before["total_net_repl_output_bytes"] + len(payload)
    # The payload is a valid RDB of the same keys.
    path = tmp_path / "psync.rdb"
    path.write_bytes(payload)
    copy = loaded(str(path))
    try:
        assert copy.client().execute_command("DEBUG", "DIGEST") == kv.execute_command("DEBUG", "DIGEST")
    finally:
        copy.cleanup()


def test_the_rdb_is_one_snapshot_while_writes_go_on(fresh_server, tmp_path):
    srv = fresh_server.start()
    stop = threading.Event()

    def writer():
        c = srv.client()
        i = 0
        while not stop.is_set():
            i += 1
            c.mset({"a": i, "b": i})  # one write: a snapshot holds both or neither
            c.set(f"k{i % 3000}", i)
        c.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        time.sleep(0.3)
        for n in range(3):
            path = str(tmp_path / f"live{n}.rdb")
            out = redis_cli(srv.port, "--rdb", path)
            assert out.returncode == 0, out.stderr
            copy = loaded(path)
            try:
                c = copy.client()
                assert c.get("a") is not None and c.get("a") == c.get("b")
            finally:
                copy.cleanup()
    finally:
        stop.set()
        t.join()


def test_plain_sync_gets_the_rdb_and_the_link_closes(d, kvrocks_server):
    fill(d)
    c = RawClient(kvrocks_server.port)
    c.send_raw(b"SYNC\r\n")
    preamble, payload = read_snapshot(c)
    assert preamble is None
    assert payload.startswith(b"REDIS0010")
    assert c.closed()


REFUSAL = (b"-ERR kvrocks streams no commands to replicas: it serves replicas that ask for an RDB snapshot only "
           b"(REPLCONF rdb-only 1)\r\n")


def test_a_replica_handshake_without_rdb_only_is_refused_and_the_client_stays(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    assert c.call("REPLCONF", "capa", "eof", "capa", "psync2") == b"+OK\r\n"
    assert c.call("PSYNC", "?", "-1") == REFUSAL
    assert c.call("PING") == b"+PONG\r\n"
    # A replica that announced its port falls back to SYNC when PSYNC fails.
    assert c.call("REPLCONF", "listening-port", "6380") == b"+OK\r\n"
    assert c.call("SYNC") == REFUSAL
    assert c.call("PING") == b"+PONG\r\n"
    c.close()


def test_a_redis_replica_is_refused_and_loads_nothing(d, kvrocks_server, tmp_path):
    """A Redis replica of kvrocks (as Sentinel makes an old master after promoting a
    kvrocks replica) tries PSYNC, then SYNC, and is refused each time: it must not
    load a snapshot on every reconnection."""
    fill(d)
    full_before = kvrocks_server.client().info("stats")["sync_full"]
    log = tmp_path / "replica.log"
    replica = RealRedis(["--replicaof", "127.0.0.1", str(kvrocks_server.port), "--logfile", str(log)])
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            text = log.read_text(errors="replace") if log.exists() else ""
            if text.count("kvrocks streams no commands to replicas") >= 4:  # PSYNC and SYNC, twice
                break
            time.sleep(0.2)
        assert text.count("kvrocks streams no commands to replicas") >= 4, text[-3000:]
        # Redis' replica reconnects at once after an -ERR to SYNC; the refusal waits a
        # second, so that it retries at its cron's pace, not thousands of times a second.
        received = kvrocks_server.client().info("stats")["total_connections_received"]
        start = time.time()
        time.sleep(3)
        received = kvrocks_server.client().info("stats")["total_connections_received"] - received
        assert received <= time.time() - start + 2, received
        c = replica.client()
        assert c.info("replication")["master_link_status"] == "down"
        assert c.dbsize() == 0
        assert kvrocks_server.client().info("stats")["sync_full"] == full_before
    finally:
        replica.cleanup()


@pytest.mark.parametrize("lines", [
    [("REPLCONF",), ("REPLCONF", "a"), ("REPLCONF", "listening-port", "x"), ("REPLCONF", "listening-port", "6380"),
     ("REPLCONF", "ip-address", "10.0.0.1"), ("REPLCONF", "ip-address", "x" * 300),
     ("REPLCONF", "capa", "eof", "capa", "psync2", "capa", "whatever"), ("REPLCONF", "rdb-only", "2"),
     ("REPLCONF", "rdb-only", "-1"), ("REPLCONF", "rdb-only", "x"), ("REPLCONF", "rdb-only", "0"),
     ("REPLCONF", "rdb-filter-only", "foo"), ("REPLCONF", "rdb-filter-only", "functions"),
     ("REPLCONF", "rdb-filter-only", "\"functions"), ("REPLCONF", "rdb-filter-only", ""),
     ("REPLCONF", "foo", "bar"), ("REPLCONF", "listening-port", "1", "foo", "bar"),
     ("PSYNC", "x"), ("SYNC", "x"), ("MULTI",), ("SYNC",), ("PSYNC", "?", "-1"), ("DISCARD",),
     ("PSYNC", "?", "notanumber"), ("PSYNC", "abc", "0", "FAILOVER")],
    # The filter without capa eof.
    [("REPLCONF", "rdb-filter-only", "functions"), ("SYNC",), ("PING",)],
    [("REPLCONF", "rdb-only", "1", "rdb-filter-only", "functions"), ("PSYNC", "?", "-1"), ("PING",)],
], ids=["replconf-and-errors", "filter-needs-eof", "filter-needs-eof-psync"])
def test_replies_as_redis(kvrocks_server, redis_ref, lines):
    d = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    try:
        for line in lines:
            d(*line)
    finally:
        d.close()


def test_ack_and_getack_get_no_reply_and_pending_output_refuses_sync(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    try:
        for c in (d.kv, d.ref):
            c.send_raw(encode(["REPLCONF", "ACK", "5"]) + encode(["REPLCONF", "GETACK", "*"]))
        d("PING")
        # A reply still waiting to be written: Redis refuses to start a sync.
        for c in (d.kv, d.ref):
            c.send_raw(encode(["PING"]) + encode(["SYNC"]))
        assert d.kv.read_reply() == d.ref.read_reply() == b"+PONG\r\n"
        assert d.kv.read_reply() == d.ref.read_reply() == b"-ERR SYNC and PSYNC are invalid with pending output\r\n"
    finally:
        d.close()


def test_a_replica_without_its_master_refuses_sync(kvrocks_server, redis_ref):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]  # nothing listens there once closed
    d = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    try:
        d("REPLICAOF", "127.0.0.1", str(dead_port))
        d("SYNC")
        d("PSYNC", "?", "-1")
        d("PSYNC", "abc", "0", "FAILOVER")
    finally:
        d("REPLICAOF", "NO", "ONE")
        d.close()


def test_shutdown_cancels_a_transfer_to_a_client_that_does_not_read(fresh_server):
    srv = fresh_server.start()
    kv = srv.client()
    for i in range(32):
        kv.set(f"big{i}", os.urandom(1 << 20))  # incompressible: far more than the socket buffers hold
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect(("127.0.0.1", srv.port))
    c.sendall(encode(["SYNC"]))
    deadline = time.time() + 20
    while kv.info("stats")["sync_full"] == 0 and time.time() < deadline:
        time.sleep(0.05)  # the RDB is written, its bytes on their way
    assert kv.info("stats")["sync_full"] == 1
    kv.shutdown(nosave=True)
    assert srv.proc.wait(30) == 0
    assert not [f for f in os.listdir(srv.dir) if f.startswith("temp-sync-")]
    # The transfer was cut short: fewer bytes arrived than the payload announced.
    received = b""
    c.settimeout(10)
    while True:
        try:
            chunk = c.recv(1 << 20)
        except ConnectionResetError:
            break
        if not chunk:
            break
        received += chunk
    received = received.lstrip(b"\n")
    header, body = received.split(b"\r\n", 1)
    assert header.startswith(b"$") and len(body) < int(header[1:])
    c.close()
