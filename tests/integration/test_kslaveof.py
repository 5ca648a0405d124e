"""kvrocks replicating kvrocks (KSLAVEOF host port): a full sync copies the
master's storage, then the replica follows its write-ahead log, resumes after a
broken link or a restart, and can serve replicas of its own (A -> B -> C).
Replicas must hold exactly their master's data set: DEBUG DIGEST, then key by
key (DEBUG DIGEST-VALUE, type, TTL), and INFO keyspace's counts."""
import os
import signal
import subprocess
import threading
import time

import pytest
import redis

from conftest import Kvrocks, RawClient, RealRedis, wait_replicas_caught_up, wait_until
from random_commands import Gen, feed_master, key_differences


def follow(replica, master, command="KSLAVEOF"):
    """command REPLICAOF: the same, found out in the handshake (a kvrocks master)."""
    assert replica.client().execute_command(command, "127.0.0.1", master.port) == b"OK"


def wal_sequence(server):
    return server.client().info("replication")["wal_sequence"]


def wait_caught_up(master, replicas):
    wait_replicas_caught_up(master, replicas, offset=wal_sequence(master))


def keyspace_counts(server):
    c = server.client()
    return {db: (v["keys"], v["expires"]) for db, v in c.info("keyspace").items()}


def assert_same(master, replica, history=(), seed=None):
    """The replica holds the master's data set (the master quiet meanwhile)."""
    m, r = master.client(), replica.client()
    deadline = time.time() + 10
    # A key may expire between the two digests: the master's DEL follows soon.
    while m.execute_command("DEBUG", "DIGEST") != r.execute_command("DEBUG", "DIGEST"):
        if time.time() > deadline:
            diffs = key_differences(r, m, seed, list(history))
            pytest.fail("DEBUG DIGEST differs:\n" + "".join(diffs or ["no key differs"]))
        time.sleep(0.1)
        wait_caught_up(master, [replica])
    assert keyspace_counts(master) == keyspace_counts(replica)


def replication_log(server):
    """The lines of a server's log about its kvrocks master or replicas."""
    with open(server.log_path, "rb") as f:
        return "".join(line.decode(errors="replace") for line in f
                       if b"sync" in line.lower() or b"kvrocks replica" in line or b"stream" in line.lower())


@pytest.fixture
def servers():
    made = []

    def make(*extra):
        s = Kvrocks(extra=list(extra)).start()
        made.append(s)
        return s
    yield make
    for s in made:
        s.cleanup()


def fill(c):
    """Keys of every type in two databases, big and small, with and without TTLs."""
    c.set("s", "v")
    c.set("big", "x" * 20000)
    c.set("n", 12)
    c.hset("h", mapping={f"f{i}": i for i in range(600)})
    c.hset("hs", mapping={"a": 1, "b": 2})
    c.rpush("l", *range(300))
    c.sadd("set", *range(700))
    c.sadd("iset", 1, 2, 3)
    c.zadd("z", {f"m{i}": i for i in range(200)})
    c.xadd("st", {"a": "1"})
    c.xgroup_create("st", "g", id="0")
    c.pfadd("hll", *range(100))
    c.setbit("bits", 100000, 1)
    c.set("ttl", "v", ex=1000)
    c.hset("httl", "f", "v")
    c.expire("httl", 2000)
    c.execute_command("SELECT", 3)
    c.set("in3", "three")
    c.execute_command("SELECT", 0)
    c.execute_command("FUNCTION", "LOAD",
                      "#!lua name=lib\nredis.register_function('f', function(k, a) return 1 end)")


def test_a_full_sync_copies_every_type_database_and_function(servers):
    master = servers()
    c = master.client()
    fill(c)
    c.execute_command("SWAPDB", 0, 5)  # the database map travels too
    replica = servers()
    follow(replica, master)
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    r = replica.client()
    assert r.execute_command("FUNCTION", "LIST") == c.execute_command("FUNCTION", "LIST")
    assert r.execute_command("SELECT", 5) and r.hlen("h") == 600
    assert r.ttl("ttl") > 900
    info = r.info("replication")
    assert info["role"] == "slave" and info["replica_full_syncs"] == 1 and info["slave_read_only"] == 1
    assert master.client().info("stats")["sync_full"] == 1
    m_info = c.info("replication")
    assert m_info["connected_slaves"] == 1
    assert m_info["slave0"]["port"] == replica.port and m_info["slave0"]["state"] == "online"
    assert r.execute_command("ROLE")[:3] == [b"slave", b"127.0.0.1", master.port]


