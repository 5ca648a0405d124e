"""Client-side caching (CLIENT TRACKING) against Debian's redis-server 7.0:
the same connections on both servers, invalidation messages compared byte for
byte. kvrocks' connections are dealt to its workers round-robin, so a tracker
and a writer usually run on different threads."""
import time

import pytest

from conftest import Differ, RawClient, encode


@pytest.fixture
def clients(kvrocks_server, redis_ref):
    """Three connections to each server: a tracker, a writer and a spare (redirect target)."""
    made = []

    def make():
        d = Differ.__new__(Differ)
        d.kv, d.ref = RawClient(kvrocks_server.port), RawClient(redis_ref.port)
        made.append(d)
        return d

    tracker, writer, spare = make(), make(), make()
    writer("FLUSHALL")
    tracker.read_both = lambda: read_both(tracker)
    yield tracker, writer, spare
    for d in made:
        d.close()


def read_both(d):
    a, b = d.kv.read_reply(), d.ref.read_reply()
    assert a == b, f"kvrocks {a!r} != redis {b!r}"
    return a


def same_info(d, *fields):
    """The INFO lines of these fields are the same on both servers."""
    a, b = d.both("INFO", "everything")
    for name in fields:
        pick = [line for line in a.split(b"\r\n") if line.startswith(name.encode() + b":")]
        assert pick and pick == [line for line in b.split(b"\r\n") if line.startswith(name.encode() + b":")], name


def ids(d):
    """The CLIENT ID of d's connection on kvrocks and on redis."""
    if not hasattr(d, "ids"):
        a, b = d.both("CLIENT", "ID")
        d.ids = int(a[1:-2]), int(b[1:-2])
    return d.ids


def track(d, *options, redirect=None):
    args = ["CLIENT", "TRACKING", "on", *options]
    if redirect is None:
        d(*args)
    else:
        kv_id, ref_id = ids(redirect)
        a = d.kv.call(*args, "REDIRECT", kv_id)
        b = d.ref.call(*args, "REDIRECT", ref_id)
        assert a == b == b"+OK\r\n"


def invalidate(*keys):
    body = b"*%d\r\n" % len(keys) + b"".join(b"$%d\r\n%s\r\n" % (len(k), k.encode()) for k in keys)
    return b">2\r\n$10\r\ninvalidate\r\n" + body


def test_default_mode_resp3(clients):
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    tracker("GET", "a")
    tracker("MGET", "b", "c")
    writer("SET", "a", "1")
    assert tracker.read_both() == invalidate("a")
    writer("SET", "a", "2")  # no longer tracked: nothing
    writer("MSET", "c", "1", "b", "1", "zz", "1")
    assert tracker.read_both() == invalidate("c")
    assert tracker.read_both() == invalidate("b")
    assert tracker("PING") == b"+PONG\r\n"
    # A failed read (wrong type) still remembers its key, as in Redis.
    writer("LPUSH", "l", "x")
    tracker("GET", "l")
    writer("DEL", "l")
    assert tracker.read_both() == invalidate("l")
    # A write that changes nothing invalidates nothing.
    tracker("GET", "nokey")
    writer("DEL", "nokey")
    assert tracker("PING") == b"+PONG\r\n"
    same_info(writer, "tracking_clients", "tracking_total_keys", "tracking_total_items")


def test_own_writes_and_noloop(clients):
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    tracker("GET", "k")
    tracker("SET", "k", "v")  # the reply first, then its own invalidation
    assert tracker.read_both() == invalidate("k")
    track(tracker, "NOLOOP")
    tracker("GET", "k")
    tracker("SET", "k", "w")
    assert tracker("PING") == b"+PONG\r\n"
    tracker("GET", "k")
    writer("SET", "k", "x")
    assert tracker.read_both() == invalidate("k")
    tracker("CLIENT", "TRACKINGINFO")


