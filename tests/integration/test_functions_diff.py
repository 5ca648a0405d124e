"""Redis 7 functions (FUNCTION, FCALL) against Debian's redis-server 7.0, plus
persistence across restarts and FUNCTION DUMP/RESTORE between the servers."""
import pytest

from conftest import Differ, RawClient, call_in_background, encode, poll_until

LIB = """#!lua name=mylib
local function helper() return 'h' end
redis.register_function('echo_kv', function(keys, args) return {keys[1], args[1], helper()} end)
"""

LIB2 = """#!lua name=lib2
redis.register_function{function_name='get_ro', callback=function(keys, args) return redis.call('get', keys[1]) end,
  flags={'no-writes'}, description='reads a key'}
"""

LIB3 = """#!lua name=lib3
redis.register_function('set_it', function(keys, args) return redis.call('set', keys[1], args[1]) end)
"""

ERRLIB = """#!lua name=errlib
redis.register_function('boom', function(keys, args) return error('boom') end)
"""

LOAD_ERRORS = [
    "return 1",
    "#!lua",
    "#!lua name=x",
    "#!js name=x\nreturn 1",
    "#!lua name=x foo=bar\nreturn 1",
    "#!lua\nreturn 1",
    "#!lua name=x name=y\nreturn 1",
    "#!lua name=bad-name\nreturn 1",
    "#!lua name=x\nreturn 1",
    "#!lua name=x\nredis.register_function('bad-fn', function() end)",
    "#!lua name=x\nredis.call('ping')",
    "#!lua name=x\nsyntax error",
    "#!lua name=x\nerror('boom')",
    "#!lua name=x\nlocal s = string",
    "#!lua name=x\nredis.setresp(3)",
    "#!lua name=x\nredis.register_function('f', function() end, 1)",
    "#!lua name=x\nredis.register_function()",
    "#!lua name=x\nredis.register_function(1)",
    "#!lua name=x\nredis.register_function('f', 1)",
    "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags={'bogus'}}",
    "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags='no-writes'}",
    "#!lua name=x\nredis.register_function{function_name='f'}",
    "#!lua name=x\nredis.register_function{callback=function() end}",
    "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, what=1}",
    "#!lua name=x\nredis.register_function{function_name='f', callback=1}",
    "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, description={}}",
    "#!lua name=x\nredis.register_function('f', function() end) redis.register_function('f', function() end)",
    "#!lua name=x\nredis.register_function('echo_kv', function() end)",
    "#!lua  name=ok_spaces\nredis.register_function('spaced', function() return 'sp' end)",
]


@pytest.fixture
def d(kvrocks_server, redis_ref):
    diff = Differ(kvrocks_server.port, redis_ref.port)
    diff("FUNCTION", "FLUSH")
    yield diff
    diff("FUNCTION", "FLUSH")
    diff.close()


def test_load_call_list(d):
    d("FUNCTION", "LOAD", LIB)
    d("FUNCTION", "LOAD", LIB)
    d("FUNCTION", "LOAD", "REPLACE", LIB)
    d("FUNCTION", "LOAD", "BOGUS", LIB)
    d("FUNCTION", "LOAD")
    d("FUNCTION", "LOAD", "REPLACE")
    d("FCALL", "echo_kv", "1", "k", "a")
    d("FCALL_RO", "echo_kv", "1", "k", "a")
    d("FCALL", "echo_kv")
    d("FCALL", "echo_kv", "-1")
    d("FCALL", "echo_kv", "3", "a")
    d("FCALL", "nosuch", "0")
    d("FUNCTION", "LIST")
    d("FUNCTION", "LIST", "WITHCODE")
    d("FUNCTION", "LIST", "LIBRARYNAME", "my*")
    d("FUNCTION", "LIST", "LIBRARYNAME", "MY*")
    d("FUNCTION", "LIST", "LIBRARYNAME", "zz*")
    d("FUNCTION", "LIST", "LIBRARYNAME")
    d("FUNCTION", "LIST", "bogus")
    d("FUNCTION", "LOAD", LIB2)
    d("SET", "k", "v")
    d("FCALL_RO", "get_ro", "1", "k")
    d("FCALL", "get_ro", "1", "k")
    d("FUNCTION", "LIST", "LIBRARYNAME", "lib2")
    d("FUNCTION", "LOAD", LIB3)
    d("FCALL_RO", "set_it", "1", "k", "x")
    d("FCALL", "set_it", "1", "k", "x")
    d("GET", "k")
    d("FUNCTION", "LOAD", ERRLIB)
    d("FCALL", "boom", "0")
    d("FUNCTION", "DELETE", "nosuch")
    d("FUNCTION", "DELETE", "errlib")
    d("FUNCTION", "DELETE")
    d("FCALL", "boom", "0")
    d("FUNCTION", "FLUSH", "BOGUS")
    d("FUNCTION", "FLUSH", "ASYNC")
    d("FCALL", "echo_kv", "0")
    d("FUNCTION", "LIST")
    d("FUNCTION", "KILL")
    d("FUNCTION", "NOSUCH")


