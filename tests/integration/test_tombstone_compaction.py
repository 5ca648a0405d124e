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


def test_rank_walks_over_overwritten_counts_get_them_compacted(kvrocks_server):
    """A big sorted set's rank counts (docs/encoding.md, Ranks) are overwritten
    by every write to it; a ZRANK walking across counts with many versions not
    yet flushed asks for the set's records to be compacted, once they have
    been, ranks stay exact, and walks over counts without versions ask nothing."""
    import random
    c = kvrocks_server.client()
    c.flushall()
    rng = random.Random(7)
    scores = {f"m{i}": float(i) for i in range(3000)}
    c.zadd("board", scores)
    assert c.zrank("board", "m0") == 0  # builds the index
    before = compactions(c)
    for _ in range(20):
        m = f"m{rng.randrange(3000)}"
        assert c.zrank("board", m) == int(m[1:])
    time.sleep(1.5)  # more than the compactor's minimum interval
    assert compactions(c) == before
    # Moves across the whole set: every count gets versions.
    p = c.pipeline(transaction=False)
    for _ in range(400):
        m = f"m{rng.randrange(3000)}"
        scores[m] = float(rng.randrange(1_000_000))
        p.zadd("board", {m: scores[m]})
    p.execute()
    order = sorted(scores, key=lambda m: (scores[m], m))
    top = order[-1]
    assert c.zrank("board", top) == 2999  # walks every count of the level
    assert wait_for_compactions(c, before + 1) == before + 1
    for m in [top] + rng.sample(order, 50):
        assert c.zrank("board", m) == order.index(m)
        assert c.zrevrank("board", m) == 2999 - order.index(m)
    assert [m.decode() for m in c.zrange("board", 1500, 1509)] == order[1500:1510]
