"""DEBUG's subcommands against Debian's redis-server 7.0: PROTOCOL, POPULATE, ERROR,
LOG, MALLCTL, SET-SKIP-CHECKSUM-VALIDATION, PAUSE-CRON and RELOAD (the data set's round trip
through an RDB file, and its MERGE/NOFLUSH/NOSAVE options); and the dump.rdb that
kvrocks writes loads into redis-server with the same content."""
import os
import shutil
import tempfile
import time

import pytest

from conftest import Differ, RealRedis

PROTOCOL_TYPES = ["string", "integer", "double", "bignum", "null", "array", "set", "map", "true", "false",
                  "verbatim", "nosuch"]


def test_protocol_replies_match_redis(diff):
    for t in PROTOCOL_TYPES:
        diff("DEBUG", "PROTOCOL", t)
    diff("DEBUG", "PROTOCOL")
    diff("DEBUG", "PROTOCOL", "string", "extra")


def test_protocol_attribute_and_push_are_followed_by_a_reply(diff):
    for t in ["attrib", "push"]:
        first = diff("DEBUG", "PROTOCOL", t)
        if first.startswith((b"|", b">")):  # RESP3: the real reply follows
            assert diff.kv.read_reply() == diff.ref.read_reply()
    diff("PING")


def test_populate_matches_redis(diff):
    diff("SET", "key:1", "mine")
    diff("SET", "key:7", "gone", "PX", "1")
    diff.kv.call("DEBUG", "SLEEP", "0.01")
    diff("DEBUG", "POPULATE", "10")
    diff("MGET", *[f"key:{i}" for i in range(11)])
    diff("DEBUG", "POPULATE", "5", "pre")
    diff("DEBUG", "POPULATE", "3", "sized", "20")
    diff("DEBUG", "POPULATE", "3", "cut", "3")
    diff("MGET", "pre:0", "pre:4", "sized:2", "cut:1")
    diff("STRLEN", "sized:0")
    diff("DEBUG", "POPULATE", "2", "p" * 200)  # the name is cut to 127 bytes: both are one key
    diff("DEBUG", "POPULATE", "0")
    diff("DBSIZE")
    diff("DEBUG", "DIGEST")
    for bad in (["-1"], ["x"], ["3", "p", "-2"], ["3", "p", "y"], ["1", "p", "1", "extra"]):
        diff("DEBUG", "POPULATE", *bad)
    diff("MULTI")
    diff("DEBUG", "POPULATE", "3", "tx")
    diff("EXEC")
    diff("DBSIZE")


