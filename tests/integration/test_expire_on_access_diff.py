"""Deletion of expired keys on access (Redis' expireIfNeeded), against Debian's
redis-server 7.0. With active expiry off on both servers, a key whose time has
passed is still stored until a command looks it up: then both must reply the
same, publish the same events ("expired" first), count it in expired_keys and
drop it from DBSIZE. WATCH follows Redis' rules for keys that were already
expired when watched (multi.c: watchedKey.expired)."""
import re
import time

import pytest

from conftest import RawClient, Differ
from test_notifications_diff import events, split

# (setup commands, the command that finds the key(s) expired). Every setup key
# gets a TTL that has passed when the command runs. (Not 1 ms: a server preempted
# between reading the clock for PEXPIRE's time and checking it deletes at once.)
TTL_MS = "60"
PASSED = 0.12
CASES = [
    (["SET k v"], "GET k"),
    (["SET k v"], "EXISTS k"),
    (["SET k v", "SET k2 v"], "EXISTS k k2 nokey"),
    (["SET k v"], "TTL k"),
    (["SET k v"], "PTTL k"),
    (["SET k v"], "EXPIRETIME k"),
    (["SET k v"], "TYPE k"),
    (["SET k v"], "STRLEN k"),
    (["SET k v"], "GETRANGE k 0 -1"),
    (["SET k v", "SET k2 v"], "MGET k k2 nokey"),
    (["SET k v"], "TOUCH k"),
    (["SET k v"], "OBJECT ENCODING k"),
    (["SET k v"], "DUMP k"),
    (["SET k v"], "GETDEL k"),
    (["SET k v"], "GETEX k PERSIST"),
    (["SET k v"], "DEL k"),
    (["SET k v"], "UNLINK k"),
    (["SET k v"], "PERSIST k"),
    (["SET k v"], "EXPIRE k 100"),
    (["SET k v"], "SET k new"),
    (["SET k v"], "SET k new NX"),
    (["SET k v"], "SET k new XX"),
    (["SET k v"], "SET k new GET"),
    (["SET k v"], "SETNX k new"),
    (["SET k 5"], "INCR k"),
    (["SET k v"], "APPEND k x"),
    (["SET k v"], "SETRANGE k 2 x"),
    (["SET k v"], "RENAME k k2"),
    (["SET k v", "SET k2 v"], "RENAME k2 k"),
    (["SET k v"], "COPY k k2"),
    (["SET k v"], "MOVE k 1"),
    (["SET k v"], "MSET k 1 k2 2"),
    (["SET k v"], "MSETNX k 1 k2 2"),
    (["RPUSH l a b"], "LLEN l"),
    (["RPUSH l a b"], "LRANGE l 0 -1"),
    (["RPUSH l a b"], "LPUSH l c"),
    (["RPUSH l a b"], "LPUSHX l c"),
    (["RPUSH l a b"], "RPOPLPUSH l l2"),
    (["HSET h f v"], "HGET h f"),
    (["HSET h f v"], "HGETALL h"),
    (["HSET h f v"], "HSET h g w"),
    (["HSET h f v"], "HINCRBY h n 1"),
    (["SADD s a"], "SMEMBERS s"),
    (["SADD s a", "SADD s2 b"], "SUNIONSTORE d s s2"),
    (["SADD s a"], "SADD s b"),
    (["SADD s a"], "SMOVE nosrc s a"),
    (["XADD x 1-1 f v"], "XAUTOCLAIM x g c x 0"),
    (["XADD x 1-1 f v"], "XAUTOCLAIM x g c 0 bad"),
    (["ZADD z 1 a"], "ZRANGE z 0 -1"),
    (["ZADD z 1 a"], "ZADD z 2 b"),
    (["XADD x 1-1 f v"], "XLEN x"),
    (["PFADD p a"], "PFCOUNT p"),
    (["SET k v"], "SORT nokey BY k"),
    (["SET a v", "SET b v", "SET c v"], "RANDOMKEY"),
    (["SET a v", "SET b v", "SET c v"], "KEYS *"),
    (["SET k1 v", "SET k2 v", "SET other v"], "SCAN 0 MATCH k* COUNT 100"),
    (["SET k v"], "EVAL \"return redis.call('get', KEYS[1])\" 1 k"),
    (["SET k v"], "EVAL \"return redis.call('set', KEYS[1], 'x')\" 1 k"),
    (["SET k v"], "DBSIZE"),
    # An empty result deletes the destination as Redis' dbDelete: "del", not expired.
    (["SET d v"], "SUNIONSTORE d nokey"),
    (["SET d v"], "SDIFFSTORE d nokey"),
    (["SET d v"], "ZUNIONSTORE d 1 nokey"),
    (["SET d v"], "ZINTERSTORE d 1 nokey"),
    (["SET d v"], "ZRANGESTORE d nokey 0 -1"),
    (["SET d v"], "BITOP OR d nokey"),
    (["SET d v"], "SORT nokey STORE d"),
    (["SET d v"], "GEOSEARCHSTORE d nokey FROMLONLAT 1 1 BYRADIUS 1 km"),
    (["SADD s a", "SET d v"], "SUNIONSTORE d s"),
    (["RPUSH l a", "SET d v"], "SORT l STORE d"),
]


