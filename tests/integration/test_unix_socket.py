"""Unix domain sockets (unixsocket, unixsocketperm), against Debian's
redis-server 7.0 where the two can be compared."""
import os
import stat
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import KVROCKS_BIN, REDIS_BIN, Kvrocks, RawClient, free_port, wait_ready


def wait_socket(path, proc, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if redis.Redis(unix_socket_path=path, socket_timeout=1).ping():
                return
        except (redis.ConnectionError, redis.TimeoutError, FileNotFoundError):
            time.sleep(0.05)
    raise RuntimeError("server did not start")


@pytest.fixture
def servers():
    """kvrocks and redis-server, each on a TCP port and a Unix socket (mode 700)."""
    kdir, rdir = tempfile.mkdtemp(prefix="kvrocks-unix-"), tempfile.mkdtemp(prefix="redis-unix-")
    ksock, rsock = os.path.join(kdir, "k.sock"), os.path.join(rdir, "r.sock")
    kv = Kvrocks(dir=kdir, extra=["--unixsocket", ksock, "--unixsocketperm", "700",
                                  "--enable-protected-configs", "local"]).start()
    rport = free_port()
    ref = subprocess.Popen([REDIS_BIN, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--dir", rdir,
                            "--unixsocket", rsock, "--unixsocketperm", "700", "--enable-protected-configs", "local"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(rport, ref)
    yield (kv, ksock), (rport, rsock)
    ref.terminate()
    ref.wait()
    kv.cleanup()


def test_clients_on_a_unix_socket(servers):
    """The socket file gets unixsocketperm's mode; its clients are served, listed
    with flag U and "<unixsocket>:0" addresses, can be killed by that address, and
    count as local for enable-protected-configs."""
    (kv, ksock), (rport, rsock) = servers
    rows = {}
    for name, sock in (("kvrocks", ksock), ("redis", rsock)):
        assert stat.S_ISSOCK(os.stat(sock).st_mode)
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o700
        c = redis.Redis(unix_socket_path=sock, socket_timeout=10)
        assert c.set("k", "v") and c.get("k") == b"v"
        info = c.client_info()
        rows[name] = (info["addr"].replace(sock, "SOCK"), info["laddr"].replace(sock, "SOCK"), info["flags"])
        assert c.config_get("unixsocket") == {"unixsocket": sock}
        assert c.config_get("unixsocketperm") == {"unixsocketperm": "700"}
        # "local" lets a Unix socket client change protected configs.
        assert c.config_set("dbfilename", "other.rdb")
        other = redis.Redis(unix_socket_path=sock, socket_timeout=10)
        other.ping()
        assert c.client_kill(f"{sock}:0") is True  # one of the two goes (the first listed)
        c.close()
        other.close()
    assert rows["kvrocks"] == rows["redis"] == ("SOCK:0", "SOCK:0", "U")
    # Both options are immutable.
    kraw, rraw = RawClient(kv.port), RawClient(rport)
    for args in (("CONFIG", "SET", "unixsocketperm", "777"), ("CONFIG", "SET", "unixsocket", "/tmp/x.sock")):
        assert kraw.call(*args) == rraw.call(*args)
    # A TCP client from 127.0.0.1 is local too; CLIENT LIST tells the two kinds apart.
    listing = kv.client().client_list()
    assert all(c["flags"] == "N" for c in listing)


def test_socket_file_replaced_at_start_and_removed_at_exit(tmp_path):
    sock = str(tmp_path / "k.sock")
    with open(sock, "w") as f:
        f.write("left over")
    kv = Kvrocks(extra=["--unixsocket", sock]).start()
    try:
        assert stat.S_ISSOCK(os.stat(sock).st_mode)
        assert redis.Redis(unix_socket_path=sock).ping()
        assert kv.stop() == 0
        assert not os.path.exists(sock)
    finally:
        kv.cleanup()


def test_port_zero_listens_on_the_unix_socket_only(tmp_path):
    """port 0: no TCP listener, as in Redis; redis-cli -s reaches the server, and a
    server with neither refuses to start."""
    sock, data = str(tmp_path / "k.sock"), str(tmp_path / "data")
    os.mkdir(data)
    proc = subprocess.Popen([KVROCKS_BIN, "--port", "0", "--dir", data, "--unixsocket", sock],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_socket(sock, proc)
        c = redis.Redis(unix_socket_path=sock)
        assert c.config_get("port") == {"port": "0"}
        out = subprocess.run(["redis-cli", "-s", sock, "INCR", "n"], capture_output=True, text=True).stdout
        assert out.strip() == "1"
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
    nowhere = subprocess.run([KVROCKS_BIN, "--port", "0", "--dir", data], capture_output=True, text=True, timeout=60)
    assert nowhere.returncode != 0
    assert "Configured to not listen anywhere, exiting." in nowhere.stderr


@pytest.mark.parametrize("args, message", [
    (["--unixsocketperm", "800"], "argument couldn't be parsed as an octal number"),
    (["--unixsocketperm", "1000"], "argument must be between 0 and 777 inclusive"),
    (["--unixsocket", "/tmp/" + "x" * 120], "unix socket path too long (125), must be under 108"),
])
def test_bad_socket_options_refuse_to_start(tmp_path, args, message):
    out = subprocess.run([KVROCKS_BIN, "--port", str(free_port()), "--dir", str(tmp_path)] + args,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert message in out.stderr


def test_ipv6_client_addresses_as_redis():
    """An IPv6 client's addr and laddr are "[ip]:port", as Redis writes them."""
    kv = Kvrocks(extra=["--bind", "127.0.0.1 ::1"]).start()
    try:
        c = redis.Redis(host="::1", port=kv.port, socket_timeout=10)
        info = c.client_info()
        assert info["laddr"] == f"[::1]:{kv.port}"
        assert info["addr"].startswith("[::1]:") and int(info["addr"].rsplit(":", 1)[1]) > 0
        assert c.client_kill(info["addr"]) is True
    finally:
        kv.cleanup()


def outside_address():
    """A non-loopback IPv4 address of this machine, or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split()
    except OSError:
        return None
    return next((a for a in out if "." in a and not a.startswith("127.")), None)


def connect_from(address, port):
    """A raw connection to 127.0.0.1:port whose source is address (not loopback)."""
    import socket
    s = socket.socket()
    s.settimeout(10)
    s.bind((address, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_all(s):
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            return data
        data += chunk


def test_protected_mode_as_redis():
    """A client from another address than 127.0.0.1 gets Redis' -DENIED text and is
    disconnected while the default user has no password; with protected-mode no, or
    a password, it is served. (The servers listen on 127.0.0.1; the client binds its
    end to this machine's outside address.)"""
    address = outside_address()
    if address is None:
        pytest.skip("no non-loopback IPv4 address on this machine")
    kv = Kvrocks().start()
    rport = free_port()
    rdir = tempfile.mkdtemp(prefix="redis-protected-")
    ref = subprocess.Popen([REDIS_BIN, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--dir", rdir],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(rport, ref)
        replies = []
        for port in (kv.port, rport):
            # Both write the refusal at once and close (a request sent meanwhile could turn the close into a reset).
            s = connect_from(address, port)
            replies.append(read_all(s))
            s.close()
        assert replies[0] == replies[1]
        assert replies[0].startswith(b"-DENIED Redis is running in protected mode")
        local = kv.client()
        assert local.info("stats")["rejected_connections"] == 1
        for args, expect in ((("protected-mode", "no"), b"+PONG\r\n"),
                             (("protected-mode", "yes"), b"-DENIED"),
                             (("requirepass", "secret"), b"-NOAUTH Authentication required.\r\n")):
            local.config_set(*args)
            s = connect_from(address, kv.port)
            if expect != b"-DENIED":
                s.sendall(b"PING\r\n")
            assert s.recv(4096).startswith(expect), args
            s.close()
    finally:
        ref.terminate()
        ref.wait()
        kv.cleanup()
