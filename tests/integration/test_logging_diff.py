"""logfile and loglevel as Redis 7.0 has them: at each level set at run time, which
messages reach the log file (redis.log at every level from a script, a client's
protocol error) is compared with what redis-server writes into its own; a log
file that cannot be opened stops the start, as in Redis; a crash (DEBUG SEGFAULT,
DEBUG PANIC) logs its stack only with crash-log-enabled."""
import os
import signal
import socket
import subprocess

import pytest

from conftest import KVROCKS_BIN, Kvrocks, RealRedis, free_port

LEVELS = ["debug", "verbose", "notice", "warning"]


def protocol_error(port):
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(b"*1\r\n$x\r\n")
        while s.recv(4096):  # the server replies with the error and closes
            pass


def what_each_level_logs(client, port, log_path):
    seen = {}
    for level in LEVELS:
        client.config_set("loglevel", level)
        start = os.path.getsize(log_path)
        for lua_level in LEVELS:
            client.eval(f"redis.log(redis.LOG_{lua_level.upper()}, ARGV[1])", 0, f"mark:{level}:{lua_level}")
        protocol_error(port)
        client.ping()  # the protocol error is logged before this is served
        with open(log_path, errors="replace") as f:
            f.seek(start)
            text = f.read()
        seen[level] = ([lua for lua in LEVELS if f"mark:{level}:{lua}" in text], "Protocol error" in text)
    client.config_set("loglevel", "notice")
    return seen


def test_each_level_logs_what_redis_logs(tmp_path):
    kv_log, ref_log = str(tmp_path / "kvrocks.log"), str(tmp_path / "redis.log")
    kv = Kvrocks(extra=["--logfile", kv_log]).start()
    ref = RealRedis(extra=["--logfile", ref_log])
    try:
        assert kv.client().config_get("log*") == {"logfile": kv_log, "loglevel": "notice", "log-level": "notice",
                                                  "log-dir": ""}
        got = what_each_level_logs(kv.client(), kv.port, kv_log)
        assert got == what_each_level_logs(ref.client(), ref.port, ref_log)
        assert got["notice"] == (["notice", "warning"], False)  # as a check of the comparison itself
        with open(kv_log, errors="replace") as f:
            assert "ready to accept connections" in f.read()
    finally:
        kv.cleanup()
        ref.cleanup()


def test_a_log_file_that_cannot_be_opened_stops_the_start(tmp_path):
    path = str(tmp_path / "no-such-dir" / "kvrocks.log")
    out = subprocess.run([KVROCKS_BIN, "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", str(tmp_path),
                          "--logfile", path], capture_output=True, text=True, timeout=20)
    assert out.returncode == 1
    assert "Can't open the log file: No such file or directory" in out.stderr


def crash(server, port, log_path, crash_log, sub):
    """Crashes a server with DEBUG <sub>: its exit (the signal), and whether it
    logged a stack trace first."""
    server.client().config_set("crash-log-enabled", crash_log)
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(f"DEBUG {sub}\r\n".encode())
        while s.recv(4096):  # the connection dies with the server
            pass
    code = server.proc.wait(20)
    with open(log_path, "rb") as f:
        text = f.read()
    # Redis' "------ STACK TRACE ------", glog's "*** SIGSEGV received at ...".
    return code, b"STACK TRACE" in text or b"*** SIG" in text


@pytest.mark.parametrize("sub", ["SEGFAULT", "PANIC"])
@pytest.mark.parametrize("crash_log", ["yes", "no"])
def test_a_crash_logs_its_stack_as_crash_log_enabled_says(tmp_path, sub, crash_log):
    kv_log, ref_log = str(tmp_path / "kvrocks.log"), str(tmp_path / "redis.log")
    kv = Kvrocks(extra=["--logfile", kv_log]).start()
    ref = RealRedis(extra=["--logfile", ref_log])
    try:
        ours = crash(kv, kv.port, kv_log, crash_log, sub)
        assert ours == crash(ref, ref.port, ref_log, crash_log, sub)
        assert ours == (-signal.SIGSEGV if sub == "SEGFAULT" else -signal.SIGABRT, crash_log == "yes")
    finally:
        kv.cleanup()
        ref.cleanup()