def test_bcast_noloop_does_not_spare_a_scripts_writes(clients):
    """Redis records a BCAST key change with the client that made it, for a
    script's writes the script's own client, which NOLOOP does not know as the
    caller; default mode compares with the calling client and spares them."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    writer("FUNCTION", "LOAD", "REPLACE",
           "#!lua name=tlib\nredis.register_function('tset', function(k, a) return redis.call('set', k[1], 'f') end)")
    scripts = (["EVAL", "return redis.call('set', KEYS[1], 'e')", "1", "k"], ["FCALL", "tset", "1", "k"])
    track(tracker, "NOLOOP")
    for script in scripts:
        tracker("GET", "k")
        tracker(*script)
        assert tracker("PING") == b"+PONG\r\n"
    tracker("CLIENT", "TRACKING", "off")
    track(tracker, "BCAST", "NOLOOP")
    for script in scripts:
        tracker(*script)
        assert tracker.read_both() == invalidate("k")
    tracker("SET", "k", "own")  # its own write: spared
    assert tracker("PING") == b"+PONG\r\n"
    # In one transaction: each key goes by its last writer.
    tracker("MULTI")
    for cmd in (("SET", "own", "1"), ("EVAL", "return redis.call('set', KEYS[1], 'e')", "1", "k"), ("SET", "k2", "1"),
                ("FCALL", "tset", "1", "k2"), ("FCALL", "tset", "1", "k3"), ("SET", "k3", "1")):
        tracker(*cmd)
    tracker("EXEC")
    assert tracker.read_both() == invalidate("k", "k2")
    assert tracker("PING") == b"+PONG\r\n"
    writer("FUNCTION", "DELETE", "tlib")


def set_then_get_in_exec(d, key):
    d("MULTI")
    d("SET", key, "1")
    d("GET", key)
    d("EXEC")


def test_reads_after_own_writes(clients):
    """Redis invalidates at the write; kvrocks at the commit of the batch that holds it.
    A client that writes a key and then reads it in the same transaction, pipeline or
    script gets an invalidation only if it had read the key before the write, and
    stays tracked for what it read after."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    set_then_get_in_exec(tracker, "fresh")
    assert tracker("PING") == b"+PONG\r\n"  # nothing before it
    writer("SET", "fresh", "2")
    assert tracker.read_both() == invalidate("fresh")

    tracker("GET", "old")  # cached before the write: invalidated by it
    set_then_get_in_exec(tracker, "old")
    assert tracker.read_both() == invalidate("old")
    writer("SET", "old", "2")  # still tracked from the read inside EXEC
    assert tracker.read_both() == invalidate("old")

    tracker("MULTI")  # read, then written again: tracked no more
    tracker("SET", "twice", "1")
    tracker("GET", "twice")
    tracker("SET", "twice", "2")
    tracker("EXEC")
    assert tracker.read_both() == invalidate("twice")
    writer("SET", "twice", "3")
    assert tracker("PING") == b"+PONG\r\n"

    for conn in (tracker.kv, tracker.ref):  # one pipeline: one batch in kvrocks
        conn.send_raw(encode(["SET", "piped", "1"]) + encode(["GET", "piped"]))
    assert tracker.read_both() == b"+OK\r\n"
    assert tracker.read_both() == b"$1\r\n1\r\n"
    assert tracker("PING") == b"+PONG\r\n"
    writer("SET", "piped", "2")
    assert tracker.read_both() == invalidate("piped")

    script = "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])"
    tracker("EVAL", script, "1", "scripted", "1")
    assert tracker("PING") == b"+PONG\r\n"
    writer("SET", "scripted", "2")
    assert tracker.read_both() == invalidate("scripted")


