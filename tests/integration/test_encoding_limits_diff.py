"""hash-max-listpack-*, set-max-intset-entries and zset-max-listpack-* (and the
older -ziplist- names) against Debian's redis-server 7.0: CONFIG GET/SET, and the
encodings OBJECT ENCODING then reports and the behaviours tied to them; the list
options, which shape Redis' memory only."""
import pytest

LIMITS = {
    "hash-max-listpack-entries": "512",
    "hash-max-listpack-value": "64",
    "set-max-intset-entries": "512",
    "zset-max-listpack-entries": "128",
    "zset-max-listpack-value": "64",
    "list-max-listpack-size": "-2",
    "list-compress-depth": "0",
}


@pytest.fixture
def limits(diff):
    yield diff
    for name, value in LIMITS.items():
        diff("CONFIG", "SET", name, value)


def test_encoding_limit_options(limits):
    limits.run("""
    CONFIG GET hash-max-listpack-entries
    CONFIG GET hash-max-ziplist-entries
    CONFIG GET hash-max-ziplist-value
    CONFIG GET set-max-intset-entries
    CONFIG GET zset-max-ziplist-entries
    CONFIG GET zset-max-listpack-value
    CONFIG SET hash-max-ziplist-entries 3
    CONFIG GET hash-max-listpack-entries
    CONFIG SET hash-max-listpack-value 1kb
    CONFIG GET hash-max-ziplist-value
    CONFIG SET zset-max-ziplist-value 2
    CONFIG GET zset-max-listpack-value
    CONFIG SET set-max-intset-entries 0
    CONFIG GET set-max-intset-entries
    CONFIG SET set-max-intset-entries x
    CONFIG SET zset-max-listpack-entries 1k
    """)


def test_list_options(limits):
    """CONFIG of list-max-listpack-size (alias list-max-ziplist-size) and
    list-compress-depth, errors included; a list is a quicklist whatever they say."""
    limits.run("""
    CONFIG GET list-max-listpack-size
    CONFIG GET list-max-ziplist-size
    CONFIG GET list-compress-depth
    CONFIG SET list-max-ziplist-size 4
    CONFIG GET list-max-listpack-size
    CONFIG SET list-max-listpack-size -5
    CONFIG GET list-max-ziplist-size
    CONFIG SET list-max-listpack-size -2147483648
    CONFIG SET list-max-listpack-size 2147483648
    CONFIG SET list-max-listpack-size x
    CONFIG SET list-compress-depth 2
    CONFIG GET list-compress-depth
    CONFIG SET list-compress-depth -1
    RPUSH l a b c d e f
    OBJECT ENCODING l
    LRANGE l 0 -1
    """)


def test_hash_encoding_follows_the_limits(limits):
    limits.run("""
    CONFIG SET hash-max-ziplist-entries 2
    CONFIG SET hash-max-ziplist-value 4
    HSET h a 1 b 2
    OBJECT ENCODING h
    HSCAN h 0 COUNT 1
    HSET h c 3
    OBJECT ENCODING h
    HDEL h c
    OBJECT ENCODING h
    HSET v f 12345
    OBJECT ENCODING v
    HSET w f 1234
    OBJECT ENCODING w
    HINCRBY w f 100000
    OBJECT ENCODING w
    CONFIG SET hash-max-listpack-entries 0
    HSET e f v
    OBJECT ENCODING e
    """)


def test_set_encoding_follows_the_limit(limits):
    limits.run("""
    CONFIG SET set-max-intset-entries 3
    SADD s 3 1 2
    OBJECT ENCODING s
    SMEMBERS s
    SSCAN s 0 COUNT 1
    SADD s 4
    OBJECT ENCODING s
    SREM s 4
    OBJECT ENCODING s
    SADD t 1 2
    SADD u 3 2
    SUNIONSTORE d t u
    OBJECT ENCODING d
    SINTERSTORE d t u
    OBJECT ENCODING d
    CONFIG SET set-max-intset-entries 0
    SADD e 1
    OBJECT ENCODING e
    """)


