"""Client eviction (maxmemory-clients, Redis 7.0): once the clients' query and
output buffers hold the limit, the biggest clients not in CLIENT NO-EVICT mode
are disconnected. CONFIG handling is compared with redis-server."""
import socket
import time

import pytest

from conftest import RawClient


def _connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    return s


def _closed(sock, timeout=10.0):
    """True once the server closed sock (reading whatever it still sends)."""
    deadline = time.time() + timeout
    sock.settimeout(0.2)
    while time.time() < deadline:
        try:
            if sock.recv(1 << 20) == b"":
                return True
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def _evicted(c):
    return c.info("stats")["evicted_clients"]


@pytest.fixture
def c(kvrocks_server):
    client = kvrocks_server.client()
    client.config_set("maxmemory-clients", "0")
    yield client
    client.config_set("maxmemory-clients", "0")
    client.close()


def test_config_as_redis(differ):
    for value in ("abc", "-1", "101%", "10%", "0%", "1mb", "100", "5 %", "1.5mb", "2gb", "0"):
        differ("CONFIG", "SET", "maxmemory-clients", value)
        differ("CONFIG", "GET", "maxmemory-clients")


def _big_query(port, size):
    """A client whose query buffer holds size bytes of an unfinished bulk string."""
    s = _connect(port)
    s.sendall(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (size * 2) + b"x" * size)
    return s


def test_biggest_client_is_evicted(kvrocks_server, c):
    c.config_set("maxmemory-clients", "1mb")
    before = _evicted(c)
    idle = RawClient(kvrocks_server.port)
    big = _big_query(kvrocks_server.port, 2 << 20)
    assert _closed(big)
    assert _evicted(c) == before + 1
    assert idle.call("PING") == b"+PONG\r\n"  # the others stay
    idle.close()


def test_no_evict_clients_stay(kvrocks_server, c):
    c.config_set("maxmemory-clients", "1mb")
    before = _evicted(c)
    s = _connect(kvrocks_server.port)
    s.sendall(b"CLIENT NO-EVICT on\r\n")
    assert s.recv(100) == b"+OK\r\n"
    s.sendall(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (4 << 20) + b"x" * (2 << 20))
    assert not _closed(s, timeout=1.0)
    assert _evicted(c) == before
    assert "e" in [x for x in c.client_list() if x["flags"].find("e") >= 0][0]["flags"]
    s.close()


def test_big_output_buffer_is_evicted(kvrocks_server, c):
    c.set("big", "v" * (1 << 20))
    c.config_set("maxmemory-clients", "4mb")
    before = _evicted(c)
    s = _connect(kvrocks_server.port)
    s.sendall(b"GET big\r\n" * 64)  # 64 MB of replies it never reads
    deadline = time.time() + 10
    while _evicted(c) == before and time.time() < deadline:
        time.sleep(0.05)
    assert _evicted(c) == before + 1
    assert _closed(s)
    c.delete("big")


def test_lowering_the_limit_evicts_at_once(kvrocks_server, c):
    before = _evicted(c)
    big = _big_query(kvrocks_server.port, 600 << 10)
    time.sleep(0.3)  # read by the server, nothing evicted: no limit
    assert _evicted(c) == before
    c.config_set("maxmemory-clients", "200kb")
    assert _closed(big)  # the cron's pass, without new traffic from it
    assert _evicted(c) == before + 1


def test_percentage_of_no_maxmemory_evicts_nothing(kvrocks_server, c):
    """maxmemory is 0 in kvrocks: a percentage of it turns eviction off, as in Redis."""
    c.config_set("maxmemory-clients", "1%")
    before = _evicted(c)
    big = _big_query(kvrocks_server.port, 2 << 20)
    assert not _closed(big, timeout=1.0)
    assert _evicted(c) == before
    big.close()
    c.config_resetstat()
    assert _evicted(c) == 0