def test_reads_after_own_writes_and_others_writes(clients):
    """A write by another client always invalidates, whenever the read was."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    set_then_get_in_exec(tracker, "shared")
    writer("MULTI")
    writer("GET", "shared")
    writer("SET", "shared", "2")
    writer("EXEC")
    assert tracker.read_both() == invalidate("shared")
    assert tracker("PING") == b"+PONG\r\n"


def test_resp2_redirect_to_subscriber(clients):
    tracker, writer, spare = clients
    ids(spare)
    spare("SUBSCRIBE", "__redis__:invalidate")
    track(tracker, redirect=spare)
    tracker("GET", "x")
    writer("INCR", "x")
    msg = read_both(spare)
    assert msg == b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nx\r\n"
    tracker("GET", "x")
    writer("FLUSHALL")
    assert read_both(spare) == b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n"
    # CLIENT GETREDIR names the target (ids differ between the servers).
    assert tracker.kv.call("CLIENT", "GETREDIR") == b":%d\r\n" % ids(spare)[0]
    assert tracker.ref.call("CLIENT", "GETREDIR") == b":%d\r\n" % ids(spare)[1]


def test_resp2_without_redirect_gets_nothing(clients):
    tracker, writer, _ = clients
    track(tracker)
    tracker("GET", "q")
    writer("SET", "q", "1")
    assert tracker("PING") == b"+PONG\r\n"
    assert tracker("GET", "q") == b"$1\r\n1\r\n"


def test_bcast_prefixes(clients):
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker, "BCAST", "PREFIX", "b:", "PREFIX", "a:")
    writer("MULTI")
    for k in ("a:2", "b:1", "a:1", "c:1", "b:2"):
        writer("INCR", k)
    writer("EXEC")
    # One message per prefix, keys in order.
    assert tracker.read_both() == invalidate("a:1", "a:2")
    assert tracker.read_both() == invalidate("b:1", "b:2")
    writer("SET", "c:9", "1")
    tracker("SET", "a:5", "1")  # not NOLOOP: its own change too
    assert tracker.read_both() == invalidate("a:5")
    tracker("CLIENT", "TRACKINGINFO")
    same_info(writer, "tracking_clients", "tracking_total_prefixes")
    tracker("CLIENT", "TRACKING", "off")
    track(tracker, "BCAST")  # every key
    writer("DEL", "c:1")
    assert tracker.read_both() == invalidate("c:1")
    track(tracker, "BCAST", "NOLOOP")
    tracker("SET", "own", "1")
    writer("SET", "other", "1")
    assert tracker.read_both() == invalidate("other")



def test_bcast_switched_on_inside_a_transaction(clients):
    """Redis records a change under a BCAST prefix only while the prefix has
    clients: a client that turns BCAST on inside its own transaction gets the
    keys written after that, the earlier ones only where another client had the
    prefix already."""
    tracker, writer, spare = clients
    tracker.both("HELLO", "3")
    tracker("MULTI")
    for cmd in (("SET", "a1", "v"), ("INCR", "b1"), ("CLIENT", "TRACKING", "on", "BCAST"), ("EXPIRE", "a1", "100"),
                ("HSET", "h", "f", "v")):
        tracker(*cmd)
    tracker("EXEC")
    assert tracker.read_both() == invalidate("a1", "h")
    assert tracker("PING") == b"+PONG\r\n"
    tracker("CLIENT", "TRACKING", "off")
    spare.both("HELLO", "3")
    track(spare, "BCAST", "PREFIX", "a")
    tracker("MULTI")
    for cmd in (("SET", "a1", "w"), ("SET", "b1", "w"), ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "b"),
                ("SET", "b2", "w")):
        tracker(*cmd)
    tracker("EXEC")
    assert read_both(spare) == invalidate("a1")
    assert tracker.read_both() == invalidate("a1")  # prefix a had a client at the write
    assert tracker.read_both() == invalidate("b2")
    assert tracker("PING") == b"+PONG\r\n"


def test_bcast_keys_written_before_a_flush_in_the_same_transaction(clients):
    """A FLUSHDB inside a transaction sends every tracking client its null at
    once; the keys written around it are still broadcast after the EXEC."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker, "BCAST", "PREFIX", "a")
    writer("MULTI")
    for cmd in (("SET", "a1", "v"), ("FLUSHDB",), ("GET", "a1")):
        writer(*cmd)
    writer("EXEC")
    assert tracker.read_both() == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    assert tracker.read_both() == invalidate("a1")
    writer("MULTI")
    for cmd in (("SET", "a1", "v"), ("SELECT", "1"), ("FLUSHDB",), ("SELECT", "0"), ("INCR", "a2")):
        writer(*cmd)
    writer("EXEC")
    assert tracker.read_both() == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    assert tracker.read_both() == invalidate("a1", "a2")
    assert tracker("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("flush", ["FLUSHALL", "FLUSHDB"])
@pytest.mark.parametrize("how", ["multi", "script"])
def test_keys_written_before_a_flush_are_invalidated_ahead_of_its_null(clients, how, flush):
    """Redis invalidates a key at its write: a transaction or script that writes
    tracked keys and then flushes sends their readers the keys first, then the
    flush's null (multi_conn_hunt.py tracking 52011). The tracker reads; the
    writer tracks itself, and gets its own after its reply."""
    tracker, writer, _ = clients
    for d in (tracker, writer):
        d.both("HELLO", "3")
    track(tracker)
    tracker("GET", "h")
    tracker("GET", "a")
    track(writer)
    writer("GET", "a")
    writes = [("HSET", "h", "f", "v"), ("SET", "a", "1"), (flush,), ("SET", "a", "2")]
    if how == "multi":
        writer("MULTI")
        for cmd in writes:
            writer(*cmd)
        cmds = [("EXEC",)]
    else:
        body = " ".join(f"redis.call({', '.join(repr(x) for x in cmd)})" for cmd in writes)
        cmds = [("EVAL", body + " return 1", "0")]
    for cmd in cmds:
        writer.kv.send_raw(encode(cmd))
        writer.ref.send_raw(encode(cmd))
    read_both(writer)  # the reply
    assert read_both(writer) == invalidate("a")
    assert read_both(writer) == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    assert tracker.read_both() == invalidate("h")
    assert tracker.read_both() == invalidate("a")
    assert tracker.read_both() == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    assert tracker("PING") == b"+PONG\r\n"
    assert writer("PING") == b"+PONG\r\n"


def test_optin_optout(clients):
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker, "OPTIN")
    tracker("GET", "k1")
    tracker("CLIENT", "CACHING", "yes")
    tracker("GET", "k2")
    tracker("GET", "k3")  # CACHING covered only the command after it
    tracker("CLIENT", "CACHING", "yes")
    tracker("MULTI")
    tracker("GET", "k4")
    tracker("EXEC")  # ... or the transaction after it
    writer("MSET", "k1", "1", "k2", "1", "k3", "1", "k4", "1")
    assert tracker.read_both() == invalidate("k2")
    assert tracker.read_both() == invalidate("k4")
    assert tracker("PING") == b"+PONG\r\n"
    tracker("CLIENT", "CACHING", "yes")
    tracker("CLIENT", "TRACKINGINFO")
    tracker("CLIENT", "TRACKING", "off")
    track(tracker, "OPTOUT")
    tracker("CLIENT", "CACHING", "no")
    tracker("GET", "k1")
    tracker("GET", "k2")
    writer("MSET", "k1", "2", "k2", "2")
    assert tracker.read_both() == invalidate("k2")
    tracker("CLIENT", "TRACKINGINFO")


