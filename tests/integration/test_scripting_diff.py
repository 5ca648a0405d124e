"""Lua scripting against Debian's redis-server 7.0: replies compared byte for
byte (conversions, errors, libraries), plus what only kvrocks needs proving:
atomicity across workers, re-running under the exclusive lock, SCRIPT KILL
and -BUSY."""
import threading
import time

import pytest
import redis

from conftest import Differ, RawClient, call_in_background, encode, poll_until

# Scripts whose EVAL replies must be identical on both servers.
SCRIPTS = r"""
return 1
return 'str'
return 3.99
return -3.99
return true
return false
return nil
return {1, 2, 3, 'x', nil, 5}
return {1, {2, {3, 'deep'}}, {}}
return {ok='fine'}
return {ok='a\r\nb'}
return {err='ERR x'}
return {err='CUSTOM code'}
return {err='x\r\ny'}
return redis.status_reply('x')
return redis.error_reply('E1 x')
return redis.error_reply('no prefix')
return redis.error_reply('-DASH x')
return redis.error_reply(1, 2)
return redis.status_reply()
return {double=3.5}
return {big_number='123456789012345678901234567890'}
return {map={a=1}}
return {set={a=true}}
return {verbatim_string={format='txt', string='hello'}}
return a
a = 1
string.x = 1
redis.call = 1
error('boom')
error({err='MY custom'})
error()
error(nil)
syntax error here
return redis.call('nosuch')
return redis.call('get')
return redis.call()
return redis.pcall()
return redis.call('get', {})
return redis.call('subscribe', 'x')
return redis.call('multi')
return redis.call('eval', 'return 1', 0)
return redis.call('incr', 's')
return redis.pcall('incr', 's')
return redis.call('hget', 's', 'x')
return redis.pcall('hget', 's', 'x')
return type(redis.pcall('hget', 's', 'x'))
return redis.pcall('hget', 's', 'x')['err']
return redis.call('set', 'k', 3.14)
return redis.call('get', 'k')
return redis.call('set', 'i', 10)
return redis.call('incrby', 'i', 5)
return {redis.call('hset', 'h', 'a', 1, 'b', 2), redis.call('hget', 'h', 'a'), redis.call('hget', 'h', 'zz')}
return redis.call('ping')
return redis.call('ping')['ok']
return redis.call('get', 'missing')
return type(redis.call('get', 'missing'))
return {redis.call('rpush', 'l', 'a', 'b', 'c'), redis.call('lrange', 'l', 0, -1)}
return redis.call('blpop', 'nolist', 0)
return redis.call('xadd', 'st', '1-1', 'f', 'v')
return redis.call('zadd', 'z', 1.5, 'm')
return redis.call('zscore', 'z', 'm')
return redis.call('zrange', 'z', 0, -1, 'withscores')
return redis.call('select', 5)
return redis.call('dbsize')
return redis.call('type', 'h')
return redis.call('type', 'h')['ok']
return redis.call('exists', 'l', 'h', 'nope')
return redis.sha1hex('')
return redis.sha1hex('abc')
return redis.sha1hex()
return redis.setresp(4)
return redis.setresp()
return redis.set_repl(redis.REPL_ALL)
return redis.set_repl(99)
return redis.replicate_commands()
return redis.breakpoint()
return redis.LOG_WARNING
return redis.log(redis.LOG_WARNING, 'from a script', 1)
return redis.log()
return redis.log('x', 'y')
return redis.log(42, 'y')
return cjson.encode({a=1})
return cjson.encode({1, 2, 'x'})
return cjson.decode('[1,2,{"a":3}]')[3].a
return cjson.decode('{"k":"v"}').k
return cjson.decode('not json')
return bit.band(7, 3)
return bit.bor(1, 2, 4)
return bit.bxor(5, 3)
return bit.lshift(1, 10)
return bit.tohex(255)
return bit.bnot(0)
return struct.pack('>I2', 1)
return struct.pack('<i4', -2)
return struct.pack('>i8', -2)
return struct.pack('>I16', 3)
return {struct.unpack('>i4 c3 s', struct.pack('>i4 c3 s', -5, 'abc', 'zz'))}
return {struct.unpack('<h H b B', struct.pack('<h H b B', -300, 65000, -1, 255))}
return {struct.unpack('>d f', struct.pack('>d f', 1.5, 2.25))}
return {struct.unpack('b c0', struct.pack('b c0', 3, 'xyz'))}
return {struct.unpack('!4 b i', struct.pack('!4 b i', 1, 2))}
return struct.pack('!4 b i', 1, 2)
return struct.size('>i4 h b')
return struct.size('!8 b d')
return struct.unpack('>i4', 'ab')
return struct.pack('z', 1)
return struct.size('s')
return struct.pack('i0', 1)
return {struct.unpack('i0 b', '\5')}
return struct.pack('=b', 1)
return struct.pack('b c3', 1, 'ab')
return {struct.unpack('b', 'a', -5)}
return {struct.unpack('', 'a', -1)}
return {struct.unpack('', 'abc', 5)}
return struct.pack('i32', -1)
return struct.pack('>I9', 2^40)
return {struct.unpack('I16', string.rep('\255', 16))}
return {struct.unpack('i9', '\1\0\0\0\0\0\0\0\1')}
return {struct.unpack('c0', '2')}
return struct.pack('c99999999999', 'a')
return struct.size('q i')
return cmsgpack.pack({1, 2})
return cmsgpack.pack({a=1})
return cmsgpack.pack('str', -5, 300, -300, 70000, -70000, 5000000000, -5000000000, true, false)
return cmsgpack.pack(3.5, 0.1, 1e300)
return cmsgpack.pack(string.rep('x', 40), string.rep('y', 300), string.rep('z', 70000))
return cmsgpack.pack({{{{{{{{{{{{{{{{{{{1}}}}}}}}}}}}}}}}}})
return cmsgpack.pack()
return {cmsgpack.unpack(cmsgpack.pack({10, 20, {30}}, 'str', -5, 3.5, true, 127, -33))}
return cmsgpack.unpack(cmsgpack.pack({a=1, b={1, 2, 3}})).b[3]
return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}
return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)}
return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}
return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}
return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 2)}
return cmsgpack.unpack('\196')
return cmsgpack.unpack('\193')
return cmsgpack.unpack_one('\1', 5)
return cmsgpack.pack(127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, -32, -33, -128, -129, -32768, -32769)
return cmsgpack.pack(-2147483648, -2147483649, 2^53, -2^63, 1/0, -1/0, 2.5, -0.5, 3.4e38, nil, '')
return cmsgpack.pack(string.rep('a', 31), string.rep('b', 32), string.rep('c', 255), string.rep('d', 65536))
return cmsgpack.pack((function() local t = {} for i = 1, 16 do t[i] = i end return t end)())
return cmsgpack.pack((function() local t = {} for i = 1, 65536 do t[i] = i end return t end)())
return cmsgpack.pack((function() local t = {} for i = 1, 16 do t['k' .. i] = i end return t end)())
return cmsgpack.pack({1, nil, 3}, {[0] = 1}, {[1] = 1, [3] = 3}, {})
return {cmsgpack.unpack('\204\128\205\1\0\206\0\1\0\0\208\128\209\128\0\210\128\0\0\0')}
return {cmsgpack.unpack('\202\63\192\0\0\203\63\248\0\0\0\0\0\0\192\194\195')}
return {cmsgpack.unpack('\217\3abc\218\0\3abc\219\0\0\0\3abc\220\0\2\1\2\222\0\1\161a\1')}
return {cmsgpack.unpack('\129\192\1')}
return {cmsgpack.unpack('\146\1')}
return {cmsgpack.unpack('\212\1\2')}
return type(loadstring)
return type(getmetatable)
return type(coroutine)
return type(unpack)
return _VERSION
return type(table.getn)
return type(math.mod)
return type(string.gfind)
return type(debug)
return type(setfenv)
return type(dofile)
return type(loadfile)
return type(require)
return type(print)
return type(os)
return type(io)
return type(package)
return type(newproxy)
return type(getmetatable(_G))
return (function() local t = {} t.x = 5 return t.x end)()
return string.format('%5.2f', 3.14159)
return table.concat({'a', 'b'}, '-')
math.randomseed(7) return {math.random(100), math.random(1, 6), math.floor(math.random() * 1000)}
return math.random(0)
return math.random(1, 2, 3)
return #KEYS + #ARGV
return pcall(error, 'caught')
return {pcall(function() error({err='T'}) end)}
local ok, e = pcall(redis.call, 'nosuch') return e['err']
return tostring(loadstring('return 1 +')())
"""

