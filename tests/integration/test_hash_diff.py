"""Hash commands against Debian's redis-server 7.0. A small (listpack) hash
answers in insertion order in both; a big (hashtable) one in an order of each
server's own, compared sorted."""
import pytest
import redis


def test_hash_basics(diff):
    diff.run("""
    HSET h a 1 b 2 c 3
    HSET h a 10 d 4
    HGET h a
    HGET h missing
    HGET nokey a
    HMGET h a b missing
    HMGET nokey a b
    HLEN h
    HLEN nokey
    HEXISTS h a
    HEXISTS h zz
    HSTRLEN h a
    HSTRLEN h zz
    HKEYS h
    HVALS h
    HGETALL h
    HGETALL nokey
    HSETNX h a x
    HSETNX h e 5
    HGET h e
    HDEL h a zz
    HDEL h zz
    HDEL nokey a
    HGETALL h
    HMSET h2 f1 v1 f2 v2
    HGETALL h2
    TYPE h
    OBJECT ENCODING h
    EXISTS h
    HDEL h b c d e
    EXISTS h
    TYPE h
    DBSIZE
    """)


def test_hash_errors_and_wrongtype(diff):
    diff.run("""
    SET s v
    HSET s a 1
    HGET s a
    HGETALL s
    HLEN s
    HDEL s a
    HSET h a
    HSET h a 1 b
    HSET h
    HMSET h a
    HGET h
    HSETNX h a
    HDEL h
    HINCRBY h a x
    HINCRBYFLOAT h a x
    HSET h a 1
    GET h
    INCR h
    APPEND h x
    """)


def test_hash_incr(diff):
    diff.run("""
    HINCRBY h 1n 5
    HINCRBY h 1n -10
    HINCRBY h 1n 9223372036854775807
    HSET h 2big 9223372036854775807
    HINCRBY h 2big 1
    HSET h 3s abc
    HINCRBY h 3s 1
    HINCRBYFLOAT h 3s 1
    HINCRBYFLOAT h 4f 10.5
    HINCRBYFLOAT h 4f 0.1
    HINCRBYFLOAT h 4f -5e3
    HINCRBYFLOAT h 1n 1.5
    HINCRBYFLOAT h 4f inf
    HINCRBYFLOAT h 4f nan
    HGETALL h
    """)
    diff("HSET", "h", "5sp", " 1")
    diff("HINCRBY", "h", "5sp", "1")


def test_hash_encoding_conversion(diff):
    diff("HSET", "small", "f", "v")
    diff("OBJECT", "ENCODING", "small")
    diff("HSET", "small", "g", "x" * 65)
    diff("OBJECT", "ENCODING", "small")
    diff("HDEL", "small", "g")
    diff("OBJECT", "ENCODING", "small")
    for i in range(512):  # hash-max-listpack-entries
        diff("HSET", "many", f"f{i:03d}", i)
    diff("OBJECT", "ENCODING", "many")
    diff("HSET", "many", "f512", 512)
    diff("OBJECT", "ENCODING", "many")
    diff("HLEN", "many")


def test_hash_large_compare_sorted(kvrocks_server, redis_ref):
    kv, ref = kvrocks_server.client(), redis_ref.client()
    for c in (kv, ref):
        c.delete("big")
        c.hset("big", mapping={f"field:{i}": f"value:{i}" for i in range(1000)})
        c.hset("big", mapping={b"bin\x00\xff": b"\x00\r\n"})
    assert kv.hlen("big") == ref.hlen("big") == 1001
    assert sorted(kv.hgetall("big").items()) == sorted(ref.hgetall("big").items())
    assert sorted(kv.hkeys("big")) == sorted(ref.hkeys("big"))
    assert sorted(kv.hvals("big")) == sorted(ref.hvals("big"))
    assert kv.hget("big", b"bin\x00\xff") == b"\x00\r\n"
    # HSCAN walks every field exactly once.
    seen = {}
    cursor = 0
    while True:
        cursor, page = kv.hscan("big", cursor, count=50)
        for f, v in page.items():
            assert f not in seen
            seen[f] = v
        if cursor == 0:
            break
    assert seen == kv.hgetall("big")
    assert set(kv.hscan_iter("big", match="field:99*")) == set(ref.hscan_iter("big", match="field:99*"))


