"""Arguments holding a NUL byte, compared byte for byte with Debian's redis-server.

Redis keeps arguments binary-safe but reads many of them as C strings: option
tokens through strcasecmp ("NX\\0junk" is NX), stream ids and markers ("*", "$",
">", "~", "="), lex range ends ("-", "+"), BITFIELD types, and every argument an
error message quotes through printf's %s (cut at the NUL). Not compared: a
command, subcommand or config name that is a known one plus a NUL and more
("GET\\0x"): Redis' dicts hash the whole name but compare up to the NUL, so such
a name is unknown unless it shares a hash bucket with the known one, which
depends on Redis' random per-process hash seed (kvrocks: always unknown).
"""
import pytest

from conftest import RawClient

Z = "\x00junk"
N = "a\x00b"

SETUP = [("XADD", "x1", "1-1", "a", "b"), ("XGROUP", "CREATE", "x1", "g", "0"), ("SET", "s", "v"),
         ("ZADD", "z", "0", "m", "0", "n"), ("RPUSH", "l", "a"), ("GEOADD", "g", "1", "1", "a"), ("SADD", "set", "a"),
         ("SET", "f", "1")]

# Errors that quote an argument.
QUOTED = [
    ("FOO\x00BAR", "x\x00y", "z"), ("CONFIG", "SET", "max\x00xx", "1"), ("CONFIG", "FOO\x00x"), ("SCRIPT", N),
    ("XINFO", N), ("MEMORY", N),
    ("ACL", "CAT", N), ("ACL", "DRYRUN", N, "get", "k"), ("ACL", "DRYRUN", "default", N, "k"),
    ("ACL", "SETUSER", "u", "foo\x00"), ("ACL", "SETUSER", "u\x00x", "on"), ("ACL", "SETUSER", "u x", "on"),
    ("ACL", "SETUSER", "u\tx"), ("EXPIRE", "s", "10", N), ("FUNCTION", "LOAD", N, "x"),
    ("CLIENT", "KILL", "TYPE", N), ("CLIENT", "KILL", "USER", N), ("CLIENT", "LIST", "TYPE", N),
    ("HELLO", "3", N), ("XGROUP", "DELCONSUMER", "x1", N, "c1"), ("XREADGROUP", "GROUP", N, "c", "STREAMS", "x1", ">"),
    ("XPENDING", "x1", N), ("XPENDING", "x\x001", "g"), ("XCLAIM", "x1", N, "c", "0", "1-1"),
    ("XCLAIM", "x1", "g", "c", "0", "1-1", N), ("XAUTOCLAIM", "x1", N, "c", "0", "0"), ("XINFO", "CONSUMERS", "x1", N),
    ("XGROUP", "SETID", "x1", N, "0"), ("XGROUP", "CREATECONSUMER", "x1", N, "c"),
]