@pytest.mark.parametrize("args", [
    ["CLIENT", "TRACKING", "on", "PREFIX", "a"],
    ["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"],
    ["CLIENT", "TRACKING", "on", "BCAST", "OPTIN"],
    ["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"],
    ["CLIENT", "TRACKING", "on", "REDIRECT", "999999"],
    ["CLIENT", "TRACKING", "on", "REDIRECT", "x"],
    ["CLIENT", "TRACKING", "on", "bogus"],
    ["CLIENT", "TRACKING", "maybe"],
    ["CLIENT", "TRACKING"],
    ["CLIENT", "CACHING", "yes"],
    ["CLIENT", "CACHING"],
    ["CLIENT", "GETREDIR"],
    ["CLIENT", "GETREDIR", "x"],
    ["CLIENT", "TRACKINGINFO"],
    ["CLIENT", "TRACKINGINFO", "x"],
    ["CLIENT", "HELP"],
])
def test_errors_and_idle_replies(clients, args):
    tracker, _, _ = clients
    tracker(*args)


def test_mode_switch_errors(clients):
    tracker, _, _ = clients
    track(tracker, "BCAST", "PREFIX", "a")
    tracker("CLIENT", "TRACKING", "on")
    tracker("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab")
    tracker("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b")
    tracker("CLIENT", "TRACKINGINFO")
    tracker("CLIENT", "CACHING", "no")
    tracker("CLIENT", "TRACKING", "off")
    track(tracker, "OPTIN")
    tracker("CLIENT", "TRACKING", "on", "OPTOUT")
    tracker("CLIENT", "CACHING", "no")
    tracker("CLIENT", "CACHING", "maybe")
    tracker("CLIENT", "TRACKING", "off")
    tracker("CLIENT", "TRACKINGINFO")
    tracker("CLIENT", "GETREDIR")


def test_broken_redirect(clients, kvrocks_server, redis_ref):
    tracker, writer, _ = clients
    target = Differ.__new__(Differ)
    target.kv, target.ref = RawClient(kvrocks_server.port), RawClient(redis_ref.port)
    target_ids = ids(target)
    tracker.both("HELLO", "3")
    track(tracker, redirect=target)
    tracker("GET", "r")
    target.close()
    time.sleep(0.2)
    writer("SET", "r", "1")
    for got, tid in ((tracker.kv.read_reply(), target_ids[0]), (tracker.ref.read_reply(), target_ids[1])):
        assert got == b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % tid
    a, b = tracker.both("CLIENT", "TRACKINGINFO")
    assert a.replace(b":%d\r\n" % target_ids[0], b":ID\r\n") == b.replace(b":%d\r\n" % target_ids[1], b":ID\r\n")
    assert b"broken_redirect" in a


def test_flush_and_expiry(clients):
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    tracker("GET", "f")
    writer("FLUSHDB")
    assert tracker.read_both() == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    writer("SET", "e", "1", "PX", "50")
    tracker("GET", "e")
    # The active expiry deletes it and invalidates (no read needed).
    assert tracker.read_both() == invalidate("e")


def test_scripts_remember_declared_keys(clients):
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    tracker("EVAL", "return redis.call('get', KEYS[1])", "2", "s1", "s2")
    writer("SET", "s2", "1")
    assert tracker.read_both() == invalidate("s2")
    tracker("EVAL_RO", "return 1", "1", "s3")  # no read inside: nothing remembered
    tracker("EVAL_RO", "return redis.call('exists', KEYS[1])", "1", "s4")
    writer("MSET", "s3", "1", "s4", "1")
    assert tracker.read_both() == invalidate("s4")


def test_client_list_flags(clients):
    tracker, _, spare = clients
    track(tracker, "BCAST", redirect=spare)
    for srv in ("kv", "ref"):
        line = getattr(tracker, srv).call("CLIENT", "INFO").decode()
        fields = dict(f.split("=", 1) for f in line.split("\r\n")[1].split() if "=" in f)
        assert fields["flags"] == "tB"
        assert int(fields["redir"]) == ids(spare)[0 if srv == "kv" else 1]
    tracker("CLIENT", "TRACKING", "off")
    for srv in ("kv", "ref"):
        line = getattr(tracker, srv).call("CLIENT", "INFO").decode()
        assert " flags=N " in line and " redir=-1 " in line


