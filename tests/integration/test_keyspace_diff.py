"""Differential tests: keyspace commands against Debian's redis-server 7.0."""
import random

from conftest import Differ


def test_del_exists_type_touch(diff):
    diff.run("""
    MSET a 1 b 2 c 3
    EXISTS a b x a
    TOUCH a b x
    TYPE a
    TYPE missing
    DEL a x
    DEL a
    UNLINK b c
    EXISTS a b c
    DEL
    DBSIZE
    """)


def test_expire_family(diff):
    diff.run("""
    SET k v
    EXPIRE k 100
    ~TTL k
    EXPIRE k 100 NX
    EXPIRE k 200 XX
    ~TTL k
    EXPIRE k 50 GT
    ~TTL k
    EXPIRE k 300 GT
    ~TTL k
    EXPIRE k 400 LT
    EXPIRE k 10 LT
    ~TTL k
    EXPIRE k 10 NX XX
    EXPIRE k 10 GT LT
    EXPIRE k 10 NX GT
    EXPIRE k 10 FOO
    EXPIRE k abc
    EXPIRE k 5 xx gt
    EXPIRE k 50 xx gt
    EXPIRE missing 10
    PERSIST k
    PERSIST k
    ~TTL k
    EXPIRE k 100 XX
    EXPIRE k 100 GT
    EXPIRE k 100 LT
    ~TTL k
    PEXPIRE k 100000
    ~PTTL k
    EXPIREAT k 99999999999
    EXPIRETIME k
    PEXPIRETIME k
    PEXPIREAT k 99999999999000
    PEXPIRETIME k
    EXPIRETIME missing
    SET p v
    EXPIRETIME p
    PEXPIRETIME p
    ~TTL p
    ~PTTL p
    ~TTL missing
    ~PTTL missing
    EXPIRE k 9223372036854775807
    EXPIRE k -9223372036854775808
    PEXPIRE k 9223372036854775807
    EXPIRE k 0
    EXISTS k
    SET k v
    EXPIRE k -10
    EXISTS k
    SET k v
    EXPIREAT k 1
    EXISTS k
    SET k v
    PEXPIREAT k 0
    EXISTS k
    DBSIZE
    """)


def test_rename(diff):
    diff.run("""
    SET a 1
    RENAME a b
    GET a
    GET b
    RENAME missing x
    RENAMENX missing x
    SET c 3
    RENAMENX b c
    RENAMENX b d
    GET d
    RENAME d d
    RENAMENX d d
    SETEX t 100 v
    RENAME t t2
    ~TTL t2
    RENAME d t2
    ~TTL t2
    DBSIZE
    """)


def test_copy_move_select(diff):
    diff.run("""
    SET a 1
    COPY a b
    COPY a b
    COPY a b REPLACE
    COPY a a
    COPY missing x
    COPY a a DB 1
    COPY a x DB 100
    COPY a x DB abc
    COPY a x FOO
    SELECT 1
    GET a
    SELECT 0
    SETEX e 100 v
    COPY e e2
    ~TTL e2
    MOVE a 1
    MOVE a 1
    MOVE missing 1
    MOVE b 0
    MOVE b 100
    MOVE b abc
    SELECT 1
    GET a
    SET b other
    SELECT 0
    MOVE b 1
    GET b
    SELECT 1
    DBSIZE
    SELECT 16
    SELECT -1
    SELECT abc
    SELECT 0
    DBSIZE
    """)


def test_swapdb_flush(diff):
    diff.run("""
    SET a 0
    SELECT 1
    SET b 1
    SET c 1
    SELECT 0
    SWAPDB 0 1
    GET a
    GET b
    DBSIZE
    SWAPDB 0 0
    SWAPDB 0 16
    SWAPDB a 1
    SWAPDB 0 b
    SELECT 1
    GET a
    FLUSHDB
    DBSIZE
    SELECT 0
    DBSIZE
    FLUSHDB FOO
    FLUSHDB ASYNC
    DBSIZE
    SET x 1
    FLUSHALL SYNC
    DBSIZE
    FLUSHALL FOO
    FLUSHALL ASYNC
    """)


def test_keys_patterns(diff, kvrocks_server, redis_ref):
    diff.run("""
    MSET hello 1 hallo 2 hxllo 3 hllo 4 heeeello 5 user:1:name a user:2:name b h*llo 6
    """)
    for pattern in ["h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "user:*:name", "*", "nomatch*",
                    "h\\*llo", "H*"]:
        a = sorted(kvrocks_server.client().keys(pattern))
        b = sorted(redis_ref.client().keys(pattern))
        assert a == b, pattern



