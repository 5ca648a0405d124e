"""Random commands and random bytes never crash the server (bounded in count)."""
import os
import random
import resource
import socket
import time

from conftest import Kvrocks, RawClient, encode

EXCLUDED = {"shutdown", "monitor", "quit", "client", "save", "bgsave", "config", "swapdb", "flushall",
            "blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin", "bzpopmax", "bzmpop"}  # blocking: would wait for the socket timeout
ARGS = ["k", "k2", "0", "1", "-1", "100", "9223372036854775807", "-9223372036854775808", "nx", "xx", "gt",
        "lt", "ex", "px", "exat", "pxat", "get", "keepttl", "persist", "len", "idx", "minmatchlen",
        "withmatchlen", "count", "match", "type", "db", "replace", "*", "", "\x00\xff", "1.5", "inf", "-inf",
        "nan", "x" * 5000, "string", "async", "sync"]


def test_random_commands_do_not_crash(kvrocks_server):
    rnd = random.Random(1234)
    admin = RawClient(kvrocks_server.port)
    names = [n.decode() for n in admin.call("COMMAND", "LIST").split(b"\r\n")[2::2] if n]
    names = [n for n in names if n not in EXCLUDED]
    assert len(names) > 40
    c = RawClient(kvrocks_server.port)
    for i in range(3000):
        args = [rnd.choice(names)] + [rnd.choice(ARGS) for _ in range(rnd.randrange(6))]
        if rnd.random() < 0.3:
            args[0] = args[0].upper()
        try:
            reply = c.call(*args)
            assert reply[:1] in b"+-:$*%~_,#="
        except (ConnectionError, OSError):
            c = RawClient(kvrocks_server.port)
    assert admin.call("PING") == b"+PONG\r\n"


def test_random_bytes_do_not_crash(kvrocks_server):
    rnd = random.Random(99)
    for i in range(300):
        s = socket.create_connection(("127.0.0.1", kvrocks_server.port), timeout=5)
        prefix = rnd.choice([b"", b"*", b"*2\r\n", b"*1\r\n$", b"$", b"*3\r\n$3\r\nSET\r\n"])
        s.sendall(prefix + bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400))))
        s.settimeout(0.05)
        try:
            s.recv(65536)
        except OSError:
            pass
        s.close()
    c = RawClient(kvrocks_server.port)
    assert c.call("PING") == b"+PONG\r\n"
    assert c.call("SET", "alive", "yes") == b"+OK\r\n"


def test_pipelines_from_many_clients_keep_order(kvrocks_server):
    """Group commit must not reorder or mix replies between pipelined clients."""
    clients = [RawClient(kvrocks_server.port) for _ in range(8)]
    for n, c in enumerate(clients):
        c.send_raw(b"".join(encode(("SET", f"o{n}:{i}", str(i))) + encode(("GET", f"o{n}:{i}"))
                            + encode(("INCR", f"ctr{n}")) for i in range(300)))
    for n, c in enumerate(clients):
        for i in range(300):
            assert c.read_reply() == b"+OK\r\n"
            assert c.read_reply() == b"$%d\r\n%s\r\n" % (len(str(i)), str(i).encode())
            assert c.read_reply() == b":%d\r\n" % (i + 1)


def test_out_of_descriptors_pauses_accepting_and_recovers():
    """When accept() fails for want of descriptors, the server keeps serving its
    clients, does not spin on the listening socket (one warning, not a flood),
    and accepts the waiting connections once descriptors are free again."""
    srv = Kvrocks().start()
    socks = []
    try:
        pid = srv.proc.pid
        soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
        in_use = len(os.listdir(f"/proc/{pid}/fd"))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (in_use + 3, hard))
        for _ in range(8):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            s.sendall(b"PING\r\n")
            socks.append(s)
        served = socks[:3]
        for s in served:
            assert s.recv(64) == b"+PONG\r\n"
        time.sleep(1)  # the rest wait in the backlog while accept() fails
        log = open(srv.log_path, "rb").read()
        assert b"Accepting client connection: Too many open files" in log
        assert log.count(b"Too many open files") < 20
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
        for s in socks[3:]:
            assert s.recv(64) == b"+PONG\r\n"
        assert srv.client().ping()
    finally:
        for s in socks:
            s.close()
        srv.cleanup()


def test_unbounded_random_picks_close_the_client_not_the_server(kvrocks_server):
    """SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a huge negative count ask for
    a reply no memory holds (Redis builds it and is killed): the caller gets an
    error and is closed, the server goes on; a reply that fits is still made."""
    c = RawClient(kvrocks_server.port)
    c.call("SADD", "s", "a", "b")
    c.call("HSET", "h", "f", "v")
    c.call("ZADD", "z", "1", "a")
    c.close()
    for cmd in (["SRANDMEMBER", "s", "-9223372036854775807"], ["HRANDFIELD", "h", "-9223372036854775807"],
                ["ZRANDMEMBER", "z", "-4611686018427387903", "WITHSCORES"]):
        c = RawClient(kvrocks_server.port)
        assert c.call(*cmd).startswith(b"-ERR the reply of ")
        c.sock.settimeout(5)
        assert c.sock.recv(1) == b""  # closed
        c.close()
    c = RawClient(kvrocks_server.port)
    assert c.call("EVAL", "return redis.pcall('SRANDMEMBER', 's', '-9223372036854775807')", "0").startswith(
        b"-ERR the reply of ")
    assert c.call("PING") == b"+PONG\r\n"  # a script's caller stays
    # Within the client's output buffer hard limit, or past it.
    assert c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0") == b"+OK\r\n"
    try:
        assert c.call("SRANDMEMBER", "s", "-100000").startswith(b"*100000\r\n")
        assert c.call("SRANDMEMBER", "s", "-200000").startswith(b"-ERR the reply of 200000 random picks")
        # (c is closed now) a subscribed (RESP3) client is held to the pubsub class's limit
        sub, admin = RawClient(kvrocks_server.port), RawClient(kvrocks_server.port)
        sub.call("HELLO", "3")
        sub.call("SUBSCRIBE", "ch")
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 pubsub 1mb 0 0") == b"+OK\r\n"
        assert sub.call("SRANDMEMBER", "s", "-200000").startswith(b"-ERR the reply of 200000 random picks")
        assert admin.call("SRANDMEMBER", "s", "-200000").startswith(b"*200000\r\n")  # normal: no limit now
        sub.close()
        admin.close()
    finally:
        d = RawClient(kvrocks_server.port)
        assert d.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 pubsub 32mb 8mb 60") == b"+OK\r\n"
        assert d.call("SCARD", "s") == b":2\r\n"
        d.close()
        c.close()
