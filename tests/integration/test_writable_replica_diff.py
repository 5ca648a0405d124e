"""A writable replica (replica-read-only no) expires the keys its own clients gave a
TTL, as Redis' expireSlaveKeys does, while the keys the master gave one wait for the
master's DELs; a FLUSHALL, the master's too, and a full sync forget the keys it
noted. Its clients' commands meet the master's expired keys as a Redis replica's do.
One redis-server 7.0 master (its own expiry off) feeds a Redis replica and a kvrocks
replica; the same client commands go to both and the results are compared."""
import time

import pytest
import redis

from conftest import Kvrocks, RawClient, RealRedis, encode, wait_replicas_caught_up, wait_until


def start_link():
    master = RealRedis(["--enable-debug-command", "yes"])
    master.client().execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    ref = RealRedis(["--replicaof", "127.0.0.1", str(master.port), "--replica-read-only", "no"])
    kv = Kvrocks(extra=["--replicaof", f"127.0.0.1 {master.port}", "--replica-read-only", "no"]).start()
    return master, ref, kv


def stop_link(master, ref, kv):
    kv.stop()
    ref.cleanup()
    master.cleanup()


@pytest.fixture
def link():
    master, ref, kv = start_link()
    try:
        yield master, [ref, kv]
    finally:
        stop_link(master, ref, kv)


@pytest.fixture(scope="module")
def shared_link():
    master, ref, kv = start_link()
    try:
        yield master, [ref, kv]
    finally:
        stop_link(master, ref, kv)


def expired_keys(r):
    return r.client().info("stats")["expired_keys"]


def keys_of(r, db):
    return sorted(r.client(db=db).execute_command("KEYS", "*"))


def test_writable_replica_expires_what_its_clients_gave_a_ttl(link):
    master, replicas = link
    m = master.client()
    m.set("t", "from-master")
    m.set("later", "from-master")
    wait_replicas_caught_up(master, replicas)
    events = []
    for r in replicas:
        c = r.client()
        c.config_set("notify-keyspace-events", "Ex")
        sub = r.client().pubsub()
        sub.psubscribe("__keyevent@*__:expired")
        events.append(sub)
        c.set("a", "v", px=100)
        c.set("b", "v")
        c.pexpire("b", 100)
        c.set("c", "v", ex=1000)
        c.set("d", "v")
        c.pexpire("t", 100)  # a key the master wrote: the replica's client gave it the TTL
        c.set("e", "v", px=100)
        c.persist("e")
        c.set("later", "v", ex=1000)
        pipe = c.pipeline(transaction=True)
        pipe.set("f", "v", px=100)
        pipe.incr("counter")
        pipe.execute()
        c1 = r.client(db=1)
        c1.set("g", "v", px=100)
    # A key the master gives a TTL stays until the master deletes it, but for one a
    # replica's client gave a TTL before ("later": Redis notes the name).
    m.set("m", "v", px=100)
    m.set("later", "from-master", px=100)
    wait_replicas_caught_up(master, replicas)
    time.sleep(0.15)
    for r in replicas:
        wait_until(lambda: expired_keys(r) == 6, 30, "the replica to expire its clients' keys")
    ref, kv = replicas
    # "m" has expired for reads (KEYS) but is kept, as DBSIZE shows, for the master's DEL.
    assert keys_of(kv, 0) == keys_of(ref, 0) == [b"c", b"counter", b"d", b"e"]
    assert keys_of(kv, 1) == keys_of(ref, 1) == []
    assert kv.client().dbsize() == ref.client().dbsize() == 5
    names = []
    for sub in events:
        got = set()
        deadline = time.time() + 10
        while len(got) < 6 and time.time() < deadline:
            msg = sub.get_message(timeout=0.5)
            if msg and msg["type"] == "pmessage":
                got.add((msg["channel"], msg["data"]))
        names.append(got)
        sub.close()
    assert names[0] == names[1] == {(b"__keyevent@0__:expired", k) for k in (b"a", b"b", b"t", b"f", b"later")} | {
        (b"__keyevent@1__:expired", b"g")}
    # The master's DEL of its expired key reaches both.
    assert m.get("m") is None
    wait_replicas_caught_up(master, replicas)
    assert kv.client().dbsize() == ref.client().dbsize() == 4


