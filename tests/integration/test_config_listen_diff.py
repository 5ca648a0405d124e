"""CONFIG SET port and bind move the listening sockets at runtime, as Redis 7.0's
updatePort and applyBind do, and tcp-backlog sizes their queues, compared with
redis-server on servers of the test's own."""
import socket
import subprocess

import pytest
import redis

from conftest import Differ, Kvrocks, RealRedis, free_port


@pytest.fixture
def servers():
    kv = Kvrocks().start()
    ref = RealRedis()
    yield kv, ref
    kv.cleanup()
    ref.cleanup()


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return True
    except OSError:
        return False


def test_port_moves_and_a_taken_port_keeps_the_old_one(servers):
    kv, ref = servers
    d = Differ(kv.port, ref.port, flush=False)
    # Taken by the other server: refused, and the old port still accepts.
    assert d.kv.call("CONFIG", "SET", "port", str(ref.port)) == d.ref.call("CONFIG", "SET", "port", str(kv.port))
    assert d.kv.call("CONFIG", "SET", "port", str(ref.port)).startswith(
        b"-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port.")
    assert accepts(kv.port) and accepts(ref.port)
    d("CONFIG", "SET", "port", "99999")
    d("CONFIG", "SET", "port", "abc")
    # The same port: nothing happens.
    assert d.kv.call("CONFIG", "SET", "port", str(kv.port)) == d.ref.call("CONFIG", "SET", "port", str(ref.port)) == b"+OK\r\n"
    # A free port: the new one accepts, the old one no longer, and the
    # connection that asked stays.
    new_kv, new_ref = free_port(), free_port()
    assert d.kv.call("CONFIG", "SET", "port", str(new_kv)) == d.ref.call("CONFIG", "SET", "port", str(new_ref)) == b"+OK\r\n"
    assert accepts(new_kv) and accepts(new_ref)
    assert not accepts(kv.port) and not accepts(ref.port)
    assert redis.Redis(port=new_kv).set("k", "v") and redis.Redis(port=new_kv).get("k") == b"v"
    assert d.kv.call("CONFIG", "GET", "port") == f"*2\r\n$4\r\nport\r\n${len(str(new_kv))}\r\n{new_kv}\r\n".encode()
    # Port 0 stops listening on TCP; the connection still works.
    d("CONFIG", "SET", "port", "0")
    assert not accepts(new_kv) and not accepts(new_ref)
    d("PING")
    d("CONFIG", "GET", "port")
    kv.port, ref.port = new_kv, new_ref
    assert d.kv.call("CONFIG", "SET", "port", str(new_kv)) == d.ref.call("CONFIG", "SET", "port", str(new_ref)) == b"+OK\r\n"
    assert accepts(new_kv) and accepts(new_ref)
    d.close()


def test_bind_replaces_the_addresses(servers):
    kv, ref = servers
    d = Differ(kv.port, ref.port, flush=False)
    d("CONFIG", "SET", "bind", " ".join(f"127.0.0.{i}" for i in range(1, 18)))  # 17: too many
    d("CONFIG", "SET", "bind", "1.2.3.4")  # not this machine's: refused, the old ones rebound
    d("CONFIG", "GET", "bind")
    assert accepts(kv.port) and accepts(ref.port)
    d("CONFIG", "SET", "bind", "nonsense")
    d("CONFIG", "SET", "bind", " 127.0.0.1")  # an empty address does not bind
    d("CONFIG", "GET", "bind")
    d("CONFIG", "SET", "bind", "127.0.0.1 -1.2.3.4")  # an optional address that is not there is skipped
    d("CONFIG", "GET", "bind")
    assert accepts(kv.port) and accepts(ref.port)
    d("CONFIG", "SET", "bind", "127.0.0.2")
    for host, ok in (("127.0.0.2", True), ("127.0.0.1", False)):
        for port in (kv.port, ref.port):
            try:
                socket.create_connection((host, port), timeout=5).close()
                assert ok, (host, port)
            except OSError:
                assert not ok, (host, port)
    # Several in one CONFIG SET, the last refused: all are restored and rebound.
    d("CONFIG", "SET", "bind", "127.0.0.1", "port", "99999")
    d("CONFIG", "GET", "bind")
    d("CONFIG", "SET", "bind", "127.0.0.1", "maxmemory-clients", "x")
    d("CONFIG", "SET", "bind", "127.0.0.1")
    assert accepts(kv.port) and accepts(ref.port)
    d.close()


def listen_backlog(port):
    """The backlog of the socket listening on port, as ss shows it (Send-Q)."""
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True).stdout
    return [int(line.split()[2]) for line in out.splitlines()]


def test_tcp_backlog_sizes_the_listen_queue():
    kv = Kvrocks(extra=["--tcp-backlog", "37"]).start()
    ref = RealRedis(extra=["--tcp-backlog", "37"])
    try:
        assert listen_backlog(kv.port) == listen_backlog(ref.port) == [37]
        d = Differ(kv.port, ref.port, flush=False)
        d("CONFIG", "GET", "tcp-backlog")
        d("CONFIG", "SET", "tcp-backlog", "100")  # immutable
        d.close()
    finally:
        kv.cleanup()
        ref.cleanup()