def test_the_replica_follows_writes_and_is_read_only(servers):
    master = servers()
    replica = servers()
    follow(replica, master)
    wait_until(lambda: replica.client().info("replication")["master_link_status"] == "up", 20, "the link")
    c = master.client()
    fill(c)
    c.hset("h", "f1", "changed")  # an element alone, no metadata
    c.rename("h", "h2")
    c.hset("h2", "f2", "after rename")  # elements under the old name
    c.execute_command("MOVE", "z", 3)
    c.execute_command("SWAPDB", 0, 3)
    c.execute_command("SELECT", 3)
    c.execute_command("FLUSHDB")
    c.execute_command("SELECT", 0)
    c.delete("set")
    c.set("new", "1")
    c.incrbyfloat("new", 1.5)
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    r = replica.client()
    with pytest.raises(redis.ResponseError, match="read only replica"):
        r.set("x", "y")
    # replica-read-only no does not make a kvrocks replica writable: its storage is a copy.
    r.config_set("replica-read-only", "no")
    with pytest.raises(redis.ResponseError, match="read only replica"):
        r.set("x", "y")


@pytest.mark.parametrize("seed", range(3))
def test_random_commands_reach_a_chain_of_replicas(servers, seed):
    a, b, c = servers(), servers(), servers()
    follow(b, a)
    follow(c, b, "REPLICAOF" if seed == 2 else "KSLAVEOF")
    wait_until(lambda: all(s.client().info("replication")["master_link_status"] == "up" for s in (b, c)), 20,
               "the links")
    history = feed_master(RawClient(a.port), Gen(seed), 1500)
    wait_caught_up(a, [b])
    wait_caught_up(b, [c])
    assert_same(a, b, history, seed)
    assert_same(a, c, history, seed)
    # Nothing but the first sync was a full one.
    assert a.client().info("stats")["sync_full"] + b.client().info("stats")["sync_full"] == 2, \
        replication_log(a) + replication_log(b) + replication_log(c)


def test_restarts_resume_where_the_data_ends(servers):
    a, b, c = servers(), servers(), servers()
    follow(b, a)
    follow(c, b)
    wait_until(lambda: all(s.client().info("replication")["master_link_status"] == "up" for s in (b, c)), 20,
               "the links")
    gen = Gen(77)
    ra = RawClient(a.port)
    history = feed_master(ra, gen, 300)
    b.kill9()
    history += feed_master(ra, gen, 300)  # while the middle of the chain is down
    b.extra += ["--kslaveof", f"127.0.0.1 {a.port}"]
    b.start()
    history += feed_master(ra, gen, 300)
    a.kill9()
    a.start()
    ra = RawClient(a.port)
    history += feed_master(ra, gen, 300)
    wait_caught_up(a, [b])
    wait_caught_up(b, [c])
    assert_same(a, b, history, 77)
    assert_same(a, c, history, 77)
    # Every reconnection continued from the write-ahead log.
    assert a.client().info("stats")["sync_partial_ok"] >= 1
    assert b.client().info("stats")["sync_partial_ok"] >= 1
    assert a.client().info("stats")["sync_full"] == 0  # restarted: counts from its start
    assert b.client().info("replication")["replica_full_syncs"] == 0
    assert c.client().info("replication")["replica_full_syncs"] == 1


def test_data_written_around_the_wal_means_a_full_sync(servers):
    master, replica = servers(), servers()
    follow(replica, master)
    c = master.client()
    fill(c)
    wait_caught_up(master, [replica])
    id_before = c.info("replication")["wal_id"]
    c.execute_command("DEBUG", "RELOAD")  # ingests files: not in the write-ahead log
    assert c.info("replication")["wal_id"] != id_before
    c.set("after", "reload")
    wait_until(lambda: replica.client().info("replication")["replica_full_syncs"] == 2, 20, "a second full sync")
    wait_caught_up(master, [replica])
    assert_same(master, replica)


