"""Set commands against Debian's redis-server 7.0. Replies whose order Redis
does not define (hashtable sets) are compared sorted."""
import pytest
import redis


def test_set_basics(diff):
    # Single-digit integers: an intset, whose order (numeric) equals byte order.
    diff.run("""
    SADD s 3 1 2 2
    SADD s 1 4
    SCARD s
    SCARD nokey
    SISMEMBER s 1
    SISMEMBER s 9
    SISMEMBER nokey 1
    SMISMEMBER s 1 9 2
    SMISMEMBER nokey a
    SMEMBERS s
    SMEMBERS nokey
    OBJECT ENCODING s
    SREM s 1 9
    SREM nokey a
    SMEMBERS s
    SADD s x
    OBJECT ENCODING s
    SREM s 2 3 4 x
    EXISTS s
    TYPE s
    DBSIZE
    """)


def test_set_errors(diff):
    diff.run("""
    SET str v
    SADD str a
    SREM str a
    SCARD str
    SISMEMBER str a
    SMEMBERS str
    SINTER str
    SUNIONSTORE d str
    SMOVE str d a
    SADD
    SADD s
    SPOP s -1
    SPOP s 1 2
    SRANDMEMBER s 1 2
    SRANDMEMBER s x
    SINTERCARD 0 s
    SINTERCARD 3 s
    SINTERCARD x s
    SINTERCARD 1 s LIMIT -1
    SINTERCARD 1 s FOO
    SSCAN s x
    SSCAN s 0 COUNT 0
    """)


def test_set_algebra(kvrocks_server, redis_ref):
    for c in (kvrocks_server.client(), redis_ref.client()):
        c.flushall()
        c.sadd("a", *"abcdef", 1, 2)
        c.sadd("b", *"defgh", 2)
        c.sadd("c", *"ehz")
        c.set("str", "v")
        c.set("str2", "v")
    kv, ref = kvrocks_server.client(), redis_ref.client()
    for cmd in (("SINTER", "a", "b"), ("SINTER", "a", "b", "c"), ("SINTER", "a", "missing"),
                ("SUNION", "a", "b", "c", "missing"), ("SDIFF", "a", "b"), ("SDIFF", "a", "b", "c"),
                ("SDIFF", "missing", "a"), ("SINTER", "missing")):
        assert sorted(kv.execute_command(*cmd)) == sorted(ref.execute_command(*cmd)), cmd
    for cmd in (("SINTERSTORE", "d1", "a", "b"), ("SUNIONSTORE", "d2", "a", "b", "c"),
                ("SDIFFSTORE", "d3", "a", "b"), ("SINTERSTORE", "d4", "a", "missing"),
                ("SUNIONSTORE", "str", "c"), ("SINTERCARD", 2, "a", "b"), ("SINTERCARD", 2, "a", "b", "LIMIT", 1),
                ("SINTERCARD", 3, "a", "b", "c", "LIMIT", 0), ("SMOVE", "a", "b", "a"), ("SMOVE", "a", "b", "zz"),
                ("SMOVE", "a", "a", "b"), ("SMOVE", "missing", "b", "a"), ("SMOVE", "a", "newset", "c")):
        assert kv.execute_command(*cmd) == ref.execute_command(*cmd), cmd
    for key in ("a", "b", "c", "d1", "d2", "d3", "d4", "str", "newset"):
        assert kv.type(key) == ref.type(key), key
        if kv.type(key) == b"set":
            assert sorted(kv.smembers(key)) == sorted(ref.smembers(key)), key
    assert kv.exists("d4") == 0
    assert kv.dbsize() == ref.dbsize()
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        kv.sinter("a", "str2")


def test_set_encodings(diff):
    for i in range(512):  # set-max-intset-entries
        diff("SADD", "ints", i)
    diff("OBJECT", "ENCODING", "ints")
    diff("SADD", "ints", 512)
    diff("OBJECT", "ENCODING", "ints")
    diff("SADD", "neg", -5, 9223372036854775807)
    diff("OBJECT", "ENCODING", "neg")
    diff("SADD", "mixed", 1, "01")
    diff("OBJECT", "ENCODING", "mixed")
    diff("SCARD", "ints")


def test_spop_srandmember(kvrocks_server):
    c = kvrocks_server.client()
    c.delete("s")
    c.sadd("s", *range(10))
    assert c.srandmember("s") in {str(i).encode() for i in range(10)}
    assert len(set(c.srandmember("s", 5))) == 5
    assert len(c.srandmember("s", -20)) == 20
    assert sorted(c.srandmember("s", 50)) == sorted(str(i).encode() for i in range(10))
    assert c.srandmember("nokey") is None and c.srandmember("nokey", 3) == []
    popped = c.spop("s", 3)
    assert len(popped) == 3 and c.scard("s") == 7
    assert not set(popped) & c.smembers("s")
    one = c.spop("s")
    assert one not in c.smembers("s") and c.scard("s") == 6
    assert c.spop("s", 0) in ([], set())
    rest = c.spop("s", 100)
    assert len(rest) == 6 and c.exists("s") == 0
    assert c.spop("nokey") is None


def test_sscan(kvrocks_server):
    c = kvrocks_server.client()
    c.delete("big")
    members = {f"m{i}".encode() for i in range(1000)}
    c.sadd("big", *members)
    seen = []
    cursor = 0
    while True:
        cursor, page = c.sscan("big", cursor, count=30)
        seen.extend(page)
        if cursor == 0:
            break
    assert len(seen) == 1000 and set(seen) == members
    assert set(c.sscan_iter("big", match="m99*")) == {m for m in members if m.startswith(b"m99")}


def test_set_in_multi_and_generic(diff):
    diff.run("""
    MULTI
    SADD s 1 2 3
    SREM s 2
    SMEMBERS s
    SCARD s
    EXEC
    COPY s s2
    SMEMBERS s2
    RENAME s s3
    SMEMBERS s3
    EXPIRE s3 100
    ~TTL s3
    """)