def test_info_counters(clients):
    tracker, writer, _ = clients
    track(tracker)
    tracker("MGET", "i1", "i2", "i3")
    other = clients[2]
    track(other)
    other("GET", "i1")
    same_info(writer, "tracking_clients", "tracking_total_keys", "tracking_total_items", "tracking_total_prefixes")


def test_table_limit_evicts_with_invalidation(fresh_server):
    fresh_server.start()
    admin, tracker = RawClient(fresh_server.port), RawClient(fresh_server.port)
    pushes = []

    def call(*args):
        """The command's reply; pushes that come before it are collected."""
        tracker.send_raw(encode(args))
        while True:
            r = tracker.read_reply()
            if not r.startswith(b">"):
                return r
            pushes.append(r.rsplit(b"\r\n", 2)[-2].decode())

    admin.call("CONFIG", "SET", "tracking-table-max-keys", "2")
    call("HELLO", "3")
    assert call("CLIENT", "TRACKING", "on") == b"+OK\r\n"
    for k in ("t1", "t2", "t3"):
        assert call("GET", k) == b"_\r\n"
    while not pushes:
        call("PING")
    assert len(pushes) == 1 and pushes[0] in ("t1", "t2", "t3")
    forgotten = pushes.pop()
    assert b"tracking_total_keys:2\r\n" in admin.call("INFO", "stats")
    admin.call("MSET", "t1", "x", "t2", "x", "t3", "x")
    while len(pushes) < 2:
        call("PING")
    assert set(pushes) == {"t1", "t2", "t3"} - {forgotten}
    admin.close()
    tracker.close()


