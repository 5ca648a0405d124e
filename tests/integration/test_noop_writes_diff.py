"""Writes that may change nothing, against Debian's redis-server 7.0: whether
each one fails a WATCH of its key (Redis' signalModifiedKey) and which keyspace
events it sends must be the same. Each case: a setup on an empty database, then
the command."""
import shlex

import pytest

from conftest import RawClient

CASES = [
    ('SET k hello', 'SETBIT k 23 0'),
    ('SET k hello', 'SETBIT k 23 1'),
    ('SET k hello', 'BITFIELD k SET u8 0 104'),
    ('SET k hello', 'BITFIELD k SET i8 0 1000 OVERFLOW FAIL SET u8 8 1000'),
    ('PFADD k a b', 'PFDEBUG TODENSE k'),
    ('PFADD k a b', 'PFDEBUG GETREG k'),
    ('XADD k 1-0 a 1', 'XSETID k 5-0'),
    ('XADD k 1-0 a 1', 'XGROUP CREATE k g 0'),
    ('', 'XGROUP CREATE k g $ MKSTREAM'),
    ('XGROUP CREATE k g $ MKSTREAM', 'XGROUP SETID k g 0'),
    ('XGROUP CREATE k g $ MKSTREAM', 'XGROUP CREATECONSUMER k g c'),
    ('XGROUP CREATE k g $ MKSTREAM', 'XGROUP DESTROY k g'),
    ('SET k v', 'SET k v'),
    ('SET k v', "SETRANGE k 0 ''"),
    ('SET k v', "APPEND k ''"),
    ('RPUSH k a b', 'LREM k 0 x'),
    ('RPUSH k a b', 'LTRIM k 0 -1'),
    ('RPUSH k a b', 'LSET k 0 a'),
    ('RPUSH k a b', 'LINSERT k BEFORE zz x'),
    ('HSET k f v', 'HSET k f v'),
    ('HSET k f v', 'HDEL k g'),
    ('HSET k f 1', 'HINCRBY k f 0'),
    ('HSET k f 1', 'HINCRBYFLOAT k f 0'),
    ('HSET k f v', 'HSETNX k f w'),
    ('SADD k a', 'SADD k a'),
    ('SADD k a', 'SREM k b'),
    ('SADD k a', 'SMOVE k k a'),
    ('SADD k a', 'SMOVE k k b'),
    ('ZADD k 1 a', 'ZADD k 1 a'),
    ('ZADD k 1 a', 'ZADD k INCR 0 a'),
    ('ZADD k 1 a', 'ZINCRBY k 0 a'),
    ('ZADD k 1 a', 'ZREM k b'),
    ('ZADD k 1 a', 'ZREMRANGEBYSCORE k 5 6'),
    ('ZADD k 1 a', 'ZADD k GT 0 a'),
    ('ZADD k 1 a', 'ZADD k NX 5 a'),
    ('SET k v EX 100', 'EXPIRE k 100'),
    ('SET k v', 'PERSIST k'),
    ('SET k v', 'RENAME k k'),
    ('SET k v', 'RENAMENX k k'),
    ('SET k v', 'GETEX k'),
    ('SET k v', 'GETEX k PERSIST'),
    ('SET k v', 'BITOP OR k nosrc'),
    ('', 'BITOP OR k nosrc'),
    ('SET k v', 'SINTERSTORE k nos'),
    ('', 'SINTERSTORE k nos'),
    ('RPUSH k a', 'SORT nos STORE k'),
    ('', 'SORT nos STORE k'),
    ('XADD k 1-0 a 1', 'XTRIM k MAXLEN 5'),
    ('XADD k 1-0 a 1', 'XDEL k 5-0'),
    ('SET k v', 'SETNX k w'),
    ('SET k v', 'MSETNX k w z y'),
    ('', 'LPUSHX k a'),
    ('SADD k a b', 'SPOP k 0'),
    ('RPUSH k a b', 'LPOP k 0'),
    ('RPUSH k a b', 'RPOP k 0'),
    ('ZADD k 1 a', 'ZPOPMAX k 0'),
    ('RPUSH k a', 'RPOPLPUSH k k'),
    ('RPUSH k a b', 'LMOVE k k LEFT LEFT'),
    ('SET k 1', 'INCRBY k 0'),
    ('SET k 1', 'INCRBYFLOAT k 0'),
    ('SET k v', 'DEL nothere'),
    ('SET k v', 'PEXPIRE k -1'),
    ('SET k v', 'TOUCH k'),
    ('GEOADD k 13.361389 38.115556 p', 'GEOADD k 13.361389 38.115556 p'),
    ('ZADD s 1 a', 'ZRANGESTORE k s 5 6'),
    ('', 'ZRANGESTORE k s 5 6'),
    ('ZADD k 1 a', 'ZUNIONSTORE k 1 nos'),
    ('', 'ZUNIONSTORE k 1 nos'),
    ('PFADD k a', 'PFADD k a'),
    ('PFADD k a', 'PFMERGE k'),
    ('PFADD k a', 'PFCOUNT k'),
    ('SET k v', 'SET k v KEEPTTL'),
    ('SET k v', 'SET k v NX'),
    ('SET k v', 'SET k w XX GET'),
    ('SET k v', 'GETDEL nok'),
    ('SET k v', 'COPY k k'),
    ('SET k v', 'COPY nos k'),
    ('SET k v', 'MOVE k 0'),
    ('SET k v', 'EXPIRE k 100 XX'),
    ('SET k v EX 100', 'EXPIRE k 200 LT'),
    ('HSET k f v', 'HRANDFIELD k 1'),
    ('LPUSH k a', 'LPOS k a'),
    ('LPUSH k a', 'BLPOP k 0.01'),
    ('LPUSH k a', 'LMPOP 1 k LEFT'),
    ('ZADD k 1 a', 'ZPOPMIN k 0'),
    ('ZADD k 1 a', 'ZMPOP 1 k MIN COUNT 1'),
    ('SET k v', "SETRANGE k 1 ''"),
    ('SADD k a', 'SINTERCARD 1 k'),
    ('SADD k a', 'SMOVE nos k a'),
    ('SADD k a', 'SDIFFSTORE k k'),
    ('SADD k a', 'SUNIONSTORE k k'),
    ('HSET k f v', 'HDEL k f'),
    ('SET k v', 'FLUSHDB'),
    ('', 'FLUSHDB'),
    ('SET k v', 'SWAPDB 0 1'),
    ('SET k v', 'SWAPDB 0 0'),
    ('XADD k 1-0 a 1', 'XADD k NOMKSTREAM MAXLEN 0 2-0 a 1'),
    ('LPUSH k a', 'LTRIM k 1 0'),
    ('SET k v', 'LCS k k'),
    ('SET k 10', 'DECRBY k 0'),
    ('SADD k 1 2', 'SREM k 1 2'),
    ('SET k v', 'GETRANGE k 0 -1'),
    ('SET k v', 'EXPIRETIME k'),
    ('SET k v', 'OBJECT FREQ k'),
    ('SET k v', 'EVAL "return 1" 1 k'),
    ('SET k v', 'EVAL "redis.call(\'set\',KEYS[1],\'v\') return 1" 1 k'),
    ('SET k v', 'SUBSTR k 0 1'),
    ('ZADD k 1 a', 'ZRANGE k 0 -1'),
    ('SET k v', 'RESTORE k 0 x REPLACE'),
]