@pytest.mark.parametrize("how", ["master-flushall", "debug-reload"])
def test_emptying_the_data_set_forgets_the_noted_keys(link, how):
    """Redis' emptyData (the master's FLUSHALL, DEBUG RELOAD) forgets what the replica's
    clients noted: the master's later TTL on such a key is the master's to act on."""
    master, replicas = link
    m = master.client()
    for r in replicas:
        r.client().set("forgotten", "v", ex=1000)
        r.client().set("mine", "v", ex=1000)
    if how == "master-flushall":
        m.flushall()
    else:
        for r in replicas:
            assert r.client().execute_command("DEBUG", "RELOAD") in (True, b"OK")
    wait_replicas_caught_up(master, replicas)
    for r in replicas:
        r.client().set("mine", "v", ex=1000)  # noted again after the flush
    m.set("forgotten", "v", px=10)
    m.set("mine", "v", px=10)
    wait_replicas_caught_up(master, replicas)
    time.sleep(0.05)
    for r in replicas:
        r.client().set("z", "v", px=50)
    for r in replicas:
        wait_until(lambda: expired_keys(r) == 2, 30, "the replica to expire its clients' keys")
    ref, kv = replicas
    assert expired_keys(kv) == expired_keys(ref) == 2
    # "forgotten" (expired for reads) is the master's to delete; "mine" and "z" were the replica's.
    assert kv.client().dbsize() == ref.client().dbsize() == 1
    assert kv.client().object("encoding", "forgotten") == ref.client().object("encoding", "forgotten")


def test_a_swapdb_leaves_the_notes_on_their_database_ids(link):
    """Redis notes a client's key with the id of its database: after SWAPDB the moved
    key is no longer the cycle's, and the key of that name now in the old database is,
    even one the master wrote."""
    master, replicas = link
    master.client(db=1).set("a", "from-master", px=100)
    wait_replicas_caught_up(master, replicas)
    for r in replicas:
        c = r.client()
        c.set("a", "mine", px=100)
        c.set("b", "mine", px=100)
        assert c.swapdb(0, 1)
    time.sleep(0.15)
    for r in replicas:
        wait_until(lambda: expired_keys(r) >= 1, 30, "the replica to expire a noted key")
    time.sleep(0.3)  # more cycles: a wrong note would expire the moved keys too
    ref, kv = replicas
    assert expired_keys(kv) == expired_keys(ref) == 1
    sizes = [[r.client(db=db).dbsize() for db in (0, 1)] for r in replicas]
    assert sizes[0] == sizes[1] == [0, 2]  # the moved keys stay, expired for reads


def test_noted_keys_expire_after_the_replica_turns_read_only(link):
    master, replicas = link
    for r in replicas:
        c = r.client()
        c.set("k", "v", px=50)  # while writable
        c.config_set("replica-read-only", "yes")
    # Noted keys still expire once the replica is read-only again (Redis' cycle runs
    # on every replica); the master's keys do not.
    master.client().set("m", "v", px=50)
    wait_replicas_caught_up(master, replicas)
    for r in replicas:
        wait_until(lambda: expired_keys(r) == 1, 30, "the replica to expire its client's key")
    ref, kv = replicas
    assert kv.client().dbsize() == ref.client().dbsize() == 1  # "m", expired for reads


