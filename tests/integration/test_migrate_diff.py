"""MIGRATE, against Debian's redis-server 7.0: kvrocks and redis-server each
migrate the same keys into a target redis-server of their own (Redis' tests/
unit/dump.tcl cases); replies, what stays at the source and what arrives at the
target must be the same."""
import re
import socket
import threading
import time

import pytest

from conftest import RawClient, RealRedis, free_port


@pytest.fixture
def sides(kvrocks_server, redis_ref):
    """[(source, target)] for kvrocks and for redis-server; each target a fresh redis-server."""
    targets = [RealRedis(), RealRedis()]
    out = []
    for port, target in zip((kvrocks_server.port, redis_ref.port), targets):
        src = RawClient(port)
        src.call("FLUSHALL")
        out.append((src, target))
    yield out
    for (src, _), target in zip(out, targets):
        src.call("FLUSHALL")
        src.close()
        target.cleanup()


def both(sides, *args, target_args=None):
    """Runs args on each source (MIGRATE's host/port filled in with its target); the replies."""
    replies = []
    for src, target in sides:
        a = [str(x).replace("{port}", str(target.port)) for x in args]
        replies.append(src.call(*a))
    assert replies[0] == replies[1], f"{args}: kvrocks {replies[0]!r} redis {replies[1]!r}"
    return replies[0]


def on_targets(sides, fn):
    got = [fn(target.client()) for _, target in sides]
    assert got[0] == got[1], f"kvrocks' target {got[0]!r}, redis' target {got[1]!r}"
    return got[0]


def test_migrate_moves_a_key(sides):
    both(sides, "SET", "key", "Some Value")
    assert both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000") == b"+OK\r\n"
    both(sides, "EXISTS", "key")
    assert on_targets(sides, lambda t: (t.get("key"), t.ttl("key"))) == (b"Some Value", -1)


def test_migrate_copy_keeps_the_key(sides):
    both(sides, "SET", "key", "v")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000", "COPY")
    assert both(sides, "GET", "key") == b"$1\r\nv\r\n"
    assert on_targets(sides, lambda t: t.get("key")) == b"v"


def test_migrate_replace_and_busykey(sides):
    both(sides, "SET", "key", "new")
    for _, target in sides:
        target.client().set("key", "old")
    reply = both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000")
    assert reply.startswith(b"-ERR Target instance replied with error: BUSYKEY")
    both(sides, "EXISTS", "key")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000", "REPLACE")
    assert on_targets(sides, lambda t: t.get("key")) == b"new"


def test_migrate_keeps_the_ttl_and_the_db(sides):
    both(sides, "SET", "key", "v", "EX", "100")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "3", "5000")
    ttls = [target.client(db=3).ttl("key") for _, target in sides]
    assert all(90 <= t <= 100 for t in ttls), ttls
    assert on_targets(sides, lambda t: t.exists("key")) == 0


def test_migrate_every_type_and_big_values(sides):
    big = "x" * 200000
    both(sides, "SET", "s", big)
    both(sides, "RPUSH", "l", *[str(i) for i in range(500)])
    both(sides, "HSET", "h", *[x for i in range(300) for x in (f"f{i}", big[:i])])
    both(sides, "SADD", "set", *[str(i) for i in range(300)])
    both(sides, "ZADD", "z", *[x for i in range(300) for x in (str(i / 3), f"m{i}")])
    both(sides, "XADD", "x", "1-1", "f", "v")
    both(sides, "PFADD", "p", "a", "b", "c")
    assert both(sides, "MIGRATE", "127.0.0.1", "{port}", "", "0", "5000", "KEYS",
                "s", "l", "h", "set", "z", "x", "p", "missing") == b"+OK\r\n"
    both(sides, "DBSIZE")
    assert on_targets(sides, lambda t: t.get("s")) == big.encode()
    assert len(on_targets(sides, lambda t: t.lrange("l", 0, -1))) == 500
    assert len(on_targets(sides, lambda t: t.hgetall("h"))) == 300
    assert len(on_targets(sides, lambda t: t.smembers("set"))) == 300
    assert len(on_targets(sides, lambda t: t.zrange("z", 0, -1, withscores=True))) == 300
    assert on_targets(sides, lambda t: t.xrange("x")) == [(b"1-1", {b"f": b"v"})]
    assert on_targets(sides, lambda t: t.pfcount("p")) == 3


