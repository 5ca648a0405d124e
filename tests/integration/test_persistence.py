"""Durability: restarts, kill -9, SHUTDOWN, SIGTERM, checkpoints."""
import os
import random
import signal
import threading
import time

import pytest
import redis

from conftest import Kvrocks, RawClient


def test_data_survives_restart(fresh_server):
    srv = fresh_server.start()
    c = srv.client()
    c.mset({f"k{i}": f"v{i}" for i in range(100)})
    c.set("ttl", "v", ex=1000)
    c.execute_command("SELECT", 3)
    c2 = srv.client(db=3)
    c2.set("in3", "x")
    c2.execute_command("SWAPDB", 3, 4)
    srv.restart()
    c = srv.client()
    assert c.dbsize() == 101
    assert c.get("k42") == b"v42"
    assert 990 < c.ttl("ttl") <= 1000
    assert srv.client(db=4).get("in3") == b"x"
    assert srv.client(db=3).dbsize() == 0
    info = c.info("keyspace")
    assert info["db0"]["keys"] == 101 and info["db0"]["expires"] == 1
    assert 990000 < info["db0"]["avg_ttl"] <= 1001000  # the one key's TTL, to the second


def test_acknowledged_writes_survive_kill9(fresh_server):
    srv = fresh_server.start()
    acked = []
    stop = threading.Event()

    def writer(tid):
        c = RawClient(srv.port)
        i = 0
        try:
            while not stop.is_set():
                key = f"w{tid}:{i}"
                if c.call("SET", key, str(i)) == b"+OK\r\n":
                    acked.append(key)
                i += 1
        except (ConnectionError, OSError):
            pass

    ts = [threading.Thread(target=writer, args=(t,)) for t in range(3)]
    for t in ts:
        t.start()
    time.sleep(1.0)
    srv.kill9()
    stop.set()
    for t in ts:
        t.join()
    assert len(acked) > 100
    srv.start()
    c = srv.client()
    missing = [k for k in acked if c.exists(k) == 0]
    assert missing == []
    assert c.dbsize() >= len(acked)


def test_incr_counter_exact_after_kill9(fresh_server):
    srv = fresh_server.start()
    c = RawClient(srv.port)
    for i in range(1, 501):
        assert c.call("INCR", "n") == b":%d\r\n" % i
    srv.kill9()
    srv.start()
    assert srv.client().get("n") == b"500"
    assert srv.client().dbsize() == 1


def _mixed_writes(port, seed, db, stop):
    """Random writes to a few keys of one database until stop is set or the server dies:
    every type, expiry set and removed, keys moved, renamed, copied, swapped, flushed.
    TTLs are long, so no key expires between the crash and the checks."""
    rnd = random.Random(seed)
    c = redis.Redis(host="127.0.0.1", port=port, db=db, socket_timeout=10)
    keys = [f"k{i}" for i in range(40)]
    ops = [
        lambda k: c.set(k, "v" * rnd.choice([1, 100, 6000])),
        lambda k: c.delete(k, rnd.choice(keys)),
        lambda k: c.hset(k, f"f{rnd.randrange(4)}", "x"),
        lambda k: c.hdel(k, "f1", "f2"),
        lambda k: c.rpush(k, "a", "b"),
        lambda k: c.lpop(k),
        lambda k: c.sadd(k, rnd.randrange(6)),
        lambda k: c.zadd(k, {f"m{rnd.randrange(4)}": rnd.random()}),
        lambda k: c.expire(k, rnd.choice([1000, 100000])),
        lambda k: c.persist(k),
        lambda k: c.set(k, "x", ex=5000),
        lambda k: c.rename(k, rnd.choice(keys)),
        lambda k: c.copy(k, rnd.choice(keys), replace=True),
        lambda k: c.move(k, (db + 1) % 3),
        lambda k: c.getdel(k),
        lambda k: c.pipeline(transaction=True).set(k, 1).expire(rnd.choice(keys), 900).delete(
            rnd.choice(keys)).execute(),
        lambda k: c.swapdb(db, (db + 2) % 3) if rnd.random() < 0.05 else c.flushdb() if rnd.random() < 0.02
        else c.incr(k),
    ]
    try:
        while not stop.is_set():
            try:
                rnd.choice(ops)(rnd.choice(keys))
            except redis.ResponseError:
                pass  # WRONGTYPE, no such key to rename
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        pass


