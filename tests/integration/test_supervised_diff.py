"""supervised as Redis 7.0 has it, compared with redis-server (Debian's, built with
systemd support): the sd_notify messages a systemd unit of Type=notify receives
from start to SHUTDOWN, auto-detection, upstart's SIGSTOP, and no daemonizing
while supervised."""
import os
import socket
import subprocess
import time

import pytest
import redis

from conftest import KVROCKS_BIN, REDIS_BIN, RealRedis, free_port, wait_ready


def kvrocks_cmd(port, tmp_path, *options):
    return [KVROCKS_BIN, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path / "kv")] + list(options)


def redis_cmd(port, tmp_path, *options):
    return [REDIS_BIN, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", ""] + list(options)


def shut_down(port):
    with socket.create_connection(("127.0.0.1", port), timeout=20) as c:
        c.sendall(b"SHUTDOWN NOSAVE\r\n")
        while c.recv(4096):  # no reply: the connection closes as the server exits
            pass


def notifications(make_cmd, tmp_path, mode, options=(), until=b"READY=1\n"):
    """What a systemd notify socket receives from a server started with
    `supervised mode`, until it has exited after SHUTDOWN; and whether the server
    was the process started (it did not daemonize)."""
    path = str(tmp_path / f"notify-{mode}-{make_cmd.__name__}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(20)
    port = free_port()
    proc = subprocess.Popen(make_cmd(port, tmp_path, "--supervised", mode, *options),
                            env=dict(os.environ, NOTIFY_SOCKET=path),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    messages = []
    try:
        while not any(m.startswith(until) for m in messages):
            messages.append(sock.recv(4096))
        wait_ready(port, proc)
        foreground = redis.Redis(port=port).info("server")["process_id"] == proc.pid
        shut_down(port)
        assert proc.wait(20) == 0
        sock.setblocking(False)
        while True:
            try:
                messages.append(sock.recv(4096))
            except BlockingIOError:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        sock.close()
    # The one message naming the server.
    return [m.replace(b"Redis is loading", b"kvrocks is loading") for m in messages], foreground


@pytest.mark.parametrize("mode", ["systemd", "auto"])
def test_systemd_hears_what_redis_tells_it(tmp_path, mode):
    ours = notifications(kvrocks_cmd, tmp_path, mode)
    assert ours == notifications(redis_cmd, tmp_path, mode)
    assert ours == ([b"STATUS=kvrocks is loading...\n", b"STATUS=Ready to accept connections\n", b"READY=1\n",
                     b"STOPPING=1\n"], True)


def test_a_supervised_server_does_not_daemonize(tmp_path):
    got = notifications(kvrocks_cmd, tmp_path, "systemd", ["--daemonize", "yes"])
    assert got == notifications(redis_cmd, tmp_path, "systemd", ["--daemonize", "yes"])
    assert got[1]


def test_no_supervision_without_the_option(tmp_path):
    path = str(tmp_path / "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    port = free_port()
    proc = subprocess.Popen(kvrocks_cmd(port, tmp_path), env=dict(os.environ, NOTIFY_SOCKET=path),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc)
        shut_down(port)  # through every moment a supervised server would have said something
        assert proc.wait(20) == 0
        sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            sock.recv(4096)
    finally:
        proc.kill()
        proc.wait()
        sock.close()


def stopped(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


@pytest.mark.parametrize("make_cmd", [kvrocks_cmd, redis_cmd])
def test_upstart_sees_the_server_stop_itself(tmp_path, make_cmd):
    port = free_port()
    proc = subprocess.Popen(make_cmd(port, tmp_path, "--supervised", "auto"), env=dict(os.environ, UPSTART_JOB="x"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while not stopped(proc.pid):
            assert time.time() < deadline and proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(subprocess.signal.SIGCONT)  # what upstart does once it saw the stop
        wait_ready(port, proc)
        assert redis.Redis(port=port).ping()
    finally:
        proc.kill()
        proc.wait()


def test_a_replica_tells_systemd_about_its_sync(tmp_path):
    master = RealRedis(extra=["--repl-diskless-sync-delay", "0"])
    try:
        master.client().set("k", "v")
        sync = b"STATUS=MASTER <-> REPLICA sync: Finished"
        ours = notifications(kvrocks_cmd, tmp_path, "systemd", ["--replicaof", f"127.0.0.1 {master.port}"], sync)
        theirs = notifications(redis_cmd, tmp_path, "systemd", ["--replicaof", "127.0.0.1", str(master.port)], sync)
        assert ours == theirs
        assert ours[0][1:4] == [
            b"STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA sync\n",
            b"READY=1\n",
            b"STATUS=MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write mode.\n"]
    finally:
        master.cleanup()
