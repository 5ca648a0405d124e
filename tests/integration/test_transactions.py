"""MULTI / EXEC / DISCARD / WATCH."""
import contextlib
import threading
import time

import pytest
import redis

from conftest import Differ, RawClient, encode, poll_until


def test_multi_exec_diff(diff):
    diff.run("""
    MULTI
    SET a 1
    INCR a
    GET a
    INCR missing-then-created
    EXEC
    GET a
    EXEC
    DISCARD
    MULTI
    MULTI
    SET b 2
    DISCARD
    GET b
    MULTI
    SET c 1
    NOSUCHCOMMAND
    EXEC
    GET c
    MULTI
    GET
    EXEC
    MULTI
    SET s str
    INCR s
    SET t ok
    EXEC
    GET t
    MULTI
    WATCH x
    EXEC
    WATCH w
    SET w changed
    MULTI
    UNWATCH
    SET u 1
    EXEC
    GET u
    WATCH w
    MULTI
    UNWATCH
    EXEC
    UNWATCH
    MULTI
    SELECT 1
    SET indb1 v
    SELECT 0
    EXEC
    GET indb1
    SELECT 1
    GET indb1
    SELECT 0
    MULTI
    FLUSHDB
    SET after flush
    EXEC
    DBSIZE
    """)


def test_watch_and_stream_group_commands_diff(diff):
    """Redis 7.0 changes a stream's groups, PELs and last id (XGROUP, XREADGROUP,
    XACK, XCLAIM, XAUTOCLAIM, XSETID) without signalModifiedKey: a WATCH of the
    stream survives them. A stream XGROUP CREATE ... MKSTREAM makes, and entries
    added or removed, fail it."""
    script = ["XADD s 1-0 a 1", "XADD s 2-0 a 2"]
    for op in ["XSETID s 10-0", "XGROUP CREATE s g 0", "XGROUP SETID s g 1-0", "XGROUP CREATECONSUMER s g c9",
               "XREADGROUP GROUP g c1 STREAMS s >", "XACK s g 2-0", "XCLAIM s g c2 0 1-0",
               "XAUTOCLAIM s g c3 0 0", "XGROUP DELCONSUMER s g c1", "XGROUP DESTROY s g",
               "XGROUP CREATE s2 g $ MKSTREAM", "XGROUP CREATE s2 g2 $ MKSTREAM", "XTRIM s MAXLEN 1",
               "XDEL s 99-0", "XADD s 20-0 x y"]:
        script += ["WATCH s s2", op, "MULTI", "PING", "EXEC"]
    diff.run("\n".join(script))


def test_watch_and_whole_database_operations_diff(diff):
    # FLUSHDB/FLUSHALL/SWAPDB abort EXEC only for watched keys that existed.
    diff.run("""
    SET present 1
    WATCH absent
    FLUSHALL
    MULTI
    PING
    EXEC
    SET present 1
    WATCH present
    FLUSHDB
    MULTI
    PING
    EXEC
    SELECT 1
    SET other 1
    SELECT 0
    WATCH other
    SWAPDB 0 1
    MULTI
    PING
    EXEC
    WATCH nothing
    SWAPDB 0 1
    MULTI
    PING
    EXEC
    WATCH later
    SWAPDB 0 1
    SET later 1
    MULTI
    PING
    EXEC
    """)


def watchers_of_k_after(port, dbs, txn, before=None):
    """Clients watching k in each of dbs (k set in db `before` first, if given),
    then one transaction (commands run from db 0); returns its result and, for
    each watcher, its EXEC's result or "aborted"."""
    a = redis.Redis(port=port)
    a.flushall()
    if before is not None:
        redis.Redis(port=port, db=before).set("k", "x")
    watchers = []
    for db in dbs:
        p = redis.Redis(port=port, db=db).pipeline()
        p.watch("k")
        p.multi()
        p.ping()
        watchers.append(p)
    t = a.pipeline(transaction=True)
    for cmd in txn:
        t.execute_command(*cmd)
    out = [t.execute()]
    for p in watchers:
        try:
            out.append(p.execute())
        except redis.WatchError:
            out.append("aborted")
    a.close()
    return out