# A client command on a writable replica meeting a key of the master's that has expired
# but that the master has not deleted yet: (keys the master writes and gives a 50 ms
# TTL, the command). Redis' write lookups delete such a key as expired; DEL, UNLINK and
# GETDEL delete it as a live one; reads and the sources of *STORE leave it be.
EXPIRED_KEY_CASES = [
    (["SET s1 v"], ["EXPIRE", "s1", "100"]),
    (["SET s1 v"], ["PERSIST", "s1"]),
    (["RPUSH l1 a b"], ["LPOP", "l1"]),
    (["SADD t1 a b"], ["SREM", "t1", "a"]),
    (["SADD t1 a b"], ["SPOP", "t1"]),
    (["HSET h1 f v"], ["HDEL", "h1", "f"]),
    (["ZADD z1 1 a"], ["ZREM", "z1", "a"]),
    (["ZADD z1 1 a"], ["ZPOPMIN", "z1"]),
    (["ZADD z1 1 a"], ["ZREMRANGEBYSCORE", "z1", "5", "6"]),
    (["ZADD z1 1 a"], ["ZINCRBY", "z1", "1", "a"]),
    (["SET s1 v"], ["GETDEL", "s1"]),
    (["SET s1 v"], ["GETEX", "s1", "PERSIST"]),
    (["SET s1 v"], ["DEL", "s1"]),
    (["SET s1 v", "SET s2 v"], ["UNLINK", "s1", "s2", "s3"]),
    (["SET s1 v"], ["RENAME", "s1", "s2"]),
    (["SET s1 v"], ["RENAMENX", "s1", "s3"]),
    (["SET s1 v"], ["COPY", "s1", "s2"]),
    (["SADD t1 a"], ["SUNIONSTORE", "d1", "t1"]),
    (["ZADD z1 1 a"], ["ZRANGESTORE", "d1", "z1", "0", "-1"]),
    (["RPUSH l1 a"], ["SORT", "l1", "STORE", "d1"]),
    (["SET s1 v"], ["BITOP", "OR", "d1", "s1"]),
    (["SET d1 v"], ["BITOP", "OR", "d1", "s1x"]),
    (["SET d1 v"], ["SUNIONSTORE", "d1", "t1x"]),
    (["SADD t1 a"], ["SMOVE", "t1", "t2", "a"]),
    (["RPUSH l1 a"], ["LMOVE", "l1", "l2", "LEFT", "LEFT"]),
    (["SET s1 v"], ["SETRANGE", "s1", "0", ""]),
    (["RPUSH l1 a"], ["LSET", "l1", "0", "b"]),
    (["RPUSH l1 a"], ["LTRIM", "l1", "0", "0"]),
    (["XADD x1 1-1 f v"], ["XDEL", "x1", "9-9"]),
    (["XADD x1 1-1 f v"], ["XGROUP", "CREATE", "x1", "g", "0"]),
    (["SET s1 v"], ["EXISTS", "s1"]),
    (["SET s1 v"], ["MOVE", "s1", "1"]),
    (["SET s1 v"], ["EVAL", "return redis.call('EXPIRE', KEYS[1], 100)", "1", "s1"]),
    (["SET s1 v"], ["EVAL", "return redis.call('GET', KEYS[1])", "1", "s1"]),
    (["SET s1 v"], ["SET", "s1", "w", "XX"]),
    (["SET s1 v"], ["SET", "s1", "w", "NX"]),
    (["SET s1 v"], ["APPEND", "s1", "w"]),
    (["HSET h1 f v"], ["HSETNX", "h1", "f", "w"]),
]


def event_subscriber(r):
    """A Pub/Sub connection to r receiving every keyspace event and the channel "mark"."""
    r.client().config_set("notify-keyspace-events", "KEA")
    sub = r.client().pubsub()
    sub.psubscribe("__keyevent@*__:*", "mark")
    for _ in range(2):
        sub.get_message(timeout=5)  # the subscription confirmations
    return sub


def events_until_mark(sub):
    got = []
    while True:
        msg = sub.get_message(timeout=10)
        assert msg is not None, "no mark"
        if msg["type"] != "pmessage":
            continue
        if msg["channel"] == b"mark":
            return got
        got.append((msg["channel"], msg["data"]))


@pytest.mark.parametrize("setup,command", EXPIRED_KEY_CASES, ids=[" ".join(c[1]) for c in EXPIRED_KEY_CASES])
def test_client_writes_to_the_masters_expired_keys(shared_link, setup, command):
    master, replicas = shared_link
    m = master.client()
    m.flushall()
    for line in setup:
        m.execute_command(*line.split())
        m.pexpire(line.split()[1], 50)
    wait_replicas_caught_up(master, replicas)
    time.sleep(0.1)
    seen = []
    for r in replicas:
        c = r.client()
        sub = event_subscriber(r)
        before = c.info("stats")["expired_keys"], c.dbsize(), r.client(db=1).dbsize()
        try:
            reply = c.execute_command(*command)
        except redis.ResponseError as e:
            reply = str(e)
        c.publish("mark", "")
        after = c.info("stats")["expired_keys"], c.dbsize(), r.client(db=1).dbsize()
        seen.append((reply, [a - b for a, b in zip(after, before)], events_until_mark(sub)))
        sub.close()
    assert seen[0] == seen[1]