def test_functions_in_resp3(d):
    d.both("HELLO", "3")
    d("FUNCTION", "LOAD", LIB2)
    d("FUNCTION", "LIST")
    d("FUNCTION", "LIST", "WITHCODE")
    d("FUNCTION", "STATS")
    d("FCALL", "get_ro", "1", "missing")


def test_load_errors(d):
    d("FUNCTION", "LOAD", LIB)
    for code in LOAD_ERRORS:
        d("FUNCTION", "LOAD", code)
    d("FCALL", "spaced", "0")


def test_stats_and_functions_see_no_keys_argv(d):
    d("FUNCTION", "LOAD", """#!lua name=probe
redis.register_function('probe', function(keys, args) return {#keys, #args, type(KEYS)} end)
""")
    d("EVAL", "return 1", "1", "x")  # KEYS set by an EVAL must not leak into functions
    d("FCALL", "probe", "1", "a", "b")
    d("FUNCTION", "STATS")


def test_eval_shebang_flags(d):
    d("SET", "fk", "v")
    d("EVAL", "#!lua\nreturn a", "0")
    d("EVAL", "#!lua flags=no-writes\nreturn redis.call('set','x','y')", "0")
    d("EVAL", "#!lua flags=no-writes,allow-stale\nreturn redis.call('get','fk')", "0")
    d("EVAL", "#!lua flags=bogus\nreturn 1", "0")
    d("EVAL", "#!lua name=x\nreturn 1", "0")
    d("EVAL", "#!lua\nreturn redis.call('get', 'fk')", "0")
    d("EVAL_RO", "#!lua\nreturn 1", "0")
    d("EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0")
    d("EVAL", "#!luax\nreturn 1", "0")
    d("EVAL", "#!lua", "0")
    sha = d("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])").split(b"\r\n")[1]
    d("EVALSHA_RO", sha, "1", "fk")


def test_dump_restore(d, kvrocks_server, redis_ref):
    d("FUNCTION", "LOAD", LIB)
    d("FUNCTION", "LOAD", LIB2)
    # A payload from Redis restores into kvrocks and the other way round.
    ref_payload = RawClient(redis_ref.port).call("FUNCTION", "DUMP")
    kv_payload = d.kv.call("FUNCTION", "DUMP")
    payload = ref_payload.split(b"\r\n", 1)[1][:-2]
    kv_bytes = kv_payload.split(b"\r\n", 1)[1][:-2]
    # Which of two conflicting libraries Redis names depends on its hash order.
    kv, ref = d.both("FUNCTION", "RESTORE", payload)
    assert kv.startswith(b"-ERR Library ") and ref.startswith(b"-ERR Library ") and kv.endswith(b" already exists\r\n")
    d("FUNCTION", "RESTORE", payload, "REPLACE")
    d("FUNCTION", "RESTORE", payload, "BOGUS")
    d("FUNCTION", "RESTORE", b"garbage")
    d("FUNCTION", "FLUSH")
    d("FUNCTION", "RESTORE", payload)
    d("FCALL", "echo_kv", "1", "k", "a")
    d("FUNCTION", "FLUSH")
    d("FUNCTION", "RESTORE", kv_bytes)
    d("FCALL_RO", "get_ro", "1", "nokey")
    d("FUNCTION", "LOAD", LIB3)
    d("FUNCTION", "RESTORE", kv_bytes, "FLUSH")
    d("FCALL", "set_it", "1", "k", "v")


