"""OBJECT IDLETIME, DEBUG OBJECT's lru fields and RESTORE ... IDLETIME against
Debian's redis-server 7.0: which commands refresh a key's last access time
(Redis' lookupKey) and which leave it (LOOKUP_NOTOUCH: EXISTS, TYPE, TTL,
OBJECT ...). Every key of a case is first made 1000 s idle with RESTORE ...
IDLETIME 1000 on both servers; after the command, each key must be idle for
less than 500 s on both servers or for at least 1000 s on both."""
import os
import shutil

import pytest

from conftest import Kvrocks, RealRedis, assert_idle_keys, encode, write_idle_keys

IDLE = 1000

SETUP = """
SET s 10
SET s2 abc
RPUSH l a b c
HSET h f v
ZADD z 1 a
SADD st a b
SADD st2 b c
XADD x 1-1 f v
PFADD hll a b
"""
KEYS = ["s", "s2", "l", "h", "z", "st", "st2", "x", "hll"]

# (command, keys whose touch is compared); a list of commands runs them in order.
CASES = [
    # Looked up without a touch.
    (["EXISTS", "s", "l"], ["s", "l"]),
    (["TYPE", "s"], ["s"]),
    (["TTL", "s"], ["s"]),
    (["PTTL", "s"], ["s"]),
    (["EXPIRETIME", "s"], ["s"]),
    (["PEXPIRETIME", "s"], ["s"]),
    (["OBJECT", "ENCODING", "s"], ["s"]),
    (["OBJECT", "REFCOUNT", "l"], ["l"]),
    (["OBJECT", "FREQ", "s"], ["s"]),
    (["MEMORY", "USAGE", "h"], ["h"]),
    (["DEBUG", "OBJECT", "z"], ["z"]),
    (["SCAN", "0"], KEYS),
    (["SCAN", "0", "TYPE", "string"], KEYS),
    (["KEYS", "*"], KEYS),
    (["RANDOMKEY"], KEYS),
    (["DBSIZE"], KEYS),
    ([["WATCH", "s", "l"], ["UNWATCH"]], ["s", "l"]),
    # Looked up (read or write): touched.
    (["GET", "s"], ["s", "s2"]),
    (["TOUCH", "s", "l", "nosuch"], ["s", "l", "h"]),
    (["MGET", "s", "s2", "nosuch"], ["s", "s2"]),
    (["STRLEN", "s2"], ["s2"]),
    (["GETRANGE", "s2", "0", "1"], ["s2"]),
    (["APPEND", "s2", "x"], ["s2"]),
    (["INCR", "s"], ["s"]),
    (["SET", "s", "v", "NX"], ["s"]),
    (["SET", "s", "v", "XX"], ["s"]),
    (["GETEX", "s2"], ["s2"]),
    (["EXPIRE", "s", "100"], ["s"]),
    (["PERSIST", "s"], ["s"]),
    (["DUMP", "h"], ["h"]),
    (["GET", "l"], ["l"]),  # WRONGTYPE: looked up before the type check
    (["LPUSH", "s", "x"], ["s"]),
    (["LRANGE", "l", "0", "-1"], ["l"]),
    (["LLEN", "l"], ["l"]),
    (["HGET", "h", "f"], ["h"]),
    (["HGETALL", "h"], ["h"]),
    (["ZSCORE", "z", "a"], ["z"]),
    (["SMEMBERS", "st"], ["st", "st2"]),
    (["SISMEMBER", "st", "a"], ["st"]),
    (["SUNION", "st", "st2"], ["st", "st2"]),
    (["SINTERSTORE", "dst", "st", "st2"], ["st", "st2"]),
    (["XLEN", "x"], ["x"]),
    (["PFCOUNT", "hll"], ["hll"]),
    (["SORT", "l", "ALPHA"], ["l"]),
    (["COPY", "s", "s3"], ["s", "s2"]),
    (["BITCOUNT", "s2"], ["s2"]),
    (["EVAL", "return redis.call('get', KEYS[1])", "1", "s2"], ["s2", "s"]),
    ([["MULTI"], ["GET", "s"], ["EXISTS", "s2"], ["EXEC"]], ["s", "s2"]),
]


def _idle(client, key):
    reply = client.call("OBJECT", "IDLETIME", key)
    assert reply[:1] == b":", (key, reply)
    return int(reply[1:-2])


