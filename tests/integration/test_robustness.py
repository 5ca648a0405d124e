"""Random commands and random bytes never crash the server (bounded in count)."""
import random
import socket

from conftest import RawClient, encode

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