def test_table_limit_applies_before_the_next_command(kvrocks_server, redis_ref):
    """As Redis' processCommand (regression test for Redis #11715): a lowered
    tracking-table-max-keys forgets keys before the next command runs, even one
    queued in MULTI, with the cron paused; the invalidation comes before QUEUED."""
    d = Differ(kvrocks_server.port, redis_ref.port)
    admin = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    try:
        admin("CONFIG", "SET", "tracking-table-max-keys", "2")
        admin("DEBUG", "PAUSE-CRON", "1")
        d.both("HELLO", "3")
        d("CLIENT", "TRACKING", "on")
        d("MGET", "1{tag}", "2{tag}")
        d("MULTI")
        admin("CONFIG", "SET", "tracking-table-max-keys", "1")
        for conn in (d.kv, d.ref):
            conn.send_raw(encode(["PING"]))
            push = conn.read_reply()
            assert push.startswith(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\n"), push
            assert push.endswith(b"{tag}\r\n")
            assert conn.read_reply() == b"+QUEUED\r\n"
        assert d("EXEC") == b"*1\r\n+PONG\r\n"
        for conn in (admin.kv, admin.ref):
            assert b"tracking_total_keys:1\r\n" in conn.call("INFO", "stats")
    finally:
        admin("DEBUG", "PAUSE-CRON", "0")
        admin("CONFIG", "SET", "tracking-table-max-keys", "1000000")
        d.close()
        admin.close()


def test_reset_and_close_stop_tracking(clients):
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    tracker("GET", "z")
    tracker.both("RESET")
    writer("SET", "z", "1")
    assert tracker("PING") == b"+PONG\r\n"
    same_info(writer, "tracking_clients")


def test_stream_group_commands_invalidate_nothing(clients):
    """Redis 7.0 changes a stream's groups and last id without signalModifiedKey:
    a client caching the stream is not told; new entries do tell it."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    writer("XADD", "s", "1-0", "a", "1")
    tracker("XLEN", "s")
    writer("XSETID", "s", "5-0")
    writer("XGROUP", "CREATE", "s", "g", "0")
    writer("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    writer("XACK", "s", "g", "1-0")
    writer("XGROUP", "DESTROY", "s", "g")
    assert tracker("PING") == b"+PONG\r\n"
    writer("XADD", "s", "6-0", "a", "2")
    assert tracker.read_both() == invalidate("s")


@pytest.mark.parametrize("flush", [[["FLUSHDB"]], [["FLUSHALL", "ASYNC"]], [["MULTI"], ["PING"], ["FLUSHALL"], ["EXEC"]]])
def test_a_flush_tells_the_flushing_redirect_target_ahead_of_its_reply(clients, flush):
    """The writer is the tracker's redirect target and tracks itself too: Redis
    writes the tracker's null to the writer while the flush runs (ahead of its
    reply, inside EXEC's), the writer's own after the reply (multi_conn_hunt.py
    tracking 50402)."""
    tracker, writer, _ = clients
    writer.both("HELLO", "3")
    tracker.both("HELLO", "3")
    track(tracker, redirect=writer)
    tracker("GET", "f")
    track(writer)
    writer("GET", "f")
    for cmd in flush:
        writer.kv.send_raw(encode(cmd))
        writer.ref.send_raw(encode(cmd))
    for _ in range(len(flush) + 2):
        read_both(writer)


def test_the_flushers_own_tracking_is_told_last(kvrocks_server, redis_ref):
    """A and S redirect to W, which tracks itself too; A flushes. Redis walks its
    clients oldest first: W's own null at once, then S's, then A's after the
    flush (its pending invalidations), although A is the oldest client
    (multi_conn_hunt.py tracking 50421). Each connection answers before the next
    one opens, so that both servers have taken them in that order."""
    made = []
    for _ in range(3):
        d = Differ.__new__(Differ)
        d.kv, d.ref = RawClient(kvrocks_server.port), RawClient(redis_ref.port)
        d("PING")
        made.append(d)
    a, w, s = made
    w.both("HELLO", "3")
    track(w)  # enabled newest first: the order of the table is not the order of the clients
    w("GET", "f")
    track(s, redirect=w)
    s("GET", "f")
    track(a, redirect=w)
    a("GET", "f")
    a("FLUSHALL")
    assert [read_both(w) for _ in range(3)] == [b">2\r\n$10\r\ninvalidate\r\n_\r\n",
                                                b">2\r\n$10\r\ninvalidate\r\n$-1\r\n",
                                                b">2\r\n$10\r\ninvalidate\r\n$-1\r\n"]
    for d in made:
        d.close()


def ahead_of_pong(d):
    """What reaches d ahead of the answer to a PING, the same on both servers."""
    got = []
    for c in (d.kv, d.ref):
        c.send_raw(encode(["PING"]))
        frames = [c.read_reply()]
        while frames[-1] != b"+PONG\r\n":
            frames.append(c.read_reply())
        got.append(frames[:-1])
    assert got[0] == got[1], f"kvrocks {got[0]!r} != redis {got[1]!r}"
    return got[0]


ON, OFF = ["CLIENT", "TRACKING", "on"], ["CLIENT", "TRACKING", "off"]
TO_SPARE = ["CLIENT", "TRACKING", "on", "REDIRECT"]  # the spare's id follows
NULL2 = b">2\r\n$10\r\ninvalidate\r\n$-1\r\n"  # a RESP2 tracker's null, through a RESP3 redirect
NULL3 = b">2\r\n$10\r\ninvalidate\r\n_\r\n"  # a RESP3 tracker's own null


@pytest.mark.parametrize("then, to_tracker, to_writer, to_spare", [
    ([ON], [], [], []),  # RESP2 without a redirect: nothing
    ([TO_SPARE], [], [], [NULL2]),
    ([OFF], [], [NULL2], []),  # OFF keeps the redirect
    ([TO_SPARE, OFF], [], [], [NULL2]),
    ([ON, OFF, ["HELLO", "3"]], [NULL3], [], []),  # ON without a redirect clears it; the protocol of EXEC's end
])
def test_the_flushers_own_null_goes_where_its_tracking_points_after_the_command(clients, then, to_tracker, to_writer,
                                                                                to_spare):
    """The tracker redirects to the writer and flushes inside a transaction that
    then changes its tracking: Redis sends the flusher's own null after EXEC (its
    pending invalidations) by the redirect and protocol the client has then, to
    itself (a RESP2 client without a redirect: nothing) or to the redirect of its
    last TRACKING ON, which OFF does not clear (multi_conn_hunt.py tracking 56104)."""
    tracker, writer, spare = clients
    writer.both("HELLO", "3")
    spare.both("HELLO", "3")
    track(tracker, redirect=writer)
    tracker("GET", "f")
    tracker("MULTI")
    tracker("FLUSHDB")
    for cmd in then:
        if cmd == TO_SPARE:
            kv_id, ref_id = ids(spare)
            assert tracker.kv.call(*cmd, kv_id) == tracker.ref.call(*cmd, ref_id) == b"+QUEUED\r\n"
        else:
            tracker(*cmd)
    if ["HELLO", "3"] in then:
        tracker.kv.call("EXEC"), tracker.ref.call("EXEC")  # HELLO's reply differs (version, id)
    else:
        tracker("EXEC")
    assert ahead_of_pong(tracker) == to_tracker
    assert ahead_of_pong(writer) == to_writer
    assert ahead_of_pong(spare) == to_spare


@pytest.mark.parametrize("flushes", [1, 2])
@pytest.mark.parametrize("mode, redirected", [([], False), ([], True), (["BCAST"], False), (["BCAST"], True)])
def test_the_flushers_own_null_comes_before_what_its_later_writes_tell_it(clients, mode, redirected, flushes):
    """A tracker flushes, then reads and writes a key in the same transaction:
    Redis holds both messages for the tracker's own tracking until after EXEC
    (its pending list: the null, then the key) and sends BCAST messages later
    still; kvrocks sent the key's message first (multi_conn_hunt.py tracking
    57006, 57012)."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    writer.both("HELLO", "3")
    receiver = writer if redirected else tracker
    track(tracker, *mode, redirect=writer if redirected else None)
    tracker("MULTI")
    for cmd in [["FLUSHDB"]] * flushes + [["GET", "x"], ["SET", "x", "v"]]:
        tracker(*cmd)
    tracker("EXEC")
    assert ahead_of_pong(receiver) == [NULL3] * flushes + [invalidate("x")]


