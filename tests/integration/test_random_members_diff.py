"""SRANDMEMBER, HRANDFIELD and ZRANDMEMBER: argument errors against Debian's
redis-server 7.0, and the uniformity Redis' own test suite asks of SRANDMEMBER
(a chi-square bound on the histogram of picks, as in its unit/type/set.tcl)."""
import collections
import time

import pytest


def test_random_member_count_range_and_error_order(diff):
    diff.run("""
    SADD s a b c
    HSET h a 1 b 2
    ZADD z 1 a 2 b
    SRANDMEMBER s -9223372036854775808
    SRANDMEMBER s 9223372036854775808
    HRANDFIELD h -9223372036854775808
    HRANDFIELD h -9223372036854775808 WITHVALUES
    HRANDFIELD h -4611686018427387904 WITHVALUES
    HRANDFIELD h 4611686018427387904 WITHVALUES
    HRANDFIELD h x FOO
    HRANDFIELD h -9223372036854775808 FOO
    HRANDFIELD h 1 FOO
    HRANDFIELD h 1 WITHVALUES FOO
    ZRANDMEMBER z -9223372036854775808
    ZRANDMEMBER z -9223372036854775808 WITHSCORES
    ZRANDMEMBER z -4611686018427387904 WITHSCORES
    ZRANDMEMBER z 4611686018427387904 WITHSCORES
    ZRANDMEMBER z x FOO
    ZRANDMEMBER z 1 FOO
    ZRANDMEMBER z 1 WITHSCORES FOO
    ZRANDMEMBER nokey 1 FOO
    """)


def chi_square(picks):
    counts = collections.Counter(picks)
    expected = len(picks) / len(counts)
    return sum((n - expected) ** 2 / expected for n in counts.values())