def test_hscan_small_and_errors(diff):
    diff.run("""
    HSET h a 1 b 2 c 3
    HSCAN h 0
    HSCAN h 0 COUNT 1
    HSCAN h 0 MATCH b*
    HSCAN nokey 0
    HSCAN h x
    HSCAN h 0 COUNT 0
    HSCAN h 0 FOO
    SET s v
    HSCAN s 0
    """)


def test_hrandfield(kvrocks_server, redis_ref):
    kv = kvrocks_server.client()
    kv.delete("h", "nokey")
    kv.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    assert kv.hrandfield("h") in (b"a", b"b", b"c")
    assert kv.hrandfield("nokey") is None
    assert sorted(kv.hrandfield("h", 10)) == [b"a", b"b", b"c"]
    assert len(set(kv.hrandfield("h", 2))) == 2
    assert len(kv.hrandfield("h", -10)) == 10
    assert kv.hrandfield("h", 0) == []
    assert kv.hrandfield("nokey", 5) == []
    pairs = kv.hrandfield("h", 2, withvalues=True)
    assert len(pairs) == 4
    for f, v in zip(pairs[::2], pairs[1::2]):
        assert kv.hget("h", f) == v
    for c in (kv, redis_ref.client()):
        c.set("s", "v")
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            c.hrandfield("s")
        with pytest.raises(redis.ResponseError, match="syntax error"):
            c.execute_command("HRANDFIELD", "h", 1, "FOO")


def test_hash_generic_commands(diff):
    diff.run("""
    HSET h a 1 b 2
    EXPIRE h 100
    ~TTL h
    COPY h h2
    HGETALL h2
    RENAME h h3
    HGETALL h3
    EXISTS h
    MOVE h3 1
    SELECT 1
    HGETALL h3
    TYPE h3
    DEL h3
    HGETALL h3
    SELECT 0
    HSET h a new
    HGETALL h
    SET h string-now
    HGETALL h
    GET h
    DBSIZE
    """)


def test_hash_in_multi(diff):
    diff.run("""
    MULTI
    HSET h a 1
    HINCRBY h a 5
    HGET h a
    HDEL h a
    EXISTS h
    EXEC
    """)


def test_big_hash_delete_and_recreate(fresh_server):
    srv = fresh_server.start()
    c = srv.client()
    pipe = c.pipeline(transaction=False)
    for i in range(50000):
        pipe.hset("huge", f"field:{i}", "v" * 50)
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()
    assert c.hlen("huge") == 50000
    assert c.delete("huge") == 1  # only the metadata is deleted; compaction drops the fields
    assert c.exists("huge") == 0 and c.hlen("huge") == 0 and c.dbsize() == 0
    # A new hash under the same name sees none of the old fields (new version).
    c.hset("huge", "field:1", "new")
    assert c.hgetall("huge") == {b"field:1": b"new"}
    srv.restart()
    c = srv.client()
    assert c.hgetall("huge") == {b"field:1": b"new"}
    assert c.dbsize() == 1


def test_compaction_reclaims_space_of_a_deleted_hash(fresh_server):
    srv = fresh_server.start()
    c = srv.client()
    value = "v" * 300  # below min-blob-size: stays in SST files
    pipe = c.pipeline(transaction=False)
    for i in range(60000):
        pipe.hset("huge", f"field:{i}", value + str(i))
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()
    assert c.execute_command("COMPACT") in (b"OK", "OK", True)
    full = int(c.info("memory")["used_disk_bytes"])
    assert full > 2_000_000
    assert c.delete("huge") == 1  # O(1): only the metadata goes
    assert c.execute_command("COMPACT") in (b"OK", "OK", True)
    emptied = int(c.info("memory")["used_disk_bytes"])
    assert emptied < full / 10, (full, emptied)