def _run_case(c, setup, command):
    c.call("SELECT", "0")
    c.call("FLUSHALL")
    if setup:
        c.call(*shlex.split(setup))


def test_watch_sees_the_writes_redis_signals(kvrocks_server, redis_ref):
    kv, ref = RawClient(kvrocks_server.port), RawClient(redis_ref.port)
    differences = []
    for setup, command in CASES:
        got = []
        for c in (kv, ref):
            _run_case(c, setup, command)
            c.call("WATCH", "k")
            reply = c.call(*shlex.split(command))
            c.call("MULTI")
            c.call("PING")
            got.append((reply, c.call("EXEC")))
        if got[0] != got[1]:
            differences.append(f"{setup} | {command}: kvrocks {got[0]!r}, redis {got[1]!r}")
    assert not differences, "\n".join(differences)



@pytest.mark.parametrize("flush", [("FLUSHDB",), ("FLUSHALL",), ("SWAPDB", "1", "2")])
def test_watch_sees_writes_before_a_flush_in_the_same_transaction(kvrocks_server, redis_ref, flush):
    """The writes a transaction made before a FLUSHDB of another database (which
    commits them midway) still dirty the keys' watchers."""
    got = []
    for port in (kvrocks_server.port, redis_ref.port):
        watcher, writer = RawClient(port), RawClient(port)
        writer.call("FLUSHALL")
        watcher.call("WATCH", "k")
        for cmd in (("MULTI",), ("SET", "k", "v"), ("SELECT", "1"), ("SET", "z", "1"), flush, ("SELECT", "0")):
            writer.call(*cmd)
        got.append(writer.call("EXEC"))
        watcher.call("MULTI")
        watcher.call("PING")
        got.append(watcher.call("EXEC"))
        watcher.close()
        writer.close()
    assert got[:2] == got[2:]
    assert got[3] == b"*-1\r\n"


def _events(port):
    """The keyevent notifications of each case, read up to a PUBLISH sent after it."""
    c, sub = RawClient(port), RawClient(port)
    c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    sub.send_raw(b"*2\r\n$10\r\nPSUBSCRIBE\r\n$11\r\n__keyevent*\r\n")
    sub.read_reply()
    sub.send_raw(b"*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nmark\r\n")
    sub.read_reply()
    out = []
    try:
        for setup, command in CASES:
            _run_case(c, setup, command)
            c.call("PUBLISH", "mark", "before")
            while b"before" not in sub.read_reply():
                pass
            c.call(*shlex.split(command))
            c.call("PUBLISH", "mark", "after")
            events = []
            while True:
                m = sub.read_reply()
                if m.startswith(b"*3\r\n$7\r\nmessage\r\n"):
                    break
                events.append(m.split(b"\r\n")[-4])  # the channel: __keyevent@<db>__:<event>
            out.append(events)
    finally:
        c.call("CONFIG", "SET", "notify-keyspace-events", "")
    return out


def test_keyspace_events_of_writes_that_may_change_nothing(kvrocks_server, redis_ref):
    kv, ref = _events(kvrocks_server.port), _events(redis_ref.port)
    differences = [f"{s} | {c}: kvrocks {a!r}, redis {b!r}" for (s, c), a, b in zip(CASES, kv, ref) if a != b]
    assert not differences, "\n".join(differences)