def test_watch_across_a_swap_in_the_transaction_diff(kvrocks_server, redis_ref):
    # k exists in neither db when SWAPDB runs, so only the writes, in db 0 when
    # they ran, touch a watcher.
    txn = [["SET", "k", "v"], ["DEL", "k"], ["SWAPDB", "0", "1"]]
    ours = watchers_of_k_after(kvrocks_server.port, (0, 1), txn)
    assert ours == watchers_of_k_after(redis_ref.port, (0, 1), txn)
    assert ours[1:] == ["aborted", [True]]


def test_watchers_after_random_swaps_diff(kvrocks_server, redis_ref):
    # Writes, SELECTs and SWAPDBs in one transaction (several swaps undo one another in turn).
    import random
    ops = [["SET", "k", "v"], ["DEL", "k"], ["LPUSH", "l", "x"], ["SWAPDB", "0", "1"], ["SWAPDB", "1", "2"],
           ["SWAPDB", "0", "2"], ["SELECT", "0"], ["SELECT", "1"], ["SELECT", "2"]]
    for seed in range(150):
        rng = random.Random(seed)
        txn = [rng.choice(ops) for _ in range(rng.randint(1, 6))]
        before = rng.choice([None, 0, 1, 2])
        ours = watchers_of_k_after(kvrocks_server.port, (0, 1, 2), txn, before)
        assert ours == watchers_of_k_after(redis_ref.port, (0, 1, 2), txn, before), seed


def test_multi_exec_resp3_diff(diff):
    diff.both("HELLO", "3")
    diff.run("""
    WATCH k
    SET k changed
    MULTI
    GET k
    EXEC
    MULTI
    GET nothing
    EXEC
    """)


def test_subcommands_are_checked_before_queueing_diff(diff):
    # Redis refuses an unknown subcommand or a subcommand's wrong argument count
    # when MULTI queues it (EXECABORT), and before any command runs.
    diff.run("""
    MULTI
    SET k v
    XGROUP DESTROY s g extra
    EXEC
    MULTI
    CONFIG NOSUCH
    EXEC
    MULTI
    CONFIG GET
    OBJECT ENCODING
    EXEC
    GET k
    XGROUP DESTROY s g extra
    CLIENT NOSUCH x
    OBJECT FREQ
    COMMAND COUNT x
    DEBUG NOSUCH
    EVAL "return redis.pcall('config','nosuch')" 0
    EVAL "return redis.pcall('object','encoding')" 0
    """)


def test_watch_aborts_on_change_from_other_client(kvrocks_server):
    a = RawClient(kvrocks_server.port)
    b = RawClient(kvrocks_server.port)
    a.call("FLUSHALL")
    a.call("SET", "k", "1")
    assert a.call("WATCH", "k") == b"+OK\r\n"
    b.call("SET", "k", "2")
    a.call("MULTI")
    a.call("SET", "k", "3")
    assert a.call("EXEC") == b"*-1\r\n"
    assert a.call("GET", "k") == b"$1\r\n2\r\n"
    # After EXEC the watch is gone: a new transaction goes through.
    a.call("MULTI")
    a.call("SET", "k", "4")
    assert a.call("EXEC") == b"*1\r\n+OK\r\n"
    # A key unrelated to the watched one does not abort.
    a.call("WATCH", "k")
    b.call("SET", "other", "x")
    a.call("MULTI")
    a.call("INCR", "k")
    assert a.call("EXEC") == b"*1\r\n:5\r\n"
    # UNWATCH forgets.
    a.call("WATCH", "k")
    a.call("UNWATCH")
    b.call("SET", "k", "9")
    a.call("MULTI")
    a.call("GET", "k")
    assert a.call("EXEC") == b"*1\r\n$1\r\n9\r\n"
    # FLUSHALL touches every watched key, DEL too; a watched missing key being created too.
    for change in (("FLUSHALL",), ("DEL", "k"), ("SET", "newkey", "v")):
        a.call("SET", "k", "1")
        a.call("WATCH", "k", "newkey")
        b.call(*change)
        a.call("MULTI")
        a.call("PING")
        assert a.call("EXEC") == b"*-1\r\n", change
    a.close()
    b.close()


def test_exec_is_atomic_under_concurrency(kvrocks_server):
    """Concurrent optimistic increments with WATCH never lose an update."""
    kvrocks_server.client().set("counter", 0)
    per_thread = 100
    threads = 4

    def worker():
        c = kvrocks_server.client()
        done = 0
        while done < per_thread:
            with c.pipeline(transaction=True) as p:
                try:
                    p.watch("counter")
                    v = int(p.get("counter"))
                    p.multi()
                    p.set("counter", v + 1)
                    p.execute()
                    done += 1
                except redis.WatchError:
                    continue

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert int(kvrocks_server.client().get("counter")) == per_thread * threads