# Scripts with keys and arguments: (script, numkeys, args...)
KEYED = [
    ("return {KEYS[1], KEYS[2], ARGV[1], ARGV[2]}", 2, "k1", "k2", "a1", "a2"),
    ("return #KEYS", 3, "a", "b", "c"),
    ("return ARGV", 0, "x", "y", ""),
    ("return redis.call('set', KEYS[1], ARGV[1])", 1, "key", "val"),
    ("return redis.call('get', KEYS[1])", 1, "key"),
    ("return 1", -1),
    ("return 1", 2, "a"),
    ("return 1", "x"),
    ("return 1", "1.5", "a"),
]


@pytest.fixture
def d(kvrocks_server, redis_ref):
    diff = Differ(kvrocks_server.port, redis_ref.port)
    diff("SET", "s", "abc")
    yield diff
    diff.close()


def test_eval_replies_match_redis(d):
    for script in SCRIPTS.strip().splitlines():
        d("EVAL", script, "0")


# Redis' read-only tables, through every path around them (kvrocks emulates
# them with proxies over Debian's unpatched Lua).
READONLY_SCRIPTS = r"""
setmetatable(_G, {})
local g = getmetatable(_G); g.__index = {}
return type(getmetatable(_G))
return type(getmetatable(_G).__index)
return type(getmetatable(getmetatable(_G)))
return getmetatable(_G) == getmetatable(_G)
setmetatable(redis, {})
setmetatable(cjson, {})
setmetatable(string, {})
return type(getmetatable(redis))
getmetatable(redis).__index = {}
rawset(_G, 'x', 1)
rawset(redis, 'call', 1)
rawset(string, 'upper', 1)
return tostring(rawget(_G, 'redis') ~= nil)
return rawget(_G, 'nosuch')
return rawget(redis, 'call') ~= nil
return type(getmetatable('abc'))
getmetatable('abc').__index = {}
getmetatable('abc').__index.upper = 1
getmetatable('abc').__metatable = 1
return ('ab'):upper()
local t = {}; setmetatable(t, {__index = function() return 7 end}); return t.x
local t = setmetatable({}, {__metatable = 'no'}); return getmetatable(t)
local t = {}; rawset(t, 'a', 1); return rawget(t, 'a')
redis = 1
string.upper = 1
"""


