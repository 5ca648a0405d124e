"""Hash field expiry (Redis 7.4: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL
HEXPIRETIME HPEXPIRETIME HPERSIST). Debian's Redis 7.0 has no such commands, so
these tests check the documented semantics directly."""
import time

import pytest
import redis


@pytest.fixture
def c(kvrocks_server):
    r = kvrocks_server.client(protocol=2)
    r.flushall()
    return r


def cmd(c, *args):
    return c.execute_command(*args)


def test_set_and_read_ttls(c):
    c.hset("h", mapping={"f1": "v1", "f2": "v2", "f3": "v3"})
    assert cmd(c, "HEXPIRE", "h", 100, "FIELDS", 2, "f1", "nofield") == [1, -2]
    assert cmd(c, "HTTL", "h", "FIELDS", 3, "f1", "f2", "nofield") == [100, -1, -2]
    pttl = cmd(c, "HPTTL", "h", "FIELDS", 1, "f1")[0]
    assert 98000 < pttl <= 100000
    at = int(time.time()) + 1000
    assert cmd(c, "HEXPIREAT", "h", at, "FIELDS", 1, "f2") == [1]
    assert cmd(c, "HEXPIRETIME", "h", "FIELDS", 1, "f2") == [at]
    assert cmd(c, "HPEXPIRETIME", "h", "FIELDS", 1, "f2") == [at * 1000]
    assert cmd(c, "HPEXPIREAT", "h", at * 1000 + 5, "FIELDS", 1, "f2") == [1]
    assert cmd(c, "HPEXPIRETIME", "h", "FIELDS", 1, "f2") == [at * 1000 + 5]
    assert cmd(c, "HTTL", "nokey", "FIELDS", 1, "f") == [-2]
    assert cmd(c, "HEXPIRE", "nokey", 10, "FIELDS", 1, "f") == [-2]
    assert c.hgetall("h") == {b"f1": b"v1", b"f2": b"v2", b"f3": b"v3"}


def test_conditions_and_past_times(c):
    c.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert cmd(c, "HEXPIRE", "h", 100, "NX", "FIELDS", 1, "a") == [1]
    assert cmd(c, "HEXPIRE", "h", 200, "NX", "FIELDS", 2, "a", "b") == [0, 1]
    assert cmd(c, "HEXPIRE", "h", 300, "XX", "FIELDS", 2, "a", "c") == [1, 0]
    assert cmd(c, "HEXPIRE", "h", 100, "GT", "FIELDS", 3, "a", "b", "c") == [0, 0, 0]
    assert cmd(c, "HEXPIRE", "h", 50, "LT", "FIELDS", 3, "a", "b", "c") == [1, 1, 1]
    assert cmd(c, "HEXPIRE", "h", 0, "FIELDS", 1, "a") == [2]
    assert c.hexists("h", "a") is False and c.hlen("h") == 2
    assert cmd(c, "HPEXPIREAT", "h", 1, "FIELDS", 2, "b", "c") == [2, 2]
    assert c.exists("h") == 0


def test_persist_and_overwrite(c):
    c.hset("h", mapping={"a": 1, "b": 2})
    cmd(c, "HEXPIRE", "h", 100, "FIELDS", 2, "a", "b")
    assert cmd(c, "HPERSIST", "h", "FIELDS", 3, "a", "a", "zz") == [1, -1, -2]
    assert cmd(c, "HTTL", "h", "FIELDS", 1, "a") == [-1]
    c.hset("h", "b", "new")  # HSET clears a field's TTL
    assert cmd(c, "HTTL", "h", "FIELDS", 1, "b") == [-1]
    cmd(c, "HEXPIRE", "h", 100, "FIELDS", 1, "a")
    assert c.hincrby("h", "a", 5) == 6  # HINCRBY keeps it
    assert cmd(c, "HTTL", "h", "FIELDS", 1, "a") == [100]


def test_fields_expire_lazily_and_actively(c):
    c.hset("h", mapping={"keep": 1, "go": 2, "go2": 3})
    cmd(c, "HPEXPIRE", "h", 100, "FIELDS", 2, "go", "go2")
    time.sleep(0.15)
    assert c.hget("h", "go") is None
    assert c.hmget("h", "keep", "go") == [b"1", None]
    assert c.hgetall("h") == {b"keep": b"1"}
    assert c.hexists("h", "go2") is False
    assert c.hset("h", "go", "back") == 1  # an expired field is a new one
    deadline = time.time() + 5
    while c.hlen("h") != 2 and time.time() < deadline:  # the active cycle removes go2
        time.sleep(0.05)
    assert c.hlen("h") == 2
    cmd(c, "HPEXPIRE", "h", 50, "FIELDS", 2, "keep", "go")
    deadline = time.time() + 5
    while c.exists("h") and time.time() < deadline:
        time.sleep(0.05)
    assert c.exists("h") == 0
    assert int(c.info("stats")["expired_subkeys"]) >= 3


def test_argument_errors(c):
    c.hset("h", "a", 1)
    with pytest.raises(redis.ResponseError, match="FIELDS is missing"):
        cmd(c, "HEXPIRE", "h", 10, "NX", "a", 1, "a")
    with pytest.raises(redis.ResponseError, match="must match the number of arguments"):
        cmd(c, "HEXPIRE", "h", 10, "FIELDS", 2, "a")
    with pytest.raises(redis.ResponseError, match="greater than 0"):
        cmd(c, "HTTL", "h", "FIELDS", 0, "a")
    with pytest.raises(redis.ResponseError, match="invalid expire time"):
        cmd(c, "HEXPIRE", "h", -1, "FIELDS", 1, "a")
    with pytest.raises(redis.ResponseError, match="not an integer"):
        cmd(c, "HEXPIRE", "h", "x", "FIELDS", 1, "a")
    c.set("s", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        cmd(c, "HEXPIRE", "s", 10, "FIELDS", 1, "a")


def test_dump_restore_keeps_field_ttls(c):
    c.hset("h", mapping={"a": 1, "b": 2})
    cmd(c, "HPEXPIREAT", "h", 4102444800123, "FIELDS", 1, "a")
    payload = c.dump("h")
    c.restore("h2", 0, payload)
    assert cmd(c, "HPEXPIRETIME", "h2", "FIELDS", 2, "a", "b") == [4102444800123, -1]
    assert c.hgetall("h2") == {b"a": b"1", b"b": b"2"}