def test_migrate_errors(sides):
    both(sides, "SET", "key", "v")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000", "KEYS", "key")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "nokey", "0", "5000")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "", "0", "5000", "KEYS", "a", "b")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "x", "5000")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "x")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000", "AUTH")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000", "AUTH2", "u")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000", "BOGUS")
    closed = free_port()
    # Refused: Redis' blocking connect only notices timeouts, the error shows when it writes.
    assert both(sides, "MIGRATE", "127.0.0.1", str(closed), "key", "0", "1000") == \
        b"-IOERR error or timeout writing to target instance\r\n"
    assert both(sides, "MIGRATE", "host.invalid", "1", "key", "0", "1000") == \
        b"-IOERR error or timeout connecting to the client\r\n"
    both(sides, "EXISTS", "key")


def test_migrate_auth(sides):
    for _, target in sides:
        target.client().config_set("requirepass", "secret")
    both(sides, "SET", "key", "v")
    reply = both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000", "AUTH", "wrong")
    assert reply.startswith(b"-ERR Target instance replied with error: WRONGPASS")
    both(sides, "MIGRATE", "127.0.0.1", "{port}", "key", "0", "5000", "AUTH2", "default", "secret")
    assert [target.client(password="secret").get("key") for _, target in sides] == [b"v", b"v"]


def test_migrate_timeout(sides):
    """A target that accepts and never answers: IOERR after the timeout, the key stays."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted = []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                pass
    t = threading.Thread(target=accept)
    t.start()
    try:
        both(sides, "SET", "key", "v")
        port = listener.getsockname()[1]
        assert both(sides, "MIGRATE", "127.0.0.1", str(port), "key", "0", "300") == \
            b"-IOERR error or timeout reading to target instance\r\n"
        assert both(sides, "EXISTS", "key") == b":1\r\n"
    finally:
        stop.set()
        t.join()
        for c in accepted:
            c.close()
        listener.close()


def test_migrate_caches_its_connection(kvrocks_server):
    target = RealRedis()
    src = RawClient(kvrocks_server.port)
    try:
        src.call("SET", "key", "v")
        assert src.call("MIGRATE", "127.0.0.1", str(target.port), "key", "0", "5000", "COPY") == b"+OK\r\n"
        assert src.call("MIGRATE", "127.0.0.1", str(target.port), "key", "0", "5000", "COPY", "REPLACE") == b"+OK\r\n"
        cached = int(re.search(rb"migrate_cached_sockets:(\d+)", src.call("INFO", "stats")).group(1))
        assert cached >= 1  # (with those of the tests before, for 10 seconds)
        assert target.client().info("clients")["connected_clients"] == 2  # ours and this client
        # Idle for 10 seconds, it is closed (Redis' cron does the same).
        deadline = time.time() + 30
        while time.time() < deadline and b"migrate_cached_sockets:0\r\n" not in src.call("INFO", "stats"):
            time.sleep(0.5)
        assert b"migrate_cached_sockets:0\r\n" in src.call("INFO", "stats")
    finally:
        src.call("FLUSHALL")
        src.close()
        target.cleanup()


def test_migrate_to_kvrocks(kvrocks_server, fresh_server):
    fresh_server.start()
    src = RawClient(kvrocks_server.port)
    try:
        src.call("HSET", "h", "a", "1", "b", "2")
        assert src.call("MIGRATE", "127.0.0.1", str(fresh_server.port), "h", "0", "5000") == b"+OK\r\n"
        assert fresh_server.client().hgetall("h") == {b"a": b"1", b"b": b"2"}
        assert src.call("EXISTS", "h") == b":0\r\n"
    finally:
        src.call("FLUSHALL")
        src.close()