def test_zset_encoding_follows_the_limits(limits):
    limits.run("""
    CONFIG SET zset-max-ziplist-entries 2
    CONFIG SET zset-max-ziplist-value 3
    ZADD z 1 a 2 b
    OBJECT ENCODING z
    ZSCAN z 0 COUNT 1
    ZADD z 3 c
    OBJECT ENCODING z
    ZREM z c
    OBJECT ENCODING z
    ZADD y 1 abcd
    OBJECT ENCODING y
    ZADD x 1 abc
    OBJECT ENCODING x
    ZADD src 1 a 2 b 3 c
    ZRANGESTORE dst src 0 1
    OBJECT ENCODING dst
    ZRANGESTORE dst src 0 2
    OBJECT ENCODING dst
    ZUNIONSTORE dst 1 x
    OBJECT ENCODING dst
    CONFIG SET zset-max-listpack-entries 0
    ZADD e 1 a
    OBJECT ENCODING e
    """)


def test_object_refcount(diff):
    """Redis shares one object per integer 0..9999 (refcount INT_MAX); others have 1."""
    diff.run("""
    SET n 123
    SET big 12345
    SET neg -5
    SET s abc
    INCR c
    SET e 0 EX 100
    SET a 1
    APPEND a 2
    SET lz 0123
    SET nine 9999
    SET ten 10000
    GETSET g 7
    LPUSH l 1
    HSET h f 1
    OBJECT REFCOUNT n
    OBJECT REFCOUNT big
    OBJECT REFCOUNT neg
    OBJECT REFCOUNT s
    OBJECT REFCOUNT c
    OBJECT REFCOUNT e
    OBJECT REFCOUNT a
    OBJECT REFCOUNT lz
    OBJECT REFCOUNT nine
    OBJECT REFCOUNT ten
    OBJECT REFCOUNT g
    OBJECT REFCOUNT l
    OBJECT REFCOUNT h
    OBJECT REFCOUNT nokey
    OBJECT REFCOUNT
    OBJECT REFCOUNT a b
    """)


def test_copied_integers_are_not_shared(diff):
    """COPY duplicates a value (dupStringObject): a copied integer 0..9999 is an
    object of its own, which MOVE, RENAME and EXPIRE keep and a new write ends."""
    diff.run("""
    SET n 42
    COPY n c
    OBJECT REFCOUNT n
    OBJECT REFCOUNT c
    OBJECT ENCODING c
    GET c
    COPY c cc
    OBJECT REFCOUNT cc
    RENAME cc r
    OBJECT REFCOUNT r
    EXPIRE r 100
    OBJECT REFCOUNT r
    MOVE r 1
    SELECT 1
    OBJECT REFCOUNT r
    SELECT 0
    COPY c d DB 2
    SELECT 2
    OBJECT REFCOUNT d
    SELECT 0
    SET big 12345
    COPY big bigc
    OBJECT REFCOUNT bigc
    SET s hello
    COPY s sc
    OBJECT REFCOUNT sc
    OBJECT ENCODING sc
    COPY c c2
    INCR c2
    OBJECT REFCOUNT c2
    COPY c c3
    SET c3 7
    OBJECT REFCOUNT c3
    COPY c c4
    APPEND c4 1
    OBJECT REFCOUNT c4
    OBJECT ENCODING c4
    """)
    for key in ("n", "c"):
        kv, ref = (debug_refcount(client.call("DEBUG", "OBJECT", key)) for client in (diff.kv, diff.ref))
        assert kv == ref, key
    # A reload shares small integers again, as Redis' RDB loading does.
    diff.run("""
    DEBUG RELOAD
    OBJECT REFCOUNT c
    """)


def debug_refcount(reply):
    return next(f for f in reply.split() if f.startswith(b"refcount:"))


def test_object_help_is_redis(diff):
    diff("OBJECT", "HELP")
