"""Commands that a standalone Redis 7.0 answers without a cluster, replicas or
modules, compared byte for byte with Debian's redis-server: CLUSTER, READONLY,
READWRITE, ASKING (cluster support disabled), FAILOVER (no replicas), MODULE (none
loaded, enable-module-command no), RESTORE-ASKING, LOLWUT; and where their flags
matter: scripts, MULTI, unauthenticated clients, a replica whose link is down."""
import re

import pytest

from conftest import Differ, Kvrocks, RealRedis

CLUSTER_CALLS = [
    "CLUSTER INFO", "CLUSTER NODES", "CLUSTER SLOTS", "CLUSTER SHARDS", "CLUSTER MYID", "CLUSTER LINKS",
    "CLUSTER HELP", "CLUSTER KEYSLOT foo", "CLUSTER COUNTKEYSINSLOT 1", "CLUSTER GETKEYSINSLOT 1 10",
    "CLUSTER ADDSLOTS 1 2", "CLUSTER ADDSLOTSRANGE 1 5", "CLUSTER DELSLOTS 1", "CLUSTER DELSLOTSRANGE 1 5",
    "CLUSTER FLUSHSLOTS", "CLUSTER FORGET abc", "CLUSTER MEET 127.0.0.1 1", "CLUSTER MEET 127.0.0.1 1 2",
    "CLUSTER REPLICATE abc", "CLUSTER REPLICAS abc", "CLUSTER SLAVES abc", "CLUSTER RESET", "CLUSTER RESET HARD",
    "CLUSTER SAVECONFIG", "CLUSTER SET-CONFIG-EPOCH 1", "CLUSTER SETSLOT 1 NODE abc", "CLUSTER BUMPEPOCH",
    "CLUSTER COUNT-FAILURE-REPORTS abc", "CLUSTER FAILOVER", "CLUSTER FAILOVER FORCE",
    # Arity and unknown subcommands, checked before the command runs.
    "CLUSTER", "CLUSTER INFO x", "CLUSTER KEYSLOT", "CLUSTER GETKEYSINSLOT 1", "CLUSTER ADDSLOTS",
    "CLUSTER SETSLOT 1", "CLUSTER NOSUCH", "cluster info",
    "READONLY", "READONLY x", "READWRITE", "READWRITE x", "ASKING", "ASKING x",
]

FAILOVER_CALLS = [
    "FAILOVER", "FAILOVER ABORT", "FAILOVER abort", "FAILOVER ABORT x", "FAILOVER FORCE", "FAILOVER FORCE FORCE",
    "FAILOVER TO", "FAILOVER TO h", "FAILOVER TO h p", "FAILOVER TO h 1", "FAILOVER TO h 1 TO h 2",
    "FAILOVER TIMEOUT", "FAILOVER TIMEOUT x", "FAILOVER TIMEOUT 0", "FAILOVER TIMEOUT -5", "FAILOVER TIMEOUT 10",
    "FAILOVER TIMEOUT 10 TIMEOUT 10", "FAILOVER TO h 1 FORCE TIMEOUT 100", "FAILOVER NOSUCH",
]

MODULE_CALLS = [
    "MODULE LIST", "MODULE HELP", "module list", "MODULE LOAD /nonexistent.so", "MODULE LOAD /x.so a b",
    "MODULE LOADEX /x.so CONFIG a b", "MODULE UNLOAD foo", "MODULE", "MODULE LIST x", "MODULE HELP x",
    "MODULE LOAD", "MODULE UNLOAD", "MODULE UNLOAD a b", "MODULE NOSUCH",
]

# LOLWUT whose output draws no random numbers (Schotter's first two rows), or is
# only the version line.
LOLWUT_CALLS = [
    "LOLWUT", "LOLWUT foo", "LOLWUT VERSION 7", "LOLWUT VERSION 4", "LOLWUT VERSION -1", "LOLWUT VERSION x",
    "LOLWUT VERSION", "LOLWUT VERSION 5 10 3 2", "LOLWUT VERSION 5 1 1 1", "LOLWUT VERSION 5 2 1 1",
    "LOLWUT VERSION 5 3 5 1", "LOLWUT VERSION 5 40 4 2", "LOLWUT VERSION 5 66 8 2", "LOLWUT VERSION 5 0 0 0",
    "LOLWUT VERSION 5 1001 201 2", "LOLWUT VERSION 5 x", "LOLWUT VERSION 5 10 y", "LOLWUT VERSION 5 10 3 z",
    "LOLWUT VERSION 4294967301 9 2 2", "LOLWUT VERSION 6 x", "LOLWUT VERSION 6 10 y",
]