def test_populate_changes_nothing_in_the_dirty_counter(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    d("CONFIG", "RESETSTAT")
    counts = []
    for c in (d.kv, d.ref):
        before = dirty(c)
        c.call("DEBUG", "POPULATE", "50", "dirty")
        counts.append(dirty(c) - before)
    assert counts[0] == counts[1] == 0
    d.close()


def dirty(raw):
    info = raw.call("INFO", "persistence").decode()
    return int(info.split("rdb_changes_since_last_save:")[1].split("\r\n")[0])


def test_error_log_and_mallctl_match_redis(diff):
    diff("DEBUG", "ERROR", "FOO bar baz")
    diff("DEBUG", "ERROR", "two\r\nlines")
    diff("DEBUG", "ERROR", "")
    diff("DEBUG", "LOG", "a line in the log")
    diff("DEBUG", "MALLCTL", "no.such.setting")
    diff("DEBUG", "MALLCTL-STR", "no.such.setting")
    diff("DEBUG", "MALLCTL", "arenas.narenas")  # 4 bytes: "Invalid argument", a quirk of Redis'
    kv, ref = diff.both("DEBUG", "MALLCTL", "stats.allocated")
    assert kv.startswith(b":") and ref.startswith(b":")
    kv, ref = diff.both("DEBUG", "MALLCTL-STR", "version")
    assert kv.startswith(b"$") and ref.startswith(b"$")
    diff("DEBUG", "NOSUCH-SUBCOMMAND")


def test_pause_cron_stops_the_active_expiry(diff):
    diff("DEBUG", "PAUSE-CRON", "1")
    try:
        diff("SET", "short", "1", "PX", "20")
        time.sleep(0.3)  # many cron periods: nothing deletes it while paused
        assert diff("DBSIZE") == b":1\r\n"
    finally:
        diff("DEBUG", "PAUSE-CRON", "nonsense")  # atoi, as Redis: 0, resumed
    deadline = time.time() + 10
    while diff.kv.call("DBSIZE") != b":0\r\n" or diff.ref.call("DBSIZE") != b":0\r\n":
        assert time.time() < deadline, "the active expiry did not resume"
        time.sleep(0.05)
    diff("DEBUG", "PAUSE-CRON")


def test_skip_checksum_validation_matches_redis(diff):
    diff("SET", "src", "value")
    payload = diff.kv.call("DUMP", "src")
    body = payload.split(b"\r\n", 1)[1][:-2]
    broken = body[:-1] + bytes([body[-1] ^ 0xFF])  # the CRC64's last byte
    try:
        diff("RESTORE", "dst", "0", broken)
        diff("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
        diff("RESTORE", "dst", "0", broken)
        diff("GET", "dst")
    finally:
        diff("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0")
    diff("RESTORE", "dst2", "0", broken)


# Every type and encoding size, TTLs and several databases (streams are compared
# with XINFO: their DEBUG DIGEST differs, docs/replication.md).
DATA = """
SET s1 v
SET s2 12345
SET s3 hello EX 1000
SET big xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
RPUSH l a b c 1 2
SADD set1 a b c
SADD set2 1 2 3
HSET h f v g 17
ZADD z 0.1 a 1.5 b -3 c inf d
PFADD hll a b c
PEXPIRE h 500000
SELECT 3
SET other-db v
LPUSH l3 x
SELECT 0
"""


def load(d, script):
    for line in script.strip().splitlines():
        d(*line.split())


def stream_state(d):
    """What two servers that ran the same commands agree on (delivery times may differ by a millisecond)."""
    d("XRANGE", "st", "-", "+")
    d("XINFO", "GROUPS", "st")
    d("XPENDING", "st", "g")


def test_reload_keeps_the_data_set(diff):
    load(diff, DATA)
    diff("SADD", "bigset", *[f"m{i}" for i in range(600)])
    diff("ZADD", "bigz", *[x for i in range(300) for x in (str(i), f"m{i}")])
    diff("XADD", "st", "1-1", "f", "v")
    diff("XADD", "st", "2-1", "f", "w")
    diff("XGROUP", "CREATE", "st", "g", "0")
    diff("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "st", ">")
    diff("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 'hi' end)")
    digest = diff("DEBUG", "DIGEST-VALUE", "s1", "s2", "s3", "big", "l", "set1", "set2", "h", "z", "hll",
                  "bigset", "bigz")
    full = diff.both("XINFO", "STREAM", "st", "FULL")
    diff("DEBUG", "RELOAD")
    assert diff.both("XINFO", "STREAM", "st", "FULL") == full  # times included
    assert diff("DEBUG", "DIGEST-VALUE", "s1", "s2", "s3", "big", "l", "set1", "set2", "h", "z", "hll",
                "bigset", "bigz") == digest
    for key in ["s3", "h", "s1"]:
        diff.approx("TTL", key)
    stream_state(diff)
    diff("FCALL", "f", "0")
    diff("SELECT", "3")
    diff("LRANGE", "l3", "0", "-1")
    diff("SELECT", "0")
    diff("DBSIZE")
    diff("OBJECT", "ENCODING", "bigset")
    diff("FUNCTION", "FLUSH")


def test_reload_saves_expired_keys_and_a_master_drops_them_as_redis(diff):
    """rdbSave writes every stored key, expired or not; a master's load drops the
    expired ones and counts them (INFO rdb_last_load_keys_expired)."""
    diff("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        diff("SET", "short", "v", "PX", "20")
        diff("HSET", "h", "f", "v")
        diff("PEXPIRE", "h", "20")
        diff("SET", "live", "v")
        time.sleep(0.1)
        assert diff("DBSIZE") == b":3\r\n"  # expired, not yet deleted
        diff("DEBUG", "RELOAD")
        diff("DBSIZE")
        for field in ("rdb_last_load_keys_loaded", "rdb_last_load_keys_expired"):
            a, b = diff.both("INFO", "persistence")
            line = [x for x in a.split(b"\r\n") if x.startswith(field.encode() + b":")]
            assert line and line == [x for x in b.split(b"\r\n") if x.startswith(field.encode() + b":")]
            assert line != [field.encode() + b":0"]
    finally:
        diff("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_reload_options_match_redis(diff):
    diff("FUNCTION", "LOAD", "#!lua name=test\nredis.register_function('test', function() return 'hello' end)")
    diff("SET", "a", "1")
    diff("DEBUG", "RELOAD")
    # The library exists: loading the file on top of it fails without MERGE.
    diff("DEBUG", "RELOAD", "NOFLUSH")
    diff("DEBUG", "RELOAD", "NOFLUSH", "MERGE")
    diff("FUNCTION", "LIST")
    diff("SET", "a", "2")
    diff("SET", "b", "3")
    diff("DEBUG", "RELOAD", "NOSAVE")  # back to the file
    diff("MGET", "a", "b")
    diff("SET", "a", "4")
    diff("SET", "c", "5")
    diff("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")  # the file's a, c stays
    diff("MGET", "a", "b", "c")
    diff("FUNCTION", "DELETE", "test")
    diff("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")
    diff("FCALL", "test", "0")
    diff("DEBUG", "RELOAD", "BAD")
    diff("MULTI")
    diff("SET", "d", "6")
    diff("DEBUG", "RELOAD")
    diff("EXEC")
    diff("MGET", "a", "c", "d")
    diff("FUNCTION", "FLUSH")


def test_reload_touches_watched_keys_as_redis(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    other = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    d("SET", "w", "1")
    d("WATCH", "w", "absent")
    other("DEBUG", "RELOAD")
    d("MULTI")
    d("GET", "w")
    d("EXEC")
    d("WATCH", "absent")
    other("DEBUG", "RELOAD")
    d("MULTI")
    d("GET", "w")
    d("EXEC")
    d.close()
    other.close()


def test_reload_noflush_duplicate_key_fails_and_the_server_lives(r):
    # Redis stops the server on a duplicate key ("Duplicated key found in RDB
    # file"); kvrocks fails the load instead, keeping what it loaded before it.
    r.set("dup", "1")
    r.execute_command("DEBUG", "RELOAD")
    with pytest.raises(Exception, match="Error trying to load the RDB dump"):
        r.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH")
    assert r.get("dup") == b"1"
    assert r.ping()


def test_reload_nosave_without_a_file_empties_the_data_set_as_redis(fresh_server):
    ref = RealRedis()
    try:
        kv = fresh_server.start()
        d = Differ(kv.port, ref.port)
        d("SET", "k", "v")
        d("DEBUG", "RELOAD", "NOSAVE")
        d("DBSIZE")
        d.close()
    finally:
        ref.cleanup()


def test_dump_rdb_loads_into_redis(fresh_server):
    kv = fresh_server.start()
    c = kv.client()
    src = RealRedis()
    try:
        d = Differ(kv.port, src.port)
        load(d, DATA)
        d("XADD", "st", "1-1", "f", "v")
        d("XGROUP", "CREATE", "st", "g", "0")
        d("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 'hi' end)")
        d.close()
        c.execute_command("DEBUG", "RELOAD")
        rdb_dir = tempfile.mkdtemp(prefix="kvrocks-rdb-")
        shutil.copy(os.path.join(kv.dir, "dump.rdb"), rdb_dir)
        loaded = RealRedis(extra=["--dir", rdb_dir, "--dbfilename", "dump.rdb"])
        try:
            # The Redis that loaded kvrocks' file against kvrocks: equal to the byte, times included.
            d = Differ(loaded.port, kv.port, flush=False)
            d("XINFO", "STREAM", "st", "FULL")
            d.close()
            d = Differ(loaded.port, src.port, flush=False)
            for db in ["0", "3"]:
                d("SELECT", db)
                d("DBSIZE")
                d("DEBUG", "DIGEST-VALUE", "s1", "s2", "s3", "big", "l", "set1", "set2", "h", "z", "hll",
                  "other-db", "l3")
            d("SELECT", "0")
            stream_state(d)
            d("FCALL", "f", "0")
            d.approx("TTL", "s3")
            d.close()
        finally:
            loaded.cleanup()
            shutil.rmtree(rdb_dir, ignore_errors=True)
    finally:
        src.cleanup()
        c.close()
