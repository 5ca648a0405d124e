"""SCRIPT DEBUG (the Lua debugger of `redis-cli --ldb`) against redis-server 7.0:
whole sessions compared byte for byte, in both modes (YES: the writes are dropped
at the end, SYNC: they stay), and the data each leaves behind."""
import os
import socket
import subprocess
import time

import pytest

from conftest import Kvrocks, RawClient, encode

SCRIPT = """local a = 1
redis.call('set', KEYS[1], ARGV[1])
local t = {1,2,x=3}
redis.debug('hi', a, t)
return redis.call('get', KEYS[1])
"""
LOOP = """local t = {}
for i=1,3 do
  t[i] = redis.call('incr', KEYS[1])
end
return t
"""

# (script, keys, args, debugger commands)
SESSIONS = {
    "step_print_list_break_eval_redis_trace": (SCRIPT, ["k"], ["v"], [
        ["s"], ["p"], ["n"], ["p", "a"], ["l"], ["b", "5"], ["b"], ["e", "a + 1"], ["r", "ping"], ["t"], ["m"],
        ["x"], ["c"]]),
    "continue_to_the_end": (SCRIPT, ["k"], ["v"], [["c"]]),
    "abort": (SCRIPT, ["k"], ["v"], [["s"], ["a"]]),
    "unknown_command": ("return redis.call('nosuch')", [], [], [["s"]]),
    "pcall_wrong_arity": ("return redis.pcall('incr', 'kk', 'x')", [], [], [["s"], ["s"]]),
    "compile_error": ("syntax error here", [], [], [["s"]]),
    "help": ("return 1", ["x"], [], [["h"], ["help"], ["c"]]),
    "breakpoints": (LOOP, ["cnt"], [], [
        ["b", "3"], ["c"], ["p"], ["p", "t"], ["c"], ["b", "-3"], ["b", "0"], ["b", "9"], ["b", "x", "2"], ["w"],
        ["l", "2", "0"], ["list", "0"], ["c"]]),
    "breakpoint_removal": (LOOP, ["cnt"], [], [
        ["b", "2", "3", "4", "5"], ["b", "-2"], ["b"], ["b", "-4"], ["b"], ["b", "3"], ["c"]]),
    "maxlen": ("redis.call('set','s', string.rep('x', 400))\nreturn redis.call('get','s')", [], [], [
        ["s"], ["s"], ["m", "10"], ["r", "get", "s"], ["m", "0"], ["r", "get", "s"], ["m", "100"], ["p"], ["c"]]),
    "redis_breakpoint": ("redis.breakpoint()\nlocal x = 5\nreturn x", [], [], [["c"], ["p"], ["c"]]),
    "function_frames": ("local function f(a)\n  return a * 2\nend\nreturn f(3)", [], [], [
        ["s"], ["s"], ["t"], ["p"], ["s"], ["c"]]),
    "replies_of_every_type": (
        "redis.call('hset', 'h', 'f', 'v')\nredis.call('sadd', 'st', 'a')\n"
        "return {redis.call('hgetall', 'h'), redis.call('smembers', 'st'), redis.call('get', 'nokey')}", [], [],
        [["s"], ["s"], ["s"], ["c"]]),
    "resp3_replies": ("redis.setresp(3)\nredis.call('hset', 'h', 'f', 'v')\n"
                      "redis.call('zadd', 'z', '1.5', 'm')\nredis.call('sadd', 'st', 'a')\n"
                      "return {redis.call('hgetall', 'h'), redis.call('zscore', 'z', 'm'), "
                      "redis.call('smembers', 'st'), redis.call('get', 'nokey'), redis.call('exists', 'h')}",
                      [], [], [["s"], ["s"], ["s"], ["s"], ["s"], ["s"]]),
    "error_reply_of_a_command": ("return redis.call('incr', KEYS[1])", ["str"], [], [["s"], ["s"]]),
    "error_reply_of_the_script": ("return redis.error_reply('MY bad')", [], [], [["s"], ["s"]]),
    "eval_and_redis_mistakes": ("return 1", [], [], [
        ["e", "1 +"], ["e", "x = 1"], ["e", "{1, 'a', {b=true}, nil}"], ["r"], ["r", "set", "a"], ["b"], ["eval"],
        ["c"]]),
    "unknown_debugger_command": ("return 1", [], [], [["nonsense"], ["s"]]),
    "many_arguments": ("return redis.call('del', 'a','b','c','d','e','f','g','h','i','j','k','l')", [], [],
                       [["s"], ["s"]]),
    "nested_tables": ("local t = {{{{{{{{{{{{{1}}}}}}}}}}}}\nlocal s = {1, 2} s[3] = s\nreturn 1", [], [],
                      [["s"], ["s"], ["p"], ["e", "{a={b={c={}}}, [2.5]=false}"], ["c"]]),
    "numkeys_error": ("return 1", ["a", "b"], [], [["s"]]),
    "keys_and_argv": ("local x = KEYS[1]\nreturn ARGV[2]", ["k1", "k2"], ["a1", "a2"], [
        ["p", "KEYS"], ["p", "ARGV"], ["p", "nosuch"], ["s"], ["p"], ["c"]]),
}