PAST_MS = "1000000000000"  # 2001: an absolute expiry long past
PAST_EXPIRY_CASES = [
    (["SET s1 v"], ["PEXPIREAT", "s1", PAST_MS]),
    (["SET s1 v"], ["EXPIRE", "s1", "-1"]),
    (["SET s1 v"], ["GETEX", "s1", "PXAT", PAST_MS]),
    (["RPUSH l1 a"], ["EXPIREAT", "l1", "1"]),
    (["SET s1 v"], ["SET", "s1", "w", "PXAT", PAST_MS]),
    (["SET src v"], ["RESTORE", "r1", PAST_MS, "<DUMP src>", "ABSTTL"]),
]


@pytest.mark.parametrize("setup,command", PAST_EXPIRY_CASES, ids=[str(c[1][0]) for c in PAST_EXPIRY_CASES])
def test_a_past_expiry_from_a_client_waits_for_the_replicas_cycle(shared_link, setup, command):
    """As Redis' checkAlreadyExpired on a replica: a client's expiry already past keeps
    the key ("expire" event, DBSIZE unchanged) until the replica's own cycle expires it."""
    master, replicas = shared_link
    m = master.client()
    m.flushall()
    for line in setup:
        m.execute_command(*line.split())
    command = [m.dump("src") if a == "<DUMP src>" else a for a in command]
    wait_replicas_caught_up(master, replicas)
    seen = []
    for r in replicas:
        c = r.client()
        sub = event_subscriber(r)
        expired, size = c.info("stats")["expired_keys"], c.dbsize()
        # One transaction: the replica's cycle cannot run between the command and the counts.
        pipe = c.pipeline(transaction=True)
        pipe.execute_command(*command)
        pipe.info("stats")
        pipe.dbsize()
        reply, stats, dbsize = pipe.execute()
        right_after = [stats["expired_keys"] - expired, dbsize - size]
        wait_until(lambda: c.info("stats")["expired_keys"] == expired + 1, 30, f"the cycle of {type(r).__name__}")
        c.publish("mark", "")
        seen.append((reply, right_after, c.dbsize() - size, events_until_mark(sub)))
        sub.close()
    assert seen[0] == seen[1]


# (setup on the master, the blocking commands of the replica's clients, the master's
# commands sent in one write)
SERVED_PER_COMMAND = {
    "xread": ([["XADD", "s", "1-1", "f", "v"]], [["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]],
              [["XADD", "s", "2-1", "f", "v"], ["XADD", "s", "3-1", "f", "v"]]),
    "blpop": ([], [["BLPOP", "l", "0"], ["BLPOP", "l", "0"]], [["LPUSH", "l", "x"], ["LPUSH", "l", "y"]]),
    "blmove": ([], [["BLMOVE", "l", "d", "LEFT", "LEFT", "0"]],
               [["RPUSH", "l", "x"], ["RPUSH", "l", "y"], ["DEL", "l"], ["LPUSH", "l", "z"]]),
}


@pytest.mark.parametrize("case", list(SERVED_PER_COMMAND))
def test_a_replicas_blocked_clients_are_served_after_each_command_of_the_master(shared_link, case):
    """As a Redis replica runs handleClientsBlockedOnKeys after each command of the
    master's stream: a reader waiting with $ gets the first of two XADDs that came in
    one write, and two BLPOPs get one LPUSH each."""
    setup, blocking, writes = SERVED_PER_COMMAND[case]
    master, replicas = shared_link
    m = master.client()
    m.flushall()
    for cmd in setup:
        m.execute_command(*cmd)
    wait_replicas_caught_up(master, replicas)
    waiting = []
    for r in replicas:
        for i, cmd in enumerate(blocking):
            c = RawClient(r.port)
            c.send_raw(encode(cmd))
            wait_until(lambda: r.client().info("clients")["blocked_clients"] == i + 1, 10, "the client blocks")
            waiting.append(c)
    raw = RawClient(master.port)
    raw.send_raw(b"".join(encode(cmd) for cmd in writes))
    for _ in writes:
        raw.read_reply()
    raw.close()
    wait_replicas_caught_up(master, replicas)
    replies = [c.read_reply() for c in waiting]
    for c in waiting:
        c.close()
    n = len(blocking)
    after = [r.client().lrange("d", 0, -1) for r in replicas]
    assert (replies[n:], after[1]) == (replies[:n], after[0])
