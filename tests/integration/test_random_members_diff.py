"""SRANDMEMBER, HRANDFIELD and ZRANDMEMBER: argument errors against Debian's
redis-server 7.0, and the uniformity Redis' own test suite asks of SRANDMEMBER
(a chi-square bound on the histogram of picks, as in its unit/type/set.tcl)."""
import collections

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