REDIS_CLI = "/usr/bin/redis-cli" if os.path.exists("/usr/bin/redis-cli") else "redis-cli"


def eval_args(script, keys, args):
    return ["EVAL", script, str(len(keys))] + keys + args


def read_until_closed(c):
    """The rest of what the server sends before it closes the connection."""
    c.sock.settimeout(10)
    data = c.buf
    c.buf = b""
    while True:
        try:
            chunk = c.sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        data += chunk
    return data


def run_session(port, mode, script, keys, args, cmds, hello3=False):
    """Every reply of a debugging session, and what remains after its end mark
    (the script's reply) up to the closed connection."""
    c = RawClient(port)
    out = []
    if hello3:
        c.call("HELLO", "3")
    out.append(c.call("SCRIPT", "DEBUG", mode))
    out.append(c.call(*eval_args(script, keys, args)))
    # Breakpoints cleared and continue, where the commands leave the script stopped.
    for cmd in cmds + [["b", "0"], ["c"]]:
        if b"<endsession>" in out[-1]:
            break
        out.append(c.call(*cmd))
    out.append(read_until_closed(c))
    c.close()
    return out


def state(port):
    c = RawClient(port)
    res = [c.call("GET", "k"), c.call("GET", "cnt"), c.call("DBSIZE")]
    c.close()
    return res


@pytest.fixture
def both(kvrocks_server, redis_ref):
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.call("FLUSHALL")
        c.call("SET", "k", "old")
        c.call("SET", "str", "abc")
        c.close()
    return kvrocks_server.port, redis_ref.port


@pytest.mark.parametrize("mode", ["SYNC", "YES"])
@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_a_debugging_session_is_redis_one(both, mode, name):
    kv, ref = both
    script, keys, args, cmds = SESSIONS[name]
    a = run_session(kv, mode, script, keys, args, cmds)
    b = run_session(ref, mode, script, keys, args, cmds)
    assert a == b
    # YES drops the script's writes, SYNC keeps them.
    assert state(kv) == state(ref)


def test_a_resp3_client_debugs_as_in_redis(both):
    kv, ref = both
    script, keys, args, cmds = SESSIONS["replies_of_every_type"]
    assert (run_session(kv, "SYNC", script, keys, args, cmds, hello3=True) ==
            run_session(ref, "SYNC", script, keys, args, cmds, hello3=True))


