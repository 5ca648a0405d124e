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


def test_orders_redis_defines_for_whole_sets_and_set_algebra(diff):
    """Where Redis' answer has a defined order, kvrocks gives the same one: intsets
    in numeric order (SRANDMEMBER and SPOP of the whole set; SUNION and SDIFF, whose
    temporary set is an intset when it only ever held integers, at most
    set-max-intset-entries of them; SDIFF's second algorithm adds the whole first
    set, so that SDIFFSTORE stores a hashtable when that held a string, even if the
    result does not), SINTER in the order of its smallest set (the first of equal sizes), and
    ZRANDMEMBER of the whole set from the greatest member down."""
    diff.run("""
    SADD i1 10 9 -1 100 3
    SADD i2 100 7 10 300
    SADD i3 5
    SADD h1 10 9 -1 x
    SUNION i1 i2 i3
    SDIFF i1 i2
    SDIFF i2 i1 nokey
    SINTER i1 i2
    SINTER i2 i1
    SINTERCARD 2 i1 i2
    SUNIONSTORE u i1 i2
    OBJECT ENCODING u
    SMEMBERS u
    SRANDMEMBER i1 5
    SRANDMEMBER i1 100
    SORT i1 BY nosort
    SADD big 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 x y
    SADD small1 x
    SADD small2 y
    SDIFFSTORE d big small1 small2
    OBJECT ENCODING d
    SCARD d
    SADD big2 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20
    SDIFF big2 small1 small2
    SDIFFSTORE d2 big2 small1 small2
    OBJECT ENCODING d2
    SREM h1 x
    SPOP h1 10
    SPOP i2 4
    EXISTS i2
    ZADD z 3 a 1 b 2 c
    ZRANDMEMBER z 3
    ZRANDMEMBER z 10 WITHSCORES
    ZADD zbig 1 a 2 b 3 cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc
    ZRANDMEMBER zbig 3 WITHSCORES
    HSET h z 1 a 2 m 3
    HRANDFIELD h 3
    HRANDFIELD h 5 WITHVALUES
    CONFIG SET set-max-intset-entries 4
    SUNION i3 i3
    SADD i4 10 100
    SDIFF i1 i4
    CONFIG SET set-max-intset-entries 512
    """)
