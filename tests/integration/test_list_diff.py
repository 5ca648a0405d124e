"""List commands against Debian's redis-server 7.0, and the blocking forms."""
import threading
import time

import pytest
import redis

from conftest import RawClient, encode


def test_list_push_pop_range(diff):
    diff.run("""
    RPUSH l a b c
    LPUSH l z y
    LRANGE l 0 -1
    LRANGE l 1 2
    LRANGE l -2 -1
    LRANGE l 5 10
    LRANGE l -100 100
    LRANGE l 3 1
    LRANGE nokey 0 -1
    LLEN l
    LLEN nokey
    LINDEX l 0
    LINDEX l -1
    LINDEX l 99
    LINDEX l -99
    LINDEX nokey 0
    LPOP l
    RPOP l
    LPOP l 2
    RPOP l 0
    LPOP l 5
    EXISTS l
    LPOP nokey
    LPOP nokey 2
    LPOP l 1 1
    RPOP l 2 2
    RPUSH l a
    LPOP l -1
    LPUSHX nokey a
    RPUSHX nokey a
    EXISTS nokey
    LPUSHX l b
    RPUSHX l c d
    LRANGE l 0 -1
    OBJECT ENCODING l
    TYPE l
    """)


def test_list_edit(diff):
    diff.run("""
    RPUSH l a b c b a
    LSET l 0 A
    LSET l -1 Z
    LSET l 5 x
    LSET nokey 0 x
    LRANGE l 0 -1
    LINSERT l BEFORE b X
    LINSERT l AFTER b Y
    LINSERT l AFTER nothing Y
    LINSERT nokey AFTER a Y
    LINSERT l MIDDLE a b
    LRANGE l 0 -1
    LREM l 1 b
    LRANGE l 0 -1
    RPUSH r x y x y x
    LREM r -2 x
    LRANGE r 0 -1
    LREM r 0 y
    LRANGE r 0 -1
    LREM r 0 nothing
    LREM nokey 0 a
    RPUSH t 1 2 3 4 5 6
    LTRIM t 1 -2
    LRANGE t 0 -1
    LTRIM t 1 1
    LRANGE t 0 -1
    LTRIM t 5 10
    EXISTS t
    RPUSH t2 1 2 3
    LTRIM t2 0 -1
    LTRIM t2 -100 100
    LRANGE t2 0 -1
    LTRIM t2 2 1
    EXISTS t2
    """)


def test_lpos(diff):
    diff.run("""
    RPUSH l a b c 1 2 3 c c
    LPOS l c
    LPOS l c RANK 2
    LPOS l c RANK -1
    LPOS l c RANK -2
    LPOS l c COUNT 0
    LPOS l c COUNT 2
    LPOS l c COUNT 0 RANK -1
    LPOS l c COUNT 0 MAXLEN 3
    LPOS l c MAXLEN 1
    LPOS l x
    LPOS l x COUNT 2
    LPOS nokey a
    LPOS nokey a COUNT 1
    LPOS l c RANK 0
    LPOS l c COUNT -1
    LPOS l c MAXLEN -1
    LPOS l c FOO
    """)


def test_rotating_a_list_onto_itself_keeps_the_key(diff):
    """Redis pushes before it deletes an emptied source: a one-element list
    moved onto itself stays, with its expiry, and WATCH sees the write."""
    diff.run("""
    RPUSH one x
    EXPIRE one 100
    RPOPLPUSH one one
    TTL one
    LMOVE one one LEFT LEFT
    LMOVE one one RIGHT LEFT
    TTL one
    LRANGE one 0 -1
    RPUSH l a b c d
    PEXPIRE l 100000
    LMOVE l l LEFT RIGHT
    LMOVE l l RIGHT LEFT
    LMOVE l l LEFT LEFT
    LMOVE l l RIGHT RIGHT
    LRANGE l 0 -1
    ~PTTL l
    WATCH one
    LMOVE one one LEFT LEFT
    MULTI
    PING
    EXEC
    """)


