"""CONFIG SET against Debian's redis-server 7.0: every option both servers have
is set to values of every shape (numbers out of range, memory units, words,
nothing), and the replies and the values CONFIG GET shows afterwards are compared;
several options in one CONFIG SET are set all or none, as Redis 7.0 does."""
import pytest

from conftest import Differ

# Options that change how the servers run (listeners, files, clients, security)
# or that the test itself depends on.
UNSAFE = {"port", "bind", "dir", "requirepass", "unixsocket", "unixsocketperm", "replicaof", "slaveof", "daemonize",
          "logfile", "pidfile", "dbfilename", "masterauth", "masteruser", "enable-debug-command",
          "enable-protected-configs", "enable-module-command", "aclfile", "protected-mode", "maxclients", "timeout",
          "save", "appendonly", "databases", "supervised", "io-threads", "syslog-enabled", "always-show-logo",
          "tcp-backlog", "set-proc-title", "client-output-buffer-limit", "notify-keyspace-events",
          "latency-tracking-info-percentiles", "maxmemory-clients"}

VALUES = ["-1", "0", "1", "7", "abc", "2147483648", "99999999999999999999", "yes", "no", "1k", "1kb", "10mb",
          "1gb", "1G", "-5mb", "1.5", "+5", "", " 5", "5 "]


def config_map(client):
    reply = client.call("CONFIG", "GET", "*")
    lines = reply.split(b"\r\n")
    items = [lines[i] for i in range(2, len(lines) - 1, 2)]
    return dict(zip(items[0::2], items[1::2]))


@pytest.fixture
def d(kvrocks_server, redis_ref):
    diff = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    yield diff
    diff.close()


def test_every_shape_of_value_matches_redis(d):
    before_kv, before_ref = config_map(d.kv), config_map(d.ref)
    common = sorted(set(before_kv) & set(before_ref))
    assert len(common) > 50
    for name in common:
        if name.decode() in UNSAFE:
            continue
        same_default = before_kv[name] == before_ref[name]
        try:
            for value in VALUES + [before_ref[name].decode()]:
                d("CONFIG", "SET", name, value)
                if same_default:  # else the refusal is compared, not the value it leaves
                    d("CONFIG", "GET", name)
        finally:
            d.kv.call("CONFIG", "SET", name, before_kv[name])
            d.ref.call("CONFIG", "SET", name, before_ref[name])


def test_maxmemory_clients_values_match_redis(d):
    try:
        for value in ["0", "10%", "100%", "101%", "-1%", "5mb", "1gb", "-5", "abc", "99999999999999999999", "", "%",
                      "1.5%"]:
            d("CONFIG", "SET", "maxmemory-clients", value)
            d("CONFIG", "GET", "maxmemory-clients")
    finally:
        d("CONFIG", "SET", "maxmemory-clients", "0")


def test_shutdown_on_signal_flags_match_redis(d):
    try:
        for name in ("shutdown-on-sigint", "shutdown-on-sigterm"):
            for value in ["save now", "now save", "force nosave now", "default", "default now", "save nosave",
                          "bogus", "", "now  force", "NOW Force", "save default"]:
                d("CONFIG", "SET", name, value)
                d("CONFIG", "GET", name)
    finally:
        d("CONFIG", "SET", "shutdown-on-sigint", "default", "shutdown-on-sigterm", "default")


def test_latency_percentiles_are_split_at_each_space(d):
    """CONFIG SET splits a multi-argument option at each single space, as Redis
    does: a second space makes an empty word, which is no number."""
    before = d("CONFIG", "GET", "latency-tracking-info-percentiles")
    try:
        for value in ["50 99", "50  99", " 50", "50 ", "", "0 100", "101", "-1", "nan", "abc", "99.99 1e1", "50\t99"]:
            d("CONFIG", "SET", "latency-tracking-info-percentiles", value)
            d("CONFIG", "GET", "latency-tracking-info-percentiles")
    finally:
        d("CONFIG", "SET", "latency-tracking-info-percentiles", before.split(b"\r\n")[-2].decode())


def test_client_output_buffer_limit_values_match_redis(d):
    before = d("CONFIG", "GET", "client-output-buffer-limit")
    try:
        for value in ["normal 0 0 0", "pubsub 1mb 512kb 60", "bogus 0 0 0", "master 0 0 0", "normal 1 2",
                      "normal -1 0 0", "normal x 0 0", "normal 1k 1kb 5", "NORMAL 0 0 0", "replica 1gb 1gb 0",
                      "normal 0 0 -5", "normal 0 0 x", "normal 1.5mb 0 0", "normal  0 0", "slave 5 5 5 bogus 1 1 1",
                      ""]:
            d("CONFIG", "SET", "client-output-buffer-limit", value)
            d("CONFIG", "GET", "client-output-buffer-limit")
    finally:
        value = before.split(b"\r\n")[-2].decode()
        d("CONFIG", "SET", "client-output-buffer-limit", value)


def test_several_options_are_set_all_or_none(d):
    try:
        d("CONFIG", "SET", "hz", "10", "slowlog-max-len", "128")
        d("CONFIG", "SET", "hz", "20", "nosuch", "1", "other", "2")  # the first unknown name
        d("CONFIG", "SET", "hz", "20", "slowlog-max-len", "x")  # a bad value sets neither
        d("CONFIG", "SET", "hz", "20", "hz", "30")  # repeated
        d("CONFIG", "SET", "hz", "20", "HZ", "30")
        d("CONFIG", "SET", "slave-priority", "5", "replica-priority", "6")  # an alias is the same option
        d("CONFIG", "SET", "daemonize", "yes", "nosuch", "1")  # the first refusal is the reply
        d("CONFIG", "SET", "nosuch", "1", "daemonize", "yes")
        d("CONFIG", "GET", "hz")
        d("CONFIG", "GET", "slowlog-max-len")
        d("CONFIG", "SET", "hz", "9999", "slowlog-max-len", "7", "lua-time-limit", "x")  # the alias in the error
        d("CONFIG", "SET", "hz", "9999", "slowlog-max-len", "7")  # hz is kept within 1..500
        d("CONFIG", "GET", "hz")
        d("CONFIG", "GET", "slowlog-max-len")
        d("CONFIG", "SET", "hz", "0")
        d("CONFIG", "GET", "hz")
    finally:
        d("CONFIG", "SET", "hz", "10", "slowlog-max-len", "128", "replica-priority", "100")