def test_listpack_order_is_insertion_order(diff):
    """HGETALL, HKEYS, HVALS, HSCAN and HRANDFIELD with a count of at least the
    size answer in insertion order: an updated field keeps its place, a deleted
    and re-added one goes last; COPY, RENAME, MOVE, DUMP/RESTORE, DEBUG RELOAD
    and MULTI keep the order."""
    diff.run("""
    HSET h z 1 a 2 m 3 q 4
    HSET h a 20 b 5
    HDEL h z
    HSETNX h z 6
    HSETNX h a 7
    HINCRBY h m 5
    HINCRBY h n 1
    HINCRBYFLOAT h q 0.5
    HINCRBYFLOAT h c 1.5
    HMSET h y 8 a 9
    HGETALL h
    HKEYS h
    HVALS h
    HSCAN h 0
    HSCAN h 0 MATCH [abmnq]
    HSCAN h 0 COUNT 2
    HRANDFIELD h 9
    HRANDFIELD h 100 WITHVALUES
    COPY h h2
    HGETALL h2
    RENAME h2 h3
    HKEYS h3
    MOVE h3 1
    SELECT 1
    HKEYS h3
    SELECT 0
    MULTI
    HDEL h a
    HSET h a 1 x 2
    HGETALL h
    EXEC
    DEBUG RELOAD
    HGETALL h
    HSET h 3 int 1 one
    HGETALL h
    OBJECT ENCODING h
    """)
    # Each server's own DUMP format (kvrocks writes RDB_TYPE_HASH, Redis a listpack) restores in order.
    for c in (diff.kv, diff.ref):
        payload = c.call("DUMP", "h").split(b"\r\n", 1)[1][:-2]
        assert c.call("RESTORE", "h4", "0", payload) == b"+OK\r\n"
    diff("HGETALL", "h4")


def test_listpack_order_survives_a_redis_dump(diff, kvrocks_server, redis_ref):
    """A listpack hash DUMPed by Redis RESTOREs into kvrocks in Redis' order, and
    kvrocks' DUMP of it restores into Redis in the same order."""
    ref, kv = redis_ref.client(), kvrocks_server.client()
    ref.delete("h", "back")
    ref.hset("h", mapping={"z": 1, "a": 2, "m": 3})
    ref.hset("h", "b", 4)
    kv.delete("h")
    kv.restore("h", 0, ref.dump("h"))
    assert kv.hgetall("h") == ref.hgetall("h")
    assert list(kv.hkeys("h")) == [b"z", b"a", b"m", b"b"]
    ref.restore("back", 0, kv.dump("h"))
    assert list(ref.hkeys("back")) == [b"z", b"a", b"m", b"b"]


def test_order_through_conversion_to_hashtable(diff):
    """A hash that outgrows the listpack limits stops keeping insertion order in
    both servers (compared sorted); while it is small, order matches exactly,
    also under lowered limits."""
    diff("CONFIG", "SET", "hash-max-listpack-entries", "4")
    try:
        diff.run("""
        HSET h d 1 c 2 b 3
        HKEYS h
        HSET h a 4
        HKEYS h
        OBJECT ENCODING h
        HSET h e 5
        OBJECT ENCODING h
        HSET s y 1 x 2
        HSET s w 3 v 4 u 5
        OBJECT ENCODING s
        HSET t f v
        HSET t g 01234567890123456789012345678901234567890123456789012345678901234567890123456789
        OBJECT ENCODING t
        """)
        for key in ("h", "s", "t"):
            a, b = diff.kv.call("HGETALL", key), diff.ref.call("HGETALL", key)
            assert sorted(a.split(b"\r\n")) == sorted(b.split(b"\r\n")), key
    finally:
        diff("CONFIG", "SET", "hash-max-listpack-entries", "512")
