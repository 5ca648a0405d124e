"""Secrets in SLOWLOG and MONITOR, against Debian's redis-server 7.0: AUTH, HELLO
... AUTH, MIGRATE AUTH/AUTH2, ACL SETUSER and sensitive CONFIG SET values show as
"(redacted)" exactly where Redis redacts them."""
import redis

from conftest import RawClient

COMMANDS = [
    ["AUTH", "not-real"],
    ["AUTH", "not-real", "not-a-password"],
    ["AUTH", "a", "b", "c"],
    ["HELLO", "2", "AUTH", "not-real", "not-a-password"],
    ["HELLO", "2", "SETNAME", "n", "AUTH", "u", "p"],
    ["MIGRATE", "127.0.0.1", "1", "key", "9", "5000"],
    ["MIGRATE", "127.0.0.1", "1", "key", "9", "5000", "AUTH", "user"],
    ["MIGRATE", "127.0.0.1", "1", "key", "9", "5000", "AUTH2", "user", "password"],
    ["MIGRATE", "127.0.0.1", "1", "", "9", "5000", "COPY", "AUTH", "pw", "KEYS", "a", "b"],
    ["CONFIG", "SET", "masterauth", "secret"],
    ["CONFIG", "SET", "masterauth", ""],
    ["ACL", "SETUSER", "redaction-test-user", "on", ">pw", "+get"],
    ["ACL", "DELUSER", "redaction-test-user"],
]


def test_slowlog_redacts_as_redis(kvrocks_server, redis_ref):
    got = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
        c.call("SLOWLOG", "RESET")
        for cmd in COMMANDS:
            c.call(*cmd)
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        entries = []
        r = redis.Redis(port=port)
        for e in r.slowlog_get(100):
            entries.append(e["command"])
        r.slowlog_reset()
        r.close()
        c.close()
        got.append(entries)
    assert got[0] == got[1]
    assert b"AUTH (redacted) (redacted)" in got[0] and b"MIGRATE 127.0.0.1 1 key 9 5000 AUTH (redacted)" in got[0]


def test_monitor_redacts_as_redis(kvrocks_server, redis_ref):
    got = []
    for port in (kvrocks_server.port, redis_ref.port):
        mon = RawClient(port)
        assert mon.call("MONITOR") == b"+OK\r\n"
        c = RawClient(port)
        for cmd in COMMANDS:
            c.call(*cmd)
        c.call("PING")
        lines = []
        while True:
            line = mon.read_reply().decode()
            line = line[line.index("]") + 2:-2]  # past the timestamp and client
            if line == '"PING"':
                break
            lines.append(line)
        mon.close()
        c.close()
        got.append(lines)
    assert got[0] == got[1]
    assert '"AUTH" "(redacted)"' in got[0]