def test_incr_is_atomic_across_workers(kvrocks_server):
    kvrocks_server.client().delete("n")

    def worker():
        c = kvrocks_server.client()
        for _ in range(300):
            c.incr("n")

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert int(kvrocks_server.client().get("n")) == 1200


def test_refused_exec_discards_the_transaction_diff(diff):
    # Redis' rejectCommand: an EXEC refused before it runs ends the transaction
    # with EXECABORT and the reason.
    diff.run("""
    MULTI
    SET a 1
    EXEC extra
    PING inside
    GET a
    EXEC
    ACL SETUSER nexec on nopass +@all -exec
    AUTH nexec x
    MULTI
    SET a 1
    EXEC
    PING after
    AUTH default x
    ACL DELUSER nexec
    MULTI
    SAVE
    SHUTDOWN NOSAVE
    PING
    EXEC
    """)


def test_refused_exec_outside_multi_diff(diff, kvrocks_server, redis_ref):
    # Redis' rejectCommand answers any refused EXEC with execCommandAbort, in MULTI
    # or not: EXECABORT (counted as such in errorstats), and the client's watches go.
    other = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    diff("CONFIG", "RESETSTAT")
    diff("WATCH", "k")
    diff("EXEC", "extra")
    other("SET", "k", "changed")  # no longer watched: the transaction below runs
    diff.run("""
    MULTI
    GET k
    EXEC
    """)
    diff("ACL", "SETUSER", "nexec", "on", "nopass", "+@all", "-exec")
    diff("AUTH", "nexec", "x")
    diff("EXEC")
    diff("AUTH", "default", "x")
    diff("ACL", "DELUSER", "nexec")
    diff("INFO", "errorstats")
    other("CONFIG", "SET", "requirepass", "pw")
    try:
        fresh = Differ(kvrocks_server.port, redis_ref.port, flush=False)
        fresh("EXEC")
        fresh("EXEC", "extra")
        fresh.kv.close()
        fresh.ref.close()
    finally:
        other("AUTH", "pw")
        other("CONFIG", "SET", "requirepass", "")
        other.kv.close()
        other.ref.close()


def test_exec_during_a_busy_script_diff(kvrocks_server, redis_ref):
    replies = []
    for port in (kvrocks_server.port, redis_ref.port):
        c, txn, script = RawClient(port), RawClient(port), RawClient(port)
        c.call("CONFIG", "SET", "busy-reply-threshold", "10")
        c.call("SET", "xx", "1")
        txn.call("MULTI")
        txn.call("INCR", "xx")
        script.send_raw(encode(("EVAL", "while true do end", "0")))
        poll_until(c, ("PING",), b"-BUSY")
        got = [txn.call("INCR", "xx"), txn.call("EXEC")]
        assert c.call("SCRIPT", "KILL") == b"+OK\r\n"
        got += [script.read_reply(), c.call("GET", "xx"), txn.call("PING", "asdf")]
        c.call("CONFIG", "SET", "busy-reply-threshold", "5000")
        replies.append(got)
        for x in (c, txn, script):
            x.close()
    assert replies[0] == replies[1]
    assert replies[0][1].startswith(b"-EXECABORT Transaction discarded because of: BUSY ")


# Writes KEYS[1], runs past busy-reply-threshold for about 1.5 s, then writes KEYS[2].
BUSY_WRITER = ("redis.call('set', KEYS[1], 'early') local t = redis.call('time') "
               "local function now(x) return tonumber(x[1]) * 1000000 + tonumber(x[2]) end "
               "while now(redis.call('time')) < now(t) + 1500000 do end "
               "redis.call('set', KEYS[2], 'late') return 1")


@contextlib.contextmanager
def busy_writer(port, first, second, setup=()):
    """Runs `setup` on a fresh connection c (active expiry off), starts BUSY_WRITER
    on (first, second) from another and yields (c, script) once the server is busy;
    puts the settings back at the end."""
    c, script = RawClient(port), RawClient(port)
    c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    c.call("DEL", "k1", "k2", "k3")
    for cmd in setup:
        c.call(*cmd)
    c.call("CONFIG", "SET", "busy-reply-threshold", "50")
    try:
        script.send_raw(encode(("EVAL", BUSY_WRITER, "2", first, second)))
        poll_until(c, ("PING",), b"-BUSY")
        yield c, script
    finally:
        c.call("CONFIG", "SET", "busy-reply-threshold", "5000")
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.close()
        script.close()


