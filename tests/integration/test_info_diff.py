"""INFO against Debian's redis-server 7.0: every section Redis prints by default
has the same fields in the same order in kvrocks (which adds a few of its own,
listed in EXTRAS), and the counters kvrocks keeps move as Redis' do."""
import time

import pytest
import redis

from conftest import RawClient

EXTRAS = {"kvrocks_version", "workers", "used_disk_bytes", "expired_subkeys", "wal_id", "wal_sequence"}
SECTIONS = ["server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "cluster"]


def _fields(port, section):
    c = RawClient(port)
    text = c.call("INFO", section).decode()
    c.close()
    body = text[text.index("\r\n") + 2:]
    headers = [line for line in body.split("\r\n") if line.startswith("#")]
    names = [line.split(":", 1)[0] for line in body.split("\r\n") if ":" in line and not line.startswith("#")]
    return headers, [n for n in names if n not in EXTRAS]


@pytest.mark.parametrize("section", SECTIONS)
def test_sections_have_redis_fields_in_redis_order(kvrocks_server, redis_ref, section):
    assert _fields(kvrocks_server.port, section) == _fields(redis_ref.port, section)


def test_default_sections_in_redis_order(kvrocks_server, redis_ref):
    kv, _ = _fields(kvrocks_server.port, "default")
    ref, _ = _fields(redis_ref.port, "default")
    kv = [h for h in kv if h not in ("# RocksDB", "# Keyspace")]  # RocksDB: kvrocks' own
    ref = [h for h in ref if h != "# Keyspace"]
    assert kv == ref


def test_counters_move(kvrocks_server):
    c = kvrocks_server.client()
    c.config_resetstat()
    before = c.info("stats")
    c.set("k", "v")
    c.get("k")
    after = c.info("stats")
    assert after["total_reads_processed"] >= before["total_reads_processed"] + 2
    assert after["total_writes_processed"] >= before["total_writes_processed"] + 2
    p = c.info("persistence")
    assert p["rdb_current_bgsave_time_sec"] == -1
    saves = p["rdb_saves"]
    c.save()
    assert c.info("persistence")["rdb_saves"] == saves + 1
    c.bgsave()
    deadline = time.time() + 30
    while c.info("persistence")["rdb_bgsave_in_progress"] and time.time() < deadline:
        time.sleep(0.05)
    p = c.info("persistence")
    assert p["rdb_saves"] == saves + 2 and p["rdb_last_bgsave_time_sec"] >= 0
    c.config_resetstat()
    assert c.info("persistence")["rdb_saves"] == 0
    c.close()


def test_debug_reload_reports_what_it_loaded(kvrocks_server):
    c = kvrocks_server.client()
    c.flushall()
    c.mset({"a": 1, "b": 2, "c": 3})
    c.execute_command("DEBUG", "RELOAD")
    p = c.info("persistence")
    assert p["rdb_last_load_keys_loaded"] == 3 and p["rdb_last_load_keys_expired"] == 0
    c.flushall()
    c.close()


def test_instantaneous_ops_per_sec_under_load(kvrocks_server):
    """Rates are sampled every 100 ms over the last 16 samples, as Redis' are."""
    c = kvrocks_server.client()
    pipe_client = redis.Redis(port=kvrocks_server.port)
    deadline = time.time() + 1.5
    while time.time() < deadline:
        p = pipe_client.pipeline(transaction=False)
        for i in range(200):
            p.set(f"ops{i}", i)
        p.execute()
    s = c.info("stats")
    assert s["instantaneous_ops_per_sec"] > 0
    assert float(s["instantaneous_input_kbps"]) > 0 and float(s["instantaneous_output_kbps"]) > 0
    assert float(s["instantaneous_input_repl_kbps"]) == 0
    time.sleep(2.5)  # 16 samples of 100 ms without traffic
    assert c.info("stats")["instantaneous_ops_per_sec"] < 50
    pipe_client.close()
    c.close()


def test_server_fields(kvrocks_server):
    c = kvrocks_server.client()
    s = c.info("server")
    assert s["executable"].endswith("/kvrocks")
    assert 0 <= s["lru_clock"] < (1 << 24)
    assert abs(s["lru_clock"] - int(time.time()) % (1 << 24)) <= 2
    p = c.pipeline(transaction=False)
    for i in range(30000):
        p.set(f"cpu{i}", i)
    p.execute()
    cpu = c.info("cpu")
    assert cpu["used_cpu_user_main_thread"] <= cpu["used_cpu_user"] + 0.01
    # The workers' times (INFO reads their threads' /proc entries): some after the work.
    assert cpu["used_cpu_user_main_thread"] + cpu["used_cpu_sys_main_thread"] > 0
    c.close()


def _avg_ttl(client, db="db0"):
    return client.info("keyspace")[db]["avg_ttl"]


def test_keyspace_avg_ttl_is_the_average_ttl(fresh_server):
    """Redis estimates avg_ttl by sampling; kvrocks keeps it exact to the second."""
    srv = fresh_server.start()
    c = srv.client()
    t0 = time.time()

    def near(avg, expected_at_t0):
        # The TTLs shrink as the test runs (a restart may take a while on a busy machine).
        expected = expected_at_t0 - (time.time() - t0) * 1000
        return expected - 1500 <= avg <= expected_at_t0 + 1000

    c.set("a", 1, ex=100)
    c.set("b", 1, ex=300)
    c.set("c", 1)
    assert near(_avg_ttl(c), 200000)
    c.persist("b")
    assert near(_avg_ttl(c), 100000)
    c.expire("c", 500)
    t0 = time.time()  # a's TTL went down meanwhile: compare from now on with c's
    base_a = c.pttl("a")
    c.execute_command("SELECT", "2")
    c.set("x", 1, px=50000)
    srv.stop()
    srv.start()
    c = srv.client()
    assert near(_avg_ttl(c), (base_a + 500000) / 2)
    assert near(_avg_ttl(c, "db2"), 50000)
    c.delete("a", "c")
    assert _avg_ttl(c) == 0
