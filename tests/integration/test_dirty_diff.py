"""INFO persistence rdb_changes_since_last_save (Redis' dirty counter) against
Debian's redis-server 7.0: after every command of a long script, the counter
must have moved by the same amount on both servers."""
import time

import pytest

from conftest import Differ, encode

SCRIPT = r"""
SET s 1
SET s 2 NX
SET s 3 XX
SET nx 1 XX
SET s 4 GET
SET s 5 NX GET
SET fresh 5 NX GET
SET s 6 XX GET
SET missing 6 XX GET
SET s 7 EX 100
SET s 8 KEEPTTL
SETNX s 1
SETNX s2 1
SETEX s3 100 v
PSETEX s4 100000 v
GETSET s 9
GETSET gs 1
GETDEL s
GETDEL s
GETEX s2
GETEX s2 EX 100
GETEX s2 PERSIST
GETEX s2 PERSIST
GETEX nosuch EX 10
SETRANGE s2 0 abc
SETRANGE s2 0 ""
SETRANGE nosuch2 0 ""
MSET a 1 b 2 c 3
MSET a 1 a 2
MSETNX a 1 z 2
MSETNX y 1 z 2
INCR n
DECR n
INCRBY n 5
DECRBY n 2
INCRBYFLOAT n 1.5
INCR s3
APPEND s2 xyz
APPEND s2 ""
APPEND newapp ""
DEL a b nosuch
UNLINK c y
EXPIRE z 100
EXPIRE nosuch 100
PEXPIRE z 100000 NX
PEXPIRE z 100000 XX
EXPIREAT z 1
PERSIST s3
PERSIST s4
PERSIST s4
RENAME s4 s5
RENAME s5 s5
RENAME nosuch s5
RENAMENX s5 n
RENAMENX s5 s6
MOVE s6 1
COPY n n2
COPY n n2
SWAPDB 0 1
SWAPDB 0 1
SWAPDB 0 0
HSET h a 1 b 2
HSET h a 1 b 3 c 4
HMSET h a 1
HSETNX h a 1
HSETNX h z 1
HINCRBY h n 1
HINCRBYFLOAT h f 1.5
HDEL h a b nosuch
HDEL nosuch a
LPUSH l a b c
RPUSH l d e
LPUSHX l x y
LPUSHX nol x
RPUSHX l z
LINSERT l BEFORE a q
LINSERT l BEFORE nosuch q
LSET l 0 w
LPOP l
RPOP l 2
LPOP l 0
LPOP nol
RPUSH l a a b a
LREM l 2 a
LREM l 0 nosuch
LTRIM l 1 2
LTRIM l 0 -1
LMOVE l l2 LEFT RIGHT
RPOPLPUSH l2 l
LMPOP 2 nol l LEFT COUNT 5
LMPOP 1 nol LEFT
SADD st a b c
SADD st a d
SREM st a nosuch
SMOVE st st2 b
SMOVE st st2 nosuch
SADD st2 c
SMOVE st st2 c
SMOVE st2 st2 c
~SPOP st
SADD st a b c d e
~SPOP st 2
~SPOP st 10
SADD st3 a b
SINTERSTORE dst st3 nosuch
SINTERSTORE dst2 st3 nosuch
SUNIONSTORE dst st3 st2
SDIFFSTORE dst st3 st3
ZADD z1 1 a 2 b
ZADD z1 1 a 3 b 4 c
ZADD z1 CH 5 a 5 b
ZADD z1 NX 1 a 9 d
ZADD z1 XX 1 a 9 e
ZADD z1 INCR 1 a
ZADD z1 GT 0 a
ZINCRBY z1 1 a
ZREM z1 a nosuch
ZADD z1 1 m 2 n 3 o 4 p
ZREMRANGEBYSCORE z1 0 1
ZREMRANGEBYRANK z1 0 0
ZREMRANGEBYLEX z1 - +
ZADD z1 1 a 2 b 3 c 4 d
ZPOPMIN z1
ZPOPMAX z1 2
ZPOPMIN nosuch
ZMPOP 1 z1 MIN COUNT 5
ZADD z2 1 a 2 b
ZUNIONSTORE zd 1 z2
ZINTERSTORE zd 2 z2 nosuch
ZINTERSTORE zd 2 z2 nosuch
ZDIFFSTORE zd2 1 z2
ZRANGESTORE zd3 z2 0 -1
GEOADD g 13.36 38.11 a 15.08 37.50 b
GEOADD g 13.36 38.11 a 15.08 37.51 b 1 1 c
GEOSEARCHSTORE gd g FROMLONLAT 15 37 BYRADIUS 200 km
GEOSEARCHSTORE gd g FROMLONLAT 0 0 BYRADIUS 1 km
GEORADIUS g 15 37 200 km STORE gd2
GEORADIUS g 15 37 200 km
SETBIT bm 7 1
SETBIT bm 7 1
SETBIT bm 7 0
SETBIT bm 100 0
SETBIT bm2 0 0
BITOP OR bd bm bm2
BITOP AND bd nosuch
BITFIELD bf SET u8 0 1
BITFIELD bf SET u8 0 1
BITFIELD bf SET u8 0 2 SET u8 8 0 INCRBY u8 0 0
BITFIELD bf GET u8 0
PFADD hll a b c
PFADD hll a
PFADD hll2
PFCOUNT hll
PFCOUNT hll
PFADD hll d
PFCOUNT hll hll2
PFMERGE hll3 hll hll2
SORT l STORE sl
RPUSH sortme 3 1 2
SORT sortme STORE sl
SORT nosuch STORE sl
SORT sortme
XADD x 0-1 a 1
XADD x NOMKSTREAM 0-2 a 2
XADD nox NOMKSTREAM 0-3 a 1
XADD x MAXLEN 1 0-4 a 3
XDEL x 0-1 0-4 0-9
XADD x 0-5 a 3
XTRIM x MAXLEN 0
XADD x 1-1 a 1
XADD x 1-2 a 2
XSETID x 5-0
XGROUP CREATE x g 0
XGROUP CREATE x g 0
XGROUP CREATECONSUMER x g c1
XGROUP CREATECONSUMER x g c1
XREADGROUP GROUP g c2 COUNT 10 STREAMS x >
XREADGROUP GROUP g c2 COUNT 10 STREAMS x >
XREADGROUP GROUP g c2 COUNT 10 STREAMS x 0
XACK x g 1-1 9-9
XCLAIM x g c3 0 1-2
XCLAIM x g c3 0 1-2 JUSTID
XADD x 6-1 a 1
XREADGROUP GROUP g c2 STREAMS x >
XDEL x 6-1
XCLAIM x g c4 0 6-1 1-2
XAUTOCLAIM x g c5 0 0
XAUTOCLAIM x g c5 0 0 COUNT 1 JUSTID
XGROUP SETID x g $
XGROUP DELCONSUMER x g c1
XGROUP DESTROY x g
XGROUP DESTROY x g
FLUSHDB
SET a 1
SET b 2
FLUSHDB ASYNC
FLUSHDB
SELECT 1
SET k 1
SELECT 0
SET k 1
FLUSHALL
FLUSHALL
SET b 1
EXPIRE b 0
EXPIRE b 100
"""