def test_the_flushers_own_null_finds_its_redirect_gone_after_tracking_off(clients):
    """The tracker's redirect target closed, then the tracker flushes, turns
    tracking off and speaks RESP3 in one transaction: Redis tells it after EXEC
    that the redirect is broken (its pending null looks at the redirect OFF kept)."""
    tracker, _, spare = clients
    kv_id, ref_id = ids(spare)
    track(tracker, redirect=spare)
    spare.close()
    for c, gone in ((tracker.kv, kv_id), (tracker.ref, ref_id)):
        # Each server has dropped the closed client before the transaction runs.
        while b"id=%d " % gone in c.call("CLIENT", "LIST"):
            time.sleep(0.01)
    tracker("MULTI")
    for cmd in (["FLUSHDB"], OFF, ["HELLO", "3"]):
        tracker(*cmd)
    tracker.kv.call("EXEC"), tracker.ref.call("EXEC")
    broken = b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n"
    for c, gone in ((tracker.kv, kv_id), (tracker.ref, ref_id)):
        c.send_raw(encode(["PING"]))
        assert c.read_reply() == broken % gone
        assert c.read_reply() == b"+PONG\r\n"



def pipelined(d, cmds):
    """Sends cmds and a PING in one write; what comes back through the PONG, the same on both servers."""
    got = []
    for c in (d.kv, d.ref):
        c.send_raw(b"".join(encode(cmd) for cmd in cmds + [["PING"]]))
        frames = [c.read_reply()]
        while frames[-1] != b"+PONG\r\n":
            frames.append(c.read_reply())
        got.append(frames)
    assert got[0] == got[1], f"kvrocks {got[0]!r} != redis {got[1]!r}"
    return got[0]


EVAL_FLUSH = ["EVAL", "redis.call('flushdb') return 1", "0"]


@pytest.mark.parametrize("redirected", [False, True])
@pytest.mark.parametrize("cmds", [
    [["FLUSHDB"]],
    [["FLUSHALL"], ["GET", "x"], ["SET", "x", "v"]],
    [EVAL_FLUSH, ["GET", "x"], ["SET", "x", "v"], ["GET", "x"]],
    [["MULTI"], ["FLUSHDB"], ["FLUSHDB"], ["EXEC"], ["GET", "x"]],
])
def test_the_flushers_own_null_comes_before_the_reply_to_what_it_pipelined_next(clients, redirected, cmds):
    """The tracker sends the flush and its next commands in one write: Redis
    sends the flusher's own null right after the flush's reply (its pending
    invalidations, written before the next command runs), so it comes ahead of
    the next replies and of what those commands tell the tracker. kvrocks
    answered the whole pipeline first."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    writer.both("HELLO", "3")
    track(tracker, redirect=writer if redirected else None)
    tracker("GET", "f")
    replies = pipelined(tracker, cmds)
    if redirected:
        assert NULL3 not in replies
        told = ahead_of_pong(writer)
        flushes = sum(cmd in (["FLUSHDB"], ["FLUSHALL"], EVAL_FLUSH) for cmd in cmds)
        assert told[0] == NULL3 and len(told) == flushes + (["SET", "x", "v"] in cmds)
    else:
        assert NULL3 in replies


@pytest.mark.parametrize("cmds", [
    [["GET", "x"], ["SET", "x", "v"], ["GET", "x"]],
    [["GET", "x"], ["GET", "y"], ["MSET", "x", "1", "y", "2"], ["MGET", "x", "y"], ["DEL", "x"]],
    [["GET", "x"], ["MULTI"], ["SET", "x", "v"], ["GET", "x"], ["EXEC"], ["SET", "x", "w"]],
    [["GET", "x"], ["EVAL", "redis.call('set', KEYS[1], 'v') return redis.call('get', KEYS[1])", "1", "x"],
     ["INCR", "n"], ["GET", "n"], ["INCR", "n"]],
    [["LPUSH", "l", "a"], ["LRANGE", "l", "0", "-1"], ["LPOP", "l"], ["LLEN", "l"], ["RPUSH", "l", "b"]],
])
@pytest.mark.parametrize("options", [[], ["OPTOUT"], ["NOLOOP"]])
def test_own_writes_are_told_before_the_next_pipelined_reply(clients, cmds, options):
    """A RESP3 tracker pipelines reads and writes of the same keys: Redis writes
    the invalidation of a key the client read and then wrote right after that
    write's reply (its pending invalidations), ahead of the next command's.
    kvrocks invalidates when the worker's batch commits, which came after the
    whole pipeline had been answered."""
    tracker, _, _ = clients
    tracker.both("HELLO", "3")
    track(tracker, *options)
    replies = pipelined(tracker, cmds)
    assert (b">2\r\n$10\r\ninvalidate" in b"".join(replies)) == (options != ["NOLOOP"])


def test_own_writes_reach_the_redirect_target_before_what_the_next_command_publishes(clients):
    """The tracker redirects to a RESP3 subscriber and pipelines a write of a
    key it read and a PUBLISH to that subscriber: Redis sends the invalidation
    after the write, so ahead of the message."""
    tracker, writer, _ = clients
    writer.both("HELLO", "3")
    writer("SUBSCRIBE", "ch")
    track(tracker, redirect=writer)
    tracker("GET", "x")
    pipelined(tracker, [["SET", "x", "v"], ["PUBLISH", "ch", "m"]])
    assert ahead_of_pong(writer) == [invalidate("x"), b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n"]


@pytest.mark.parametrize("writer_tracks", [None, ["BCAST"], ["BCAST", "NOLOOP"]])
@pytest.mark.parametrize("cmds", [
    [["SET", "b", "v"], ["SET", "a", "v"], ["DEL", "b"], ["SET", "c", "v"]],
    [["MSET", "a", "1", "x", "2"], ["EVAL", "redis.call('set', 'b', 'e') return 1", "0"], ["INCR", "a"]],
    [["SET", "a", "v"], ["MULTI"], ["SET", "b", "v"], ["EXEC"], ["APPEND", "a", "z"]],
])
def test_bcast_tells_a_pipelines_changes_in_one_message(clients, writer_tracks, cmds):
    """A client pipelines several writes: Redis sends a BCAST client one
    message per prefix for what changed during the event-loop pass (each key
    with the client that changed it last, for NOLOOP); kvrocks sent one per
    command."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    writer.both("HELLO", "3")
    track(tracker, "BCAST", "PREFIX", "a", "PREFIX", "b")
    if writer_tracks:
        track(writer, *writer_tracks)
    pipelined(writer, cmds)
    told = ahead_of_pong(tracker)
    assert len(told) == 2
    if writer_tracks:
        ahead_of_pong(writer)


