"""CLIENT PAUSE/UNPAUSE/REPLY/UNBLOCK/NO-EVICT, WAIT, LATENCY, MEMORY USAGE and
DEBUG: replies compared with redis-server 7.0 where they are deterministic,
behaviour checked on kvrocks where timing is involved."""
import re
import socket
import threading
import time

import pytest

from conftest import Differ, RawClient, encode, poll_until


def test_replies_match_redis(diff):
    diff.run("""
    CLIENT PAUSE abc
    CLIENT PAUSE -1
    CLIENT PAUSE 10 bogus
    CLIENT PAUSE 10 WRITE
    CLIENT UNPAUSE
    CLIENT UNPAUSE x
    CLIENT REPLY bogus
    CLIENT UNBLOCK abc
    CLIENT UNBLOCK 99999
    CLIENT UNBLOCK 99999 bogus
    CLIENT UNBLOCK 99999 ERROR
    CLIENT NO-EVICT maybe
    CLIENT NO-EVICT on
    CLIENT NO-EVICT off
    WAIT 0 0
    WAIT 1 10
    WAIT x 0
    WAIT 0 x
    WAIT 0 -1
    CONFIG GET lua-time-limit
    CONFIG GET busy-reply-threshold
    CONFIG GET slaveof
    CONFIG GET latency-monitor-threshold
    CONFIG GET notify-keyspace-events
    LATENCY LATEST
    LATENCY HISTORY command
    LATENCY RESET
    LATENCY DOCTOR
    LATENCY bogus
    LATENCY HISTORY
    MEMORY USAGE nokey
    SET k v
    MEMORY USAGE k samples x
    MEMORY USAGE k samples 5 extra
    MEMORY USAGE k samples -1
    MEMORY USAGE k samples
    MEMORY USAGE nokey samples 5 samples 0
    MEMORY USAGE k samples -1 samples x
    MEMORY USAGE k samples x samples -1
    MEMORY USAGE nokey samples -1
    COMMAND INFO get nosuch config|nosuch
    ACL CAT string extra
    ACL LOG 1 extra
    ACL GENPASS x
    ACL GENPASS 99999999999999999999
    ACL GENPASS 0
    ACL GENPASS 8 extra
    SLOWLOG GET 1 extra
    CLIENT UNBLOCK x y
    CLIENT UNBLOCK 1 timeout extra
    CLIENT PAUSE 10 write extra
    CONFIG SET maxclients 10 extra
    SCRIPT FLUSH async extra
    FUNCTION FLUSH async extra
    MEMORY bogus
    DEBUG SLEEP 0
    DEBUG SET-ACTIVE-EXPIRE 1
    DEBUG OBJECT nokey
    DEBUG DIGEST-VALUE nokey
    SET s1 hello
    SET s2 12345
    RPUSH l a b c
    SADD set x y z 1 2
    HSET h f1 v1 f2 v2
    ZADD z 1 a 2.5 b -3 c
    SET ttl v EX 1000
    DEBUG DIGEST-VALUE s1 s2 l set h z ttl nokey
    """)