def test_read_only_tables_match_redis(d):
    for script in READONLY_SCRIPTS.strip().splitlines():
        d("EVAL", script, "0")


def test_a_script_cannot_change_what_later_scripts_run(d):
    """Each attempt is refused, and later scripts on the same connection (the
    same worker's Lua state) still see the real functions."""
    for script in ("rawset(redis, 'call', function() return 'hijacked' end)",
                   "getmetatable('').__index.upper = function() return 'pwned' end",
                   "rawset(getmetatable('').__index, 'upper', function() return 'pwned' end)",
                   "setmetatable(_G, {__index = function() return 'pwned' end})"):
        d("EVAL", script, "0")
        assert d("EVAL", "return redis.call('ping')", "0") == b"+PONG\r\n"
        assert d("EVAL", "return {string.upper('a'), ('b'):upper()}", "0") == b"*2\r\n$1\r\nA\r\n$1\r\nB\r\n"
    d("EVAL", "return nosuch", "0")


def test_self_referencing_table_stops_at_the_stack_limit(kvrocks_server, redis_ref):
    """Nested replies down to Lua's stack limit, then an error, as in Redis (no crash)."""
    for script in ("local t = {} t[1] = t return t", "local t = {} t.map = t return t"):
        got = []
        for port in (kvrocks_server.port, redis_ref.port):
            c = RawClient(port)
            c.send_raw(b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(script), script.encode()))
            buf = b""
            while not buf.endswith(b"-ERR reached lua stack limit\r\n") and not buf.endswith(b"\r\n\r\n"):
                chunk = c.sock.recv(1 << 20)
                assert chunk, "the server closed the connection"
                buf += chunk
            assert c.call("PING") == b"+PONG\r\n"
            c.close()
            got.append(buf.count(b"\r\n"))
        assert got[0] > 1000 and abs(got[0] - got[1]) < got[1] // 2, got