def test_functions_survive_restart(fresh_server):
    srv = fresh_server.start()
    c = srv.client()
    assert c.execute_command("FUNCTION", "LOAD", LIB) == b"mylib"
    assert c.execute_command("FUNCTION", "LOAD", LIB3) == b"lib3"
    srv.stop()
    srv.start()
    c = srv.client()
    assert c.execute_command("FCALL", "set_it", "1", "key", "val") in (b"OK", True)
    assert c.get("key") == b"val"
    assert c.execute_command("FCALL", "echo_kv", "1", "k", "a") == [b"k", b"a", b"h"]
    c.execute_command("FUNCTION", "DELETE", "mylib")
    srv.kill9()
    srv.start()
    c = srv.client()
    libs = c.execute_command("FUNCTION", "LIST")
    assert len(libs) == 1


def test_busy_function_and_function_kill(fresh_server):
    fresh_server.extra = ["--busy-reply-threshold", "200"]
    srv = fresh_server.start()
    c = RawClient(srv.port)
    assert c.call("FUNCTION", "LOAD", "#!lua name=spin\n"
                  "redis.register_function('spin', function() while true do end end)") == b"$4\r\nspin\r\n"
    t, result = call_in_background(srv.port, "FCALL", "spin", "0")
    reply = poll_until(c, ("GET", "x"), b"-BUSY")
    assert reply == b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
    stats = c.call("FUNCTION", "STATS")
    assert b"spin" in stats and b"duration_ms" in stats
    # As Redis: SCRIPT KILL does not stop a function, and says which KILL would.
    assert c.call("SCRIPT", "KILL") == reply
    assert c.call("FUNCTION", "KILL") == b"+OK\r\n"
    t.join(10)
    assert result["reply"].startswith(b"-ERR Script killed by user with SCRIPT KILL... script: spin, on")
    c.close()


def test_fcall_and_restore_argument_errors(d):
    d("FUNCTION", "LOAD", "#!lua name=t\nredis.register_function('test', function() return 'hello' end)")
    d("FCALL", "test", "bad_arg")
    d("FCALL", "test", "99999999999999999999")
    d("FCALL", "test", "-1")
    d("FCALL", "test", "10", "key1")
    d("FCALL", "nosuch", "bad_arg")
    d("EVAL", "return 1", "bad_arg")
    d("FUNCTION", "RESTORE", "arg1", "args2", "arg3")
    d("FUNCTION", "RESTORE", "a", "b", "c", "d")


def test_function_names_are_case_insensitive(d):
    d("FUNCTION", "LOAD", "#!lua name=casey\nredis.register_function('Hello', function() return 'hi' end)")
    d("FCALL", "hello", "0")
    d("FCALL", "HELLO", "0")
    d("FCALL_RO", "hElLo", "0")
    d("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('HELLO', function() return 'x' end)")
    d("FUNCTION", "LIST")


