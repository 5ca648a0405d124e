"""RDB 11/12 content the Redis 7.0 fixtures lack, from our own RDB writer:
listpack sets (type 20), streams with consumer active times (type 21), hashes
with field TTLs (types 22-25), module values and module aux data (skipped, reported by module name), and
the opcodes FUNCTION2, SLOT_INFO, IDLE and FREQ."""
import os
import tempfile

import pytest
import redis

from conftest import Kvrocks, wait_until
import rdb_writer as w

FAR = 4102444800000  # 2100-01-01


def build():
    body = b""
    body += b"\xfa" + w.string("redis-ver") + w.string("7.4.0")
    body += b"\xf5" + w.string("#!lua name=lib\nredis.register_function('f', function() return 1 end)")
    body += b"\xfe" + w.length(0) + b"\xfb" + w.length(6) + w.length(1)
    body += b"\xf4" + w.length(42) + w.length(6) + w.length(1)  # SLOT_INFO
    body += b"\xf8" + w.length(100)  # IDLE
    body += w.key(20, "set:lp", w.string(w.listpack(["a", "b", 7])))
    body += b"\xf9" + bytes([5])  # FREQ
    body += w.key(25, "hash:lpex", w.millis(FAR) + w.string(w.listpack(["f1", "v1", 0, "f2", "v2", FAR])))
    # HASH_METADATA: minExpire, then (ttl relative to minExpire + 1, or 0), field, value.
    meta = w.millis(FAR) + w.length(2) + w.length(0) + w.string("a") + w.string("1") + \
        w.length(1) + w.string("b") + w.string("2")
    body += w.key(24, "hash:meta", meta)
    body += w.key(22, "hash:meta-pre", w.length(1) + w.length(0) + w.string("x") + w.string("y"))
    body += b"\xfc" + w.millis(FAR) + w.key(0, "str:ttl", w.string("v"))
    # A module value (type 7) and module aux data: skipped, reported by name.
    mod = w.length(w.module_id("testmodul")) + w.length(2) + w.length(7) + w.length(5) + w.string("blob") + w.length(0)
    body += w.key(7, "module:key", mod)
    body += b"\xf7" + w.length(w.module_id("testmodul")) + w.length(2) + w.length(2) + w.length(5) + \
        w.string("aux") + w.length(0)
    # A stream of type 21 (consumers with an active time).
    node = w.listpack([1, 0, 1, "f", 0, 2, 0, 0, "v", 4])
    stream = w.length(1) + w.string(b"\x00" * 7 + b"\x05" + b"\x00" * 8) + w.string(node)
    stream += w.length(1) + w.length(5) + w.length(0)  # length, last id 5-0
    stream += w.length(5) + w.length(0) + w.length(0) + w.length(0) + w.length(1)  # first, max deleted, added
    stream += w.length(1) + w.string("grp") + w.length(5) + w.length(0) + w.length(1)  # group, last id, read
    stream += w.length(1) + b"\x00" * 7 + b"\x05" + b"\x00" * 8 + w.millis(1700000000000) + w.length(3)  # PEL
    stream += w.length(1) + w.string("c1") + w.millis(1700000000001) + w.millis(1700000000002)
    stream += w.length(1) + b"\x00" * 7 + b"\x05" + b"\x00" * 8
    body += w.key(21, "stream:v3", stream)
    return w.rdb(12, body)


def test_rdb12_types_load():
    path = os.path.join(tempfile.mkdtemp(), "new.rdb")
    with open(path, "wb") as f:
        f.write(build())
    kv = Kvrocks(extra=["--load-rdb", path])
    kv.start()
    try:
        c = kv.client(protocol=2)
        assert sorted(c.smembers("set:lp")) == [b"7", b"a", b"b"]
        assert c.hgetall("hash:lpex") == {b"f1": b"v1", b"f2": b"v2"}
        assert c.execute_command("HPEXPIRETIME", "hash:lpex", "FIELDS", 2, "f1", "f2") == [-1, FAR]
        assert c.hgetall("hash:meta") == {b"a": b"1", b"b": b"2"}
        assert c.execute_command("HPEXPIRETIME", "hash:meta", "FIELDS", 2, "a", "b") == [-1, FAR]
        assert c.hgetall("hash:meta-pre") == {b"x": b"y"}
        assert c.get("str:ttl") == b"v" and c.pexpiretime("str:ttl") == FAR
        assert c.exists("module:key") == 0
        assert c.xrange("stream:v3") == [(b"5-0", {b"f": b"v"})]
        pending = c.xpending_range("stream:v3", "grp", "-", "+", 10)
        assert [(p["message_id"], p["consumer"], p["times_delivered"]) for p in pending] == [(b"5-0", b"c1", 3)]
        assert c.dbsize() == 6
    finally:
        kv.cleanup()