def test_eval_replies_match_redis_resp3(d):
    d.both("HELLO", "3")
    for script in SCRIPTS.strip().splitlines():
        d("EVAL", script, "0")
    d("EVAL", "redis.setresp(3) return redis.call('hgetall', 'h')", "0")
    d("EVAL", "redis.setresp(3) return redis.call('get', 'missing')", "0")
    d("EVAL", "redis.setresp(3) return type(redis.call('get', 'missing'))", "0")
    d("EVAL", "redis.setresp(3) return redis.call('zscore', 'z', 'm')", "0")
    d("EVAL", "redis.setresp(3) return redis.call('zscore', 'z', 'm')['double']", "0")
    d("EVAL", "redis.setresp(3) return redis.call('smembers', 'nosuch')", "0")
    d("EVAL", "redis.setresp(3) return redis.call('exists', 'nosuch')", "0")


def test_resp3_values_in_resp2_script(d):
    d("HSET", "h", "a", "1")
    d("ZADD", "z", "2.5", "m")
    d("EVAL", "redis.setresp(3) return redis.call('hgetall', 'h')", "0")
    d("EVAL", "redis.setresp(3) local t = redis.call('hgetall', 'h') return t['map']['a']", "0")
    d("EVAL", "redis.setresp(3) return redis.call('zscore', 'z', 'm')", "0")
    d("EVAL", "redis.setresp(3) return tostring(redis.call('get', 'missing'))", "0")


def test_keys_argv_and_numkeys(d):
    for script, *rest in KEYED:
        d("EVAL", script, *rest)


def test_evalsha_and_script_commands(d):
    sha = d("SCRIPT", "LOAD", "return 'loaded'")
    sha = sha.split(b"\r\n")[1].decode()
    d("EVALSHA", sha, "0")
    d("EVALSHA", sha.upper(), "0")
    d("EVALSHA_RO", sha, "0")
    d("SCRIPT", "EXISTS", sha, sha.upper(), "0" * 40)
    d("EVALSHA", "0" * 40, "0")
    d("EVALSHA", "abc", "0")
    # a digest of the wrong length is refused before the number of keys is read
    d("EVALSHA", "abc", "x")
    d("EVALSHA_RO", "abc", "-1")
    d("EVALSHA", "abc", "2", "k")
    d("EVALSHA", "0" * 40, "x")
    d("EVALSHA", sha, "2", "k")
    d("EVAL", "return 'via eval'", "0")
    d("EVALSHA", "1f7b3aa6cc1f9b8d5d1f0b9bdea65f5a6d1e5a0b", "0")
    d("SCRIPT", "EXISTS", "cb2fd6b4bed3863bb1f2e7e6386f6e1a8f8ec94b")
    d("SCRIPT", "LOAD", "syntax error here")
    d("SCRIPT", "LOAD", "#!lua flags=bogus\nreturn 1")
    d("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 1")
    d("SCRIPT", "LOAD")
    d("SCRIPT", "LOAD", "a", "b")
    d("SCRIPT", "EXISTS")
    d("SCRIPT", "FLUSH", "BOGUS")
    d("SCRIPT", "FLUSH", "ASYNC")
    d("SCRIPT", "EXISTS", sha)
    d("EVALSHA", sha, "0")
    d("SCRIPT", "LOAD", "return 2")
    d("SCRIPT", "FLUSH")
    d("SCRIPT", "FLUSH", "SYNC")
    d("SCRIPT", "KILL")
    d("SCRIPT", "KILL", "x")
    d("SCRIPT", "NOSUCH")
    d("SCRIPT", "HELP")  # SCRIPT DEBUG's sessions: test_script_debug_diff.py