def test_no_evict_flag_shows_in_client_info(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    assert c.call("CLIENT", "NO-EVICT", "on") == b"+OK\r\n"
    assert b" flags=e " in c.call("CLIENT", "INFO")
    assert c.call("CLIENT", "NO-EVICT", "off") == b"+OK\r\n"
    assert b" flags=N " in c.call("CLIENT", "INFO")
    c.close()


def test_client_reply_modes(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.send_raw(b"CLIENT REPLY OFF\r\nSET a 1\r\nGET a\r\nCLIENT REPLY ON\r\n")
    assert c.read_reply() == b"+OK\r\n"  # only the ON
    c.send_raw(b"CLIENT REPLY SKIP\r\nGET a\r\nGET a\r\n")
    assert c.read_reply() == b"$1\r\n1\r\n"  # the first GET was skipped
    c.send_raw(b"CLIENT REPLY OFF\r\nCLIENT REPLY SKIP\r\nPING\r\nCLIENT REPLY ON\r\nPING\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+PONG\r\n"
    c.close()


def test_client_reply_on_answers_after_skip_as_redis(kvrocks_server, redis_ref):
    # ON clears SKIP before it replies (Redis' unit/introspection "CLIENT REPLY ON: unset SKIP flag").
    got = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.send_raw(b"CLIENT REPLY SKIP\r\nCLIENT REPLY ON\r\nPING\r\n")
        got.append((c.read_reply(), c.read_reply()))
        c.close()
    assert got[0] == got[1] == (b"+OK\r\n", b"+PONG\r\n")


def test_reset_right_after_client_reply_skip_is_not_answered(kvrocks_server, redis_ref):
    # RESET ends OFF and a SKIP still to come, but the SKIP that applies to RESET
    # itself drops its reply (Redis' clearClientConnectionState keeps CLIENT_REPLY_SKIP).
    got = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.send_raw(b"CLIENT REPLY SKIP\r\nRESET\r\nPING\r\nCLIENT REPLY OFF\r\nRESET\r\nPING\r\n")
        got.append((c.read_reply(), c.read_reply(), c.read_reply()))
        c.close()
    assert got[0] == got[1] == (b"+PONG\r\n", b"+RESET\r\n", b"+PONG\r\n")


@pytest.mark.parametrize("inside", [
    "CLIENT REPLY OFF\r\nSET a 1\r\nGET a\r\n",                       # silences the rest of EXEC at once
    "SET a 1\r\nCLIENT REPLY OFF\r\nINCR a\r\nCLIENT REPLY ON\r\nGET a\r\n",  # ON answers again inside
    "CLIENT REPLY SKIP\r\nSET a 1\r\nGET a\r\n",                      # SKIP waits for the command after EXEC
    "CLIENT REPLY OFF\r\nSUBSCRIBE ch\r\n",                            # a push still arrives (RESP3)
])
def test_client_reply_inside_a_transaction_as_redis(kvrocks_server, redis_ref, inside):
    got = []
    for port in (kvrocks_server.port, redis_ref.port):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"HELLO 3\r\nFLUSHALL\r\n")
        read_until(s, b"+OK\r\n")
        s.sendall(b"MULTI\r\n" + inside.encode() + b"EXEC\r\nPING\r\nCLIENT REPLY ON\r\nECHO end\r\n")
        got.append(read_until(s, b"$3\r\nend\r\n"))
        s.close()
    assert got[0] == got[1]


def read_until(sock, marker):
    data = b""
    while not data.endswith(marker):
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    return data


def test_qbuf_counts_the_running_command_as_redis(kvrocks_server, redis_ref):
    fields = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        line = c.call("CLIENT", "INFO").decode()
        fields.append(dict(f.split("=", 1) for f in line.split("\r\n")[1].split() if "=" in f)["qbuf"])
        c.close()
    assert fields[0] == fields[1] == "26"  # *2 $6 client $4 info


def test_client_pause_write_and_all(kvrocks_server):
    admin, c = RawClient(kvrocks_server.port), RawClient(kvrocks_server.port)
    c.call("SET", "p", "before")
    assert admin.call("CLIENT", "PAUSE", "10000", "WRITE") == b"+OK\r\n"
    assert c.call("GET", "p") == b"$6\r\nbefore\r\n"  # reads go on
    c.send_raw(b"SET p after\r\n")
    c.sock.settimeout(0.3)
    try:
        got = c.sock.recv(100)
    except OSError:
        got = b""
    c.sock.settimeout(20)
    assert got == b""  # the write waits
    assert RawClient(kvrocks_server.port).call("GET", "p") == b"$6\r\nbefore\r\n"
    assert admin.call("CLIENT", "UNPAUSE") == b"+OK\r\n"
    assert c.read_reply() == b"+OK\r\n"
    assert c.call("GET", "p") == b"$5\r\nafter\r\n"
    # ALL: everything waits until the pause times out by itself.
    admin.call("CLIENT", "PAUSE", "300", "ALL")
    start = time.time()
    assert c.call("PING") == b"+PONG\r\n"
    assert time.time() - start > 0.1
    admin.close()
    c.close()


def test_client_unblock(kvrocks_server):
    admin = RawClient(kvrocks_server.port)
    for reason, expected in [("TIMEOUT", b"*-1\r\n"), ("ERROR", b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")]:
        b = RawClient(kvrocks_server.port)
        bid = int(b.call("CLIENT", "ID")[1:-2])
        b.send_raw(b"BLPOP nolist 0\r\n")
        assert poll_until(admin, ("CLIENT", "UNBLOCK", str(bid), reason), b":1") == b":1\r\n"
        assert b.read_reply() == expected
        assert b.call("PING") == b"+PONG\r\n"
        b.close()
    # WAIT for a replica that does not exist blocks until unblocked.
    w = RawClient(kvrocks_server.port)
    wid = int(w.call("CLIENT", "ID")[1:-2])
    w.send_raw(b"WAIT 1 0\r\n")
    assert poll_until(admin, ("CLIENT", "UNBLOCK", str(wid)), b":1") == b":1\r\n"
    assert w.read_reply() == b":0\r\n"
    admin.close()
    w.close()


def test_latency_monitor(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.call("CONFIG", "SET", "latency-monitor-threshold", "10")
    c.call("LATENCY", "RESET")
    c.call("DEBUG", "SLEEP", "0.05")
    # Nothing more is recorded from here on (a slow command on a busy CI box would add events).
    c.call("CONFIG", "SET", "latency-monitor-threshold", "0")
    latest = c.call("LATENCY", "LATEST")
    assert b"*4\r\n$7\r\ncommand\r\n" in latest
    history = c.call("LATENCY", "HISTORY", "command")
    assert history.startswith(b"*1\r\n*2\r\n")
    assert b". command: 1 latency spikes" in c.call("LATENCY", "DOCTOR")
    assert c.call("LATENCY", "RESET", "command", "nosuch") == b":1\r\n"
    assert b"$7\r\ncommand\r\n" not in c.call("LATENCY", "LATEST")
    c.call("LATENCY", "RESET")
    c.close()


def test_memory_usage_and_debug_object(kvrocks_server):
    r = kvrocks_server.client(protocol=2)
    r.set("small", "v")
    r.rpush("biglist", *[f"element-{i}" * 10 for i in range(2000)])
    small, big = r.memory_usage("small"), r.memory_usage("biglist")
    assert 0 < small < big
    assert big > 2000 * 50
    info = r.execute_command("DEBUG", "OBJECT", "biglist")
    assert b"encoding:quicklist" in info and b"serializedlength:" in info
    r.set("n", "123")
    assert b"encoding:int" in r.execute_command("DEBUG", "OBJECT", "n")


def test_memory_purge_and_malloc_stats_as_redis(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    d("MEMORY", "PURGE")
    d("MEMORY", "PURGE", "x")
    d("MEMORY", "MALLOC-STATS", "x")
    d("MEMORY", "NOSUCH")
    for c in (d.kv, d.ref):
        stats = c.call("MEMORY", "MALLOC-STATS")  # jemalloc's own report (both link jemalloc)
        assert stats.split(b"\r\n", 1)[1].startswith(b"___ Begin jemalloc statistics ___\n")
        assert stats.endswith(b"--- End jemalloc statistics ---\n\r\n")
    d("MEMORY", "HELP")
    d.close()


def test_debug_disabled_by_default(fresh_server):
    fresh_server.extra = ["--enable-debug-command", "no"]
    srv = fresh_server.start()
    c = RawClient(srv.port)
    assert c.call("DEBUG", "SLEEP", "0").startswith(b"-ERR DEBUG command not allowed.")
    c.close()


def test_rename_command(tmp_path):
    from conftest import Kvrocks
    conf = tmp_path / "kvrocks.conf"
    conf.write_text('rename-command CONFIG my-config\nrename-command FLUSHALL ""\n')
    srv = Kvrocks(conf=str(conf), extra=["--rename-command", "KEYS listkeys"]).start()
    try:
        c = RawClient(srv.port)
        assert c.call("CONFIG", "GET", "port").startswith(b"-ERR unknown command 'CONFIG'")
        assert c.call("MY-CONFIG", "GET", "maxclients").startswith(b"*2\r\n")
        assert c.call("FLUSHALL").startswith(b"-ERR unknown command 'FLUSHALL'")
        c.call("SET", "k", "v")
        assert c.call("LISTKEYS", "*") == b"*1\r\n$1\r\nk\r\n"
        assert c.call("KEYS", "*").startswith(b"-ERR unknown command")
        # Errors still name the command by its Redis name.
        assert c.call("MY-CONFIG") == b"-ERR wrong number of arguments for 'config' command\r\n"
        c.close()
    finally:
        srv.cleanup()
    bad = tmp_path / "bad.conf"
    bad.write_text("rename-command NOSUCH x\n")
    srv = Kvrocks(conf=str(bad))
    try:
        import pytest
        with pytest.raises(RuntimeError):
            srv.start()
    finally:
        srv.cleanup()


def test_client_list_names_the_last_command_as_redis(kvrocks_server, redis_ref):
    # cmd= is Redis' lastcmd->fullname: the subcommand of a container, NULL when unknown.
    def last_commands(port):
        c, other = RawClient(port), RawClient(port)
        other_id = other.call("CLIENT", "ID")[1:-2].decode()
        seen = []
        for cmd in (("GET", "k"), ("CONFIG", "GET", "maxclients"), ("CLIENT", "FOO"), ("NOSUCH",), ("OBJECT",),
                    ("PING",)):
            other.call(*cmd)
            info = c.call("CLIENT", "LIST", "ID", other_id)
            seen.append(info.split(b" cmd=")[1].split(b" ")[0])
        seen.append(c.call("CLIENT", "INFO").split(b" cmd=")[1].split(b" ")[0])
        c.close()
        other.close()
        return seen

    assert last_commands(kvrocks_server.port) == last_commands(redis_ref.port)


PAUSE_CASES = [
    ["SET", "k", "v"], ["GET", "k"], ["PUBLISH", "ch", "m"], ["SPUBLISH", "ch", "m"], ["PFCOUNT", "hll"],
    ["EVAL", "return 1", "0"], ["EVAL", "#!lua flags=no-writes\nreturn 1", "0"],
    ["EVAL", "#!lua\nreturn 1", "0"], ["EVAL_RO", "return 1", "0"], ["FCALL", "ro", "0"], ["FCALL", "rw", "0"],
    ["SCRIPT", "LOAD", "return 5"], ["SCRIPT", "FLUSH"], ["FUNCTION", "FLUSH"], ["PING"], ["INFO", "clients"],
]


def held_by_pause(port, cmd):
    """(whether CLIENT PAUSE WRITE held cmd, its reply once unpaused)."""
    admin, c = RawClient(port), RawClient(port)
    admin.call("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\n"
               "redis.register_function{function_name='ro', callback=function() return 1 end, flags={'no-writes'}}\n"
               "redis.register_function('rw', function() return 2 end)")
    admin.call("CLIENT", "PAUSE", "100000", "WRITE")
    c.send_raw(encode(cmd))
    c.sock.setblocking(False)
    held = None
    for _ in range(2000):
        try:
            c.buf += c.sock.recv(65536)
            held = False
        except BlockingIOError:
            if b"blocked_clients:1\r\n" in admin.call("INFO", "clients"):
                held = True
        if held is not None:
            break
        time.sleep(0.005)
    assert held is not None, "neither answered nor counted as blocked"
    c.sock.setblocking(True)
    c.sock.settimeout(20)
    admin.call("CLIENT", "UNPAUSE")
    reply = c.read_reply()
    if cmd[0] == "INFO":
        reply = b"blocked_clients:0" in reply
    admin.call("FUNCTION", "FLUSH")
    admin.close()
    c.close()
    return held, reply


def test_what_client_pause_write_holds(kvrocks_server, redis_ref):
    """As in Redis: writes and what may be propagated (PUBLISH, PFCOUNT, scripts
    without no-writes, FUNCTION LOAD/FLUSH ...), counted in blocked_clients."""
    for cmd in PAUSE_CASES:
        assert held_by_pause(kvrocks_server.port, cmd) == held_by_pause(redis_ref.port, cmd), cmd


def test_read_only_scripts_refuse_what_may_replicate(diff):
    diff("EVAL_RO", "return redis.call('publish', 'ch', 'm')", "0")
    diff("EVAL", "#!lua flags=no-writes\nreturn redis.call('publish', 'ch', 'm')", "0")
    diff("EVAL", "#!lua flags=no-writes\nreturn redis.call('pfcount', 'h')", "0")
    diff("EVAL", "return redis.call('publish', 'ch', 'm')", "0")


def test_memory_usage_of_a_big_string_is_its_size(kvrocks_server):
    """A big value overwritten by a smaller one (Redis' type/string "trim on SET
    with big value" bound): the usage follows the value, not an estimate."""
    c = RawClient(kvrocks_server.port)
    c.call("SET", "big", "A" * 100000)
    c.call("SET", "big", "A" * 33000)
    usage = int(c.call("MEMORY", "USAGE", "big")[1:-2])
    assert 33000 < usage < 42000
    c.close()


def test_client_list_and_kill_by_type_id_and_user_diff(kvrocks_server, redis_ref):
    """A subscribed client is of type pubsub (not normal) for CLIENT LIST and CLIENT
    KILL; CLIENT LIST ID lists in the order given, repeats included, and takes any
    integer; CLIENT KILL USER takes any ACL user; compared by client name."""
    def names(reply):
        # Named clients only: a connection an earlier test closed may still be listed.
        return [n for n in re.findall(rb" name=(\S*) ", reply) if n]

    out = []
    for port in (kvrocks_server.port, redis_ref.port):
        c = RawClient(port)
        c.call("CLIENT", "SETNAME", "ctl")
        c.call("ACL", "SETUSER", "ku", "on", "nopass", "+@all", "~*", "&*")
        sub, plain, user = RawClient(port), RawClient(port), RawClient(port)
        sub.call("CLIENT", "SETNAME", "sub")
        sub.call("SUBSCRIBE", "ch")
        plain.call("CLIENT", "SETNAME", "plain")
        user.call("AUTH", "ku", "x")
        user.call("CLIENT", "SETNAME", "user")
        ids = {n: int(x.call("CLIENT", "ID")[1:-2]) for n, x in (("ctl", c), ("plain", plain), ("user", user))}
        got = [sorted(names(c.call("CLIENT", "LIST", "TYPE", "pubsub"))),
               sorted(names(c.call("CLIENT", "LIST", "TYPE", "normal"))),
               names(c.call("CLIENT", "LIST", "TYPE", "master")),
               names(c.call("CLIENT", "LIST", "ID", str(ids["user"]), str(ids["ctl"]), str(ids["user"]))),
               c.call("CLIENT", "LIST", "ID", "0", "-1"),
               c.call("CLIENT", "LIST", "TYPE", "normal", "ID", "1"),
               c.call("CLIENT", "LIST", "ID", "1", "x"),
               c.call("CLIENT", "KILL", "ID", "x", "SKIPME"),
               c.call("CLIENT", "KILL", "USER", "nouser"),
               c.call("CLIENT", "KILL", "TYPE", "replica"),
               c.call("CLIENT", "KILL", "USER", "ku"),
               c.call("CLIENT", "KILL", "TYPE", "pubsub"),
               sorted(names(c.call("CLIENT", "LIST")))]
        out.append(got)
        c.call("ACL", "DELUSER", "ku")
        for x in (c, sub, plain, user):
            x.close()
    assert out[0] == out[1]
    assert out[0][0] == [b"sub"] and out[0][-1] == [b"ctl", b"plain"]


def test_client_ids_follow_the_order_of_connections(kvrocks_server):
    """Connections opened at once get ids in the order they were accepted, as
    Redis numbers them (its client list, oldest first, orders the nulls a flush
    sends to tracking clients); kvrocks gave ids as each worker took its share
    over, so one dealt to another worker could come out younger than the next."""
    for _ in range(5):
        socks = [socket.create_connection(("127.0.0.1", kvrocks_server.port)) for _ in range(12)]
        try:
            ids = []
            for s in socks:
                s.sendall(b"CLIENT ID\r\n")
                ids.append(int(s.recv(64)[1:-2]))
            assert ids == sorted(ids)
        finally:
            for s in socks:
                s.close()