@pytest.mark.parametrize("cmds", [
    [["MULTI"], ["SET", "x", "e"], ["GET", "x"], ["EXPIRE", "x", "100"], ["GET", "x"], ["EXEC"]],
    [["MULTI"], ["SET", "x", "e"], ["GET", "x"], ["SET", "x", "f"], ["EXEC"]],
    [["EVAL", "redis.call('set', KEYS[1], 'e') redis.call('get', KEYS[1]) redis.call('append', KEYS[1], 'z') "
              "return redis.call('get', KEYS[1])", "1", "x"]],
])
def test_a_write_before_the_first_read_keeps_that_read_for_the_next_write(clients, cmds):
    """A transaction writes a key, reads it, writes it again and reads it: Redis
    invalidates at the second write (the read came before it) and tracks the
    key again. kvrocks, invalidating at the commit, had let the first write
    move the key's reads past the second one, and sent nothing
    (multi_conn_hunt.py tracking 58407 pipe)."""
    tracker, _, _ = clients
    tracker.both("HELLO", "3")
    track(tracker)
    assert invalidate("x") in pipelined(tracker, cmds)
    pipelined(tracker, [["SET", "x", "g"]])  # and whether it is tracked after


@pytest.mark.parametrize("cmds", [
    [["SET", "a1", "v"], ["FLUSHALL"]],
    [["SET", "a1", "v"], ["MULTI"], ["SET", "b", "v"], ["FLUSHDB"], ["EXEC"]],
    [["MSET", "a1", "v", "a2", "w"], ["SWAPDB", "0", "1"]],
])
@pytest.mark.parametrize("writer_tracks", [None, ["BCAST"]])
def test_bcast_messages_of_a_batch_before_a_flush_follow_its_null(clients, cmds, writer_tracks):
    """A pipeline writes, then flushes: Redis sends the flush's nulls during the
    command and BCAST clients the keys at the end of the pass, so after the
    nulls; kvrocks committed the batch ahead of the flush and told BCAST clients
    then (multi_conn_hunt.py tracking 58603, 58605 pipe)."""
    tracker, writer, _ = clients
    tracker.both("HELLO", "3")
    writer.both("HELLO", "3")
    track(tracker, "BCAST")
    if writer_tracks is not None:
        track(writer, *writer_tracks)
    pipelined(writer, cmds)
    ahead_of_pong(tracker)
    if writer_tracks is not None:
        ahead_of_pong(writer)
