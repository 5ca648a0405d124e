"""INFO memory, INFO clients' buffer fields, MEMORY STATS and MEMORY DOCTOR
against Debian's redis-server 7.0: the same fields in the same order, and
figures that add up as Redis' do (server/memory_stats.h says what each counts in
kvrocks)."""
import time

import pytest
import redis

from conftest import Differ

DOCTOR_OPENINGS = ("Hi Sam, I can't find any memory issue in your instance.",
                   "Hi Sam, this instance is empty or is using very little memory",
                   "Sam, I detected a few issues in this Redis instance memory implants:")


def _stats(client):
    """MEMORY STATS as a dict (redis-py parses it into one, or leaves a flat list)."""
    reply = client.execute_command("MEMORY", "STATS")
    return reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2]))


@pytest.fixture
def d(differ):
    return differ


def test_info_memory_figures_add_up(kvrocks_server):
    c = kvrocks_server.client()
    c.flushall()
    c.set("k", "v" * 100)
    c.eval("return 1", 0)
    m = c.info("memory")
    assert m["used_memory_peak"] >= m["used_memory"] > 0
    assert m["used_memory_overhead"] >= m["used_memory_startup"] > 0
    assert m["used_memory_dataset"] == max(0, m["used_memory"] - m["used_memory_overhead"])
    assert m["used_memory_scripts"] == m["used_memory_scripts_eval"] + m["used_memory_functions"]
    assert m["used_memory_scripts_eval"] > 0 and m["number_of_cached_scripts"] >= 1
    assert m["used_memory_lua"] == m["used_memory_vm_eval"] == m["used_memory_vm_total"] > 0
    assert m["allocator_resident"] >= m["allocator_active"] >= m["allocator_allocated"] > 0
    assert m["total_system_memory"] > m["used_memory_rss"] > 0
    assert m["mem_allocator"].startswith("jemalloc-")
    assert m["maxmemory_policy"] == "noeviction"
    c.function_load("#!lua name=memlib\nredis.register_function('f', function() return 1 end)", replace=True)
    assert c.info("memory")["used_memory_functions"] > 0
    c.function_flush()
    c.close()


def test_client_buffers_are_counted(kvrocks_server):
    c = kvrocks_server.client()
    big = kvrocks_server.client()
    # A client whose query buffer holds an unfinished 100 KB argument.
    sock = big.connection_pool.get_connection()
    sock.connect()
    sock._sock.sendall(b"*2\r\n$4\r\nECHO\r\n$200000\r\n" + b"x" * 100000)
    try:
        def grown():
            return c.info("clients")["client_recent_max_input_buffer"] >= 100000
        deadline = time.time() + 10
        while not grown() and time.time() < deadline:
            time.sleep(0.02)
        assert grown()
        assert c.info("memory")["mem_clients_normal"] >= 100000
        assert _stats(c)[b"clients.normal"] >= 100000
    finally:
        sock.disconnect()
        c.close()


def test_memory_stats_has_redis_fields_in_redis_order(kvrocks_server, redis_ref):
    names = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = redis.Redis(port=port, protocol=2)
        c.flushall()
        c.set("a", "1")
        c.execute_command("SELECT", "3")
        c.set("b", "2")
        c.execute_command("SELECT", "0")
        names.append(list(_stats(c)))
        c.flushall()
        c.close()
    assert names[0] == names[1]
    assert b"db.0" in names[0] and b"db.3" in names[0]


def test_memory_stats_resp3_and_figures(kvrocks_server):
    c = kvrocks_server.client()
    c.flushall()
    c.mset({"x": 1, "y": 2})
    stats = _stats(c)
    assert stats[b"keys.count"] == 2
    assert stats[b"total.allocated"] <= stats[b"peak.allocated"]
    assert stats[b"overhead.total"] >= stats[b"startup.allocated"]
    assert stats[b"dataset.bytes"] == max(0, stats[b"total.allocated"] - stats[b"overhead.total"])
    db0 = stats[b"db.0"]
    db0 = db0 if isinstance(db0, dict) else dict(zip(db0[::2], db0[1::2]))
    assert db0 == {b"overhead.hashtable.main": 0, b"overhead.hashtable.expires": 0,
                   b"overhead.hashtable.slot-to-keys": 0}
    r3 = redis.Redis(port=kvrocks_server.port, protocol=3)
    m = r3.execute_command("MEMORY", "STATS")
    assert isinstance(m, dict) and isinstance(m[b"fragmentation"], float) and m[b"keys.count"] == 2
    r3.close()
    c.close()


def test_memory_doctor_speaks_as_redis(d):
    for c in (d.kv, d.ref):
        raw = c.call("MEMORY", "DOCTOR").decode()
        body = raw[raw.index("\r\n") + 2:-2]
        assert body.startswith(DOCTOR_OPENINGS), body
    d("MEMORY", "HELP")
    d("MEMORY", "STATS", "x")
    d("MEMORY", "DOCTOR", "x")