def test_acl_check_cmd_and_blocking_reads_in_scripts(d):
    script = """return {redis.acl_check_cmd('get', 'k') and 1 or 0,
                        redis.acl_check_cmd('set', 'k', 'v') and 1 or 0,
                        redis.acl_check_cmd('config', 'get', 'x') and 1 or 0,
                        redis.acl_check_cmd('get', 'other:k') and 1 or 0}"""
    d("EVAL", script, "0")
    d("ACL", "SETUSER", "scripter", "on", "nopass", "+@all", "-set", "-config|get", "~k", "~x")
    d("ACL", "SETUSER", "scripter", "-get|x")
    d("ACL", "SETUSER", "scripter", "-config|nosuch")
    d("AUTH", "scripter", "x")
    d("EVAL", script, "0")
    d("EVAL", "return redis.acl_check_cmd('nosuch')", "0")
    d("EVAL", "return redis.acl_check_cmd('config', 'nosuch')", "0")
    d("EVAL", "return redis.acl_check_cmd()", "0")
    d("EVAL", "return redis.acl_check_cmd({})", "0")
    d("AUTH", "default", "x")
    d("ACL", "DELUSER", "scripter")
    d("EVAL", "return redis.pcall('xread', 'BLOCK', 0, 'STREAMS', 's', '$')", "1", "s")
    d("EVAL", "return redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', 's', '>')", "1", "s")
    d("EVAL", "return redis.pcall('xread', 'STREAMS', 's', '0')", "1", "s")


def test_each_kill_stops_only_its_own_kind_of_script(kvrocks_server, redis_ref):
    loop = "#!lua name=spin\nredis.register_function('spin', function() local a = 1 while true do a = a + 1 end end)"
    got = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.call("CONFIG", "SET", "busy-reply-threshold", "10")
        c.call("FUNCTION", "LOAD", "REPLACE", loop)
        replies = []
        for start, wrong, right in ((("FCALL", "spin", "0"), "SCRIPT", "FUNCTION"),
                                    (("EVAL", "local a = 1 while true do a = a + 1 end", "0"), "FUNCTION", "SCRIPT")):
            runner = RawClient(port)
            runner.send_raw(encode(start))
            replies.append(poll_until(c, ("PING",), b"-BUSY"))
            replies.append(c.call(wrong, "KILL"))
            replies.append(c.call(right, "KILL"))
            replies.append(runner.read_reply()[:40])
            replies.append(poll_until(c, ("PING",), b"+PONG"))
            runner.close()
        c.call("CONFIG", "SET", "busy-reply-threshold", "5000")
        c.call("FUNCTION", "DELETE", "spin")
        c.close()
        got.append(replies)
    assert got[0] == got[1]


def test_busy_allowed_commands_answer_on_the_busy_worker(fresh_server):
    # A client on the worker that runs the busy function is served from inside
    # it; its FUNCTION STATS / KILL must not wait for the function's batch.
    srv = fresh_server.start()
    c = RawClient(srv.port)
    c.call("CONFIG", "SET", "busy-reply-threshold", "10")
    c.call("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function('spin', function() while true do end end)")
    runner = RawClient(srv.port)
    others = [RawClient(srv.port) for _ in range(3)]  # on every worker, the runner's included
    runner.send_raw(encode(("FCALL", "spin", "0")))
    poll_until(c, ("PING",), b"-BUSY")
    for o in others:
        o.sock.settimeout(5)
        assert b"running_script" in o.call("FUNCTION", "STATS")
        assert o.call("SCRIPT", "KILL").startswith(b"-BUSY")
    assert others[0].call("FUNCTION", "KILL") == b"+OK\r\n"
    assert runner.read_reply().startswith(b"-ERR Script killed by user")


def test_load_timeout_names_with_nul_and_flush_arguments(d):
    """A library whose load loops ends after 500 ms with Redis' error (it held
    a worker for good); a function name with a NUL is not a valid name; FUNCTION
    FLUSH with extra arguments (Redis' unit/functions)."""
    d("FUNCTION", "LOAD", "#!lua name=lib\nlocal a = 1\nwhile 1 do a = a + 1 end")
    d("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('test\\0test', function() return 1 end)")
    d("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function{function_name='a\\0', callback=function() end}")
    d("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('', function() return 1 end)")
    d("FUNCTION", "LIST")
    d("FUNCTION", "FLUSH", "sync", "extra_arg")
    d("FUNCTION", "FLUSH", "bad_arg")
    d("PING")  # the worker that ran the load serves again