# Option tokens and markers read up to their NUL.
TOKENS = [
    ("SET", "k1", "v", "NX" + Z), ("SET", "k2", "v", "EX" + Z, "10"), ("SET", "k3", "v", "GET" + Z),
    ("ZADD", "z", "NX" + Z, "1", "m2"), ("ZRANGE", "z", "0", "-1", "WITHSCORES" + Z), ("EXPIRE", "s", "100", "NX" + Z),
    ("GEORADIUS", "g", "1", "1", "100", "km" + Z), ("LPOS", "l", "a", "RANK" + Z, "1"),
    ("LINSERT", "l", "BEFORE" + Z, "a", "b"), ("BITCOUNT", "s", "0", "1", "BIT" + Z), ("CLIENT", "KILL", "TYPE", "pubsub" + Z),
    ("CLIENT", "NO-EVICT", "on" + Z), ("XTRIM", "x1", "MAXLEN" + Z, "10"), ("XREAD", "COUNT" + Z, "1", "STREAMS", "x1", "0"),
    ("LMOVE", "l", "l2", "LEFT" + Z, "RIGHT"), ("ZUNIONSTORE", "d", "1", "z", "AGGREGATE" + Z, "MAX"),
    ("SORT", "l", "ALPHA" + Z), ("BITFIELD", "s", "GET", "u8" + Z, "0"), ("BITOP", "AND" + Z, "d", "s"),
    ("GETEX", "s", "PERSIST" + Z), ("COPY", "s", "s9", "REPLACE" + Z), ("SINTERCARD", "1", "set", "LIMIT" + Z, "1"),
    ("LMPOP", "1", "l9", "LEFT" + Z), ("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT" + Z, "0", "1"),
    ("SCRIPT", "FLUSH", "SYNC" + Z), ("CLIENT", "PAUSE", "1", "WRITE" + Z), ("CLIENT", "UNPAUSE"),
    ("MEMORY", "USAGE", "nokey", "SAMPLES" + Z, "1"), ("XINFO", "STREAM", "nokey", "FULL" + Z),
    ("XGROUP", "CREATE", "x1", "g2", "$" + Z, "MKSTREAM" + Z), ("XADD", "nokey", "NOMKSTREAM" + Z, "*" + Z, "a", "b"),
    ("XADD", "x1", "5" + Z, "a", "b"), ("XADD", "x1", "6-" + Z, "a", "b"), ("XADD", "x1", "MAXLEN", "~" + Z, "10", "7-1", "a", "b"),
    ("XTRIM", "x1", "MAXLEN", "=" + Z, "10"), ("XREAD", "STREAMS", "x1", "$" + Z),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "x1", ">" + Z), ("XRANGE", "x1", "-" + Z, "+" + Z),
    ("XRANGE", "x1", "(1" + Z, "+"), ("XPENDING", "x1", "g", "IDLE", "3600000", "-" + Z, "+" + Z, "10"), ("XSETID", "x1", "9-0" + Z),
    ("ZRANGEBYLEX", "z", "-" + Z, "+" + Z), ("ZRANGE", "z", "-" + Z, "+", "BYLEX"),
]


@pytest.mark.parametrize("calls", [QUOTED, TOKENS], ids=["quoted-in-errors", "tokens"])
def test_nul_in_arguments_like_redis(kvrocks_server, redis_ref, calls):
    replies = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.call("FLUSHALL")
        for setup in SETUP:
            c.call(*setup)
        replies.append([c.call(*call) for call in calls])
        c.call("ACL", "DELUSER", "u")
        c.close()
    for call, a, b in zip(calls, *replies):
        assert a == b, f"{call!r}: kvrocks {a!r}, redis {b!r}"


def test_sort_alpha_compares_values_as_c_strings_unless_it_stores(kvrocks_server, redis_ref):
    # Redis' SORT ... ALPHA collates with strcoll ("" and "\0x" tie, and keep their
    # order), but compares binary-safe when it STOREs.
    calls = [("RPUSH", "l", "\x00x", "", "b", "\x00", "a\x00z", "a", ""),
             ("MSET", "w_\x00x", "\x00b", "w_", "\x00a", "w_b", "b", "w_a\x00z", "a\x00", "w_a", "a"),
             ("SORT", "l", "ALPHA"), ("SORT", "l", "ALPHA", "DESC"), ("SORT", "l", "BY", "w_*", "ALPHA"),
             ("SORT", "l", "BY", "w_*", "ALPHA", "DESC"), ("SORT", "l", "ALPHA", "STORE", "d"), ("LRANGE", "d", "0", "-1"),
             ("SORT", "l", "BY", "w_*", "ALPHA", "DESC", "STORE", "d"), ("LRANGE", "d", "0", "-1")]
    replies = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.call("FLUSHALL")
        replies.append([c.call(*call) for call in calls])
        c.close()
    for call, a, b in zip(calls, *replies):
        assert a == b, f"{call!r}: kvrocks {a!r}, redis {b!r}"
