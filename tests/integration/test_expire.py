"""Expiry: lazy on read, active deletion, counters."""
import time


def test_lazy_expiry_hides_keys(r):
    r.set("k", "v", px=50)
    time.sleep(0.12)
    assert r.get("k") is None
    assert r.exists("k") == 0
    assert r.ttl("k") == -2
    assert r.keys("*") == []


def test_active_expiry_deletes_and_counts(r):
    for i in range(300):
        r.set(f"short:{i}", "v", px=30)
    r.set("long", "v", ex=1000)
    r.set("forever", "v")
    deadline = time.time() + 10
    while time.time() < deadline and r.dbsize() > 2:
        time.sleep(0.05)
    assert r.dbsize() == 2
    info = r.info("keyspace")["db0"]
    assert info["keys"] == 2 and info["expires"] == 1
    assert r.info("stats")["expired_keys"] >= 300


def test_expire_overwrite_and_persist_keep_index_right(r):
    r.set("a", "v", px=40)
    r.set("a", "v2")  # plain SET removes the TTL
    r.set("b", "v", px=40)
    r.persist("b")
    r.set("c", "v", ex=100)
    r.pexpire("c", 40)  # shorter TTL replaces the longer one
    time.sleep(0.6)
    assert r.get("a") == b"v2"
    assert r.get("b") == b"v"
    assert r.get("c") is None
    assert r.dbsize() == 2


def test_expired_key_can_be_recreated(r):
    r.set("k", "old", px=20)
    time.sleep(0.05)
    assert r.set("k", "new", nx=True)
    assert r.get("k") == b"new"
    assert r.ttl("k") == -1
    time.sleep(0.3)
    assert r.get("k") == b"new"


def test_a_long_expire_cycle_is_a_latency_event(r):
    """As Redis' activeExpireCycle: a pass that takes latency-monitor-threshold ms or
    more is an "expire-cycle" sample of the latency monitor."""
    r.execute_command("LATENCY", "RESET")
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        p = r.pipeline(transaction=False)
        for i in range(30000):
            p.set(f"e:{i}", "v", px=1)
        p.execute()
        time.sleep(0.05)
        # A pass under way when expiry was switched off stops after its current batch.
        assert r.dbsize() >= 30000 - 200
        r.config_set("latency-monitor-threshold", 1)
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        deadline = time.time() + 30
        while time.time() < deadline and r.dbsize() > 0:
            time.sleep(0.05)
        assert r.dbsize() == 0
        # The pass records its sample when it ends, which can be after the last deletion.
        events = set()
        while time.time() < deadline and b"expire-cycle" not in events:
            events = {e[0] for e in r.execute_command("LATENCY", "LATEST")}
            time.sleep(0.02)
        assert b"expire-cycle" in events
        graph = r.execute_command("LATENCY", "GRAPH", "expire-cycle")
        assert graph.startswith(b"expire-cycle - high ")
    finally:
        r.config_set("latency-monitor-threshold", 0)
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        r.execute_command("LATENCY", "RESET")


def test_expired_stale_perc_follows_the_passes(r):
    """Redis' running estimate of keys expired but not yet deleted: a pass that finds
    half of the keys with a TTL expired adds 5% of 50%, later passes let it decay."""
    r.config_resetstat()
    assert r.info("stats")["expired_stale_perc"] == 0
    p = r.pipeline(transaction=False)
    for i in range(1000):
        p.set(f"short{i}", "v", px=100)
        p.set(f"long{i}", "v", ex=1000)
    p.execute()
    # A pass counts each batch of keys it expires as it deletes them and its
    # staleness when it ends: wait for both.
    deadline = time.time() + 10
    while time.time() < deadline:
        stats = r.info("stats")
        if stats["expired_keys"] >= 1000 and float(stats["expired_stale_perc"]) > 0:
            break
        time.sleep(0.02)
    stale = float(r.info("stats")["expired_stale_perc"])
    assert 0 < stale <= 5  # 2.5 when one pass finds all the short keys
    r.config_resetstat()
    assert float(r.info("stats")["expired_stale_perc"]) == 0
