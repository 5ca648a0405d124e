"""DUMP/RESTORE between Debian's redis-server 7.0 and kvrocks, both ways, for
every type and encoding, plus RESTORE's options and errors."""
import pytest
import redis


def setup_values(r):
    r.set("str", "hello")
    r.set("int", "12345")
    r.set("big", "x" * 100000)
    r.rpush("list", *[f"e{i}" for i in range(10)], 7, -3, "x" * 70)
    r.rpush("biglist", *[f"item{i}" for i in range(2000)])
    r.sadd("intset", 1, 2, 3, -70000, 2**40)
    r.sadd("set", "a", "b", "c")
    r.sadd("bigset", *[f"m{i}" for i in range(700)])
    r.hset("hash", mapping={"f1": "v1", "f2": "2", "f3": "x" * 100})
    r.hset("bighash", mapping={f"f{i}": f"v{i}" for i in range(600)})
    r.zadd("zset", {"a": 1, "b": 2.5, "c": float("inf"), "d": float("-inf"), "e": -0.0})
    r.zadd("bigzset", {f"m{i}": i / 3 for i in range(300)})
    for i in range(1, 260):
        r.xadd("stream", {"f": i, "g": "v" * (i % 5)}, id=f"{i}-0")
    r.xadd("stream", {"other": "fields"}, id="300-1")
    r.xdel("stream", "5-0")
    r.xgroup_create("stream", "g1", id="0")
    r.xreadgroup("g1", "alice", {"stream": ">"}, count=3)
    r.xreadgroup("g1", "bob", {"stream": ">"}, count=2)
    r.xgroup_create("stream", "g2", id="$")
    r.pfadd("hll", *range(100))


def snapshot(r, keys):
    out = {}
    for k in keys:
        t = r.type(k)
        if t == b"string":
            v = r.get(k)
        elif t == b"list":
            v = r.lrange(k, 0, -1)
        elif t == b"set":
            v = sorted(r.smembers(k))
        elif t == b"hash":
            v = sorted(r.hgetall(k).items())
        elif t == b"zset":
            v = r.zrange(k, 0, -1, withscores=True)
        elif t == b"stream":
            groups = r.xinfo_groups(k)
            pend = {g["name"]: r.xpending_range(k, g["name"], "-", "+", 100) for g in groups}
            for lst in pend.values():
                for p in lst:
                    p.pop("time_since_delivered", None)
            v = (r.xrange(k), groups, pend, r.xinfo_stream(k))
        else:
            v = None
        out[k] = (t, v, r.ttl(k))
    return out


KEYS = ["str", "int", "big", "list", "biglist", "intset", "set", "bigset", "hash", "bighash", "zset", "bigzset",
        "stream", "hll"]


@pytest.mark.parametrize("direction", ["redis_to_kvrocks", "kvrocks_to_redis"])
def test_dump_restore_roundtrip(kvrocks_server, redis_ref, direction):
    kv = redis.Redis(port=kvrocks_server.port, protocol=2)
    rd = redis.Redis(port=redis_ref.port, protocol=2)
    kv.flushall()
    rd.flushall()
    src, dst = (rd, kv) if direction == "redis_to_kvrocks" else (kv, rd)
    setup_values(src)
    src.expire("set", 1000)
    for k in KEYS:
        payload = src.dump(k)
        assert payload is not None, k
        ttl = max(src.pttl(k), 0)
        assert dst.restore(k, ttl, payload) in (True, b"OK"), k
    assert snapshot(dst, KEYS) == snapshot(src, KEYS)
    assert dst.pfcount("hll") == src.pfcount("hll")


def test_restore_options_and_errors(diff):
    diff.ref.call("SET", "src", "value")
    payload = diff.ref.call("DUMP", "src").split(b"\r\n", 1)[1][:-2]
    diff("RESTORE", "k", "0", payload)
    diff("RESTORE", "k", "0", payload)
    diff("RESTORE", "k", "0", payload, "REPLACE")
    diff("RESTORE", "k", "-1", payload, "REPLACE")
    diff("RESTORE", "k", "x", payload, "REPLACE")
    diff("RESTORE", "k2", "0", b"garbage")
    diff("RESTORE", "k2", "0", payload[:-1] + b"\x00")
    diff("RESTORE", "k2", "0", payload, "IDLETIME", "-1")
    diff("RESTORE", "k2", "0", payload, "FREQ", "256")
    diff("RESTORE", "k2", "0", payload, "IDLETIME", "10", "FREQ", "5")
    diff("RESTORE", "k2", "0", payload, "FOO")
    diff("RESTORE", "k3", "0", payload, "IDLETIME", "10")
    diff("RESTORE", "k4", "0", payload, "FREQ", "10")
    diff("RESTORE", "k5", "1", payload, "ABSTTL")
    diff("EXISTS", "k5")
    diff("RESTORE", "k6", "100000", payload)
    diff.approx("PTTL", "k6")
    diff("RESTORE", "k7", "4102444800000", payload, "ABSTTL")
    diff("PEXPIRETIME", "k7")
    diff("GET", "k7")
    diff("DUMP", "nokey")
    diff("SET", "k", "other")
    diff("RESTORE", "k", "1", payload, "ABSTTL", "REPLACE")
    diff("EXISTS", "k")


def test_restore_of_a_big_sorted_set_keeps_negative_zero_scores(diff):
    # Redis' loader decides a sorted set's encoding by its final size: a skiplist
    # keeps every -0, whatever position the member had in the payload.
    members = " ".join(f"0 m{i}" for i in range(130))
    diff.run(f"""
    ZADD big {members}
    ZUNIONSTORE negative 1 big WEIGHTS -1
    ZRANGE negative 0 2 WITHSCORES
    """)
    payload = diff.ref.call("DUMP", "negative")
    size = int(payload[1:payload.index(b"\r\n")])
    raw = payload[payload.index(b"\r\n") + 2:][:size]
    diff("RESTORE", "restored", "0", raw)
    diff("ZRANGE", "restored", "0", "2", "WITHSCORES")
    diff("ZSCORE", "restored", "m0")


def test_restore_of_a_redis_5_stream_estimates_group_read_counters(diff):
    """A stream DUMPed by Redis 5 (RDB 9, no entries-added or entries-read):
    the loader derives them as Redis does (Redis' unit/type/stream-cgroups)."""
    payload = bytes.fromhex(
        "0f011000000000000000010000000000000000c3404a40571657000000230002010401010184646174610500010301002001"
        "0381610204200a0001400a0062600a0002400a0063600a4022018164200a4039200a0065600a0005400a0066200a00ff0206"
        "0002026731050004000000000000000100000000000000003ef783437a01000001000000000000000200000000000000003e"
        "f783437a01000001000000000000000400000000000000003ef783437a01000001000000000000000500000000000000003e"
        "f783437a0100000101036331313ef783437a0100000400000000000000010000000000000000000000000000000200000000"
        "0000000000000000000000040000000000000000000000000000000500000000000000000267320000000009003d52ef6867"
        "521dfa")
    diff("RESTORE", "x", "0", payload)
    diff("XINFO", "STREAM", "x", "FULL")
    diff("XREADGROUP", "GROUP", "g1", "c", "STREAMS", "x", ">")
    diff("XINFO", "GROUPS", "x")