def _make_idle(client, keys):
    for k in keys:
        payload = client.call("DUMP", k)
        assert payload[:1] == b"$", (k, payload)
        body = payload[payload.index(b"\r\n") + 2:-2]
        assert client.call("RESTORE", k, "0", body, "REPLACE", "IDLETIME", str(IDLE)) == b"+OK\r\n"


@pytest.fixture
def d(differ):
    return differ


def _prepare(d):
    d.both("FLUSHALL")
    for line in SETUP.strip().splitlines():
        d.both(*line.split())
    for c in (d.kv, d.ref):
        _make_idle(c, KEYS)


@pytest.mark.parametrize("command,keys", CASES, ids=[" ".join(c[0] if isinstance(c[0], list) else c)
                                                     for c, _ in CASES])
def test_which_commands_touch_their_keys(d, command, keys):
    _prepare(d)
    for args in (command if isinstance(command[0], list) else [command]):
        d.both(*args)
    for k in keys:
        kv, ref = _idle(d.kv, k), _idle(d.ref, k)
        assert (kv < 500) == (ref < 500), f"{command}: {k} idle {kv} s on kvrocks, {ref} s on redis"
        if kv >= 500:
            assert IDLE <= kv <= IDLE + 30, (k, kv)


def test_restore_idletime_sets_the_idle_time(d):
    d("SET", "k", "v")
    for c in (d.kv, d.ref):
        _make_idle(c, ["k"])
        assert IDLE <= _idle(c, "k") <= IDLE + 30
        # DEBUG OBJECT shows the same clock.
        line = c.call("DEBUG", "OBJECT", "k").decode()
        idle = int(line.split("lru_seconds_idle:")[1].split()[0])
        assert IDLE <= idle <= IDLE + 30, line
    d("OBJECT", "IDLETIME", "nosuch")
    d("OBJECT", "IDLETIME")
    d("OBJECT", "IDLETIME", "k", "extra")
    d("OBJECT", "HELP")
    # A new value replaces the old object: fresh again.
    d("SET", "k", "w")
    assert _idle(d.kv, "k") < 500 and _idle(d.ref, "k") < 500


def test_idle_time_past_the_clock_wrap(d):
    """Redis' LRU clock has 24 bits of seconds (194 days): longer idle times wrap."""
    d("SET", "k", "v")
    for idle in (1 << 24, (1 << 24) + 5000, 3 << 24, 10 ** 12):
        for c in (d.kv, d.ref):
            payload = c.call("DUMP", "k")
            body = payload[payload.index(b"\r\n") + 2:-2]
            assert c.call("RESTORE", "k", "0", body, "REPLACE", "IDLETIME", str(idle)) == b"+OK\r\n"
        kv, ref = _idle(d.kv, "k"), _idle(d.ref, "k")
        assert abs(kv - ref) <= 10, (idle, kv, ref)


def test_debug_reload_makes_every_key_fresh(d):
    d("SET", "k", "v")
    for c in (d.kv, d.ref):
        _make_idle(c, ["k"])
    d("DEBUG", "RELOAD")
    assert _idle(d.kv, "k") < 500 and _idle(d.ref, "k") < 500


def test_pipelined_gets_touch_their_keys(d):
    """A run of pipelined GETs is prefetched in one MultiGet; each still touches its key."""
    _prepare(d)
    for c in (d.kv, d.ref):
        c.send_raw(encode(["GET", "s"]) + encode(["GET", "s2"]) + encode(["GET", "nosuch"]))
        for _ in range(3):
            c.read_reply()
    for k in KEYS:
        kv, ref = _idle(d.kv, k), _idle(d.ref, k)
        assert (kv < 500) == (ref < 500), f"{k} idle {kv} s on kvrocks, {ref} s on redis"
    assert _idle(d.kv, "s") < 500 and _idle(d.kv, "l") >= IDLE


def test_load_rdb_takes_the_idle_times_it_holds(tmp_path):
    """An RDB saved under an LRU policy holds each key's idle time (IDLE); --load-rdb sets it."""
    ref = RealRedis(extra=["--maxmemory-policy", "allkeys-lru"])
    kv = None
    try:
        c = ref.client()
        write_idle_keys(c)
        c.save()
        rdb = str(tmp_path / "idle.rdb")
        shutil.copy(os.path.join(ref.dir, "dump.rdb"), rdb)
        kv = Kvrocks(extra=["--load-rdb", rdb]).start()
        assert_idle_keys(kv.client())
    finally:
        if kv:
            kv.cleanup()
        ref.cleanup()