def stats(c):
    text = c.call("INFO", "stats").decode()
    return {k: int(v) for k, v in re.findall(r"^(expired_keys|keyspace_hits|keyspace_misses):(\d+)", text, re.M)}


@pytest.fixture
def pair(kvrocks_server, redis_ref):
    """(client, subscriber) for kvrocks and for redis-server, active expiry off."""
    servers = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.call("FLUSHALL")
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        assert c.call("CONFIG", "SET", "notify-keyspace-events", "KEAm") == b"+OK\r\n"
        sub = RawClient(port)
        sub.call("PSUBSCRIBE", "__key*@*__:*")
        servers.append((c, sub))
    yield servers
    for c, sub in servers:
        c.call("CONFIG", "SET", "notify-keyspace-events", "")
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.call("SELECT", "0")
        c.call("FLUSHALL")
        c.close()
        sub.close()


@pytest.mark.parametrize("setup,command", CASES, ids=[c for _, c in CASES])
def test_a_command_deletes_what_it_finds_expired(pair, setup, command):
    for c, sub in pair:
        for line in setup:
            args = line.split()
            c.call(*args)
            c.call("PEXPIRE", args[1], TTL_MS)
        events(sub)  # the setup's own events
    time.sleep(PASSED)
    before = [stats(c) for c, _ in pair]
    replies = [c.call(*split(command)) for c, _ in pair]
    got = [events(sub) for _, sub in pair]
    after = [stats(c) for c, _ in pair]
    sizes = [c.call("DBSIZE") for c, _ in pair]
    assert replies[0] == replies[1], f"{command}: kvrocks {replies[0]!r} redis {replies[1]!r}"
    if command.startswith(("SCAN", "RANDOMKEY")):
        got = [sorted(g) for g in got]  # in each server's own key order
    assert got[0] == got[1], f"{command}: kvrocks {got[0]} redis {got[1]}"
    deltas = [{k: a[k] - b[k] for k in b} for a, b in zip(after, before)]
    assert deltas[0] == deltas[1], f"{command}: kvrocks {deltas[0]} redis {deltas[1]}"
    assert sizes[0] == sizes[1], f"{command}: kvrocks {sizes[0]!r} redis {sizes[1]!r}"


def test_smove_looks_both_keys_up_before_the_types(pair):
    """Redis' SMOVE looks up the source and the destination (deleting an expired
    one) before it checks either type."""
    for c, sub in pair:
        c.call("SET", "src", "v")
        c.call("SADD", "dst", "a")
        c.call("PEXPIRE", "dst", TTL_MS)
        events(sub)
    time.sleep(PASSED)
    out = [(c.call("SMOVE", "src", "dst", "a"), events(sub), c.call("DBSIZE")) for c, sub in pair]
    assert out[0] == out[1]
    assert out[1][2] == b":1\r\n"


def test_set_with_a_time_already_past_stores_the_key(pair):
    """Redis 7.0's SET with an EXAT/PXAT already past stores the key (events "set"
    and "expire"), unlike EXPIREAT or GETEX: it is counted (DBSIZE, INFO keyspace,
    DEBUG DIGEST) until a lookup finds it expired."""
    out = []
    for c, sub in pair:
        got = [c.call("SET", "p", "v", "PXAT", "1"), c.call("SET", "e", "v", "EXAT", "1000000000", "GET"),
               c.call("SET", "k", "v"), c.call("SET", "k", "w", "XX", "PXAT", "1000"), events(sub),
               c.call("DBSIZE"), c.call("INFO", "keyspace"), c.call("DEBUG", "DIGEST"), c.call("KEYS", "*")]
        before = stats(c)
        got += [c.call("GET", "p"), events(sub), c.call("DBSIZE")]
        got.append({k: v - before[k] for k, v in stats(c).items()})
        out.append(got)
    assert out[0] == out[1]
    assert out[1][5] == b":3\r\n" and out[1][-2] == b":2\r\n"


