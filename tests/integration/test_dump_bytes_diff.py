"""DUMP payloads byte for byte against redis-server 7.0.

Redis saves each value in its in-memory encoding: strings integer-encoded or
LZF-compressed (rdbcompression), small hashes and sorted sets as listpacks,
integer sets as intsets of the widest width they needed, lists as quicklist
nodes (list-max-listpack-size, list-compress-depth), a skiplist from its
greatest element down. Wherever that layout follows from the value (and the
list was built by pushes at the tail), kvrocks' DUMP and DEBUG OBJECT's
serializedlength must be Redis' exactly. A hashtable's order follows Redis'
per-process hash seed, so there only the lengths are compared.
"""
import random

import pytest


@pytest.fixture
def pair(differ):
    yield differ
    differ("CONFIG", "SET", "list-max-listpack-size", -2, "list-compress-depth", 0, "rdbcompression", "yes")


def both(pair, *args):
    return pair(*(repr(a) if isinstance(a, float) else a for a in args))


def object_fields(client, key):
    """DEBUG OBJECT's fields but the address and the access clock: serializedlength,
    and for a list its quicklist's (ql_nodes ... ql_uncompressed_size)."""
    info = client.call("DEBUG", "OBJECT", key).decode()
    return [f for f in info.split()[2:] if not f.startswith("lru")]


def assert_same_dump(pair, key, exact=True):
    a, b = pair.kv, pair.ref
    da, db = a.call("DUMP", key), b.call("DUMP", key)
    assert da is not None
    if exact:
        assert da == db, key
    else:
        assert len(da) == len(db), key
    assert object_fields(a, key) == object_fields(b, key), key


