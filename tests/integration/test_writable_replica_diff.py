"""A writable replica (replica-read-only no) expires the keys its own clients gave a
TTL, as Redis' expireSlaveKeys does, while the keys the master gave one wait for the
master's DELs; a FLUSHALL, the master's too, and a full sync forget the keys it
noted. One redis-server 7.0 master (its own expiry off) feeds a Redis replica and a
kvrocks replica; the same client commands go to both and the results are compared."""
import time

import pytest

from conftest import Kvrocks, RealRedis, wait_replicas_caught_up, wait_until


@pytest.fixture
def link():
    master = RealRedis(["--enable-debug-command", "yes"])
    master.client().execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    ref = RealRedis(["--replicaof", "127.0.0.1", str(master.port), "--replica-read-only", "no"])
    kv = Kvrocks(extra=["--replicaof", f"127.0.0.1 {master.port}", "--replica-read-only", "no"]).start()
    try:
        yield master, [ref, kv]
    finally:
        kv.stop()
        ref.cleanup()
        master.cleanup()


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


def test_flushall_forgets_the_noted_keys(link):
    master, replicas = link
    m = master.client()
    for r in replicas:
        r.client().set("forgotten", "v", ex=1000)
        r.client().set("mine", "v", ex=1000)
    m.flushall()  # the master's: the replicas forget what their clients noted
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
