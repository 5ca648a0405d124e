"""DBSIZE / INFO keyspace stay exact under concurrent writers, flushes and restarts."""
import random
import threading

from conftest import RawClient


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