def random_string(rnd, n):
    kind = rnd.randrange(6)
    if kind == 0:
        return "".join(rnd.choice("ab") for _ in range(n))
    if kind == 1:
        return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
    if kind == 2:
        return (rnd.choice(["x", "ab", "hello ", "0123456789"]) * n)[:n]
    if kind == 3:
        return bytes(rnd.randrange(256) for _ in range(n))
    if kind == 4:
        return "".join(rnd.choice(["foo", "bar", "baz", "1", "22"]) for _ in range(max(1, n // 3)))
    return str(rnd.randrange(10**12)) * (n // 12 + 1)


STRINGS = ["", "a", "0", "-1", "127", "128", "-128", "-129", "32767", "32768", "-32768", "2147483647",
           "2147483648", "-2147483648", "-2147483649", "01", "+1", "-0", "12345678901", "123456789012",
           "9223372036854775807", "-9223372036854775808", "1.5", "x" * 20, "x" * 21, "ab" * 11, "abcd" * 5 + "e"]


def test_strings(pair):
    rnd = random.Random(7)
    values = STRINGS + [random_string(rnd, rnd.choice([21, 25, 40, 100, 1000, 5000, 70000])) for _ in range(150)]
    for i, v in enumerate(values):
        both(pair, "SET", f"s{i}", v)
        assert_same_dump(pair, f"s{i}")
    # Written differently, the same bytes: INCR, APPEND, SETRANGE.
    both(pair, "SET", "n", "99")
    both(pair, "INCR", "n")
    both(pair, "APPEND", "ap", "y" * 50)
    both(pair, "SETRANGE", "sr", 30, "z" * 40)
    for key in ("n", "ap", "sr"):
        assert_same_dump(pair, key)


def test_rdbcompression_no(pair):
    both(pair, "CONFIG", "SET", "rdbcompression", "no")
    both(pair, "SET", "s", "x" * 100)
    both(pair, "RPUSH", "l", "y" * 100, "z" * 100)
    assert_same_dump(pair, "s")
    assert_same_dump(pair, "l")
    both(pair, "CONFIG", "SET", "rdbcompression", "yes")
    assert_same_dump(pair, "s")


def test_hashes(pair):
    both(pair, "HSET", "h", "f", "v", "n", "12", "neg", "-5000", "long", "q" * 60, "x" * 30, "y")
    both(pair, "HSET", "h", "f", "changed")
    both(pair, "HDEL", "h", "n")
    both(pair, "HSET", "h", "n", "back")
    both(pair, "HINCRBY", "h", "cnt", 7)
    both(pair, "HINCRBYFLOAT", "h", "fl", "1.25")
    assert_same_dump(pair, "h")
    # Past hash-max-listpack-value: a hashtable, whose order is Redis' hash seed's.
    both(pair, "HSET", "ht", "a", "w" * 65, "b", "7")
    assert_same_dump(pair, "ht", exact=False)
    both(pair, "HSET", "many", *[x for i in range(600) for x in (f"f{i}", i)])
    assert_same_dump(pair, "many", exact=False)


def test_sets(pair):
    both(pair, "SADD", "i16", 3, 1, 2, -7)
    both(pair, "SADD", "i32", 1, 100000)
    both(pair, "SADD", "i64", 5, 2**40, -(2**40))
    # An intset keeps the width it grew to when the member that needed it goes.
    both(pair, "SADD", "shrunk", 1, 2, 2**35)
    both(pair, "SREM", "shrunk", 2**35)
    both(pair, "SADD", "stored", 1, 70000)
    both(pair, "SINTERSTORE", "inter", "stored", "i32")
    for key in ("i16", "i32", "i64", "shrunk", "inter"):
        assert_same_dump(pair, key)
    both(pair, "SADD", "strs", "a", "b", "c" * 30)
    both(pair, "SADD", "big", *range(600))
    for key in ("strs", "big"):
        assert_same_dump(pair, key, exact=False)


def test_sorted_sets(pair):
    both(pair, "ZADD", "z", 1, "a", 2.5, "b", "inf", "c", "-inf", "d", -0.0, "e", 0.1, "f", 1e20, "g",
         -3, "h", 4611686018427387904, "i", 123, "12", 1, "aa" * 20)
    both(pair, "ZINCRBY", "z", 1.5, "a")
    both(pair, "ZREM", "z", "b")
    assert_same_dump(pair, "z")
    # A skiplist: saved from the greatest element to the smallest.
    both(pair, "ZADD", "sk", *[x for i in range(200) for x in (i / 7, f"m{i % 50}-{i}")])
    assert_same_dump(pair, "sk")
    both(pair, "ZADD", "longmember", 1, "m" * 100, 2, "n")
    assert_same_dump(pair, "longmember")


@pytest.mark.parametrize("fill,depth", [(-2, 0), (-1, 0), (-5, 0), (5, 0), (128, 0), (-2, 1), (3, 2), (-1, 3)])
def test_lists(pair, fill, depth):
    both(pair, "CONFIG", "SET", "list-max-listpack-size", fill, "list-compress-depth", depth)
    rnd = random.Random(fill * 10 + depth)
    both(pair, "LPUSH", "small", "head")
    both(pair, "RPUSH", "small", "a", 1, -2, 300, 70000, 2**40, "x" * 70, "")
    assert_same_dump(pair, "small")
    elems = [random_string(rnd, rnd.choice([1, 5, 20, 64, 200, 1000, 5000])) for _ in range(300)]
    elems += [str(rnd.randrange(-10**6, 10**6)) for _ in range(300)]
    for i in range(0, len(elems), 50):
        both(pair, "RPUSH", "big", *elems[i:i + 50])
    assert_same_dump(pair, "big")
    both(pair, "RPUSH", "same", *["item"] * 2000)
    assert_same_dump(pair, "same")
    both(pair, "RPUSH", "huge", "h" * 20000, "i" * 9000, "j")
    assert_same_dump(pair, "huge")


def test_a_list_keeps_the_node_options_it_was_created_with(pair):
    both(pair, "CONFIG", "SET", "list-max-listpack-size", 3, "list-compress-depth", 1)
    both(pair, "RPUSH", "l", *range(20))
    both(pair, "CONFIG", "SET", "list-max-listpack-size", -2, "list-compress-depth", 0)
    both(pair, "RPUSH", "l", *[f"more-{i}" for i in range(30)])
    assert_same_dump(pair, "l")
    both(pair, "RPUSH", "new", *range(20))
    assert_same_dump(pair, "new")


def test_streams(pair):
    for i in range(1, 260):
        both(pair, "XADD", "st", f"{i}-0", "field", "value " * (i % 7), "n", i)
    both(pair, "XADD", "st", "300-1", "other", "y" * 100)
    both(pair, "XGROUP", "CREATE", "st", "a-group-with-a-long-name-of-more-than-20", "0")
    both(pair, "XREADGROUP", "GROUP", "a-group-with-a-long-name-of-more-than-20",
         "consumer-with-a-long-long-name", "COUNT", 3, "STREAMS", "st", ">")
    a, b = pair.kv, pair.ref
    da, db = a.call("DUMP", "st"), b.call("DUMP", "st")
    assert len(da) == len(db)
    # The pending entries' delivery times differ; everything before the PEL matches.
    cut = db.index(b"a-group-with")
    assert da[:cut] == db[:cut]


def test_restore_of_redis_payloads_dumps_them_back(pair):
    a, b = pair.kv, pair.ref
    b.call("CONFIG", "SET", "list-compress-depth", 1)
    a.call("CONFIG", "SET", "list-compress-depth", 1)
    b.call("RPUSH", "l", *[f"element-{i % 10}" for i in range(3000)])
    b.call("HSET", "h", "f", "v" * 30)
    b.call("ZADD", "z", "1.5", "m", 2, "n")
    b.call("SADD", "s", 1, 2**33)
    b.call("SADD", "wide", 1, 2**33)
    b.call("SREM", "wide", 2**33)  # an intset of 8-byte values holding a small one
    b.call("SET", "str", "compressible " * 10)
    for key in ("l", "h", "z", "s", "wide", "str"):
        reply = b.call("DUMP", key)
        payload = reply[reply.index(b"\r\n") + 2:-2]
        assert a.call("RESTORE", key, 0, payload) == b"+OK\r\n"
        assert a.call("DUMP", key) == reply, key


def test_list_fill_set_through_its_alias(pair):
    both(pair, "CONFIG", "SET", "list-max-ziplist-size", 2)
    both(pair, "RPUSH", "l", *range(7))
    assert_same_dump(pair, "l")


def test_plain_nodes_past_the_packed_threshold(pair):
    both(pair, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", "10b")
    try:
        both(pair, "RPUSH", "l", "short", "x" * 10, "y" * 100, "z", "w" * 500, 1, 2)
        assert_same_dump(pair, "l")
        both(pair, "CONFIG", "SET", "list-compress-depth", 1)
        both(pair, "RPUSH", "c", *["p" * 60] * 5, "q")
        assert_same_dump(pair, "c")
        for bad in ("-1", "5gb", "x", "4294967296", "1.5"):
            both(pair, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", bad)
    finally:
        both(pair, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", "")  # no digits: 0, the default again
    both(pair, "RPUSH", "after", "y" * 100)
    assert_same_dump(pair, "after")


def test_spop_of_most_of_a_set_rebuilds_its_encoding(pair):
    # SPOP taking all but at most a fifth of the count builds a new set of the rest:
    # a hashtable of integers becomes an intset again, and an intset's width starts afresh.
    both(pair, "SADD", "s", *range(600))
    pair.both("SPOP", "s", 590)
    both(pair, "OBJECT", "ENCODING", "s")
    both(pair, "SADD", "w", 100000, *range(1, 10))
    pair.both("SPOP", "w", 9)
    a, b = pair.kv, pair.ref
    rest = a.call("SMEMBERS", "w").split(b"\r\n")[2]
    b.call("SADD", "fresh", rest)  # the same member in a new set, on Redis
    assert a.call("DUMP", "w") == b.call("DUMP", "fresh")
    # Case 2 (the rest more than a fifth of the count) keeps the set as it is.
    both(pair, "SADD", "keep", "a", 1, 2, 3)
    pair.both("SPOP", "keep", 2)
    both(pair, "OBJECT", "ENCODING", "keep")