def test_rotation_events_are_redis(diff):
    """lpush/rpush then lpop/rpop, and no new or del, for a list moved onto itself."""
    events = {}
    for name, client in (("kv", diff.kv), ("ref", diff.ref)):
        client.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        sub = client.__class__(client.port)
        sub.call("PSUBSCRIBE", "__keyevent@0__:*")  # the confirmation
        client.call("RPUSH", "one", "x")
        client.call("RPOPLPUSH", "one", "one")
        client.call("LMOVE", "one", "one", "LEFT", "LEFT")
        client.call("DEL", "one")
        got = []
        while not got or got[-1] != "del":
            reply = sub.read_reply()
            got.append(reply.split(b"\r\n")[6].decode().split(":")[-1])  # pmessage pattern channel key
        events[name] = got
        sub.close()
        client.call("CONFIG", "SET", "notify-keyspace-events", "")
    assert events["kv"] == events["ref"]


def test_lpos_ranks_counts_and_maxlen(diff):
    """LPOS walks only what it needs; RANK LLONG_MIN behaves as in Redis 7.0 (a
    negated long that stays negative: every match from the tail, COUNT ignored)."""
    diff.run("""
    RPUSH rl a b a c a d a
    LPOS rl a RANK -9223372036854775808
    LPOS rl a RANK -9223372036854775808 COUNT 2
    LPOS rl a RANK -9223372036854775808 COUNT 0
    LPOS rl a RANK 9223372036854775807
    LPOS rl a RANK 9223372036854775807 COUNT 0
    LPOS rl a RANK -9223372036854775807 COUNT 1
    LPOS rl a
    LPOS rl a RANK 2
    LPOS rl a RANK -2
    LPOS rl a RANK -1 COUNT 2
    LPOS rl a RANK 2 COUNT 2
    LPOS rl a RANK 2 COUNT 0
    LPOS rl a COUNT 0 MAXLEN 3
    LPOS rl a RANK -1 COUNT 0 MAXLEN 3
    LPOS rl a RANK 3 MAXLEN 3
    LPOS rl d MAXLEN 5
    LPOS rl d RANK -1 MAXLEN 1
    LPOS rl z
    LPOS rl z COUNT 3
    LPOS nolist a
    LPOS nolist a COUNT 1
    SET s v
    LPOS s a
    LPOS rl a RANK 0
    LPOS rl a COUNT -1
    LPOS rl a MAXLEN -1
    LPOS rl a RANK x
    LPOS rl a FOO
    LPOS rl a RANK
    """)


def test_list_move(diff):
    diff.run("""
    RPUSH src 1 2 3
    RPOPLPUSH src dst
    LMOVE src dst LEFT RIGHT
    LMOVE src dst RIGHT LEFT
    LMOVE src dst UP DOWN
    LRANGE dst 0 -1
    EXISTS src
    RPOPLPUSH src dst
    RPUSH rot a b c
    RPOPLPUSH rot rot
    LMOVE rot rot LEFT RIGHT
    LRANGE rot 0 -1
    SET s v
    RPOPLPUSH rot s
    LRANGE rot 0 -1
    RPOPLPUSH s rot
    LMPOP 2 nokey rot LEFT
    LMPOP 2 nokey rot RIGHT COUNT 5
    LMPOP 2 nokey rot LEFT
    LMPOP 0 a LEFT
    LMPOP x a LEFT
    LMPOP 1 a MIDDLE
    LMPOP 1 a LEFT COUNT 0
    LMPOP 1 a LEFT COUNT 1 COUNT 2
    LMPOP 3 a LEFT
    """)


def test_list_errors_and_generic(diff):
    diff.run("""
    SET s v
    LPUSH s a
    LRANGE s 0 -1
    LLEN s
    LPOP s
    LINDEX s 0
    LINDEX s x
    LRANGE s a b
    LPUSH
    LPUSH l
    RPUSH l a b c
    EXPIRE l 100
    COPY l l2
    LRANGE l2 0 -1
    RENAME l l3
    LRANGE l3 0 -1
    ~TTL l3
    MULTI
    LPUSH m 1
    RPUSH m 2
    LRANGE m 0 -1
    LPOP m
    BLPOP m 0
    BLPOP empty 0
    EXEC
    """)


