"""Keyspace notifications (notify-keyspace-events) against Debian's
redis-server 7.0: for every command below, both servers must publish the same
events in the same order, for several class selections."""
import contextlib
import re
import time

import pytest

from conftest import RawClient

COMMANDS = """
SET a 1
SET a 2
SET b 1 EX 100
SET c 1 KEEPTTL
DEL a b nokey
LPUSH l x
LPOP l
RPUSH l a b
LMOVE l l2 LEFT RIGHT
RPOPLPUSH l l2
RPOPLPUSH l2 l2
SADD s a
SADD s a
SREM s a
SADD s a b
SMOVE s s2 a
SMOVE s s2 b
HSET h f v
HSET h f v
HSETNX h f v
HDEL h f
HSET h f v
HINCRBY h n 1
HINCRBYFLOAT h n 1.5
EXPIRE h -1
INCR n
DECRBY n 2
INCRBYFLOAT n 1.5
APPEND n x
SETRANGE n 0 y
RENAME n n2
RENAMENX n2 n3
COPY n3 n4
COPY nokey n5
MOVE n4 3
SETEX e 100 v
PERSIST e
GETEX e EX 100
GETEX e PERSIST
GETEX e
GETDEL e
GET nokey
HGET nokey f
EXISTS nokey
ZADD z 1 m
ZADD z INCR 1 m
ZINCRBY z 1 m
ZADD z 2 m2 3 m3
ZREM z nomember
ZREMRANGEBYSCORE z 2 2
ZREMRANGEBYRANK z 0 0
ZPOPMIN z
SADD s1 a b
SINTERSTORE d s1 nokey
SUNIONSTORE d s1 nokey
SINTERSTORE d s1 nokey
ZUNIONSTORE zd 1 nokey
SETBIT bits 1 1
BITOP NOT bits2 bits
PFADD hll a
PFADD hll a
PFMERGE hll2 hll nokey
XADD st 1-1 f v
XDEL st 1-1
XGROUP CREATE st g $
XGROUP CREATECONSUMER st g c1
XGROUP DELCONSUMER st g c1
XGROUP SETID st g 0
XGROUP DESTROY st g
XSETID st 5-5
XTRIM st MAXLEN 0
XADD st2 1-1 f v
XADD st2 MAXLEN 1 2-1 f v
XADD st2 MAXLEN 5 3-1 f v
XGROUP CREATE st2 g2 0
XREADGROUP GROUP g2 c9 COUNT 1 STREAMS st2 >
XREADGROUP GROUP g2 c9 COUNT 1 STREAMS st2 >
XCLAIM st2 g2 c10 0 2-1
XAUTOCLAIM st2 g2 c11 0 0
LPUSH l3 a b c
LTRIM l3 0 0
LTRIM l3 1 0
RPUSH l4 a b a
LREM l4 0 a
LSET l4 0 z
LINSERT l4 BEFORE z y
MSET m1 1 m2 2
MSETNX m3 1 m4 2
MSET m5 1 m5 2 m1 3 m5 4
MSETNX m6 1 m7 2 m6 3
MSETNX m6 1 m8 2 m8 3
GEOADD geo 13.3 38.1 p
GEOSEARCHSTORE geo2 geo FROMLONLAT 13.3 38.1 BYRADIUS 10 km
SORT l4 ALPHA STORE sorted
EXPIRE sorted 100
PEXPIRE sorted 100000
EXPIRE nokey 10
LMPOP 1 l4 RIGHT
ZADD zz 1 a 2 b
ZMPOP 1 zz MAX
BZPOPMIN zz 1
RESTORE nokey2 0 nokey
EVAL "redis.call('set','sk','1') redis.call('lpush','sl','x') return 1" 0
MULTI
INCR mx
RPUSH ml a
EXEC
FLUSHALL
"""


def events(sub):
    """Sends PING on a subscriber (pattern __key*__:*) and returns the events before the pong."""
    sub.send_raw(b"*1\r\n$4\r\nPING\r\n")
    out = []
    while True:
        m = sub.read_reply()
        if m.startswith(b"*2\r\n$4\r\npong"):
            return out
        parts = m.split(b"\r\n")
        out.append((parts[6], parts[8]))


def split(line):
    # Commands are space separated; a double-quoted argument may hold spaces.
    if '"' not in line:
        return line.split()
    head, quoted, tail = line.partition('"')[0], line.split('"')[1], line.split('"')[2]
    return head.split() + [quoted] + tail.split()


@contextlib.contextmanager
def subscribed(ports, flags):
    """(client, subscriber to every keyspace event) for each server, flushed, with
    notify-keyspace-events flags; events off again at the end."""
    servers = []
    for port in ports:
        c = RawClient(port)
        c.call("FLUSHALL")
        assert c.call("CONFIG", "SET", "notify-keyspace-events", flags) == b"+OK\r\n"
        sub = RawClient(port)
        sub.call("PSUBSCRIBE", "__key*@*__:*")
        servers.append((c, sub))
    try:
        yield servers
    finally:
        for c, sub in servers:
            c.call("CONFIG", "SET", "notify-keyspace-events", "")
            c.close()
            sub.close()