def test_a_purged_log_means_a_full_sync(servers):
    master = servers("--rocksdb.wal-ttl-seconds", "0", "--rocksdb.wal-size-limit-mb", "0")
    replica = servers()
    follow(replica, master)
    c = master.client()
    c.set("a", 1)
    wait_caught_up(master, [replica])
    replica.stop()
    for i in range(200):
        c.set(f"k{i}", "v" * 100)
    c.execute_command("COMPACT")  # memtables flushed: their logs are gone
    replica.extra += ["--kslaveof", f"127.0.0.1 {master.port}"]
    replica.start()
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    assert replica.client().info("replication")["replica_full_syncs"] == 1  # since its restart
    assert c.info("stats")["sync_partial_err"] == 1


def test_a_promoted_replica_writes_its_own_history(servers):
    master, replica = servers(), servers()
    follow(replica, master)
    c = master.client()
    c.hset("h", mapping={"a": 1, "b": 2})
    c.rpush("l", 1, 2)
    wait_caught_up(master, [replica])
    r = replica.client()
    assert r.execute_command("KSLAVEOF", "NO", "ONE") == b"OK"
    assert r.info("replication")["role"] == "master"
    assert r.config_get("kslaveof") == {"kslaveof": ""}
    # New incarnations of the master's keys, and writes to them, are the replica's own.
    r.delete("h")
    r.hset("h", "c", 3)
    r.rpush("l", 3)
    assert r.hgetall("h") == {b"c": b"3"}
    assert r.lrange("l", 0, -1) == [b"1", b"2", b"3"]
    assert r.dbsize() == 2
    # Following the master again starts over with a full sync.
    follow(replica, master)
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    assert r.info("replication")["replica_full_syncs"] == 2


def test_watch_tracking_and_xread_on_a_replica_see_the_masters_writes(servers):
    master, replica = servers(), servers()
    follow(replica, master)
    c = master.client()
    c.set("k", "1")
    c.xadd("st", {"a": "1"})
    wait_caught_up(master, [replica])
    r = replica.client()
    reader = replica.client()
    got = []
    t = threading.Thread(target=lambda: got.append(reader.xread({"st": "$"}, block=10000)))
    t.start()
    wait_until(lambda: r.info("clients")["blocked_clients"] == 1, 10, "XREAD to block")
    pipe = r.pipeline()
    pipe.watch("k")
    c.set("k", "2")
    c.xadd("st", {"b": "2"})
    wait_caught_up(master, [replica])
    pipe.multi()
    pipe.get("k")
    with pytest.raises(redis.WatchError):
        pipe.execute()
    t.join(10)
    assert got and got[0][0][1][0][1] == {b"b": b"2"}


def test_kpsync_and_kslaveof_arguments(servers):
    server = servers()
    c = server.client()
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        c.execute_command("KSLAVEOF", "127.0.0.1")
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        c.execute_command("KSLAVEOF", "127.0.0.1", "x")
    with pytest.raises(redis.ResponseError, match="Invalid master port"):
        c.execute_command("KSLAVEOF", "127.0.0.1", "0")
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        c.execute_command("KPSYNC", "?", "-1")
    assert c.execute_command("KSLAVEOF", "NO", "ONE") == b"OK"  # not a replica: nothing to do
    with pytest.raises(redis.ResponseError, match="not allowed inside a transaction"):
        p = c.pipeline()
        p.execute_command("KPSYNC", "?", "1")
        p.execute()
    # A KPSYNC from anyone gets the snapshot frames on its socket, then the stream.
    raw = RawClient(server.port)
    raw.send_raw(b"KPSYNC ? 1\r\n")
    line = b""
    while not line.endswith(b"\r\n"):
        line += raw.sock.recv(1)
    assert line.startswith(b"+FULLSYNC ")
    raw.close()