def test_eval_ro(d):
    d("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "s")
    d("EVAL_RO", "return redis.call('set', KEYS[1], 'x')", "1", "s")
    d("EVAL_RO", "return redis.pcall('del', KEYS[1])", "1", "s")
    d("GET", "s")


def test_script_effects_inside_multi(d):
    d("MULTI")
    d("EVAL", "return redis.call('incr', KEYS[1])", "1", "counter")
    d("EVAL", "return redis.call('incrby', KEYS[1], ARGV[1])", "1", "counter", "10")
    d("EVAL", "return redis.call('nosuch')", "0")
    d("GET", "counter")
    d("EXEC")
    d("MULTI")
    d("EVAL", "return 1", "-1")
    d("EXEC")
    d("MULTI")
    d("EVAL")
    d("EXEC")


def test_script_writes_and_errors_keep_earlier_writes(d):
    # A script is not rolled back by an error: what it wrote stays, as in Redis.
    d("EVAL", "redis.call('set', KEYS[1], 'before') return redis.call('incr', KEYS[2])", "2", "a", "s")
    d("GET", "a")
    d("EVAL", "redis.call('del', KEYS[1]) error('after del')", "1", "a")
    d("EXISTS", "a")


def test_select_inside_script_does_not_leak(d):
    d("EVAL", "redis.call('select', 3) redis.call('set', 'in3', 'x') return redis.call('dbsize')", "0")
    d("EXISTS", "in3")
    d("SELECT", "3")
    d("GET", "in3")
    d("SELECT", "0")


def test_redis_py_register_script(kvrocks_server):
    r = kvrocks_server.client()
    r.script_flush()
    incr_by = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
    assert incr_by(keys=["n"], args=[5]) == 5  # EVALSHA, NOSCRIPT, then EVAL
    assert incr_by(keys=["n"], args=[2]) == 7
    assert r.script_exists(incr_by.sha) == [True]


def test_atomic_counters_across_workers(fresh_server):
    """Read-modify-write in Lua from many clients on both workers loses nothing."""
    srv = fresh_server.start()
    script = "local v = tonumber(redis.call('get', KEYS[1]) or '0') redis.call('set', KEYS[1], v + 1) return v + 1"
    clients, per_client = 8, 300

    def run():
        c = srv.client()
        s = c.register_script(script)
        for _ in range(per_client):
            s(keys=["ctr"])
        c.close()

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert int(srv.client().get("ctr")) == clients * per_client


def test_undeclared_keys_stay_atomic(fresh_server):
    """Scripts that touch keys they did not declare (here: all of them) are
    still atomic, also while plain clients write the same keys."""
    srv = fresh_server.start()
    script = ("local a = tonumber(redis.call('get', 'acct:a') or '0') "
              "local b = tonumber(redis.call('get', 'acct:b') or '0') "
              "redis.call('set', 'acct:a', a - 1) redis.call('set', 'acct:b', b + 1) return a + b")
    stop = threading.Event()
    errors = []

    def mover():
        c = srv.client()
        s = c.register_script(script)
        while not stop.is_set():
            if s() != 0:
                errors.append("sum changed")

    def reader():
        c = srv.client()
        while not stop.is_set():
            p = c.pipeline(transaction=True)
            p.get("acct:a")
            p.get("acct:b")
            a, b = p.execute()
            if int(a or 0) + int(b or 0) != 0:
                errors.append((a, b))

    threads = [threading.Thread(target=mover) for _ in range(4)] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    time.sleep(2)
    stop.set()
    for t in threads:
        t.join()
    assert errors == []


def test_script_needing_whole_database_reruns_exclusively(kvrocks_server):
    r = kvrocks_server.client()
    r.set("x", "1")
    assert r.eval("redis.call('set', 'y', '2') redis.call('flushall') return redis.call('dbsize')", 0) == 0
    assert r.dbsize() == 0


def test_busy_script_and_script_kill(fresh_server):
    fresh_server.extra = ["--busy-reply-threshold", "200"]
    srv = fresh_server.start()
    t, result = call_in_background(srv.port, "EVAL", "local i = 0 while true do i = i + 1 end", "0")
    other = [RawClient(srv.port) for _ in range(4)]  # on both workers
    poll_until(other[0], ("PING",), b"-BUSY")
    for c in other:
        assert c.call("GET", "x") == (b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                                      b"SHUTDOWN NOSAVE.\r\n")
        # Redis' allow_busy commands run.
        assert c.call("WATCH", "k") == b"+OK\r\n"
        assert c.call("UNWATCH") == b"+OK\r\n"
        assert c.call("FUNCTION", "STATS").startswith(b"*4\r\n$14\r\nrunning_script\r\n")
    assert other[1].call("SCRIPT", "KILL") == b"+OK\r\n"
    t.join(10)
    assert result["reply"].startswith(b"-ERR Script killed by user with SCRIPT KILL... script:")
    for c in other:
        assert c.call("PING") == b"+PONG\r\n"
        c.close()
    c = RawClient(srv.port)
    assert c.call("SCRIPT", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"
    c.close()


def test_script_kill_refused_after_write(fresh_server):
    fresh_server.extra = ["--busy-reply-threshold", "200"]
    srv = fresh_server.start()
    t, _ = call_in_background(srv.port, "EVAL", "redis.call('set', 'w', 1) local t = redis.call('time') "
                              "while tonumber(redis.call('time')[1]) < t[1] + 2 do end return 1", "0")
    c = RawClient(srv.port)
    reply = poll_until(c, ("SCRIPT", "KILL"), b"-UNKILLABLE")
    assert reply.startswith(b"-UNKILLABLE Sorry the script already executed write commands")
    t.join(15)
    assert c.call("GET", "w") == b"$1\r\n1\r\n"
    c.close()


# Pushes four elements onto KEYS[1] and sets KEYS[2], then runs past
# busy-reply-threshold for about 1.5 s.
BUSY_PUSHER = ("redis.call('lpush', KEYS[1], 'a', 'b', 'c', 'd') redis.call('set', KEYS[2], 'new') "
               "local t = redis.call('time') "
               "local function now(x) return tonumber(x[1]) * 1000000 + tonumber(x[2]) end "
               "while now(redis.call('time')) < now(t) + 1500000 do end return 1")


def commands_beside_a_busy_writer(port):
    """Clients blocked on a list the busy script pushed to, and a tracking client
    (NOLOOP) that runs the script, while other clients run what a busy script
    allows (MULTI, AUTH, UNWATCH) on both workers and then PING: -BUSY for every
    PING, waiters served after the script, and the script's client not told of
    its own write. kvrocks signalled the script's writes so far on the busy
    script's worker at the first allowed command there: a waiter woken on the
    other worker stalled it on the script's key lock (its PINGs answered after
    the script, PONG), and the write counted as the other client's."""
    c, s = RawClient(port), RawClient(port)
    c.call("DEL", "L", "k")
    c.call("SET", "k", "old")
    c.call("CONFIG", "SET", "busy-reply-threshold", "50")
    s.call("HELLO", "3")
    s.call("CLIENT", "TRACKING", "ON", "NOLOOP")
    s.call("GET", "k")
    waiters = [RawClient(port) for _ in range(4)]
    for w in waiters:
        w.send_raw(encode(("BLPOP", "L", "0")))
    for _ in range(500):
        if b"blocked_clients:4\r\n" in c.call("INFO", "clients"):
            break
        time.sleep(0.01)
    others = [RawClient(port) for _ in range(4)]  # on both workers
    s.send_raw(encode(("EVAL", BUSY_PUSHER, "2", "L", "k")))
    poll_until(c, ("PING",), b"-BUSY")
    got = [o.call("MULTI") for o in others] + [o.call("AUTH", "x") for o in others]
    got += [o.call("UNWATCH") for o in others] + [o.call("PING") for o in others]
    got += [o.call("DISCARD") for o in others]
    got += [s.read_reply(), s.call("PING")]
    got += sorted(w.read_reply() for w in waiters)
    c.call("CONFIG", "SET", "busy-reply-threshold", "5000")
    for x in [c, s] + waiters + others:
        x.close()
    return got


def test_commands_beside_a_busy_script_leave_its_writes_to_it(fresh_server, redis_ref):
    srv = fresh_server.start()
    ours = commands_beside_a_busy_writer(srv.port)
    assert ours == commands_beside_a_busy_writer(redis_ref.port)


def test_precompiled_chunks_are_not_loaded(d):
    # Lua 5.1 does not verify bytecode: Redis' Lua parses every chunk as text.
    dump = "string.dump(function() return 1 end)"
    d("EVAL", f"return loadstring({dump})()", "0")
    d("EVAL", f"return select(2, loadstring({dump}))", "0")
    d("EVAL", f"local s, i = {dump}, 0 return select(2, load(function() i = i + 1 if i == 1 then return s end end))", "0")
    d("EVAL", "return loadstring('return 1 + 1')()", "0")
    d("EVAL", "return select(2, loadstring('x x', 'mychunk'))", "0")
    d("EVAL", "local i = 0 return load(function() i = i + 1 if i == 1 then return 'return 7' end end)()", "0")
    d("EVAL", "local i = 0 return load(function() i = i + 1 if i == 1 then return 42 end end)()", "0")


def test_info_memory_counts_scripts_and_functions(d):
    def counts():
        out = []
        for c in (d.kv, d.ref):
            info = c.call("INFO", "memory").decode()
            out.append({k: v for k, v in (line.split(":", 1) for line in info.split("\r\n") if ":" in line)
                        if k in ("number_of_cached_scripts", "number_of_functions", "number_of_libraries")})
        assert out[0] == out[1]
        return out[0]
    d("SCRIPT", "FLUSH")
    d("FUNCTION", "FLUSH")
    assert counts() == {"number_of_cached_scripts": "0", "number_of_functions": "0", "number_of_libraries": "0"}
    for j in range(5):
        d("SCRIPT", "LOAD", f"return {j}")
    d("EVAL", "return 'e'", "0")
    d("EVAL", "return 0", "0")  # already cached
    d("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)\n"
                          "redis.register_function('f2', function() return 2 end)")
    d("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f3', function() return 3 end)")
    assert counts() == {"number_of_cached_scripts": "6", "number_of_functions": "3", "number_of_libraries": "2"}
    d("SCRIPT", "FLUSH", "ASYNC")
    d("FUNCTION", "DELETE", "lib1")
    assert counts() == {"number_of_cached_scripts": "0", "number_of_functions": "1", "number_of_libraries": "1"}
    d("FUNCTION", "FLUSH")


def test_lua_garbage_is_collected_as_scripts_run(kvrocks_server):
    """As Redis' "EVAL does not leak in the Lua stack": a Lua state takes a few
    collection steps every 50 scripts, so 10000 of them leave it small."""
    r = kvrocks_server.client()
    r.script_flush()
    r.set("x", 0)
    pipe = r.pipeline(transaction=False)
    for _ in range(10000):
        pipe.eval("return redis.call('incr', KEYS[1])", 1, "x")
    assert pipe.execute()[-1] == 10000
    # Redis' own test asks < 100 KB; a fresh state here is about 46 KB, and without
    # the collection steps 10000 scripts left about 90 KB.
    assert r.info("memory")["used_memory_lua"] < 64 * 1024


def test_a_script_that_leaves_big_garbage_gets_a_full_collection(kvrocks_server):
    """A big string a script built or returned is garbage once the script ends;
    without more scripts to drive the incremental collector it stayed, so a
    script that leaves over 8 MB more than the last full collection gets one."""
    r = kvrocks_server.client()
    r.script_flush()
    assert len(r.eval("return string.rep('x', 20 * 1024 * 1024)", 0)) == 20 * 1024 * 1024
    assert r.info("memory")["used_memory_lua"] < 8 * 1024 * 1024  # 64 MB before
    # A table the script keeps (a global is refused, the registry is not
    # reachable): nothing to do with what stays alive between scripts.
    assert r.eval("local t = {} for i = 1, 1000 do t[i] = i end return #t", 0) == 1000


PROTOCOL_SAMPLES = ["string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "verbatim",
                    "true", "false"]


@pytest.mark.parametrize("client_resp", [2, 3])
def test_resp3_replies_inside_scripts_match_redis(d, client_resp):
    """Redis' own test hook: DEBUG SET-DISABLE-DENY-SCRIPTS lets scripts call DEBUG
    PROTOCOL; each RESP type goes to Lua and back, under either protocol of the
    script (redis.setresp) and of the client."""
    d.both("HELLO", str(client_resp))
    d("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    try:
        for script_resp in (2, 3):
            for t in PROTOCOL_SAMPLES:
                d("EVAL", f"redis.setresp({script_resp}); return redis.call('debug', 'protocol', '{t}')", "0")
        d("EVAL", "return redis.call('client', 'id') > 0", "0")
        d("EVAL", "redis.call('set', 'x', 'y', 'px', 1); redis.call('debug', 'sleep', 0.01); "
                  "return redis.call('exists', 'x')", "0")
    finally:
        d("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")
    d("EVAL", "return redis.call('debug', 'protocol', 'true')", "0")  # refused again


def test_deny_disabled_scripts_still_cannot_reach_the_script_machinery(kvrocks_server):
    """kvrocks lets scripts call the noscript commands that only report or tune;
    those that would act on the connection or on the running script stay refused."""
    r = kvrocks_server.client()
    r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    try:
        assert b"id=" in r.eval("return redis.call('client', 'list')", 0)
        for call in ("'script', 'flush'", "'multi'", "'subscribe', 'c'", "'eval', 'return 1', '0'",
                     "'function', 'flush'", "'blpop', 'l', '0'", "'debug', 'reload'", "'shutdown'"):
            with pytest.raises(redis.ResponseError, match="not allowed from script"):
                r.eval(f"return redis.call({call})", 0)
        assert r.ping()
    finally:
        r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")


def test_debug_object_sees_an_expired_key_not_yet_deleted(d):
    d("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        d("SET", "gone", "v", "PX", "1")
        time.sleep(0.02)
        a, b = d.both("DEBUG", "OBJECT", "gone")  # Redis looks in its dict, expired or not
        assert a.startswith(b"+Value at:") and b.startswith(b"+Value at:"), (a, b)
        d("EVAL", "return redis.call('exists', 'gone')", "0")
        d("EXISTS", "gone")
        d("DEBUG", "OBJECT", "gone")
    finally:
        d("DEBUG", "SET-ACTIVE-EXPIRE", "1")
