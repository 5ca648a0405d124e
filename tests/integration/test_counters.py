"""DBSIZE / INFO keyspace stay exact under concurrent writers, flushes and restarts."""
import random
import threading
import time

from conftest import RawClient, encode


def check_exact(srv, dbs=(0, 1)):
    for db in dbs:
        c = srv.client(db=db)
        keys = c.keys("*")
        assert c.dbsize() == len(keys), f"db{db}"
        with_ttl = sum(1 for k in keys if c.ttl(k) >= 0)
        info = c.info("keyspace").get(f"db{db}", {"keys": 0, "expires": 0})
        assert info["keys"] == len(keys)
        assert info["expires"] == with_ttl


def test_counters_exact_under_concurrency(fresh_server):
    srv = fresh_server.start()
    stop = threading.Event()
    errors = []

    def writer(seed):
        rnd = random.Random(seed)
        c = RawClient(srv.port)
        try:
            while not stop.is_set():
                k = f"k{rnd.randrange(300)}"
                op = rnd.randrange(9)
                if op == 0:
                    c.call("DEL", k, f"k{rnd.randrange(300)}")
                elif op == 1:
                    c.call("SET", k, "v", "EX", "1000")
                elif op == 2:
                    c.call("PERSIST", k)
                elif op == 3:
                    c.call("MSET", k, "1", f"k{rnd.randrange(300)}", "2")
                elif op == 4:
                    c.call("RENAME", k, f"k{rnd.randrange(300)}")
                elif op == 5:
                    c.call("MOVE", k, "1")
                elif op == 6:
                    c.call("INCR", k)
                elif op == 7:
                    n = rnd.randrange(20)
                    c.send_raw(b"".join(
                        b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nx\r\n" % (len(f"p{i}"), f"p{i}".encode())
                        for i in range(n)))
                    # Every pipelined reply is read, so no write is still in flight when the writers stop.
                    for _ in range(n):
                        c.read_reply()
                else:
                    c.call("GETDEL", k)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def flusher():
        c = srv.client()
        rnd = random.Random(7)
        while not stop.wait(0.15):
            if rnd.random() < 0.5:
                c.flushdb()
            else:
                c.execute_command("SWAPDB", 0, 1)

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(4)] + [threading.Thread(target=flusher)]
    for t in ts:
        t.start()
    stop.wait(3)
    stop.set()
    for t in ts:
        t.join()
    assert not errors
    check_exact(srv)
    srv.restart()
    check_exact(srv)
    srv.client().flushall()
    srv.restart()
    assert srv.client().dbsize() == 0
    assert srv.client().info("keyspace") == {}


def keyspace_counts(client):
    """(keys, expires) of db0 from INFO keyspace, as raw bytes."""
    info = client.call("INFO", "keyspace")
    for line in info.split(b"\r\n"):
        if line.startswith(b"db0:"):
            fields = dict(f.split(b"=") for f in line[4:].split(b","))
            return fields[b"keys"], fields[b"expires"]
    return b"0", b"0"


def test_counters_exact_for_pipelined_replacing_writes(kvrocks_server, redis_ref):
    # A plain SET does not read the key it replaces: the counters and the old
    # expire entry are settled when its batch commits. Pipelines put many
    # writes of the same keys into one batch, in every order.
    kv, ref = RawClient(kvrocks_server.port), RawClient(redis_ref.port)
    kv.call("FLUSHALL")
    ref.call("FLUSHALL")
    rnd = random.Random(11)
    for _ in range(300):
        pipeline = []
        for _ in range(rnd.randrange(1, 12)):
            k = f"k{rnd.randrange(12)}"
            pipeline.append(rnd.choice([
                ["SET", k, "v"],
                ["SET", k, "v", "EX", "1000"],
                ["SET", k, "w", "PX", str(rnd.randrange(500000, 900000))],
                ["SET", k, "x", "KEEPTTL"],
                ["SET", k, "y", "NX"],
                ["SET", k, "z", "GET"],
                ["MSET", k, "1", f"k{rnd.randrange(12)}", "2", k, "3"],
                ["DEL", k],
                ["EXPIRE", k, "2000"],
                ["PERSIST", k],
                ["HSET", k, "f", "v"],
                ["INCR", k],
            ]))
        data = b"".join(encode(args) for args in pipeline)
        kv.send_raw(data)
        ref.send_raw(data)
        for args in pipeline:
            a, b = kv.read_reply(), ref.read_reply()
            assert a == b, f"{args}: kvrocks {a!r} != redis {b!r}"
        assert kv.call("DBSIZE") == ref.call("DBSIZE"), pipeline
        assert keyspace_counts(kv) == keyspace_counts(ref), pipeline
    kv.close()
    ref.close()


def test_replaced_key_expires_by_its_new_time_only(r):
    c = RawClient(r.connection_pool.connection_kwargs["port"])
    at = int(time.time() * 1000) + 300
    # The replacing SET does not know the old expiry; a later PEXPIREAT in the same
    # batch sets that same time again, whose expire entry must survive the commit.
    c.call("SET", "a", "1", "PXAT", str(at))
    c.call("SET", "b", "1", "PXAT", str(at))
    c.send_raw(encode(["SET", "a", "2"]) + encode(["PEXPIREAT", "a", str(at)]) + encode(["SET", "b", "2"]))
    assert [c.read_reply() for _ in range(3)] == [b"+OK\r\n", b":1\r\n", b"+OK\r\n"]
    assert keyspace_counts(c) == (b"2", b"1")
    # The active expiry cycle (not a read) removes a, and never b.
    deadline = time.time() + 10
    while c.call("DBSIZE") != b":1\r\n" and time.time() < deadline:
        time.sleep(0.05)
    assert c.call("DBSIZE") == b":1\r\n"
    assert c.call("GET", "b") == b"$1\r\n2\r\n"
    assert keyspace_counts(c) == (b"1", b"0")
    c.close()