@pytest.mark.parametrize("members", [
    ["1", "5", "10", "50", "125", "MARY", "PATRICIA", "LINDA", "BARBARA", "ELIZABETH"],
    [str(i) for i in range(10)],
], ids=["hashtable", "intset"])
def test_srandmember_histogram_is_uniform(r, members):
    r.sadd("myset", *members)
    # df = 9: a chi-square of 40 has a probability of 0.00001 for uniform picks.
    picks = r.srandmember("myset", -1000)
    assert set(picks) == {m.encode() for m in members}
    assert chi_square(picks) < 40
    for size in (8, 2):
        picks = []
        for _ in range(1000 // size):
            got = r.srandmember("myset", size)
            assert len(got) == len(set(got)) == size
            picks += got
        assert chi_square(picks) < 40


def test_srandmember_of_a_big_set_reaches_every_member(r):
    # Past the size read whole: each pick seeks into the hash order.
    members = [f"m{i}" for i in range(400)]
    r.sadd("big", *members)
    seen = set()
    for _ in range(200):
        got = r.srandmember("big", 50)
        assert len(got) == len(set(got)) == 50
        seen.update(got)
        got = r.srandmember("big", -50)
        assert len(got) == 50
        seen.update(got)
    assert seen == {m.encode() for m in members}


def pairs(reply):
    """(member, score) pairs of a WITHSCORES reply in RESP2 (flat) or RESP3 (pairs)."""
    return [tuple(p) for p in reply] if reply and isinstance(reply[0], list) else list(zip(reply[::2], reply[1::2]))


def test_zrandmember_of_a_big_set_picks_ranks_uniformly(r, diff):
    # 1024 members or more: distinct picks of up to a third of the set, and repeated
    # picks, select random ranks through the set's rank index.
    members = {f"m{i:04}": i for i in range(1500)}
    r.zadd("bigz", members)
    picks = []
    for _ in range(400):
        got = r.zrandmember("bigz", 10)
        assert len(got) == len(set(got)) == 10
        picks += [int(m[1:]) // 150 for m in got]
        picks += [int(m[1:]) // 150 for m in r.zrandmember("bigz", -10)]
    # Ten bands of 150 ranks, df = 9 (see test_srandmember_histogram_is_uniform).
    assert chi_square(picks) < 40
    got = pairs(r.execute_command("ZRANDMEMBER", "bigz", -400, "WITHSCORES"))
    assert len(got) == 400 and all(members[m.decode()] == float(s) for m, s in got)
    assert len(set(r.zrandmember("bigz", 500))) == 500  # a third: read whole
    assert r.zrandmember("bigz").decode() in members
    # The whole set, from the greatest member down, and the errors, as Redis.
    diff("ZADD", "wholez", *[x for m, s in members.items() for x in (s, m)])
    diff("ZRANDMEMBER", "wholez", 1500, "WITHSCORES")
    diff("ZRANDMEMBER", "wholez", 9999)
    diff("ZRANDMEMBER", "wholez", -9223372036854775807, "WITHSCORES")


def test_zrandmember_through_the_rank_index_keeps_negative_zero(r):
    r.zadd("zeros", {f"m{i}": 0.0 for i in range(1100) if i not in (5, 6)})
    r.execute_command("ZADD", "zeros", "-0", "m5", "-0", "m6")
    scores = {}
    for _ in range(300):
        scores.update(pairs(r.execute_command("ZRANDMEMBER", "zeros", "-20", "WITHSCORES")))
    assert str(scores[b"m5"]) == str(scores[b"m6"]) in ("b'-0'", "-0.0") and float(scores[b"m7"]) == 0


def test_hrandfield_of_a_big_hash_picks_ranks_uniformly(r, diff):
    # 1024 fields or more: picks select random ranks through a rank index over
    # the hash's fields, which later writes keep.
    fields = {f"f{i:04}": f"v{i}" for i in range(1500)}
    r.hset("bigh", mapping=fields)
    picks = []
    for _ in range(400):
        got = r.hrandfield("bigh", 10)
        assert len(got) == len(set(got)) == 10
        picks += [int(f[1:]) // 150 for f in got]
        picks += [int(f[1:]) // 150 for f in r.hrandfield("bigh", -10)]
    assert chi_square(picks) < 40  # ten bands of 150 ranks, df = 9
    got = pairs(r.execute_command("HRANDFIELD", "bigh", -400, "WITHVALUES"))
    assert len(got) == 400 and all(fields[f.decode()] == v.decode() for f, v in got)
    assert len(set(r.hrandfield("bigh", 500))) == 500  # a third: read whole
    assert r.hrandfield("bigh").decode() in fields
    # Writes after the index was built: picks see new fields and never deleted ones.
    # (A few fields a command: a write of many rebuilds the index instead.)
    for start in range(0, 1500, 60):
        r.hdel("bigh", *[f"f{i:04}" for i in range(start, start + 60, 2)])
    for start in range(0, 300, 30):
        r.hset("bigh", mapping={f"new{i}": "n" for i in range(start, start + 30)})
    r.hincrby("bigh", "counter", 5)
    live = sorted(r.hkeys("bigh"))
    assert len(live) == 1051
    band = {f: i * 10 // len(live) for i, f in enumerate(live)}  # ten bands of the fields in key order
    seen, picks = set(), []
    for _ in range(300):
        got = r.hrandfield("bigh", -20) + r.hrandfield("bigh", 20)
        assert set(got) <= band.keys()
        seen.update(got)
        picks += [band[f] for f in got]
    assert chi_square(picks) < 40  # still uniform: the index's counts followed the writes
    assert b"counter" in seen and any(f.startswith(b"new") for f in seen)
    # The whole hash (a hashtable's order is unspecified) and the errors, as Redis.
    assert sorted(r.hrandfield("bigh", 9999)) == sorted(live)
    diff("HSET", "wholeh", *[x for f, v in fields.items() for x in (f, v)])
    diff("HRANDFIELD", "wholeh", -9223372036854775807, "WITHVALUES")


def test_hrandfield_through_the_rank_index_skips_expired_fields(r):
    r.hset("ttlh", mapping={f"f{i}": "v" for i in range(1200)})
    assert r.hrandfield("ttlh", 5)  # builds the index
    r.execute_command("HPEXPIRE", "ttlh", 1, "FIELDS", 1000, *[f"f{i}" for i in range(1000)])
    time.sleep(0.05)  # the TTLs pass; the fields may still be stored until expiry deletes them
    live = {f"f{i}".encode() for i in range(1000, 1200)}
    for _ in range(50):
        assert set(r.hrandfield("ttlh", -30)) <= live
        got = r.hrandfield("ttlh", 60)
        assert len(got) == len(set(got)) == 60 and set(got) <= live
    assert r.hrandfield("ttlh", 300) and set(r.hrandfield("ttlh", 300)) == live


def test_hrandfield_of_a_big_listpack_keeps_insertion_order(r):
    # Raised listpack limits keep a big hash a listpack: distinct picks of at most a
    # third come in its (insertion) order, as Redis' lpRandomPairsUnique gives them.
    r.config_set("hash-max-listpack-entries", 5000)
    try:
        order = [f"f{(i * 7919) % 1300}" for i in range(1300)]
        for f in order:
            r.hset("lph", f, "v")
        assert r.object("encoding", "lph") == b"listpack"
        position = {f.encode(): i for i, f in enumerate(order)}
        for _ in range(20):
            got = r.hrandfield("lph", 40)
            assert len(set(got)) == 40
            assert [position[f] for f in got] == sorted(position[f] for f in got)
    finally:
        r.config_set("hash-max-listpack-entries", 512)