def test_set_with_a_past_time_over_a_key_it_finds_expired(pair):
    """The SET's lookup deletes the expired key ("expired"), then the new value is
    stored, itself already expired: it stays stored until found, as in Redis."""
    for c, sub in pair:
        c.call("SET", "k", "old")
        c.call("PEXPIRE", "k", TTL_MS)
        c.call("SET", "k2", "old")
        c.call("PEXPIRE", "k2", TTL_MS)
        events(sub)
    time.sleep(PASSED)
    out = []
    for c, sub in pair:
        before = stats(c)
        got = [c.call("SET", "k", "new", "NX", "GET", "PXAT", "1"), c.call("SET", "k2", "new", "PXAT", "1"),
               events(sub), c.call("DBSIZE"), c.call("DEBUG", "DIGEST")]
        got.append({k: v - before[k] for k, v in stats(c).items()})
        out.append(got)
    assert out[0] == out[1]
    assert out[1][3] == b":2\r\n"


def test_inside_multi_exec(pair):
    for c, sub in pair:
        c.call("SET", "k", "v", "PX", TTL_MS)
        c.call("RPUSH", "l", "a")
        c.call("PEXPIRE", "l", TTL_MS)
        events(sub)
    time.sleep(PASSED)
    out = []
    for c, sub in pair:
        before = stats(c)["expired_keys"]
        c.call("MULTI")
        c.call("GET", "k")
        c.call("LPUSH", "l", "b")
        out.append((c.call("EXEC"), events(sub), c.call("DBSIZE"), stats(c)["expired_keys"] - before))
    assert out[0] == out[1]


# Redis' debug commands look in its dict, not through lookupKey: they see a key
# whose time has passed but that is still stored, and leave it there.
def test_debug_commands_see_stale_keys_and_keep_them(pair):
    for c, sub in pair:
        for setup in (["SET", "e", "v"], ["RPUSH", "l", "a", "b", "c"], ["HSET", "h", "a", "1", "b", "2"],
                      ["ZADD", "z", "1", "a", "2", "b"], ["SADD", "s", "a", "1"], ["XADD", "x", "1-1", "a", "b"]):
            c.call(*setup)
            c.call("PEXPIRE", setup[1], TTL_MS)
        c.call("SET", "f", "live")
        events(sub)
    time.sleep(PASSED)
    out = []
    for c, sub in pair:
        before = stats(c)
        got = [c.call("DEBUG", "DIGEST-VALUE", "e", "l", "h", "z", "s", "x", "f", "nokey"), c.call("DEBUG", "DIGEST")]
        obj = c.call("DEBUG", "OBJECT", "l").decode()
        got.append(re.search(r"encoding:\S+", obj).group(0))  # addresses and sizes are the server's own
        got.append(c.call("MEMORY", "USAGE", "z") != b"$-1\r\n")
        got.append(c.call("MEMORY", "USAGE", "nokey"))
        # no keyspace hit or miss, no keymiss event, nothing expired
        stats_now = stats(c)
        got += [events(sub), c.call("DBSIZE"), {k: stats_now[k] - before[k] for k in before}, c.call("TYPE", "l"),
                stats(c)["expired_keys"] - before["expired_keys"]]
        out.append(got)
    assert out[0] == out[1]
    assert out[0][-4] == b":7\r\n" and out[0][-1] == 1  # TYPE then deletes it
    assert out[0][-3] == {"expired_keys": 0, "keyspace_hits": 0, "keyspace_misses": 0}


