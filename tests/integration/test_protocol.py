"""Wire protocol: pipelining, inline commands, protocol errors and limits."""
import random
import socket
import time

import pytest
import redis

from conftest import Kvrocks, RawClient, RealRedis, encode


def test_pipelining_many_commands(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.call("FLUSHALL")
    n = 2000
    c.send_raw(b"".join(encode(("INCR", "p")) for _ in range(n)))
    for i in range(1, n + 1):
        assert c.read_reply() == b":%d\r\n" % i
    c.close()


def test_inline_commands(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.send_raw(b"SET inline \"a b\"\r\nGET inline\r\n\r\nPING\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"$3\r\na b\r\n"
    assert c.read_reply() == b"+PONG\r\n"
    c.close()



def inline_reply(port, line):
    """Everything the server answers to an inline line followed by PING, until
    the PONG or the connection's close (a protocol error closes it)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(line + b"\r\nPING\r\n")
        s.settimeout(5)
        data = b""
        while not data.endswith(b"+PONG\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


def test_inline_quoting_and_escapes_as_redis(kvrocks_server, redis_ref):
    """Inline arguments split as Redis' sdssplitargs splits them: double quotes
    with \\n \\r \\t \\b \\a and \\xHH escapes (a bad hex digit taken literally),
    single quotes with only \\' escaped, a closing quote that must be followed by
    a space, unbalanced quotes refused."""
    rng = random.Random(11)
    pieces = [b" ", b"  ", b"\t", b'"', b"'", b"\\", b"\\x41", b"\\x4g", b"\\xZZ", b"\\n", b"\\r", b"\\t",
              b"\\b", b"\\a", b"\\'", b'\\"', b"a", b"b c", b"\\\\", b"\\x", b"\\xa", b"\\xFf", b"\x01", b"''", b'""']
    for _ in range(500):
        line = b"ECHO " + b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 7)))
        assert inline_reply(kvrocks_server.port, line) == inline_reply(redis_ref.port, line), line


def test_split_packets(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    data = encode(("SET", "split", "x" * 50000))
    for i in range(0, len(data), 777):
        c.send_raw(data[i:i + 777])
    assert c.read_reply() == b"+OK\r\n"
    assert c.call("STRLEN", "split") == b":50000\r\n"
    c.close()


@pytest.mark.parametrize("payload,error", [
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n+foo\r\n", b"-ERR Protocol error: expected '$', got '+'\r\n"),
    (b"*1\r\n$-3\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"SET a \"unbalanced\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    (b"*3000000000\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    # Redis' formatted errors carry no CR or LF: the byte found shows as a space.
    (b"*1\r\n\r\n", b"-ERR Protocol error: expected '$', got ' '\r\n"),
    (b"*2\r\n$4\r\nECHO\r\n\nx\r\n", b"-ERR Protocol error: expected '$', got ' '\r\n"),
    # Redis finds line ends with strchr, which stops at a NUL: such a line never
    # ends, and the request grows past the inline limit.
    (b"PING\x00\r\nPING\r\n" + b"a" * (70 * 1024), b"-ERR Protocol error: too big inline request\r\n"),
    (b"*1\x00\r\n" + b"a" * (70 * 1024), b"-ERR Protocol error: too big mbulk count string\r\n"),
    (b"*1\r\n$4\x00\r\nPING\r\n" + b"a" * (70 * 1024), b"-ERR Protocol error: too big bulk count string\r\n"),
])
def test_protocol_errors_close_connection(kvrocks_server, redis_ref, payload, error):
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.send_raw(payload)
        assert c.read_reply() == error
        assert c.closed()
        c.close()
    assert kvrocks_server.client().ping()


def test_protocol_errors_are_counted_as_error_replies(kvrocks_server, redis_ref):
    """Redis' addReplyError counts a protocol error in errorstats and total_error_replies."""
    for port in (kvrocks_server.port, redis_ref.port):
        admin = RawClient(port)
        assert admin.call("CONFIG", "RESETSTAT") == b"+OK\r\n"
        c = RawClient(port)
        c.send_raw(b"*1\r\n+x\r\n")
        assert c.read_reply() == b"-ERR Protocol error: expected '$', got '+'\r\n"
        assert c.closed()
        info = admin.call("INFO", "errorstats")
        assert b"errorstat_ERR:count=1\r\n" in info, port
        assert b"total_error_replies:1\r\n" in admin.call("INFO", "stats"), port
        admin.close()


def test_unauthenticated_multibulk_of_more_than_ten(fresh_server):
    """Redis 7.0 refuses a request of more than ten arguments before AUTH."""
    fresh_server.extra = ["--requirepass", "pw"]
    fresh_server.start()
    ref = RealRedis(["--requirepass", "pw"])
    try:
        replies = []
        for port in (fresh_server.port, ref.port):
            c = RawClient(port)
            c.send_raw(b"*11\r\n")
            assert c.read_reply() == b"-ERR Protocol error: unauthenticated multibulk length\r\n", port
            assert c.closed()
            c = RawClient(port)
            replies.append(c.call("AUTH", "a", "b", "c", "d", "e", "f", "g", "h", "i"))  # ten: parsed
            assert c.call("AUTH", "pw") == b"+OK\r\n"
            assert c.call("MSET", *("k%d" % i for i in range(20))) == b"+OK\r\n"  # 21 arguments
            c.close()
        assert replies[0] == replies[1] == b"-ERR syntax error\r\n"
    finally:
        ref.cleanup()


def test_too_big_inline_request(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.send_raw(b"a" * (70 * 1024))
    assert c.read_reply() == b"-ERR Protocol error: too big inline request\r\n"
    assert c.closed()


def test_proto_max_bulk_len(fresh_server):
    srv = fresh_server
    srv.extra = ["--proto-max-bulk-len", "1mb"]
    srv.start()
    c = RawClient(srv.port)
    c.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
    assert c.read_reply() == b"-ERR Protocol error: invalid bulk length\r\n"
    assert c.closed()
    ok = srv.client()
    assert ok.set("k", "x" * (1024 * 1024))
    assert ok.setrange("k", 1024 * 1024 - 1, "y") == 1024 * 1024
    with pytest.raises(redis.ResponseError, match="string exceeds maximum allowed size"):
        ok.setrange("k", 1024 * 1024, "y")
    with pytest.raises(redis.ResponseError, match="string exceeds maximum allowed size"):
        ok.append("k", "z")


def test_client_query_buffer_limit(fresh_server):
    srv = fresh_server
    srv.extra = ["--client-query-buffer-limit", "1mb"]
    srv.start()
    c = RawClient(srv.port)
    # A bulk larger than the query buffer limit: the client is disconnected.
    c.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n")
    try:
        c.send_raw(b"x" * 2_000_000)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert c.closed()
    assert srv.client().ping()


def test_maxclients(fresh_server):
    srv = fresh_server
    srv.extra = ["--maxclients", "3"]
    srv.start()
    clients = [RawClient(srv.port) for _ in range(3)]
    for c in clients:
        assert c.call("PING") == b"+PONG\r\n"
    extra = RawClient(srv.port)
    assert extra.read_reply() == b"-ERR max number of clients reached\r\n"
    assert extra.closed()
    clients[0].close()
    time.sleep(0.2)
    again = RawClient(srv.port)
    assert again.call("PING") == b"+PONG\r\n"


def test_idle_timeout(fresh_server):
    srv = fresh_server
    srv.extra = ["--timeout", "1"]
    srv.start()
    c = RawClient(srv.port)
    assert c.call("PING") == b"+PONG\r\n"
    assert c.closed(timeout=5)


def test_auth(fresh_server):
    srv = fresh_server
    srv.extra = ["--requirepass", "secret"]
    srv.start()
    c = RawClient(srv.port)
    assert c.call("GET", "k") == b"-NOAUTH Authentication required.\r\n"
    assert c.call("AUTH", "wrong") == b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    assert c.call("AUTH", "default", "secret") == b"+OK\r\n"
    assert c.call("GET", "k") == b"$-1\r\n"
    c2 = RawClient(srv.port)
    assert c2.call("HELLO", "2").startswith(b"-NOAUTH HELLO must be called")
    assert c2.call("HELLO", "2", "AUTH", "default", "secret").startswith(b"*14\r\n")
    assert c2.call("PING") == b"+PONG\r\n"
    # redis-py with a password (HELLO 3 AUTH ...)
    assert srv.client(password="secret").ping()
    with pytest.raises(redis.AuthenticationError):
        srv.client(password="nope").ping()


def test_error_texts_match_redis(diff):
    diff.run("""
    NOSUCHCMD a b
    NOSUCHCMD
    GET
    GET a b
    PING a b
    AUTH x
    AUTH a b c
    ECHO
    SELECT abc
    HELLO 4
    HELLO abc
    HELLO 2 FOO
    CLIENT FOO
    CONFIG FOO
    CONFIG GET
    SLOWLOG FOO
    COMMAND FOO
    OBJECT FOO
    QUIT
    """)


def test_resp3_replies_diff(diff):
    diff.both("HELLO", "3", "SETNAME", "x")
    diff.run("""
    GET missing
    MGET a b
    SET k v
    GET k
    SET k2 v GET
    OBJECT ENCODING missing
    CLIENT GETNAME
    MSET key1 ohmytext key2 mynewtext
    LCS key1 key2 IDX
    CONFIG GET maxclients
    """)
    diff.both("HELLO", "2")
    diff.run("""
    GET missing
    """)


def test_redis_py_resp2_and_resp3(kvrocks_server):
    for proto in (2, 3):
        c = kvrocks_server.client(protocol=proto)
        c.set("p", "v")
        assert c.get("p") == b"v"
        assert c.get("nothing") is None
        assert c.mget("p", "nothing") == [b"v", None]
        assert c.config_get("maxclients") == {b"maxclients": b"10000"} or c.config_get("maxclients") == {"maxclients": "10000"}
        assert c.info("server")["redis_version"] == "7.0.0"
        c.close()


def test_client_output_buffer_limit(fresh_server):
    srv = fresh_server
    srv.extra = ["--client-output-buffer-limit", "normal 1mb 0 0"]
    srv.start()
    ok = srv.client()
    ok.set("big", b"x" * 500_000)
    assert ok.config_get("client-output-buffer-limit")
    c = RawClient(srv.port)
    c_id = int(c.call("CLIENT", "ID")[1:-2])
    try:
        c.send_raw(encode(("GET", "big")) * 400)  # 200 MB of replies that are never read
    except (BrokenPipeError, ConnectionResetError):
        pass
    # Not read until the server has dropped it: reading would drain what the limit counts.
    deadline = time.time() + 60
    while b"id=%d " % c_id in ok.execute_command("CLIENT", "LIST") and time.time() < deadline:
        time.sleep(0.05)
    assert c.closed(timeout=20)
    assert ok.ping()
    ok.config_set("client-output-buffer-limit", "normal 0 0 0")
    value = ok.config_get("client-output-buffer-limit")
    assert "normal 0 0 0" in str(value)