def test_kslaveof_in_the_config_file_follows_at_start(servers):
    master = servers()
    master.client().set("a", "b")
    replica = servers("--kslaveof", f"127.0.0.1 {master.port}")
    wait_caught_up(master, [replica])
    assert replica.client().get("a") == b"b"
    assert replica.client().config_get("kslaveof") == {"kslaveof": f"127.0.0.1 {master.port}"}


def test_a_master_with_a_compressed_log_refuses_replicas(servers):
    # RocksDB 7.8 misreads compressed write-ahead logs now and then (kvrocks.conf).
    master = servers("--rocksdb.wal-compression", "zstd")
    with pytest.raises(redis.ResponseError, match="rocksdb.wal-compression no"):
        master.client().execute_command("KPSYNC", "?", "1")
    replica = servers()
    follow(replica, master)
    wait_until(lambda: "wal-compression" in replica.client().info("replication").get("replica_last_error", ""), 20,
               "the refusal")
    assert replica.client().info("replication")["master_link_status"] == "down"


def test_following_itself_keeps_the_data(servers):
    server = servers()
    c = server.client()
    c.set("a", "b")
    follow(server, server)
    wait_until(lambda: "itself" in c.info("replication").get("replica_last_error", ""), 20, "the refusal")
    assert c.execute_command("KSLAVEOF", "NO", "ONE") == b"OK"
    assert c.get("a") == b"b"


def test_min_replicas_to_write_counts_kvrocks_replicas(servers):
    master = servers()
    c = master.client()
    c.config_set("min-replicas-to-write", 1)
    with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
        c.set("a", "b")
    replica = servers()
    follow(replica, master)
    wait_until(lambda: c.info("replication").get("min_slaves_good_slaves") == 1, 20, "a good replica")
    assert c.set("a", "b")
    role = c.execute_command("ROLE")
    assert role[0] == b"master" and role[2][0][:2] == [b"127.0.0.1", str(replica.port).encode()]
    replica.stop()
    wait_until(lambda: c.info("replication")["connected_slaves"] == 0, 20, "the replica to go")
    with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
        c.set("a", "c")


def test_wait_counts_the_replicas_that_applied_the_writes(servers):
    master = servers()
    c = master.client()
    assert c.execute_command("WAIT", 1, 100) == 0
    replicas = [servers(), servers()]
    for r in replicas:
        follow(r, master)
    wait_until(lambda: c.info("replication")["connected_slaves"] == 2, 30, "two replicas streaming")
    # Each write is on both replicas once WAIT says so.
    for i in range(30):
        c.set(f"k{i}", i)
        assert c.execute_command("WAIT", 2, 0) == 2
        assert all(r.client().get(f"k{i}") == str(i).encode() for r in replicas)
    # More replicas than there are: the count when the timeout expires.
    assert c.execute_command("WAIT", 3, 200) == 2
    pipe = c.pipeline(transaction=True)
    pipe.set("m", 1).execute_command("WAIT", 3, 0)
    # At once, counting those that acknowledged what was written before EXEC (as
    # Redis, whose EXEC propagates its writes after it ends: it answers 2 here too).
    assert pipe.execute() == [True, 2]
    # CLIENT UNBLOCK answers the count too.
    waiter = master.client()
    wid = waiter.client_id()
    got = []
    t = threading.Thread(target=lambda: got.append(waiter.execute_command("WAIT", 3, 0)))
    t.start()
    wait_until(lambda: c.info("clients")["blocked_clients"] == 1, 10, "the WAIT to block")
    assert c.execute_command("CLIENT", "UNBLOCK", wid) == 1
    t.join()
    assert got == [2]
    with pytest.raises(redis.ResponseError, match="WAIT cannot be used with replica instances"):
        replicas[0].client().execute_command("WAIT", 0, 0)
    replicas[1].stop()
    wait_until(lambda: c.info("replication")["connected_slaves"] == 1, 30, "a replica to go")
    c.set("after", 1)
    assert c.execute_command("WAIT", 2, 300) == 1
    assert replicas[0].client().get("after") == b"1"