@pytest.fixture
def diff_no_active_expiry(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    d("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    yield d
    d("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    d("SELECT", "0")
    d("FLUSHALL")
    d.close()


def stale(d, key, db=None):
    """Makes key hold a value whose time has passed (active expiry is off)."""
    if db is not None:
        d("SELECT", db)
    d("SET", key, "v", "PX", TTL_MS)
    time.sleep(PASSED)


# Redis' tests/unit/multi.tcl, WATCH of keys that were expired when watched.
def test_watch_of_a_stale_key_does_not_fail_exec(diff_no_active_expiry):
    d = diff_no_active_expiry
    stale(d, "x")
    d("WATCH", "x")
    d("MULTI")
    d("PING")
    d("EXEC")


def test_deleting_a_watched_stale_key_does_not_fail_exec(diff_no_active_expiry):
    d = diff_no_active_expiry
    stale(d, "x")
    d("WATCH", "x")
    d("EXISTS", "x")  # deletes it
    d("MULTI")
    d("PING")
    d("EXEC")


def test_writing_a_watched_stale_key_fails_exec(diff_no_active_expiry):
    d = diff_no_active_expiry
    stale(d, "x")
    d("WATCH", "x")
    d("SET", "x", "new")
    d("MULTI")
    d("PING")
    d("EXEC")


def test_a_watched_key_that_expires_fails_exec(diff_no_active_expiry):
    d = diff_no_active_expiry
    d("SET", "x", "v", "PX", TTL_MS)
    d("WATCH", "x")
    time.sleep(PASSED)
    d("MULTI")
    d("PING")
    d("EXEC")


def test_flushdb_while_watching_a_stale_key_does_not_fail_exec(diff_no_active_expiry):
    d = diff_no_active_expiry
    stale(d, "x")
    d("WATCH", "x")
    d("FLUSHDB")
    d("MULTI")
    d("PING")
    d("EXEC")


@pytest.mark.parametrize("case", ["stale-to-none", "none-to-stale", "stale-to-stale", "stale-to-live"])
def test_swapdb_and_watched_stale_keys(diff_no_active_expiry, case):
    d = diff_no_active_expiry
    d("FLUSHALL")
    if case in ("stale-to-none", "stale-to-stale", "stale-to-live"):
        stale(d, "x", db="1")
    if case == "none-to-stale" or case == "stale-to-stale":
        stale(d, "x", db="0")
    if case == "stale-to-live":
        d("SELECT", "0")
        d("SET", "x", "live")
    d("SELECT", "1")
    d("WATCH", "x")
    d("SWAPDB", "0", "1")
    d("MULTI")
    d("PING")
    d("EXEC")


def test_nothing_is_deleted_while_clients_are_paused(diff_no_active_expiry, kvrocks_server, redis_ref):
    d = diff_no_active_expiry
    stale(d, "x")
    d("CLIENT", "PAUSE", "10000", "WRITE")
    try:
        d("GET", "x")
        d("EXISTS", "x")
        d("DBSIZE")
        counts = [stats(c)["expired_keys"] for c in (d.kv, d.ref)]
    finally:
        d("CLIENT", "UNPAUSE")
    d("GET", "x")
    d("DBSIZE")
    after = [stats(c)["expired_keys"] for c in (d.kv, d.ref)]
    assert [a - b for a, b in zip(after, counts)] == [1, 1]


def test_expiry_time_stands_still_in_scripts_and_transactions(diff):
    """As Redis 7.0's keyIsExpired: a key live when EVAL or EXEC starts stays live
    until it ends (TTL replies still use the real clock)."""
    script = ("redis.call('set','k','v','px',1); local s=redis.call('time'); local t=s; "
              "while (tonumber(t[1])*1000000+tonumber(t[2])) - (tonumber(s[1])*1000000+tonumber(s[2])) < 20000 "
              "do t=redis.call('time') end; return {redis.call('get','k'), redis.call('pttl','k'), "
              "redis.call('exists','k')}")
    diff("EVAL", script, "0")
    # Live when EXEC starts (its commands are queued well within 300 ms), expired
    # by the time its GET runs. One server after the other: the second's EXEC
    # would otherwise start only after the first's has slept.
    replies = []
    for conn in (diff.kv, diff.ref):
        replies.append([conn.call(*args) for args in (["SET", "m", "v", "PX", "300"], ["MULTI"],
                                                      ["DEBUG", "SLEEP", "0.4"], ["GET", "m"], ["EXISTS", "m"],
                                                      ["EXEC"], ["GET", "m"])])
    assert replies[0] == replies[1]
    assert replies[0][5].endswith(b"$1\r\nv\r\n:1\r\n")


def test_flushdb_leaves_expired_keys_of_other_databases_stored(pair):
    """FLUSHDB looks up no key of another database: an expired key there stays
    stored (no "expired" event, no expired_keys, DBSIZE and DEBUG DIGEST as
    before), with its elements, even when they were written in the flushed
    database (kvrocks' MOVE leaves them there) or the key was renamed."""
    for c, sub in pair:
        c.call("RPUSH", "l", "a", "b", "c")
        c.call("RENAME", "l", "renamed")  # its elements stay under the name "l"
        c.call("PEXPIRE", "renamed", TTL_MS)
        c.call("SELECT", "4")
        c.call("HSET", "h", "f1", "v1", "f2", "v2")
        c.call("MOVE", "h", "0")  # its fields stay in database 4
        c.call("SELECT", "0")
        c.call("PEXPIRE", "h", TTL_MS)
        events(sub)
    time.sleep(PASSED)
    out = []
    for c, sub in pair:
        before = stats(c)
        c.call("SELECT", "4")
        got = [c.call("FLUSHDB"), c.call("SELECT", "0"), events(sub), c.call("DBSIZE"), c.call("DEBUG", "DIGEST")]
        got.append({k: v - before[k] for k, v in stats(c).items()})
        got += [c.call("HGETALL", "h"), events(sub), c.call("DBSIZE")]
        out.append(got)
    assert out[0] == out[1]
    assert out[1][3] == b":2\r\n" and out[1][-1] == b":1\r\n"