def test_random_glob_patterns(kvrocks_server, redis_ref):
    """KEYS with 3000 random patterns over keys of pattern characters (classes,
    negations, ranges, escapes, unterminated brackets) matches as Redis'
    stringmatchlen does."""
    rng = random.Random(7)
    keys = set()
    while len(keys) < 300:
        keys.add("".join(rng.choice("abAB-]^[\\") for _ in range(rng.randrange(1, 5))))
    k, r = kvrocks_server.client(), redis_ref.client()
    for c in (k, r):
        c.flushall()
        c.mset({key: 1 for key in keys})
    for _ in range(3000):
        pattern = "".join(rng.choice("abAB*?[]^-\\") for _ in range(rng.randrange(1, 8)))
        assert sorted(k.keys(pattern)) == sorted(r.keys(pattern)), pattern


def test_scan_returns_every_key_once(r):
    keys = {f"key:{i}".encode() for i in range(1000)}
    r.mset({k: b"v" for k in keys})
    seen = []
    cursor = 0
    while True:
        cursor, batch = r.scan(cursor, count=37)
        seen.extend(batch)
        if cursor == 0:
            break
    assert len(seen) == len(keys)
    assert set(seen) == keys
    assert set(r.scan_iter(match="key:1*", count=100)) == {k for k in keys if k.startswith(b"key:1")}
    assert list(r.scan_iter(_type="string", count=1000)) != []
    assert list(r.scan_iter(_type="hash", count=1000)) == []


def test_scan_errors(diff):
    diff.run("""
    SCAN x
    SCAN " 1"
    SCAN 0 COUNT 0
    SCAN 0 COUNT abc
    SCAN 0 FOO bar
    SCAN 0 MATCH
    SCAN 0
    SCAN ""
    SCAN "" COUNT 5
    SET str v
    SSCAN nokey ""
    HSCAN str ""
    ZSCAN str " 0"
    SSCAN str x
    """)


def test_db_index_arguments(diff):
    """Redis reads a database index with getIntFromObjectOrReply: outside int it is
    a range error (SWAPDB names the argument), inside int but past the databases
    "DB index is out of range"."""
    diff.run("""
    SELECT 3000000000
    SELECT -2147483649
    SELECT 2147483647
    SELECT 9223372036854775808
    SELECT x
    SET k v
    MOVE k 3000000000
    MOVE k 2147483647
    MOVE k x
    COPY k k2 DB 3000000000
    COPY k k2 DB 16
    COPY k k2 DB x
    SWAPDB 3000000000 0
    SWAPDB 0 -3000000000
    SWAPDB x 0
    SWAPDB 0 x
    SWAPDB 0 16
    SWAPDB 2147483647 0
    """)


def test_randomkey(r):
    assert r.randomkey() is None
    r.mset({"a": 1, "b": 2, "c": 3})
    got = {r.randomkey() for _ in range(60)}
    assert got <= {b"a", b"b", b"c"}
    assert len(got) >= 2


def test_dbsize_and_info_keyspace_are_exact(r):
    r.mset({f"k{i}": i for i in range(50)})
    for i in range(10):
        r.expire(f"k{i}", 1000)
    r.delete("k49", "k48", "nothing")
    r.set("k0", "overwrite")  # drops the TTL: expires goes to 9
    assert r.dbsize() == 48
    info = r.info("keyspace")
    assert info["db0"]["keys"] == 48
    assert info["db0"]["expires"] == 9


def test_pattern_with_many_stars_answers_at_once(diff):
    # Redis' CVE-2022-36021 regression: a glob of nested stars must not backtrack exponentially.
    diff("SET", "a" * 200, "1")
    pattern = "a*" * 100 + "b"
    diff("KEYS", pattern)
    diff("SCAN", "0", "MATCH", pattern, "COUNT", "100")
    diff("KEYS", "a*" * 100)


def load_collections(d, n):
    """A hash h, set s, sorted set z (with a rank index, whose records stay with
    the elements) and list l of n elements each, on both servers."""
    big = [str(i) for i in range(n)]
    d("HSET", "h", *[x for i in big for x in (f"f{i}", i)])
    d("SADD", "s", *big)
    d("ZADD", "z", *[x for i in big for x in (i, f"m{i}")])
    d("RPUSH", "l", *big)
    d("ZRANK", "z", f"m{n * 2 // 3}")