def test_bad_checksum_is_refused():
    data = bytearray(build())
    data[-1] ^= 0xFF
    path = os.path.join(tempfile.mkdtemp(), "bad.rdb")
    with open(path, "wb") as f:
        f.write(data)
    kv = Kvrocks(extra=["--load-rdb", path])
    with pytest.raises(RuntimeError):
        kv.start()
    kv.cleanup()


def test_seconds_expiry_opcode_and_expired_fields_by_role(tmp_path):
    """EXPIRETIME (0xFD, seconds in 4 bytes, written by Redis before RDB 3): a
    master's load drops (and counts) a key already expired, one started as a
    replica keeps it. Hash fields whose TTL has passed (an RDB 12 file) are
    loaded in both roles, as Redis 7.4 loads them, hidden from reads; a master's
    active expiry then deletes them."""
    soon = 2100000000  # 2036, within EXPIRETIME's int32 seconds
    old = w.string("k") + w.string("v")
    v2 = b"REDIS0002" + b"\xfe" + w.length(0) + b"\xfd" + soon.to_bytes(4, "little") + b"\x00" + old + \
        b"\xfd" + (1000).to_bytes(4, "little") + b"\x00" + w.string("gone") + w.string("v") + b"\xff"
    meta = w.millis(1000) + w.length(2) + w.length(1) + w.string("a") + w.string("1") + \
        w.length(0) + w.string("b") + w.string("2")
    v12 = w.rdb(12, b"\xfe" + w.length(0) + w.key(24, "h", meta))
    replica = ["--replicaof", "127.0.0.1 1"]  # unreachable
    loaded = lambda c: (c.hlen("h"), c.hgetall("h")) == (2, {b"b": b"2"})  # noqa: E731
    for data, extra, check in (
            (v2, [], lambda c: (c.pexpiretime("k"), c.exists("gone"), c.dbsize()) == (soon * 1000, 0, 1)),
            (v2, replica, lambda c: (c.pexpiretime("k"), c.exists("gone"), c.dbsize()) == (soon * 1000, 0, 2)),
            (v12, ["--active-expire", "no"], loaded),
            (v12, replica, loaded)):
        path = str(tmp_path / "f.rdb")
        with open(path, "wb") as f:
            f.write(data)
        kv = Kvrocks(extra=["--load-rdb", path] + extra).start()
        try:
            c = kv.client(protocol=2)
            assert check(c), (data[:9], extra)
            expired = c.info("persistence")["rdb_last_load_keys_expired"]
            assert expired == (1 if data is v2 and not extra else 0)
            if data is v12 and extra != replica:
                c.config_set("active-expire", "yes")
                wait_until(lambda: c.hlen("h") == 1, 10, "the master's active expiry")
        finally:
            kv.cleanup()


def test_zipmap_long_lengths_and_text_infinite_scores(tmp_path):
    """Encodings of Redis before 2.6 and 3.0: a zipmap hash (type 9) whose value
    is 254 bytes or longer (its length in 5 bytes), and a sorted set of type 3
    whose scores are text, with the codes 254 and 255 for +inf and -inf."""
    def zm_len(n):
        return bytes([n]) if n < 254 else b"\xfe" + n.to_bytes(4, "little")
    zipmap = b"\x02" + zm_len(1) + b"f" + zm_len(300) + b"\x00" + b"v" * 300 + \
        zm_len(300) + b"g" * 300 + zm_len(1) + b"\x00" + b"w" + b"\xff"
    zset = w.length(3) + w.string("hi") + b"\xfe" + w.string("lo") + b"\xff" + w.string("mid") + b"\x031.5"
    data = b"REDIS0003" + b"\xfe" + w.length(0) + w.key(9, "h", w.string(zipmap)) + w.key(3, "z", zset) + b"\xff"
    path = str(tmp_path / "old.rdb")
    with open(path, "wb") as f:
        f.write(data)
    kv = Kvrocks(extra=["--load-rdb", path]).start()
    try:
        c = kv.client(protocol=2)
        assert c.hgetall("h") == {b"f": b"v" * 300, b"g" * 300: b"w"}
        assert c.zrange("z", 0, -1, withscores=True) == [(b"lo", float("-inf")), (b"mid", 1.5), (b"hi", float("inf"))]
    finally:
        kv.cleanup()
