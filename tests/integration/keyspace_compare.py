"""Compares the data sets of two servers key by key (used to check that a
kvrocks replica holds exactly what its Redis master holds)."""
import redis


class Hash:
    """A hash's fields and values; two compare in order when both are small."""

    def __init__(self, small, items):
        self.small, self.items = small, items

    def __eq__(self, other):
        if self.small and other.small:
            return self.items == other.items
        return sorted(self.items) == sorted(other.items)

    def __repr__(self):
        return f"Hash({'small' if self.small else 'hashtable'}, {self.items!r})"


def _value(c, key, t):
    if t == b"string":
        return c.get(key)
    if t == b"list":
        return c.lrange(key, 0, -1)
    if t == b"set":
        return sorted(c.smembers(key))
    if t == b"hash":
        # A small (listpack, ziplist in Redis 6) hash in its order, which is
        # insertion order; a hashtable's order is each server's own.
        small = c.object("encoding", key) in (b"listpack", b"ziplist")
        return Hash(small, list(c.hgetall(key).items()))
    if t == b"zset":
        return c.zrange(key, 0, -1, withscores=True)
    if t == b"stream":
        entries = c.xrange(key)
        groups = []
        for g in c.xinfo_groups(key):
            pending = c.xpending_range(key, g["name"], "-", "+", 100000)
            groups.append((g["name"], g["last-delivered-id"], g["pending"],
                           sorted((p["message_id"], p["consumer"], p["times_delivered"]) for p in pending)))
        info = c.xinfo_stream(key)
        return (entries, groups, info["last-generated-id"], info["length"])
    return None


def snapshot(c, db):
    c.execute_command("SELECT", db)
    out = {}
    for key in c.scan_iter(count=1000):
        t = c.type(key)
        ttl = c.pttl(key)
        out[key] = (t, _value(c, key, t), ttl)
    return out


def assert_same_data(a_port, b_port, databases=16, ttl_tolerance_ms=5000):
    """Asserts that two servers hold the same keys, types, values and (within a
    tolerance) TTLs in every database."""
    a = redis.Redis(port=a_port, protocol=2)
    b = redis.Redis(port=b_port, protocol=2)
    for db in range(databases):
        sa, sb = snapshot(a, db), snapshot(b, db)
        assert sorted(sa) == sorted(sb), f"db {db}: keys differ: only in first {sorted(set(sa) - set(sb))[:10]}, " \
                                         f"only in second {sorted(set(sb) - set(sa))[:10]}"
        for key in sa:
            ta, va, ttla = sa[key]
            tb, vb, ttlb = sb[key]
            assert ta == tb, f"db {db} key {key!r}: type {ta} != {tb}"
            assert va == vb, f"db {db} key {key!r}: value differs:\n{va!r}\n{vb!r}"
            if ttla < 0 or ttlb < 0:
                assert ttla == ttlb, f"db {db} key {key!r}: ttl {ttla} != {ttlb}"
            else:
                assert abs(ttla - ttlb) <= ttl_tolerance_ms, f"db {db} key {key!r}: ttl {ttla} != {ttlb}"