def test_big_list_operations_are_local(fresh_server):
    srv = fresh_server.start()
    c = srv.client()
    p = c.pipeline(transaction=False)
    for i in range(20000):
        p.rpush("big", i)
    p.execute()
    assert c.llen("big") == 20000
    assert c.lindex("big", 12345) == b"12345"
    assert c.lrange("big", 19998, -1) == [b"19998", b"19999"]
    c.lset("big", -1, "last")
    assert c.rpop("big") == b"last"
    c.ltrim("big", 100, 199)
    assert c.llen("big") == 100 and c.lindex("big", 0) == b"100"
    srv.restart()
    assert srv.client().lrange("big", 0, 2) == [b"100", b"101", b"102"]


def test_linsert_moves_the_shorter_side(diff):
    """LINSERT shifts the elements on the shorter side of the new one by one index
    (head or tail moves), in place: every position, both directions, both ends,
    lists built from either end, and the list read back as Redis has it."""
    import random
    rng = random.Random(65)
    diff("RPUSH", "l", *range(300))
    diff("LPUSH", "l", *range(-1, -300, -1))
    for step in range(200):
        card = int(diff.kv.call("LLEN", "l")[1:-2])
        pivot = diff.kv.call("LINDEX", "l", rng.choice([0, 1, card // 2, card - 1, rng.randrange(card)]))
        pivot = pivot.split(b"\r\n")[1]
        diff("LINSERT", "l", rng.choice(["BEFORE", "AFTER"]), pivot, f"n{step}")
        if step % 20 == 0:
            diff("LRANGE", "l", 0, -1)
            diff(rng.choice(["LPOP", "RPOP"]), "l", 3)
    diff("LRANGE", "l", 0, -1)
    diff("LINDEX", "l", 123)
    diff("LPOS", "l", "n100")
    diff("DUMP", "l")
    diff("RPUSH", "l", "end")
    diff("LPUSH", "l", "start")
    diff("LRANGE", "l", 0, 5)
    diff("LRANGE", "l", -5, -1)


def test_blpop_wakes_on_push(kvrocks_server):
    c = kvrocks_server.client()
    c.delete("q", "q2")
    waiter = RawClient(kvrocks_server.port)
    waiter.send_raw(b"*4\r\n$5\r\nBLPOP\r\n$2\r\nq2\r\n$1\r\nq\r\n$1\r\n0\r\n")
    time.sleep(0.2)
    assert c.info("clients")["blocked_clients"] == 1
    c.rpush("q", "x", "y")
    assert waiter.read_reply() == b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n"
    assert c.lrange("q", 0, -1) == [b"y"]
    assert c.info("clients")["blocked_clients"] == 0
    # The unblocked client goes on processing commands.
    assert waiter.call("PING") == b"+PONG\r\n"


def test_blocking_timeouts_and_errors(kvrocks_server, redis_ref):
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.call("DEL", "none")
        start = time.time()
        assert c.call("BLPOP", "none", "0.2") == b"*-1\r\n"
        assert time.time() - start >= 0.15
        assert c.call("BLMOVE", "none", "d", "LEFT", "RIGHT", "0.1") == b"*-1\r\n"
        assert c.call("BLMPOP", "0.1", "1", "none", "LEFT") == b"*-1\r\n"
        assert c.call("BLPOP", "none", "-1") == b"-ERR timeout is negative\r\n"
        assert c.call("BLPOP", "none", "abc") == b"-ERR timeout is not a float or out of range\r\n"
        c.call("SET", "str", "v")
        assert c.call("BLPOP", "str", "0").startswith(b"-WRONGTYPE")
        c.call("RPUSH", "ready", "1")
        assert c.call("BRPOP", "none", "ready", "0") == b"*2\r\n$5\r\nready\r\n$1\r\n1\r\n"
        c.call("RPUSH", "ready", "1", "2", "3")
        assert c.call("BLMPOP", "0", "1", "ready", "RIGHT", "COUNT", "2") == \
            b"*2\r\n$5\r\nready\r\n*2\r\n$1\r\n3\r\n$1\r\n2\r\n"
        assert c.call("BRPOPLPUSH", "ready", "dst", "0") == b"$1\r\n1\r\n"
        c.close()


def test_timeouts_past_the_range_redis_converts(kvrocks_server, redis_ref):
    """Redis 7.0 rounds the ms up and converts them to a long long unchecked:
    past its range (inf included) that is LLONG_MIN on x86, "negative"; a tiny
    negative timeout rounds to 0 (no timeout), and a huge one never ends."""
    out = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        got = [c.call(cmd, *args) for cmd, *args in (
            ["BLPOP", "none", "inf"], ["BLPOP", "none", "1e100"], ["BLPOP", "none", "9223372036854775807"],
            ["BLPOP", "none", "9223372036854775.808"], ["BZPOPMIN", "none", "-inf"],
            ["BLMOVE", "none", "d", "LEFT", "RIGHT", "1e30"])]
        for timeout in ("-0.0001", "9223372036854", "9223372036854775.807"):
            waiter = RawClient(port)
            wid = waiter.call("CLIENT", "ID")
            waiter.send_raw(encode(["BLPOP", "none", timeout]))
            for _ in range(500):
                if b"blocked_clients:1\r\n" in c.call("INFO", "clients"):
                    break
                time.sleep(0.01)
            time.sleep(0.05)  # still blocked: no timeout of a millisecond or so
            got.append(c.call("CLIENT", "UNBLOCK", wid[1:-2], "TIMEOUT"))
            got.append(waiter.read_reply())
            waiter.close()
        out.append(got)
        c.close()
    assert out[0] == out[1]


def test_blocked_clients_are_served_in_order(kvrocks_server):
    c = kvrocks_server.client()
    c.delete("fair")
    waiters = []
    for i in range(5):
        w = RawClient(kvrocks_server.port)
        w.send_raw(b"*3\r\n$5\r\nBLPOP\r\n$4\r\nfair\r\n$1\r\n0\r\n")
        time.sleep(0.05)  # block in a known order
        waiters.append(w)
    c.rpush("fair", *[f"e{i}" for i in range(5)])
    for i, w in enumerate(waiters):
        assert w.read_reply() == b"*2\r\n$4\r\nfair\r\n$2\r\ne%d\r\n" % i


def test_blocked_client_disconnect_and_blmove(kvrocks_server):
    c = kvrocks_server.client()
    c.delete("src", "dst")
    gone = RawClient(kvrocks_server.port)
    gone.send_raw(b"*3\r\n$5\r\nBLPOP\r\n$3\r\nsrc\r\n$1\r\n0\r\n")
    time.sleep(0.1)
    gone.close()
    mover = RawClient(kvrocks_server.port)
    mover.send_raw(b"*6\r\n$6\r\nBLMOVE\r\n$3\r\nsrc\r\n$3\r\ndst\r\n$5\r\nRIGHT\r\n$4\r\nLEFT\r\n$1\r\n5\r\n")
    time.sleep(0.2)
    c.lpush("src", "v")
    assert mover.read_reply() == b"$1\r\nv\r\n"
    assert c.lrange("dst", 0, -1) == [b"v"]
    assert c.exists("src") == 0


def test_blpop_from_many_threads(kvrocks_server):
    c = kvrocks_server.client()
    c.delete("work")
    got = []
    lock = threading.Lock()

    def consumer():
        cc = kvrocks_server.client()
        while True:
            r = cc.blpop("work", timeout=2)
            if r is None:
                return
            with lock:
                got.append(r[1])

    ts = [threading.Thread(target=consumer) for _ in range(4)]
    for t in ts:
        t.start()
    for i in range(400):
        c.rpush("work", i)
    for t in ts:
        t.join()
    assert sorted(int(x) for x in got) == list(range(400))