def _same_version(reply):
    """The replies name each server's own version (kvrocks reports 7.0.0): the
    version and the length of a bulk or verbatim reply that holds it are masked."""
    masked = re.sub(rb"Redis ver\. 7\.0\.\d+", b"Redis ver. 7.0.x", reply)
    if masked != reply and reply[:1] in (b"$", b"="):
        masked = reply[:1] + b"<len>" + masked[masked.index(b"\r\n"):]
    return masked


def _compare_lines(diff, lines, normalize=lambda b: b):
    for line in lines:
        a, b = diff.both(*line.split())
        assert normalize(a) == normalize(b), f"{line!r}: kvrocks {a!r} != redis {b!r}"


@pytest.mark.parametrize("group", [CLUSTER_CALLS, FAILOVER_CALLS, MODULE_CALLS], ids=["cluster", "failover", "module"])
def test_replies_as_a_standalone_redis(diff, group):
    for line in group:
        diff(*line.split())


def test_lolwut_as_redis(diff):
    _compare_lines(diff, LOLWUT_CALLS, _same_version)


def test_lolwut_random_drawings_have_redis_shape(diff):
    """Schotter's lower rows and the skyline draw random numbers: compare their shape."""
    def shape(reply, version):
        text = reply.split(b"\r\n", 1)[1].decode() if reply.startswith(b"$") else reply.split(b"\r\n", 1)[1][4:]
        text = text if isinstance(text, str) else text.decode()
        lines = text.rstrip("\r\n").split("\n")
        if version == 5:
            return [len(line) for line in lines[:-1]], lines[-1][:40]
        return [len(re.findall("\033\\[0;\\d+;\\d+m \033\\[0m", line)) for line in lines[:-2]], lines[-2:]
    for line, version in (("LOLWUT VERSION 5", 5), ("LOLWUT VERSION 5 20 3 7", 5), ("LOLWUT VERSION 6", 6),
                          ("LOLWUT VERSION 6 7 3", 6), ("LOLWUT VERSION 6 1 1", 6), ("LOLWUT VERSION 6 0 2000", 6)):
        a, b = diff.both(*line.split())
        assert _same_version(a)[:1] == b[:1]
        sa, sb = shape(_same_version(a), version), shape(_same_version(b), version)
        assert sa == sb, line
    # The skyline's buildings really are drawn: not only the white background.
    a, _ = diff.both("LOLWUT", "VERSION", "6", "40", "20")
    assert b"0;30;40m" in a and b"0;90;100m" in a


def test_restore_asking_is_restore(diff):
    diff("SET", "src", "value")
    diff("RPUSH", "list", "a", "b", "c")
    for src, dst in (("src", "dst"), ("list", "list2")):
        # Each server restores its own DUMP (kvrocks writes a list in an older
        # encoding than Redis 7.0; both read either).
        values = [c.call("DUMP", src).split(b"\r\n", 1)[1][:-2] for c in (diff.kv, diff.ref)]
        for args in (("0",), ("0",), ("0", "REPLACE"), ("100000", "REPLACE"), ("0", "REPLACE", "IDLETIME", "5")):
            replies = [c.call("RESTORE-ASKING", dst, args[0], v, *args[1:]) for c, v in zip((diff.kv, diff.ref), values)]
            assert replies[0] == replies[1], args
        diff("RESTORE-ASKING", dst, "0", "garbage", "REPLACE")
        diff("LRANGE" if src == "list" else "GET", dst, *(["0", "-1"] if src == "list" else []))
    diff("RESTORE-ASKING", "x", "0")
    diff("OBJECT", "ENCODING", "list2")