def checked_through_compaction_and_restart(d, server, redis_ref, check):
    """Runs check after a COMPACT of kvrocks, then after its restart; returns
    the Differ to go on with."""
    d.kv.call("COMPACT")
    d.run(check)
    d.close()
    server.restart()
    d = Differ(server.port, redis_ref.port, flush=False)
    d.run(check)
    return d


def test_rename_of_collections_moves_metadata_only(fresh_server, redis_ref):
    # RENAME of a hash, set, sorted set, list or stream moves its metadata, not its elements
    # (they stay under the name they were written with): renames in a chain, back
    # to the first name, onto existing keys and a new key under an old name, then
    # compactions (which must keep every renamed element and drop the deleted
    # ones) and a restart, compared with Redis at each step.
    fresh_server.start()
    d = Differ(fresh_server.port, redis_ref.port)
    load_collections(d, 3000)
    d("SADD", "si", "1", "2", "3")
    d("HRANDFIELD", "h", "0")
    d("SET", "taken", "x")
    for i in range(1, 301):
        d("XADD", "x", f"{i}-1", "f", str(i))
    d("XGROUP", "CREATE", "x", "g", "0")
    d("XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "STREAMS", "x", ">")
    script = """
    RENAME h h2
    RENAME h2 h3
    HSET h fresh 1
    RENAME s taken
    RENAME si si2
    RENAME si2 si
    RENAME z z2
    RENAMENX z2 l
    RENAME l l2
    RPUSH l2 tail
    LPUSH l2 head
    ZADD z2 5000 added
    ZREM z2 m10
    HDEL h3 f7
    COPY z2 zc
    RENAME zc zc2
    MOVE l2 1
    SELECT 1
    RENAME l2 l3
    SELECT 0
    DEL h
    RENAME h3 h
    RENAME x x2
    XADD x2 400-1 f new
    XACK x2 g 1-1
    RENAME x2 x3
    """
    check = """
    HLEN h
    HGET h f2999
    HGET h fresh
    HEXISTS h f7
    SCARD taken
    SISMEMBER taken 1234
    SMEMBERS si
    ZCARD z2
    ZRANK z2 m2000
    ZRANGE z2 1000 1003 WITHSCORES
    ZSCORE z2 added
    ZCARD zc2
    ZREVRANK zc2 m5
    EXISTS h2 h3 s si2 z l l2 zc x x2
    XLEN x3
    XRANGE x3 150 152
    XREVRANGE x3 + - COUNT 2
    XPENDING x3 g
    XINFO GROUPS x3
    SELECT 1
    LLEN l3
    LINDEX l3 0
    LINDEX l3 -1
    LRANGE l3 1500 1502
    SELECT 0
    DBSIZE
    """
    d.run(script)
    d.run(check)
    a, b = d.both("HGETALL", "h")  # a hashtable's order is Redis' own
    assert sorted(a.split(b"\r\n")) == sorted(b.split(b"\r\n"))
    d = checked_through_compaction_and_restart(d, fresh_server, redis_ref, check)
    d.kv.call("COMPACT")
    d.run(check)
    d("DEL", "h", "taken", "z2", "x3")
    d.kv.call("COMPACT")
    d.run(check)
    d.close()


def test_rename_of_big_strings_moves_metadata_only(fresh_server, redis_ref):
    # RENAME of a string stored out of line (whole, or in fragments after an edit
    # of a big value or a far SETBIT) moves its metadata, not its value; edits
    # after the rename, COPY, MOVE, expiry, compactions and a restart, compared
    # with Redis at each step.
    fresh_server.start()
    d = Differ(fresh_server.port, redis_ref.port)
    d("SET", "whole", "".join(chr(33 + i % 90) for i in range(9000)))
    d("SET", "edited", "e" * 70000)
    d("APPEND", "edited", "tail")  # past 64 KiB: kept in fragments from here on
    d("SETBIT", "bits", "1000000", "1")  # a sparse bitmap, in fragments
    d("SET", "taken", "small")
    script = """
    RENAME whole w2
    RENAME w2 w3
    SET whole new-small-value
    RENAME edited taken
    SETRANGE taken 30000 middle
    APPEND taken end
    RENAME bits bits2
    SETBIT bits2 7 1
    SETBIT bits2 1000000 0
    SETBIT bits2 999999 1
    RENAME bits2 bits
    EXPIRE w3 1000
    RENAME w3 w4
    COPY w4 wc
    RENAME taken t2
    MOVE t2 1
    """
    check = """
    GET w4
    ~TTL w4
    GET whole
    GET wc
    STRLEN w4
    GETRANGE w4 8990 9000
    EXISTS w2 w3 edited taken bits2
    BITCOUNT bits
    BITPOS bits 1
    GETBIT bits 999999
    STRLEN bits
    OBJECT ENCODING w4
    SELECT 1
    STRLEN t2
    GETRANGE t2 29998 30008
    GETRANGE t2 -10 -1
    GET t2
    SELECT 0
    DBSIZE
    """
    d.run(script)
    d.run(check)
    d = checked_through_compaction_and_restart(d, fresh_server, redis_ref, check)
    d("APPEND", "w4", "more")
    d("RENAME", "w4", "whole")  # onto a key of its own, and back to the owner's name
    d.kv.call("COMPACT")
    d.run(check.replace("w4", "whole"))
    d("DEL", "whole", "bits")
    d.kv.call("COMPACT")
    d.run(check.replace("w4", "whole"))
    d.close()


def test_move_of_collections_moves_metadata_only(fresh_server, redis_ref):
    # MOVE of a hash, set, sorted set, list, stream or big string moves its
    # metadata to the other database, not its elements (they stay in the database
    # they were written in): moves mixed with renames, back home, FLUSHDB of the
    # database the elements are in (the moved keys keep them) and of the one the
    # keys went to, SWAPDB, compactions and a restart, compared with Redis.
    fresh_server.start()
    d = Differ(fresh_server.port, redis_ref.port)
    load_collections(d, 2000)
    d("SET", "str", "".join(chr(33 + i % 90) for i in range(9000)))
    d("SETBIT", "bits", "500000", "1")
    for i in range(1, 201):
        d("XADD", "x", f"{i}-1", "f", str(i))
    d("XGROUP", "CREATE", "x", "g", "0")
    d("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "x", ">")
    d("HSET", "back", "a", "1", "b", "2")
    script = """
    MOVE h 1
    MOVE s 1
    MOVE z 2
    MOVE l 1
    MOVE str 1
    MOVE bits 2
    MOVE x 1
    MOVE back 1
    SELECT 1
    RENAME h h1
    HSET h1 added x
    HDEL h1 f3
    SADD s extra
    RPUSH l tail
    APPEND str more
    XADD x 300-1 f new
    XACK x g 1-1
    MOVE back 0
    MOVE l 2
    SELECT 2
    ZADD z 9999 late
    ZREM z m7
    SETBIT bits 9 1
    RENAME l l2
    SELECT 0
    """
    check = """
    SELECT 1
    HLEN h1
    HGET h1 f1999
    HGET h1 added
    HEXISTS h1 f3
    SCARD s
    SISMEMBER s 1234
    SISMEMBER s extra
    STRLEN str
    GETRANGE str 8995 9005
    XLEN x
    XRANGE x 100 102
    XPENDING x g
    SELECT 2
    ZCARD z
    ZRANK z m1500
    ZSCORE z late
    ZRANGE z 100 102 WITHSCORES
    LLEN l2
    LINDEX l2 -1
    LRANGE l2 1000 1002
    BITCOUNT bits
    GETBIT bits 500000
    SELECT 0
    HGETALL back
    EXISTS h s z l str bits x
    DBSIZE
    SELECT 1
    DBSIZE
    SELECT 2
    DBSIZE
    SELECT 0
    """
    d.run(script)
    d.run(check)
    d = checked_through_compaction_and_restart(d, fresh_server, redis_ref, check)
    # The elements of every moved key are in database 0; its flush keeps them.
    d("FLUSHDB")
    d.kv.call("COMPACT")
    d.run(check)
    d("SWAPDB", "1", "2")
    d("SELECT", "1")
    d("FLUSHDB")  # what was database 2: z, l2, bits
    d("SELECT", "0")
    d.kv.call("COMPACT")
    d.run(check)
    d("SELECT", "2")
    d("MOVE", "h1", "0")
    d("SELECT", "0")
    d.run(check)
    d.close()
