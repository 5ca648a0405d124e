"""Reads that step over many deleted elements get that range compacted
(src/storage/tombstone_compactor.h): INFO rocksdb counts the compactions, and
what the collections hold is unchanged by them."""
import time


def compactions(client):
    return int(client.info("rocksdb")["tombstone_compactions"])


def wait_for_compactions(client, n, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline and compactions(client) < n:
        time.sleep(0.05)
    return compactions(client)


def test_a_drained_set_and_hash_get_compacted(kvrocks_server):
    c = kvrocks_server.client()
    c.flushall()
    before = compactions(c)
    p = c.pipeline(transaction=False)
    for i in range(30):
        p.sadd("s", *[f"m{i * 1000 + j}" for j in range(1000)])
    p.execute()
    left = set(m.decode() for m in c.spop("s", 29990))
    left = {f"m{i}" for i in range(30000)} - left
    # A whole-set read crosses the popped members' tombstones, and asks.
    assert {m.decode() for m in c.smembers("s")} == left
    assert wait_for_compactions(c, before + 1) == before + 1
    assert {m.decode() for m in c.smembers("s")} == left
    assert c.scard("s") == 10
    for _ in range(20):
        assert c.srandmember("s").decode() in left
    # HSCAN from the start crosses the deleted fields. (Written after the set's
    # compaction, which compacts whatever shares its files.)
    for i in range(30):
        p.hset("h", mapping={f"f{i * 1000 + j}": "v" for j in range(1000)})
    p.execute()
    c.hdel("h", *[f"f{i}" for i in range(29995)])
    cursor, fields = c.hscan("h", 0, count=100)
    assert sorted(f.decode() for f in fields) == [f"f{i}" for i in range(29995, 30000)]
    assert wait_for_compactions(c, before + 2) == before + 2
    assert c.hgetall("h") == {f"f{i}".encode(): b"v" for i in range(29995, 30000)}


def test_few_deletions_compact_nothing(kvrocks_server):
    c = kvrocks_server.client()
    c.flushall()
    before = compactions(c)
    c.sadd("few", *[f"m{i}" for i in range(3000)])
    c.srem("few", *[f"m{i}" for i in range(2000)])
    assert c.scard("few") == 1000
    assert len(c.smembers("few")) == 1000
    time.sleep(1.5)  # more than the compactor's minimum interval
    assert compactions(c) == before