def test_flags_in_scripts(diff):
    for script in ("return redis.pcall('cluster', 'info')", "return redis.pcall('cluster', 'reset')",
                   "return redis.pcall('readonly')", "return redis.pcall('asking')",
                   "return redis.pcall('module', 'help')", "return redis.pcall('module', 'list')",
                   "return redis.pcall('module', 'load', '/x.so')", "return redis.pcall('failover')",
                   "return redis.pcall('lolwut', 'version', '5', '4', '2', '1')",
                   "return redis.pcall('cluster', 'info', 'x')", "return redis.pcall('cluster', 'nosuch')",
                   "return redis.pcall('debug', 'help')", "return redis.call('cluster', 'keyslot', 'a')"):
        a, b = diff.both("EVAL", script, "0")
        assert _same_version(a) == _same_version(b), script


def test_protected_and_refused_commands_in_multi(diff):
    diff.run("""
        # a protected command is refused when queued: the transaction is discarded
        MULTI
        MODULE LOAD /x.so
        SET k v
        EXEC
        # the others queue and fail inside EXEC
        MULTI
        CLUSTER INFO
        MODULE LIST
        FAILOVER
        SET k v
        EXEC
        GET k
    """)


def test_protected_check_comes_before_auth(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    try:
        d("CONFIG", "SET", "requirepass", "pw")
        fresh = Differ(kvrocks_server.port, redis_ref.port, flush=False)
        for line in ("MODULE LOAD /x.so", "MODULE UNLOAD x", "MODULE LIST", "CLUSTER INFO", "LOLWUT", "GET k"):
            fresh(*line.split())
        fresh.close()
    finally:
        d("CONFIG", "SET", "requirepass", "")
        d.close()


def test_debug_refused_as_redis_when_not_enabled():
    kv = Kvrocks(extra=["--enable-debug-command", "no"]).start()
    ref = RealRedis(extra=["--enable-debug-command", "no"])
    try:
        d = Differ(kv.port, ref.port)
        for line in ("DEBUG HELP", "DEBUG SLEEP 0", "DEBUG NOSUCH", "DEBUG", "MULTI", "DEBUG SLEEP 0", "EXEC"):
            d(*line.split())
        d("CONFIG", "SET", "requirepass", "pw")
        fresh = Differ(kv.port, ref.port, flush=False)
        fresh("DEBUG", "SLEEP", "0")
        fresh("PING")
        fresh.close()
        d.close()
    finally:
        kv.cleanup()
        ref.cleanup()


def test_on_a_replica_whose_link_is_down(kvrocks_server, redis_ref):
    """FAILOVER on a replica; with replica-serve-stale-data no, MODULE LIST (no stale
    flag) is refused and CLUSTER INFO and MODULE HELP (stale) run."""
    d = Differ(kvrocks_server.port, redis_ref.port)
    try:
        d("REPLICAOF", "127.0.0.1", "1")
        for line in ("FAILOVER", "FAILOVER ABORT", "FAILOVER TIMEOUT 0", "FAILOVER TO h 1"):
            d(*line.split())
        d("CONFIG", "SET", "replica-serve-stale-data", "no")
        for line in ("MODULE LIST", "MODULE HELP", "CLUSTER INFO", "CLUSTER HELP", "READONLY", "ASKING",
                     "LOLWUT VERSION 5 3 1 1", "FAILOVER"):
            a, b = d.both(*line.split())
            assert _same_version(a) == _same_version(b), line
    finally:
        d("CONFIG", "SET", "replica-serve-stale-data", "yes")
        d("REPLICAOF", "NO", "ONE")
        d.close()


def test_command_info_of_the_new_commands(diff):
    for line in ("COMMAND INFO readonly readwrite asking failover lolwut restore-asking",
                 "COMMAND INFO get set config|get client|list",  # RESP3: no subcommands is an empty set
                 "COMMAND INFO cluster|info cluster|reset module|help module|load",
                 "COMMAND DOCS lolwut failover", "COMMAND GETKEYS RESTORE-ASKING k 0 v", "COMMAND COUNT"):
        a, b = diff.both(*line.split())
        if line == "COMMAND COUNT":
            # kvrocks adds COMPACT, KSLAVEOF, KPSYNC and Redis 7.4's hash field TTL
            # commands, and has no BGREWRITEAOF.
            assert int(a[1:-2]) == int(b[1:-2]) + 12 - 1
        else:
            assert a == b, line
    # A container lists its subcommands in the order of a Redis dict, which
    # changes with each Redis process's hash seed: compare them as a set.
    for line in ("COMMAND INFO cluster module", "COMMAND LIST FILTERBY PATTERN cluster*",
                 "COMMAND LIST FILTERBY PATTERN module*"):
        a, b = diff.both(*line.split())
        assert sorted(a.split(b"\r\n")) == sorted(b.split(b"\r\n")), line


def test_min_replicas_to_write_refuses_writes_as_a_master_without_replicas(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    other = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    try:
        d("SET", "x", "some value")
        # A transaction queued before the limit is set, executed after it.
        other("MULTI")
        other("SET", "x", "from multi")
        d("CONFIG", "SET", "min-replicas-to-write", "1")
        other("EXEC")
        for line in ("CONFIG GET min-replicas-to-write", "CONFIG GET min-slaves-max-lag",
                     "SET x 1", "GET x", "DEL x", "INCR n", "PING", "MULTI", "GET x", "SET x 2", "EXEC",
                     "MULTI", "GET x", "EXEC"):
            d(*line.split())
        scripts = [
            "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",  # read-only: runs
            "return redis.call('get', KEYS[1])",                           # no flags, only reads: runs
            "#!lua\nreturn redis.call('get', KEYS[1])",                    # declared writing: refused upfront
            "return redis.call('set', KEYS[1], 1)",                        # no flags, writes: refused in the call
            "return redis.pcall('set', KEYS[1], 1)",
        ]
        for script in scripts:
            d("EVAL", script, "1", "x")
        d("EVAL_RO", "#!lua\nreturn 1", "0")
        d("FUNCTION", "LOAD", "#!lua name=nrlib\nredis.register_function('w', function() return 1 end)")
        d("FCALL", "w", "0")
        d("CONFIG", "SET", "min-slaves-max-lag", "0")  # no lag limit: the check is off
        d("SET", "x", "3")
        d("CONFIG", "SET", "min-slaves-max-lag", "10")
        d("SET", "x", "4")
        a, b = d.both("INFO", "replication")
        assert b"min_slaves_good_slaves:0" in a and b"min_slaves_good_slaves:0" in b
        # A replica is not refused for it (READONLY is what it answers).
        d("REPLICAOF", "127.0.0.1", "1")
        d("SET", "x", "5")
        d("REPLICAOF", "NO", "ONE")
    finally:
        d("CONFIG", "SET", "min-replicas-to-write", "0")
        d("FUNCTION", "FLUSH")
        d("GET", "x")
        d.close()
        other.close()
    d2 = Differ(kvrocks_server.port, redis_ref.port)
    a, b = d2.both("INFO", "replication")
    assert b"min_slaves_good_slaves" not in a and b"min_slaves_good_slaves" not in b
    d2.close()


def test_exec_on_a_replica_refuses_queued_writes(kvrocks_server, redis_ref):
    """A transaction queued on a master and executed after it became a replica."""
    d = Differ(kvrocks_server.port, redis_ref.port)
    other = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    try:
        other("MULTI")
        other("SET", "x", "1")
        d("REPLICAOF", "127.0.0.1", "1")
        other("EXEC")
        other("MULTI")
        other("GET", "x")
        other("EXEC")
    finally:
        d("REPLICAOF", "NO", "ONE")
        d.close()
        other.close()


def test_replication_options_answer_to_their_old_slave_names(diff):
    """Redis 7.0 keeps the slave-* names as aliases of the replica-* options."""
    for old, new, value in (("slave-read-only", "replica-read-only", "no"),
                            ("slave-serve-stale-data", "replica-serve-stale-data", "no"),
                            ("slave-priority", "replica-priority", "7"),
                            ("slave-announce-ip", "replica-announce-ip", "10.1.2.3"),
                            ("slave-announce-port", "replica-announce-port", "1234"),
                            ("repl-ping-slave-period", "repl-ping-replica-period", "3"),
                            ("min-slaves-to-write", "min-replicas-to-write", "0"),
                            ("min-slaves-max-lag", "min-replicas-max-lag", "4")):
        default = diff("CONFIG", "GET", new)
        diff("CONFIG", "GET", old)
        diff("CONFIG", "SET", old, value)
        diff("CONFIG", "GET", new)
        diff("CONFIG", "GET", old)
        restore = default.split(b"\r\n")[-2].decode()
        diff("CONFIG", "SET", new, restore)
        assert diff("CONFIG", "GET", old) == default.replace(new.encode(), old.encode()).replace(
            f"${len(new)}\r\n".encode(), f"${len(old)}\r\n".encode())