def _dirty(raw):
    info = raw.call("INFO", "persistence").decode()
    for line in info.split("\r\n"):
        if line.startswith("rdb_changes_since_last_save:"):
            return int(line.split(":", 1)[1])
    raise AssertionError("no rdb_changes_since_last_save")


def _run(d, lines):
    in_multi = False
    for line in lines:
        line = line.strip()
        if not line:
            continue
        random = line.startswith("~")  # a random reply: only the counts are compared
        args = [a if a != '""' else "" for a in line.lstrip("~").split()]
        if not in_multi:
            before = (_dirty(d.kv), _dirty(d.ref))
        d.both(*args) if random else d(*args)
        # Inside MULTI the transaction's total is compared at EXEC.
        in_multi = (in_multi or args[0].upper() == "MULTI") and args[0].upper() not in ("EXEC", "DISCARD")
        if in_multi:
            continue
        after = (_dirty(d.kv), _dirty(d.ref))
        assert after[0] - before[0] == after[1] - before[1], \
            f"{line}: kvrocks +{after[0] - before[0]}, redis +{after[1] - before[1]}"


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def d(request, kvrocks_server, redis_ref):
    """RESP3 too: several rules read the reply (nested pops, XREADGROUP's map)."""
    diff = Differ(kvrocks_server.port, redis_ref.port)
    if request.param == 3:
        diff.both("HELLO", "3")
    yield diff
    diff.close()


def test_every_command_counts_its_changes_as_redis(d):
    _run(d, SCRIPT.strip().splitlines())