def _counts_match_keys(srv):
    """DBSIZE and INFO keyspace against what SCAN finds, for databases 0-2."""
    found = {}
    for db in range(3):
        c = srv.client(db=db)
        keys = list(c.scan_iter(count=1000))
        info = c.info("keyspace").get(f"db{db}", {"keys": 0, "expires": 0})
        with_ttl = sum(1 for k in keys if c.ttl(k) >= 0)
        found[db] = (c.dbsize(), info["keys"], info["expires"], len(keys), with_ttl)
    return {db: f for db, f in found.items() if f[:3] != (f[3], f[3], f[4])}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_key_counts_exact_after_kill9(fresh_server, seed):
    """Key and expiry counts are kept with the data they count (docs/encoding.md): a
    kill -9 in the middle of mixed writes (with flushes: 8 MB memtables) leaves DBSIZE
    and INFO keyspace equal to the keys there are, after recovery and after a restart."""
    srv = fresh_server.start()
    stop = threading.Event()
    ts = [threading.Thread(target=_mixed_writes, args=(srv.port, seed * 10 + t, t % 3, stop)) for t in range(4)]
    for t in ts:
        t.start()
    time.sleep(random.Random(seed).uniform(0.5, 1.5))
    srv.kill9()
    stop.set()
    for t in ts:
        t.join()
    srv.start()
    assert _counts_match_keys(srv) == {}
    assert sum(srv.client(db=db).dbsize() for db in range(3)) > 0
    srv.restart()
    assert _counts_match_keys(srv) == {}


def test_many_flushdbs_leave_few_write_ahead_log_files(fresh_server):
    """A client's test suite runs FLUSHDB after every few writes. Each FLUSHDB
    flushed the memtables it range-deleted, and each flush starts a write-ahead
    log file, which the counters' column family then kept alive: 3000 SET +
    FLUSHDB rounds left about 3000 log files, all replayed at the next start.
    Now the flushes take every column family and come at most every 20 ms."""
    srv = fresh_server.start()
    c = srv.client()
    p = c.pipeline(transaction=False)
    for i in range(3000):
        p.set(f"k{i % 10}", i)
        p.flushdb()
        if i % 500 == 499:
            p.execute()
    c.set("kept", "1")
    logs = [f for f in os.listdir(os.path.join(srv.dir, "db")) if f.endswith(".log")]
    assert len(logs) < 100, len(logs)
    srv.kill9()
    srv.start()
    assert srv.client().keys() == [b"kept"]


def test_sync_writes_option(fresh_server):
    srv = fresh_server
    srv.extra = ["--rocksdb.sync-writes", "yes"]
    srv.start()
    c = srv.client()
    for i in range(20):
        c.set(f"s{i}", i)
    assert c.config_get("rocksdb.sync-writes") == {b"rocksdb.sync-writes": b"yes"} or \
        c.config_get("rocksdb.sync-writes") == {"rocksdb.sync-writes": "yes"}
    srv.kill9()
    srv.start()
    assert srv.client().dbsize() == 20


def test_shutdown_command_stops_cleanly(fresh_server):
    srv = fresh_server.start()
    c = RawClient(srv.port)
    c.call("SET", "before", "shutdown")
    c.send_raw(b"*1\r\n$8\r\nSHUTDOWN\r\n")
    assert c.closed(timeout=10)
    assert srv.proc.wait(30) == 0
    srv.proc = None
    srv.log.close()
    srv.start()
    assert srv.client().get("before") == b"shutdown"


def test_sigterm_exits_zero(fresh_server):
    srv = fresh_server.start()
    srv.client().set("x", "y")
    assert srv.stop(signal.SIGTERM) == 0


@pytest.mark.parametrize("sig, options, saved", [
    (signal.SIGTERM, ["--save", "3600 1"], True),  # default: save if there are save points
    (signal.SIGTERM, ["--save", "3600 1", "--shutdown-on-sigterm", "nosave"], False),
    (signal.SIGINT, ["--save", "", "--shutdown-on-sigint", "save now"], True),
    (signal.SIGINT, ["--save", "", "--shutdown-on-sigterm", "save"], False),
])
def test_signals_shut_down_as_shutdown_on_sigint_and_sigterm_say(sig, options, saved):
    srv = Kvrocks(extra=options).start()
    try:
        srv.client().set("x", "y")
        assert srv.stop(sig) == 0
        assert os.path.isdir(os.path.join(srv.dir, "checkpoint")) == saved
    finally:
        srv.cleanup()


