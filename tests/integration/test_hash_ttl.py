"""Hash field expiry (Redis 7.4: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL
HEXPIRETIME HPEXPIRETIME HPERSIST). Debian's Redis 7.0 has no such commands, so
these tests check the documented semantics directly."""
import os
import time

import pytest
import redis

from conftest import Kvrocks, encode, wait_until


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


def test_field_expiry_follows_rename_copy_and_move(c):
    # The expire index names a key; a hash that arrives under another name is
    # visited again there, and each visit schedules its soonest TTL left, as
    # Redis 7.4 keeps field expiry with the hash.
    c.hset("h", mapping={"soon": 1, "later": 2, "keep": 3})
    cmd(c, "HPEXPIRE", "h", 200, "FIELDS", 1, "soon")
    cmd(c, "HPEXPIRE", "h", 700, "FIELDS", 1, "later")
    c.rename("h", "h2")
    c.hset("m", mapping={"go": 1, "keep": 2})
    cmd(c, "HPEXPIRE", "m", 200, "FIELDS", 1, "go")
    c.copy("m", "m2")
    c.move("m", 1)
    other = c.connection_pool.connection_kwargs
    db1 = redis.Redis(host=other["host"], port=other["port"], db=1)
    wait_until(lambda: c.hlen("h2") == 1 and c.hlen("m2") == 1 and db1.hlen("m") == 1, 10, "the active expiry")
    assert c.hgetall("h2") == {b"keep": b"3"}
    db1.flushdb()


def test_zero_seconds_always_deletes(c):
    # A relative time counts from the command's clock, as the check whether it is
    # past does (Redis 7.4's commandTimeSnapshot): HEXPIRE 0 deletes the field
    # even when the real clock ticks between the two (it answered 1 then).
    p = c.pipeline(transaction=False)
    for i in range(300):
        p.hset("h", "a", i)
        p.execute_command("HEXPIRE", "h", 0, "FIELDS", 1, "a")
    replies = p.execute()
    assert replies[1::2] == [[2]] * 300
    assert c.exists("h") == 0
    # A script's clock stands still from its start: 3 ms later, 0 seconds from it
    # is still past.
    script = """
    redis.call('hset', KEYS[1], 'a', 1)
    local t0 = redis.call('time')
    repeat
      local t = redis.call('time')
    until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 3000
    return redis.call('hexpire', KEYS[1], 0, 'FIELDS', 1, 'a')
    """
    assert c.eval(script, 1, "h") == [2]
    assert c.exists("h") == 0


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



def test_restore_loads_fields_already_expired(c):
    """RESTORE writes every field of the payload, its TTL passed or not, as Redis
    7.4's rdbLoadObject loads them: an expired one is hidden from reads and
    counted by HLEN until the active expiry deletes it (with the key, if it was
    the last one)."""
    c.hset("h", mapping={"a": 1, "b": 2})
    c.hset("one", mapping={"a": 1})
    cmd(c, "HPEXPIRE", "h", 50, "FIELDS", 1, "a")
    cmd(c, "HPEXPIRE", "one", 50, "FIELDS", 1, "a")
    payloads = {key: c.dump(key) for key in ("h", "one")}
    cmd(c, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        time.sleep(0.1)
        for key, payload in payloads.items():
            c.restore(key + "2", 0, payload)
        assert (c.hlen("h2"), c.hgetall("h2"), c.hlen("one2"), c.exists("one2")) == (2, {b"b": b"2"}, 1, 1)
        assert cmd(c, "HPEXPIRETIME", "h2", "FIELDS", 2, "a", "b")[1] == -1
    finally:
        cmd(c, "DEBUG", "SET-ACTIVE-EXPIRE", 1)
    wait_until(lambda: c.hlen("h2") == 1 and c.exists("one2") == 0, 10, "the active expiry")


def test_replica_load_keeps_expired_fields_for_its_masters_hdel():
    """A replica's full sync keeps the fields already expired, as Redis 7.4's
    rdbLoadObject does: hidden from reads, counted by HLEN, until the master
    deletes them and sends HDEL (the master may have persisted a field after its
    snapshot). Debian's Redis 7.0 has no field TTLs:
    the RDB comes from kvrocks' DEBUG RELOAD, served by a scripted master."""
    from test_master_dialects import REPLID, ScriptedMaster
    source = Kvrocks(extra=["--enable-debug-command", "yes"]).start()
    try:
        c = source.client()
        cmd(c, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
        c.hset("h", mapping={"a": 1, "b": 2})
        c.hset("gone", mapping={"a": 1})
        cmd(c, "HPEXPIRE", "h", 1, "FIELDS", 1, "a")
        cmd(c, "HPEXPIRE", "gone", 1, "FIELDS", 1, "a")
        time.sleep(0.01)
        digest = cmd(c, "DEBUG", "DIGEST")
        cmd(c, "DEBUG", "RELOAD")  # writes dump.rdb with every field, and a master loads them all too
        assert cmd(c, "DEBUG", "DIGEST") == digest
        with open(os.path.join(source.dir, "dump.rdb"), "rb") as f:
            rdb = f.read()
    finally:
        source.cleanup()
    master = ScriptedMaster(rdb, [f"+FULLRESYNC {REPLID} 0"])
    replica = Kvrocks(extra=["--replicaof", f"127.0.0.1 {master.port}", "--enable-debug-command", "yes"]).start()
    try:
        r = replica.client()
        wait_until(lambda: r.info("replication")["master_link_status"] == "up", 30, "the sync")
        assert cmd(r, "DEBUG", "DIGEST") == digest
        assert (r.dbsize(), r.hlen("h"), r.hgetall("h"), r.hlen("gone")) == (2, 2, {b"b": b"2"}, 1)
        assert cmd(r, "HPEXPIRETIME", "h", "FIELDS", 2, "a", "b")[1] == -1
        for reload in (["RELOAD"], ["RELOAD", "MERGE", "NOFLUSH"]):  # a replica's reloads keep them too
            cmd(r, "DEBUG", *reload)
            assert cmd(r, "DEBUG", "DIGEST") == digest
        master.send(encode(["SELECT", "0"]) + encode(["HDEL", "h", "a"]) + encode(["HDEL", "gone", "a"]))
        wait_until(lambda: r.dbsize() == 1, 30, "the master's HDEL")
        assert (r.hlen("h"), r.hgetall("h")) == (1, {b"b": b"2"})
    finally:
        replica.cleanup()
        master.close()
