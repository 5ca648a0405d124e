"""A subcommand runs with Redis' flags for it, not with its container's: whether
scripts may call it (CONFIG HELP yes, CONFIG GET no), whether it is a write (FUNCTION
LOAD is refused on a read-only replica and held by CLIENT PAUSE WRITE, XGROUP HELP
is neither), whether it serves stale data (SCRIPT LOAD) or runs while a script is
busy (test_scripting_diff.py's busy-script test). Compared with redis-server 7.0."""
import time

import pytest

from conftest import Differ, Kvrocks, RawClient, RealRedis, free_port
from random_commands import parse

LIBRARY = "#!lua name=flagslib\nredis.register_function('f', function() return 1 end)"


def all_subcommands(port):
    """[container, subcommand] of every subcommand Redis lists in COMMAND."""
    c = RawClient(port)
    info = parse(c.call("COMMAND"))
    c.close()
    return sorted(sub[0].decode().split("|") for entry in info for sub in entry[9])


def test_which_subcommands_scripts_may_call(kvrocks_server, redis_ref):
    """Every subcommand, called from a script with no further arguments: refused as
    "not allowed from script" by both servers or by neither."""
    kv, ref = RawClient(kvrocks_server.port), RawClient(redis_ref.port)
    script = "return redis.pcall(unpack(ARGV))"
    refused = []
    for name in all_subcommands(redis_ref.port):
        a, b = kv.call("EVAL", script, "0", *name), ref.call("EVAL", script, "0", *name)
        denied = [r.startswith(b"-ERR This Redis command is not allowed from script") for r in (a, b)]
        assert denied[0] == denied[1], f"{name}: kvrocks {a[:80]!r}, redis {b[:80]!r}"
        if denied[1]:
            refused.append("|".join(name))
    assert "acl|list" in refused and "client|list" in refused and "config|help" not in refused
    kv.close()
    ref.close()


@pytest.mark.parametrize("args", [
    ("CONFIG", "HELP"), ("SLOWLOG", "HELP"), ("SLOWLOG", "RESET"), ("SLOWLOG", "LEN"), ("SLOWLOG", "GET"),
    ("ACL", "HELP"), ("LATENCY", "HELP"), ("SCRIPT", "HELP"), ("FUNCTION", "HELP"), ("CLIENT", "HELP"),
    ("CONFIG", "GET", "port"), ("CLIENT", "LIST"), ("SCRIPT", "FLUSH"), ("FUNCTION", "LIST"),
], ids=lambda a: " ".join(a))
def test_subcommands_called_from_scripts(differ, args):
    differ("SLOWLOG", "RESET")
    differ("EVAL", "return redis.pcall(unpack(ARGV))", "0", *args)
    differ("EVAL", "return redis.call(unpack(ARGV))", "0", *args)


@pytest.fixture
def replicas():
    """kvrocks and redis-server, each a replica of a port where no master listens
    (the link stays down, writes are refused); a Differ over them."""
    kv, ref = Kvrocks().start(), RealRedis()
    d = Differ(kv.port, ref.port)
    nobody = str(free_port())
    d("REPLICAOF", "127.0.0.1", nobody)
    yield d
    d.close()
    kv.cleanup()
    ref.cleanup()


def test_writing_subcommands_on_a_read_only_replica(replicas):
    d = replicas
    d("XGROUP", "HELP")
    d("XINFO", "HELP")
    d("FUNCTION", "LOAD", LIBRARY)
    d("FUNCTION", "FLUSH")
    d("FUNCTION", "DELETE", "flagslib")
    d("FUNCTION", "RESTORE", "x")
    d("FUNCTION", "LIST")
    # Refused when queued, as Redis' processCommand refuses a write there.
    d("MULTI")
    d("FUNCTION", "LOAD", LIBRARY)
    d("FUNCTION", "LIST")
    d("EXEC")
    d("MULTI")
    d("XGROUP", "HELP")
    d("EXEC")


def test_subcommands_serving_stale_data(replicas):
    d = replicas
    d("CONFIG", "SET", "replica-serve-stale-data", "no")
    for args in (("SCRIPT", "LOAD", "return 1"), ("SCRIPT", "HELP"), ("SCRIPT", "EXISTS", "x"),
                 ("FUNCTION", "HELP"), ("FUNCTION", "LIST"), ("XINFO", "HELP"), ("XGROUP", "HELP"),
                 ("OBJECT", "HELP"), ("OBJECT", "ENCODING", "k"), ("MEMORY", "HELP"), ("MEMORY", "USAGE", "k"),
                 ("CONFIG", "HELP"), ("CLIENT", "GETNAME"), ("COMMAND", "INFO", "get"), ("PUBSUB", "CHANNELS")):
        d(*args)


@pytest.mark.parametrize("server", ["kvrocks", "redis"])
def test_client_pause_write_holds_writing_subcommands_only(server):
    """XGROUP is a write; XGROUP HELP is not, so CLIENT PAUSE WRITE does not hold it
    (its reply comes while the pause lasts), while FUNCTION FLUSH waits for the end."""
    srv = Kvrocks().start() if server == "kvrocks" else RealRedis()
    try:
        admin, client = RawClient(srv.port), RawClient(srv.port)
        assert admin.call("FUNCTION", "LOAD", LIBRARY) == b"$8\r\nflagslib\r\n"
        assert admin.call("CLIENT", "PAUSE", "60000", "WRITE") == b"+OK\r\n"
        assert client.call("XGROUP", "HELP").startswith(b"*")
        client.send_raw(b"*2\r\n$8\r\nFUNCTION\r\n$5\r\nFLUSH\r\n")
        for _ in range(500):  # held: a paused client counts as blocked, as in Redis
            if b"blocked_clients:1\r\n" in admin.call("INFO", "clients"):
                break
            time.sleep(0.02)
        assert b"blocked_clients:1\r\n" in admin.call("INFO", "clients")
        assert b"flagslib" in admin.call("FUNCTION", "LIST")
        assert admin.call("CLIENT", "UNPAUSE") == b"+OK\r\n"
        assert client.read_reply() == b"+OK\r\n"
        assert admin.call("FUNCTION", "LIST") == b"*0\r\n"
        admin.close()
        client.close()
    finally:
        srv.cleanup()