def test_a_failed_save_keeps_the_server_up_unless_force():
    srv = Kvrocks(extra=["--save", "3600 1"]).start()
    try:
        c = srv.client()
        c.set("x", "y")
        # RocksDB stages a checkpoint in <target>.tmp: a file there makes every save fail.
        open(os.path.join(srv.dir, "checkpoint.tmp.tmp"), "w").close()
        with pytest.raises(redis.ResponseError):
            c.save()
        srv.proc.send_signal(signal.SIGTERM)
        deadline = time.time() + 10
        while b"can't exit" not in open(srv.log_path, "rb").read() and time.time() < deadline:
            time.sleep(0.05)
        assert srv.proc.poll() is None and c.ping()  # logged the failed save and stayed, as Redis
        c.config_set("shutdown-on-sigterm", "force")
        assert c.config_get("shutdown-on-sigterm") == {"shutdown-on-sigterm": "force"}
        assert srv.stop(signal.SIGTERM) == 0
    finally:
        srv.cleanup()


def test_sigterm_during_compaction_exits_zero():
    """Compactions of the element column families look keys up in the metadata
    column family (the compaction filter); shutting down under a running one
    must wait for it. Big strings live there as blobs, which compaction moves."""
    for attempt in range(3):
        # 16 MB memtables: the subkey family (L0 trigger 8 with blob files)
        # compacts every 80 batches, three chances to be caught running.
        srv = Kvrocks(extra=["--rocksdb.write-buffer-size", "16mb"]).start()
        try:
            c = srv.client()
            value = os.urandom(4096).hex()
            running = False
            for batch in range(300):
                p = c.pipeline(transaction=False)
                for i in range(200):
                    p.set(f"k{batch}:{i}", value)
                p.execute()
                if batch >= 80 and int(c.info("rocksdb")["num_running_compactions"]) > 0:
                    running = True
                    break
            t0 = time.time()
            rc = srv.stop(signal.SIGTERM)
            with open(srv.log_path, "rb") as f:
                tail = f.read()[-3000:].decode(errors="replace")
            assert rc == 0, f"exit status {rc} after {time.time() - t0:.1f} s; log:\n{tail}"
        finally:
            srv.cleanup()
        if running:
            return
    pytest.fail("no compaction was running at any SIGTERM")


def test_save_and_bgsave_make_checkpoints(fresh_server):
    srv = fresh_server.start()
    c = srv.client()
    c.set("a", "b")
    before = c.lastsave()
    time.sleep(1.1)
    assert c.save()
    assert c.lastsave() > before
    assert os.path.isdir(os.path.join(srv.dir, "checkpoint"))
    assert any(f.endswith(".sst") or f == "CURRENT" for f in os.listdir(os.path.join(srv.dir, "checkpoint")))
    assert c.bgsave()
    deadline = time.time() + 10
    while c.info("persistence")["rdb_bgsave_in_progress"] and time.time() < deadline:
        time.sleep(0.05)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    # The checkpoint is a usable RocksDB: a server started on a copy sees the data.
    copy = Kvrocks()
    os.makedirs(copy.dir, exist_ok=True)
    os.rename(os.path.join(srv.dir, "checkpoint"), os.path.join(copy.dir, "db"))
    try:
        copy.start()
        assert copy.client().get("a") == b"b"
    finally:
        copy.cleanup()


def test_big_values_survive_restart_and_overwrites_reclaim_space(fresh_server):
    srv = fresh_server.start()
    c = srv.client()
    big = b"v" * 20000
    for i in range(50):
        c.set(f"big{i}", big + str(i).encode())
    for i in range(50):
        c.set(f"big{i}", b"small")  # the big values become garbage
    srv.restart()
    c = srv.client()
    assert c.get("big7") == b"small"
    assert c.dbsize() == 50
    c.set("keep", big)
    srv.restart()
    assert srv.client().get("keep") == big


def test_leftover_ingest_files_are_removed_at_start(fresh_server):
    """SST files a bulk load was writing when the process died go away at the next start."""
    ingest = os.path.join(fresh_server.dir, "ingest")
    os.makedirs(ingest, exist_ok=True)
    with open(os.path.join(ingest, "123-0.sst"), "wb") as f:
        f.write(b"x" * 4096)
    fresh_server.start()
    assert not os.path.exists(ingest) or not os.listdir(ingest)