@pytest.mark.parametrize("flags", ["KEA", "KEAn", "KEm", "Kl", "Eg$", "Kszht", "KEd"])
def test_events_match_redis(kvrocks_server, redis_ref, flags):
    with subscribed((kvrocks_server.port, redis_ref.port), flags) as servers:
        for line in COMMANDS.strip().splitlines():
            args = split(line)
            replies, got = [], []
            for c, sub in servers:
                replies.append(c.call(*args))
                got.append(events(sub))
            assert replies[0] == replies[1], f"{line}: {replies}"
            assert got[0] == got[1], f"{line}: kvrocks {got[0]} redis {got[1]}"


def test_config_parsing(diff):
    for v in ["KEA", "AKEn", "gsz$xK", "Em", "", "Ag$lshzxeKEtmdn"]:
        diff("CONFIG", "SET", "notify-keyspace-events", v)
        diff("CONFIG", "GET", "notify-keyspace-events")
    diff("CONFIG", "SET", "notify-keyspace-events", "bogus")
    diff("CONFIG", "GET", "notify-keyspace-events")
    diff("CONFIG", "SET", "notify-keyspace-events", "")


def test_expired_event(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.call("CONFIG", "SET", "notify-keyspace-events", "Ex")
    sub = RawClient(kvrocks_server.port)
    sub.call("SUBSCRIBE", "__keyevent@0__:expired")
    c.call("SET", "short", "v", "PX", "50")
    deadline = time.time() + 10
    msg = b""
    while time.time() < deadline and b"short" not in msg:
        msg = sub.read_reply()
    assert msg == b"*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:expired\r\n$5\r\nshort\r\n"
    c.call("CONFIG", "SET", "notify-keyspace-events", "")
    c.close()
    sub.close()


def test_event_follows_committed_write(kvrocks_server):
    """A subscriber that reads the key when its event arrives sees the write."""
    c = RawClient(kvrocks_server.port)
    c.call("CONFIG", "SET", "notify-keyspace-events", "K$")
    sub = RawClient(kvrocks_server.port)
    sub.call("SUBSCRIBE", "__keyspace@0__:seen")
    reader = RawClient(kvrocks_server.port)
    for i in range(200):
        c.send_raw(b"*3\r\n$3\r\nSET\r\n$4\r\nseen\r\n$%d\r\n%d\r\n" % (len(str(i)), i))
        assert sub.read_reply().endswith(b"$3\r\nset\r\n")
        assert reader.call("GET", "seen") == b"$%d\r\n%d\r\n" % (len(str(i)), i)
        c.read_reply()
    c.call("CONFIG", "SET", "notify-keyspace-events", "")
    for x in (c, sub, reader):
        x.close()


# Commands whose reads Redis counts in its own way: the stream commands that read
# their key with lookupKeyRead though they write (XREADGROUP, XACK, XCLAIM,
# XAUTOCLAIM), XREAD and XREADGROUP looking every key up twice, BITFIELD reading
# when it only GETs, SORT reading each BY and GET pattern's key.
LOOKUPS = """
XREAD COUNT 1 STREAMS x 0
XREAD COUNT 1 STREAMS nox 0
XREAD COUNT 1 STREAMS x nox 0 0
XREADGROUP GROUP g c COUNT 1 STREAMS x >
XREADGROUP GROUP g c COUNT 1 STREAMS nox >
XACK x g 1-1
XACK nox g 1-1
XCLAIM x g c 0 1-1
XCLAIM nox g c 0 1-1
XAUTOCLAIM x g c 0 0
XAUTOCLAIM nox g c 0 0
XINFO STREAM x
XINFO STREAM nox
BITFIELD s GET u8 0
BITFIELD nos GET u8 0 OVERFLOW SAT GET i4 0
BITFIELD nos2 GET u8 0 SET u8 0 1
RPUSH l 1 2
SET w_1 5
SORT l BY w_*
SORT_RO l BY w_*
SORT l BY w_* GET v_* GET #
SORT_RO l BY nosort GET v_*
SORT l BY w_*->f
SORT l BY w_* GET v_* STORE dst
"""


def keyspace_stats(c):
    text = c.call("INFO", "stats").decode()
    return tuple(int(v) for v in re.findall(r"^keyspace_(?:hits|misses):(\d+)", text, re.M))


def test_reads_are_counted_and_notified_as_redis_lookups(kvrocks_server, redis_ref):
    with subscribed((kvrocks_server.port, redis_ref.port), "KEAm") as servers:
        for c, sub in servers:
            for setup in (["XADD", "x", "1-1", "f", "v"], ["XGROUP", "CREATE", "x", "g", "0"], ["SET", "s", "v"]):
                c.call(*setup)
            events(sub)
        for line in LOOKUPS.strip().splitlines():
            got = []
            for c, sub in servers:
                before = keyspace_stats(c)
                reply = c.call(*line.split())
                after = keyspace_stats(c)
                got.append((reply, (after[0] - before[0], after[1] - before[1]), events(sub)))
            assert got[0] == got[1], f"{line}: kvrocks {got[0]} redis {got[1]}"



@pytest.mark.parametrize("seed", [0, 1])
def test_replicas_notify_what_the_masters_stream_does_to_them(seed):
    # random_commands.py's commands go to a redis-server master; a kvrocks and a
    # redis-server replica of it publish the same notifications (SPOP's SREMs, an
    # expired key's DEL, an EXEC block's events ...). `multi_conn_hunt.py
    # replica-notify` hunts longer.
    from multi_conn_hunt import ReplicaNotifications
    hunt = ReplicaNotifications()
    try:
        assert hunt.mismatch(seed, 1500) is None
    finally:
        hunt.cleanup()