@pytest.mark.parametrize("seed", range(2))
def test_a_chain_can_start_at_a_redis_master(servers, seed):
    """Redis -> kvrocks (REPLICAOF) -> kvrocks (KSLAVEOF): the end of the chain holds
    what a Redis replica of the same master holds, the RDB's keys and the stream's."""
    master, ref = RealRedis(), None
    try:
        m = master.client()
        fill(m)
        ref = RealRedis(extra=["--replicaof", f"127.0.0.1 {master.port}"])
        a = servers("--replicaof", f"127.0.0.1 {master.port}")
        b = servers()
        follow(b, a)
        wait_until(lambda: all(s.client().info("replication")["master_link_status"] == "up" for s in (a, b, ref)),
                   30, "the links")
        history = feed_master(RawClient(master.port), Gen(seed), 1000)
        wait_replicas_caught_up(master, [a, ref])
        wait_caught_up(a, [b])
        rb, rr = b.client(), ref.client()
        deadline = time.time() + 10
        while rb.execute_command("DEBUG", "DIGEST") != rr.execute_command("DEBUG", "DIGEST"):
            if time.time() > deadline:
                pytest.fail("DEBUG DIGEST differs:\n" + "".join(key_differences(rb, rr, seed, history)
                                                               or ["no key differs"]))
            time.sleep(0.1)
            wait_caught_up(a, [b])
        assert keyspace_counts(a) == keyspace_counts(b)
    finally:
        master.cleanup()
        if ref:
            ref.cleanup()


def test_a_promoted_middle_of_a_chain_keeps_its_replicas(servers):
    a, b, c = servers(), servers(), servers()
    follow(b, a)
    follow(c, b)
    a.client().set("x", 1)
    wait_caught_up(a, [b])
    wait_caught_up(b, [c])
    assert b.client().execute_command("KSLAVEOF", "NO", "ONE") == b"OK"
    b.client().set("y", 2)
    wait_caught_up(b, [c])
    assert c.client().mget("x", "y") == [b"1", b"2"]
    assert c.client().info("replication")["replica_full_syncs"] == 1
    assert_same(b, c)


def test_concurrent_writers_while_replicas_tail_the_log(servers):
    """Many clients writing at once make RocksDB group their batches; the master's
    log readers must never read a batch it has not published (that aborted a
    master with pipelined writes) and the replica ends with the same data."""
    master, replica = servers(), servers()
    follow(replica, master)
    wait_until(lambda: master.client().info("replication")["connected_slaves"] == 1, 20, "the replica")
    bench = subprocess.run(["redis-benchmark", "-p", str(master.port), "-t", "set,incr,lpush,hset", "-n", "50000",
                            "-r", "20000", "-c", "50", "-d", "100", "-q"], capture_output=True, text=True, timeout=300)
    assert bench.returncode == 0, bench.stdout[-500:] + bench.stderr[-500:]
    assert master.client().ping()
    wait_caught_up(master, [replica])
    assert_same(master, replica)