def test_script_debug_errors_and_help(both):
    outs = []
    for port in both:
        c = RawClient(port)
        c.send_raw(encode(["SCRIPT", "DEBUG", "YES"]) + encode(["EVALSHA", "a" * 40, "0"]) + encode(["EVALSHA", "a", "0"]) +
                   encode(["EVALSHA_RO", "a" * 40, "0"]) + encode(["SCRIPT", "DEBUG", "maybe"]) +
                   encode(["SCRIPT", "DEBUG", "NO"]))
        res = [c.read_reply() for _ in range(6)]
        res.append(c.call("SCRIPT", "DEBUG", "maybe"))
        res.append(c.call("SCRIPT", "DEBUG"))
        res.append(c.call("SCRIPT", "DEBUG", "NO", "x"))
        res.append(c.call("MULTI"))
        res.append(c.call("SCRIPT", "DEBUG", "SYNC"))
        res.append(c.call("EXEC"))
        res.append(c.call("SCRIPT", "HELP"))
        res.append(c.call("EVAL", "return redis.call('script', 'debug', 'no')", "0"))
        res.append(c.call("EVAL", "return redis.breakpoint()", "0"))
        res.append(c.call("EVAL", "redis.debug('x') return 1", "0"))
        outs.append(res)
        c.close()
    assert outs[0] == outs[1]


def test_a_session_inside_a_transaction(both):
    outs = []
    for port in both:
        c = RawClient(port)
        res = [c.call("SCRIPT", "DEBUG", "SYNC"), c.call("MULTI"), c.call("SET", "k", "in-multi"),
               c.call(*eval_args("redis.call('incr', 'cnt')\nreturn 2", [], [])), c.call("EXEC")]
        res.append(c.call("c"))
        res.append(read_until_closed(c))
        outs.append(res + state(port))
        c.close()
    assert outs[0] == outs[1]


def test_a_bad_debugger_protocol_ends_the_script(both):
    outs = []
    for port in both:
        c = RawClient(port)
        res = [c.call("SCRIPT", "DEBUG", "SYNC"), c.call(*eval_args("redis.call('incr', 'cnt')\nreturn 2", [], []))]
        c.send_raw(b"step\r\n")  # inline: the debugger takes RESP arrays only
        res.append(read_until_closed(c))
        outs.append(res + state(port))
        c.close()
    assert outs[0] == outs[1]


@pytest.mark.parametrize("mode", ["SYNC", "YES"])
def test_a_client_that_leaves_lets_the_script_finish(both, mode):
    outs = []
    for port in both:
        c = RawClient(port)
        c.call("SCRIPT", "DEBUG", mode)
        assert b"Stopped at 1" in c.call(*eval_args(LOOP, ["cnt"], []))
        c.close()
        # The script runs on, without stopping: SYNC keeps what it wrote.
        probe = RawClient(port)
        deadline = time.time() + 10
        while time.time() < deadline and probe.call("GET", "cnt") != (b"$1\r\n3\r\n" if mode == "SYNC" else b"$-1\r\n"):
            time.sleep(0.05)
        probe.close()
        outs.append(state(port))
    assert outs[0] == outs[1]


def test_a_yes_session_is_invisible_to_other_clients(both):
    """Redis forks a YES session: others go on, and never see its writes."""
    outs = []
    for port in both:
        c = RawClient(port)
        c.call("SCRIPT", "DEBUG", "YES")
        res = [c.call(*eval_args(SCRIPT, ["k"], ["new"])), c.call("s"), c.call("s")]
        other = RawClient(port)
        res += [other.call("GET", "k"), other.call("SET", "k2", "x"), other.call("CLIENT", "LIST", "TYPE", "normal")
                .count(b"\n")]
        res.append(c.call("r", "get", "k2"))  # the session's snapshot is older
        res.append(c.call("c"))
        res.append(read_until_closed(c))
        res += [other.call("GET", "k"), other.call("GET", "k2")]
        other.close()
        c.close()
        outs.append(res)
    assert outs[0] == outs[1]