def test_transactions_and_scripts(d):
    _run(d, """
        MULTI
        SET a 1
        HSET h a 1 b 2
        INCR a
        EXEC
        MULTI
        SET a 1
        DISCARD
    """.splitlines())
    for script in ("redis.call('set', 'a', 1); redis.call('sadd', 's', 1, 2, 3); return 1",
                   "redis.call('del', 'a', 's'); return 1",
                   "redis.call('set', 'x', 1); return redis.call('incr', 'nosuch-type-ok')",
                   "redis.call('set', 'y', 1); return redis.call('hset', 'x', 'a', 1)"):
        before = (_dirty(d.kv), _dirty(d.ref))
        d("EVAL", script, "0")
        after = (_dirty(d.kv), _dirty(d.ref))
        assert after[0] - before[0] == after[1] - before[1], script


def test_functions(d):
    lib = "#!lua name=dl\nredis.register_function('f', function() return redis.call('set', 'fk', 1) end)"
    for args in (("FUNCTION", "LOAD", lib), ("FUNCTION", "LOAD", lib), ("FCALL", "f", "0"),
                 ("FUNCTION", "DELETE", "dl"), ("FUNCTION", "DELETE", "dl"), ("FUNCTION", "FLUSH")):
        before = (_dirty(d.kv), _dirty(d.ref))
        d(*args)
        after = (_dirty(d.kv), _dirty(d.ref))
        assert after[0] - before[0] == after[1] - before[1], args


def test_save_resets_the_counter(d):
    d("SET", "a", "1")
    d("SAVE")
    assert _dirty(d.kv) == _dirty(d.ref) == 0
    d("SET", "a", "2")
    assert _dirty(d.kv) == _dirty(d.ref) == 1


def _delta(d, fn):
    before = (_dirty(d.kv), _dirty(d.ref))
    fn()
    after = (_dirty(d.kv), _dirty(d.ref))
    return after[0] - before[0], after[1] - before[1]


def test_restore_counts_what_it_writes(d):
    d("SET", "src", "v")
    d("RPUSH", "lsrc", "a", "b")
    payloads = {k: [c.call("DUMP", k).split(b"\r\n", 1)[1][:-2] for c in (d.kv, d.ref)] for k in ("src", "lsrc")}
    for key, args in (("src", ("0",)), ("src", ("0",)), ("src", ("0", "REPLACE")), ("lsrc", ("1", "ABSTTL")),
                      ("lsrc", ("1", "ABSTTL", "REPLACE")), ("lsrc", ("1", "ABSTTL", "REPLACE"))):
        def run():
            replies = [c.call("RESTORE", "dst-" + key, args[0], p, *args[1:])
                       for c, p in zip((d.kv, d.ref), payloads[key])]
            assert replies[0] == replies[1], (key, args)
        a, b = _delta(d, run)
        assert a == b, (key, args)


def test_blocked_pops_count_when_served(d, kvrocks_server, redis_ref):
    d("XGROUP", "CREATE", "bx", "g", "$", "MKSTREAM")
    for cmd, push in ((("BLPOP", "bq", "5"), ("RPUSH", "bq", "a", "b")),
                      (("BZPOPMIN", "bz", "5"), ("ZADD", "bz", "1", "a", "2", "b")),
                      (("BLMPOP", "5", "1", "bq2", "LEFT", "COUNT", "3"), ("RPUSH", "bq2", "a", "b")),
                      (("BLMOVE", "bq3", "bq4", "LEFT", "RIGHT", "5"), ("RPUSH", "bq3", "a")),
                      (("BZMPOP", "5", "1", "bz2", "MAX", "COUNT", "2"), ("ZADD", "bz2", "1", "a", "2", "b", "3", "c")),
                      (("XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "bx", ">"),
                       ("XADD", "bx", "1-1", "f", "v"))):
        blocked = Differ(kvrocks_server.port, redis_ref.port, flush=False)

        def run():
            for c in (blocked.kv, blocked.ref):
                c.send_raw(encode(cmd))
            for c in (d.kv, d.ref):  # until both servers hold the client blocked
                deadline = time.time() + 10
                while b"blocked_clients:1" not in c.call("INFO", "clients") and time.time() < deadline:
                    time.sleep(0.01)
            d(*push)
            assert blocked.kv.read_reply() == blocked.ref.read_reply()
        a, b = _delta(d, run)
        assert a == b, cmd
        blocked.close()