def test_a_replica_killed_under_load_resumes_from_the_log(servers):
    master, replica = servers(), servers()
    follow(replica, master)
    wait_until(lambda: master.client().info("replication")["connected_slaves"] == 1, 20, "the replica")
    bench = subprocess.Popen(["redis-benchmark", "-p", str(master.port), "-t", "set,lpush,hset,incr", "-n", "60000",
                              "-r", "20000", "-c", "30", "-d", "50", "-q"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: wal_sequence(master) > 20000, 60, "writes under way")
        replica.kill9()
        time.sleep(0.2)
        replica.extra += ["--kslaveof", f"127.0.0.1 {master.port}"]
        replica.start()
        assert bench.wait(timeout=300) == 0
    finally:
        bench.kill()
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    r = replica.client().info("replication")
    assert r["replica_full_syncs"] == 0 and r["replica_partial_syncs"] >= 1


def test_replicaof_a_kvrocks_master_follows_its_log(servers):
    """REPLICAOF (what Sentinel and redis-cli send) of a kvrocks master: the replica
    says `REPLCONF capa kvrocks`, the master answers its PSYNC with KVROCKS, and the
    replica follows the master's write-ahead log as KSLAVEOF would, restarts included."""
    master = servers()
    c = master.client()
    fill(c)
    replica = servers("--replicaof", f"127.0.0.1 {master.port}")
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    r = replica.client()
    info = r.info("replication")
    assert info["role"] == "slave" and info["master_wal_id"] == c.info("replication")["wal_id"]
    assert info["replica_full_syncs"] == 1 and info["slave_read_only"] == 1
    assert c.info("replication")["slave0"]["port"] == replica.port
    assert r.config_get("replicaof") == {"replicaof": f"127.0.0.1 {master.port}"}
    assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK Already connected to specified master"
    with pytest.raises(redis.ReadOnlyError):
        r.set("x", 1)
    c.set("after", "sync")
    c.rpush("l", "more")
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    # A restart resumes from the log (the replicaof option again finds a kvrocks master).
    replica.kill9()
    c.set("while", "down")
    replica.start()
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    assert replica.client().info("replication")["replica_full_syncs"] == 0
    assert c.info("stats")["sync_partial_ok"] >= 1
    # Promoted with REPLICAOF NO ONE, as a Redis replica is.
    r = replica.client()
    assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    assert r.info("replication")["role"] == "master" and r.set("own", 1)


def test_sentinel_fails_over_a_group_of_kvrocks_servers(servers, tmp_path):
    """A kvrocks master with two kvrocks replicas (replicaof) under Redis Sentinel:
    when the master dies, Sentinel promotes a replica (SLAVEOF NO ONE), points the
    other at it (SLAVEOF host port) and, when the old master comes back, makes it a
    replica of the new one; every server ends with the same data."""
    from test_replication import start_sentinel
    master = servers()
    c = master.client()
    fill(c)
    replicas = [servers("--replicaof", f"127.0.0.1 {master.port}") for _ in range(2)]
    wait_caught_up(master, replicas)
    sentinel, s = start_sentinel(tmp_path / "sentinel", master.port, down_after_ms=2000)
    try:
        def replicas_seen():
            seen = s.execute_command("SENTINEL", "REPLICAS", "mymaster")
            return len([f for f in seen if f["master-link-status"] == "ok" and "s_down" not in f["flags"]]) == 2
        wait_until(replicas_seen, 30, "Sentinel to see both kvrocks replicas")
        master.stop()
        by_port = {r.port: r for r in replicas + [master]}

        def sentinels_master():
            return by_port[int(s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")[1])]
        wait_until(lambda: sentinels_master() in replicas and
                   sentinels_master().client().execute_command("ROLE")[0] == b"master", 60,
                   "Sentinel to promote a kvrocks replica")
        sentinels_master().client().set("after", "failover")
        master.start()  # Sentinel turns it into a replica of the new master

        def converged():
            new = sentinels_master()
            if new.client().execute_command("ROLE")[0] != b"master":
                return False
            for r in by_port.values():
                if r is not new and (r.client().info("replication").get("master_port") != new.port or
                                     r.client().get("after") != b"failover"):
                    return False
            return True
        wait_until(converged, 60, "all three servers to follow Sentinel's master")
        new = sentinels_master()
        others = [r for r in by_port.values() if r is not new]
        wait_caught_up(new, others)
        for r in others:
            assert_same(new, r)
    finally:
        sentinel.terminate()
        sentinel.wait()


def test_a_redis_position_does_not_outlive_a_promotion_or_a_kvrocks_master(servers):
    """A kvrocks replica of a Redis master keeps (replid, offset) to resume with PSYNC.
    Once it accepted writes as a master (REPLICAOF NO ONE, then a restart) or took a
    kvrocks master's data (KSLAVEOF), that position no longer describes its data: a
    later REPLICAOF of the same Redis master must be a full sync, as Redis' own replica
    (whose replication id changes on promotion) gets one."""
    m = RealRedis(extra=["--repl-backlog-size", "16mb", "--repl-diskless-sync-delay", "0"])
    try:
        mc = m.client()
        mc.set("from", "redis")
        kv = servers()
        r = kv.client()
        assert r.execute_command("REPLICAOF", "127.0.0.1", m.port) == b"OK"
        wait_replicas_caught_up(m, [kv])
        assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
        r.set("own", "write")
        kv.restart()
        r = kv.client()
        assert r.execute_command("REPLICAOF", "127.0.0.1", m.port) == b"OK"
        wait_replicas_caught_up(m, [kv])
        assert r.get("own") is None and r.get("from") == b"redis"
        assert mc.info("stats")["sync_full"] == 2

        other = servers()
        other.client().set("from", "kvrocks")
        follow(kv, other)
        wait_caught_up(other, [kv])
        assert r.get("from") == b"kvrocks"
        assert r.execute_command("REPLICAOF", "127.0.0.1", m.port) == b"OK"
        wait_replicas_caught_up(m, [kv])
        assert r.get("from") == b"redis" and r.dbsize() == 1
        assert mc.info("stats")["sync_full"] == 3
    finally:
        m.cleanup()


def test_a_writable_replica_of_a_kvrocks_master_stays_read_only_while_its_master_is_away(servers):
    """replica-read-only no lets a replica of a Redis master take writes, but a copy of
    a kvrocks master's storage is always read-only. Restarted while its master is down,
    a REPLICAOF replica that last followed a kvrocks master is presumed to follow one
    until the master answers: a local write would otherwise stay under the log it resumes."""
    master = servers()
    master.client().set("k", "master")
    replica = servers("--replicaof", f"127.0.0.1 {master.port}", "--replica-read-only", "no")
    wait_caught_up(master, [replica])
    with pytest.raises(redis.ReadOnlyError):
        replica.client().set("k", "replica")
    master.stop()
    replica.restart()
    r = replica.client()
    assert r.info("replication")["master_link_status"] == "down"
    with pytest.raises(redis.ReadOnlyError):
        r.set("k", "replica")
    master.start()
    master.client().set("k2", "later")
    wait_caught_up(master, [replica])
    assert_same(master, replica)
    assert replica.client().info("replication")["replica_full_syncs"] == 0


def test_wait_counts_replicas_against_the_clients_own_writes(servers):
    """WAIT of a client that never wrote counts every streaming replica (Redis: its
    woff is 0), while a writer's WAIT waits for its write: with one replica stopped,
    the writer gets 1 after the timeout and a reader 2 at once."""
    master = servers()
    replicas = [servers(), servers()]
    for r in replicas:
        follow(r, master)
    c = master.client()
    wait_until(lambda: c.info("replication")["connected_slaves"] == 2, 30, "two replicas streaming")
    writer, reader = master.client(), master.client()
    writer.set("k", 1)
    assert writer.execute_command("WAIT", 2, 0) == 2
    os.kill(replicas[1].proc.pid, signal.SIGSTOP)
    try:
        writer.set("k", 2)
        assert writer.execute_command("WAIT", 2, 300) == 1
        assert reader.execute_command("WAIT", 2, 0) == 2
        assert reader.get("k") == b"2"  # a read is no write
        assert reader.execute_command("WAIT", 2, 0) == 2
    finally:
        os.kill(replicas[1].proc.pid, signal.SIGCONT)
    assert writer.execute_command("WAIT", 2, 0) == 2


def test_a_promotion_between_two_kslaveofs_means_a_full_sync(servers):
    """KSLAVEOF NO ONE, a write, KSLAVEOF of the same master, sent together: the
    replica's own write must not stay under the master's resumed log."""
    master, replica = servers(), servers()
    master.client().set("k", "master")
    follow(replica, master)
    wait_caught_up(master, [replica])
    r = replica.client()
    for _ in range(3):
        pipe = r.pipeline(transaction=False)
        pipe.execute_command("KSLAVEOF", "NO", "ONE").set("own", "write")
        pipe.execute_command("KSLAVEOF", "127.0.0.1", master.port)
        assert pipe.execute() == [b"OK", True, b"OK"]
        master.client().incr("n")
        wait_caught_up(master, [replica])
        assert_same(master, replica)
        assert r.get("own") is None