def test_a_debugger_eval_error_of_redis_call_is_shown():
    """`eval redis.call('nosuch')` crashes redis-server 7.0 (it prints a NULL
    string); kvrocks shows the error."""
    srv = Kvrocks().start()
    try:
        c = RawClient(srv.port)
        c.call("SCRIPT", "DEBUG", "SYNC")
        c.call(*eval_args("return 1", [], []))
        assert c.call("e", "redis.call('nosuch')") == \
            b"*1\r\n+<error> ERR Unknown Redis command called from script\r\n"
        assert c.call("c") == b"*1\r\n+<endsession>\r\n"
        assert read_until_closed(c) == b":1\r\n"
        assert RawClient(srv.port).call("PING") == b"+PONG\r\n"
    finally:
        srv.cleanup()


@pytest.mark.parametrize("mode", ["SYNC", "YES"])
def test_shutdown_ends_a_waiting_session(mode):
    srv = Kvrocks().start()
    try:
        c = RawClient(srv.port)
        c.call("SCRIPT", "DEBUG", mode)
        assert b"Stopped at 1" in c.call(*eval_args(LOOP, ["cnt"], []))
        srv.proc.terminate()
        assert srv.proc.wait(20) == 0
        c.close()
    finally:
        srv.cleanup()


def test_commands_that_act_beyond_a_yes_session_are_refused(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.call("FLUSHALL")
    c.call("SET", "k", "v")
    c.call("SCRIPT", "DEBUG", "YES")
    c.call(*eval_args("return {redis.pcall('flushall'), redis.pcall('swapdb', 0, 1), "
                      "redis.pcall('publish', 'ch', 'm'), redis.call('dbsize')}", [], []))
    assert c.call("c") == b"*1\r\n+<endsession>\r\n"
    refusal = b" can't run in a SCRIPT DEBUG YES session (kvrocks drops the session's writes instead of forking)\r\n"
    assert read_until_closed(c) == (b"*4\r\n-ERR FLUSHALL" + refusal + b"-ERR SWAPDB" + refusal + b"-ERR PUBLISH" +
                                    refusal + b":1\r\n")
    other = RawClient(kvrocks_server.port)
    assert other.call("GET", "k") == b"$1\r\nv\r\n"
    other.close()


@pytest.mark.parametrize("mode", ["--ldb", "--ldb-sync-mode"])
def test_redis_cli_ldb(both, mode, tmp_path):
    script = tmp_path / "s.lua"
    script.write_text(SCRIPT)
    outs = []
    for port in both:
        p = subprocess.run([REDIS_CLI, "-p", str(port), mode, "--eval", str(script), "k", ",", "v"],
                           input=b"s\np\nb 5\nc\nr get k\nc\n", capture_output=True, timeout=60)
        outs.append((p.returncode, p.stdout, state(port)))
    assert outs[0] == outs[1]
    assert b"<debug> line 4" in outs[0][1]


def test_a_script_that_runs_on_past_the_time_limit_stops(both):
    outs = []
    for port in both:
        c = RawClient(port)
        c.call("CONFIG", "SET", "busy-reply-threshold", "200")
        try:
            outs.append(run_session(port, "SYNC", "local i = 0\nwhile true do\n  i = i + 1\nend\n", [], [],
                                    [["c"], ["t"], ["a"]]))
        finally:
            c.call("CONFIG", "SET", "busy-reply-threshold", "5000")
            c.close()
    assert outs[0] == outs[1]
    assert b"timeout reached, infinite loop?" in outs[0][2]


@pytest.mark.parametrize("mode", ["SYNC", "YES"])
def test_eval_ro_is_debugged_and_its_refused_write_logged(both, mode):
    outs = []
    for port in both:
        c = RawClient(port)
        res = [c.call("SCRIPT", "DEBUG", mode),
               c.call("EVAL_RO", "local x = redis.call('get', KEYS[1])\nreturn redis.pcall('set', KEYS[1], 'y')", "1",
                      "k"),
               c.call("s"), c.call("s")]
        res.append(read_until_closed(c))
        c.close()
        outs.append(res + state(port))
    assert outs[0] == outs[1]
    assert b"+<error> Write commands are not allowed from read-only scripts.\r\n" in outs[0][3]