def watch_during_a_busy_script(port):
    """Clients WATCH while the script is busy, then run a transaction after it:
    the script's write before their WATCH leaves EXEC alone, the one after it
    aborts EXEC (Redis runs WATCH in the middle of the script)."""
    watches = [("k1",), ("k2",), ("k3",), ("k1", "k3"), ("k3", "k2")]
    watchers = [RawClient(port) for _ in watches]  # on both workers
    with busy_writer(port, "k1", "k2") as (c, script):
        got = [w.call("WATCH", *keys) for w, keys in zip(watchers, watches)]
        got.append(script.read_reply())
        for i, w in enumerate(watchers):
            got += [w.call("MULTI"), w.call("SET", "done", str(i)), w.call("EXEC")]
        got.append(c.call("MGET", "k1", "k2", "done"))
    for w in watchers:
        w.close()
    return got


def test_watch_during_a_busy_script_diff(kvrocks_server, redis_ref):
    ours = watch_during_a_busy_script(kvrocks_server.port)
    assert ours == watch_during_a_busy_script(redis_ref.port)
    assert ours[0] == b"+OK\r\n"


# What a WATCH of k1 during the busy script sees, as Redis sees it; each case aborts
# EXEC: (script keys, setup, seconds to wait before the WATCH, commands after the script).
WATCH_K1_CASES = {
    # k1 has expired but is still there; the script sets it before the WATCH: the
    # key was live for that WATCH (kvrocks reads the committed data, where it was
    # stale), so its deletion later aborts EXEC.
    "stale_key_the_script_rewrote": (("k1", "k2"), [("SET", "k1", "old", "PX", "1"), ("DEBUG", "SLEEP", "0.05")],
                                     0, [("DEL", "k1")]),
    # k1's TTL ends while the script runs: Redis judges expiry by the clock it
    # stopped at the script's start, for every client, so k1 is live for the
    # WATCH and expired at EXEC.
    "ttl_ending_in_the_script": (("k3", "k2"), [("SET", "k1", "v", "PX", "300")], 0.5, []),
}


def watch_k1_during_a_busy_script(port, case):
    keys, setup, wait, after = WATCH_K1_CASES[case]
    watchers = [RawClient(port) for _ in range(2)]  # one on each worker
    with busy_writer(port, *keys, setup) as (c, script):
        time.sleep(wait)
        got = [w.call("WATCH", "k1") for w in watchers] + [script.read_reply()]
        got += [c.call(*cmd) for cmd in after]
        for w in watchers:
            got += [w.call("MULTI"), w.call("SET", "done", "1"), w.call("EXEC")]
            w.close()
    return got


@pytest.mark.parametrize("case", list(WATCH_K1_CASES))
def test_watch_during_a_busy_script_sees_the_key_as_redis_does_diff(kvrocks_server, redis_ref, case):
    ours = watch_k1_during_a_busy_script(kvrocks_server.port, case)
    assert ours == watch_k1_during_a_busy_script(redis_ref.port, case)
    assert ours[-1] == ours[-4] == b"*-1\r\n"


def test_mget_never_sees_half_of_an_mset(kvrocks_server):
    """MGET reads its keys from one RocksDB snapshot: beside MSETs on other
    connections (other workers) it sees all of one or none. With snapshots
    disabled (session 40's in-place rank counts) about 1 MGET in 200 was torn."""
    stop = threading.Event()

    def writer():
        c = kvrocks_server.client()
        i = 0
        while not stop.is_set():
            i += 1
            c.mset({"torn:a": i, "torn:b": i})
        c.close()

    writers = [threading.Thread(target=writer) for _ in range(2)]
    for t in writers:
        t.start()
    r = kvrocks_server.client()
    torn, reads = [], 0
    try:
        deadline = time.time() + 3
        while time.time() < deadline:
            a, b = r.mget("torn:a", "torn:b")
            reads += 1
            if a != b:
                torn.append((a, b))
    finally:
        stop.set()
        for t in writers:
            t.join()
    assert reads > 100 and torn == [], torn[:5]
