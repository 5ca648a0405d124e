"""A replica's link to its master is one of its clients, as in Redis: CLIENT LIST
shows it (flags=M, the master's address, the database and last command of the
stream), INFO clients and maxclients count it, CLIENT KILL closes it (the replica
resumes with PSYNC, keeping the client's id), and its commands show in MONITOR,
SLOWLOG, INFO commandstats and total_commands_processed. One redis-server 7.0
master feeds a Redis replica and a kvrocks replica; the two are compared."""
import re
import socket
import time

import pytest
import redis

from conftest import Kvrocks, RawClient, RealRedis, encode, wait_replicas_caught_up, wait_until

# Fields whose values depend on the process (ids, sockets, buffers, times).
VOLATILE = {"id", "laddr", "fd", "age", "idle", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl",
            "oll", "omem", "tot-mem"}


@pytest.fixture(scope="module")
def link():
    # No PINGs from the master during the tests: they would show in MONITOR and the stats.
    master = RealRedis(["--repl-ping-replica-period", "3600", "--repl-backlog-size", "16mb"])
    ref = RealRedis(["--replicaof", "127.0.0.1", str(master.port)])
    kv = Kvrocks(extra=["--replicaof", f"127.0.0.1 {master.port}"]).start()
    try:
        yield master, [ref, kv]
    finally:
        kv.stop()
        ref.cleanup()
        master.cleanup()


def synced(master, replicas):
    m = master.client()
    m.set("sync-mark", time.time())
    wait_replicas_caught_up(master, replicas)


def fields(line):
    return dict(f.split("=", 1) for f in line.split(" "))


def master_clients(r):
    """The CLIENT LIST TYPE master entries of replica r."""
    text = r.client().execute_command("CLIENT", "LIST", "TYPE", "master").decode()
    return [fields(x) for x in text.splitlines()]


def stable(entry):
    return {k: v for k, v in entry.items() if k not in VOLATILE}


def replica_addresses(master):
    """The addresses of the master's replica clients (the replicas' laddr)."""
    text = master.client().execute_command("CLIENT", "LIST", "TYPE", "replica").decode()
    return {fields(x)["addr"] for x in text.splitlines()}


def listing(c, *args):
    """CLIENT LIST's entries, from a redis-py client."""
    return [fields(x) for x in c.execute_command("CLIENT", "LIST", *args).decode().splitlines()]


def test_the_master_client_is_listed_as_redis_lists_it(link):
    master, replicas = link
    synced(master, replicas)  # before: the writes may have come in the RDB
    master.client(db=3).set("k", "v")
    synced(master, replicas)
    views = []
    for r in replicas:
        c = r.client()  # one connection for the whole check
        [entry] = listing(c, "TYPE", "master")
        assert entry["addr"] == f"127.0.0.1:{master.port}"
        assert entry["laddr"] in replica_addresses(master)
        assert int(entry["fd"]) > 0
        assert entry["flags"] == "M" and entry["user"] == "(superuser)"
        # The whole list holds it, by id too, and the other types do not.
        assert entry["id"] in [x["id"] for x in listing(c)]
        assert [x["flags"] for x in listing(c, "ID", entry["id"])] == ["M"]
        for other in ("normal", "pubsub", "replica"):
            assert all(x["flags"] != "M" for x in listing(c, "TYPE", other))
        # INFO clients counts it (connections the test closed may take a moment to go).
        wait_until(lambda: c.info("clients")["connected_clients"] == len(listing(c)), 10, "connected_clients")
        assert c.info("clients")["connected_clients"] >= 2
        views.append(stable(entry))
    # The last command was the mark's SET in database 0.
    assert views[0] == views[1]
    assert views[0]["cmd"] == "set" and views[0]["db"] == "0"

    # A transaction leaves EXEC as the last command, the stream in its database.
    pipe = master.client(db=5).pipeline(transaction=True)
    pipe.set("a", 1).incr("a")
    pipe.execute()
    wait_until(lambda: all(master_clients(r)[0]["db"] == "5" for r in replicas), 30, "the transaction")
    views = [stable(master_clients(r)[0]) for r in replicas]
    assert views[0] == views[1]
    assert views[0]["cmd"] == "exec"


def test_maxclients_counts_the_master_client(link):
    master, replicas = link
    synced(master, replicas)
    replies = []
    for r in replicas:
        c = RawClient(r.port)
        before = c.call("CONFIG", "GET", "maxclients")
        limit = int(before.split(b"\r\n")[-2])
        assert c.call("CONFIG", "SET", "maxclients", "2") == b"+OK\r\n"  # the master's client and c
        try:
            s = socket.create_connection(("127.0.0.1", r.port), timeout=10)
            s.sendall(b"PING\r\n")
            replies.append(s.recv(1024))
            s.close()
        finally:
            c.call("CONFIG", "SET", "maxclients", str(limit))
            c.close()
    assert replies[0] == replies[1] == b"-ERR max number of clients reached\r\n"


def kill(r, *how):
    return r.client().execute_command("CLIENT", "KILL", *how)


@pytest.mark.parametrize("how", ["type", "id", "addr", "laddr", "old-form"])
def test_client_kill_of_the_master_resumes_with_psync(link, how):
    master, replicas = link
    synced(master, replicas)
    m = master.client()
    full, partial = m.info("stats")["sync_full"], m.info("stats")["sync_partial_ok"]
    ids = []
    for r in replicas:
        [entry] = master_clients(r)
        # Kills of other kinds of clients leave the link alone.
        assert kill(r, "TYPE", "normal") == 0 and kill(r, "USER", "default") == 0
        assert kill(r, "TYPE", "pubsub") == 0 and kill(r, "TYPE", "replica") == 0
        if how == "type":
            assert kill(r, "TYPE", "master") == 1
        elif how == "id":
            assert kill(r, "ID", entry["id"]) == 1
        elif how == "addr":
            assert kill(r, "ADDR", entry["addr"]) == 1
        elif how == "laddr":
            assert kill(r, "LADDR", entry["laddr"]) == 1
        else:
            assert kill(r, entry["addr"]) == b"OK"
        ids.append((entry["id"], entry["laddr"]))
    wait_until(lambda: m.info("stats")["sync_partial_ok"] == partial + 2, 30, "both replicas to resume")
    m.set("after-kill", how)
    synced(master, replicas)
    assert m.info("stats")["sync_full"] == full
    for r, (old_id, old_laddr) in zip(replicas, ids):
        [entry] = master_clients(r)
        assert entry["id"] == old_id  # Redis' cached master comes back
        assert entry["laddr"] != old_laddr
        assert r.client().get("after-kill") == how.encode()


def test_following_again_makes_a_new_master_client(link):
    master, replicas = link
    synced(master, replicas)
    for r in replicas:
        c = r.client()
        [before] = master_clients(r)
        c.execute_command("REPLICAOF", "NO", "ONE")
        assert master_clients(r) == []
        c.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
        wait_until(lambda: master_clients(r) != [], 30, "the link to come back")
        [after] = master_clients(r)
        assert int(after["id"]) > int(before["id"])
    synced(master, replicas)


def monitor(port):
    s = RawClient(port)
    assert s.call("MONITOR") == b"+OK\r\n"
    return s


def monitored_lines(s, mark):
    """MONITOR's lines up to the one of mark, without their timestamps."""
    lines = []
    while True:
        line = s.read_reply().decode()
        assert line.startswith("+")
        shown = line[line.index(" ") + 1:].rstrip("\r\n")
        if mark in shown:
            return lines
        lines.append(shown)


def slowlog(r):
    """The slow log's entries of the master's commands: arguments, client name."""
    return [(e["command"], e["client_name"]) for e in r.client().slowlog_get(-1)
            if e["client_address"].endswith(b":" + str(r.master_port).encode())]


def test_the_masters_commands_show_in_monitor_slowlog_and_stats(link):
    master, replicas = link
    synced(master, replicas)
    watchers = []
    for r in replicas:
        c = r.client()
        c.config_set("slowlog-log-slower-than", 0)
        c.execute_command("SLOWLOG", "RESET")
        c.execute_command("CONFIG", "RESETSTAT")
        watchers.append(monitor(r.port))
    m = RawClient(master.port)
    for cmd in [["SELECT", "2"], ["SET", "x", "1"], ["MULTI"], ["INCR", "x"], ["LPUSH", "l", "a", "b"], ["EXEC"],
                ["SELECT", "0"], ["EVAL", "redis.call('set', KEYS[1], ARGV[1]) return 1", "1", "s", "v"],
                ["HSET", "h", "f", "v"], ["WAIT", "2", "5000"], ["SET", "monitor-mark", "1"]]:
        m.call(*cmd)
    m.close()
    shown = [monitored_lines(w, "monitor-mark") for w in watchers]
    for w in watchers:
        w.close()
    assert shown[0] == shown[1]
    assert f'[2 127.0.0.1:{master.port}] "INCR" "x"' in shown[0]
    synced(master, replicas)
    logs, counts, processed = [], [], []
    own = re.compile(r"cmdstat_(config|slowlog|monitor|info)")
    for r in replicas:
        r.master_port = master.port
        c = r.client()
        c.config_set("slowlog-log-slower-than", 10000)
        logs.append(slowlog(r))
        info = c.info("everything")  # commandstats and stats at one moment
        calls = {k: (v["calls"], v["rejected_calls"], v["failed_calls"]) for k, v in info.items()
                 if k.startswith("cmdstat_")}
        counts.append({k: v for k, v in calls.items() if not own.match(k)})
        # Our own commands (CONFIG, SLOWLOG, MONITOR, INFO) are left out.
        processed.append(info["total_commands_processed"] - sum(v[0] for k, v in calls.items() if own.match(k)))
    assert logs[0] == logs[1]
    assert (b"INCR x", b"") in logs[0]
    assert counts[0] == counts[1]
    assert counts[0]["cmdstat_replconf"][0] >= 1  # WAIT's GETACK
    assert processed[0] == processed[1]


def test_tracking_may_redirect_to_the_master_client(link):
    """CLIENT TRACKING REDIRECT takes the master client's id, as Redis' lookupClientByID
    finds it. The master client takes no invalidations (Redis sends none to a RESP2
    client outside Pub/Sub, and none to its master); once the link is gone (REPLICAOF
    NO ONE), the redirect is broken and the tracking client is told so."""
    master, replicas = link
    m = master.client()
    m.set("tracked", "1")
    synced(master, replicas)
    seen = []
    for r in replicas:
        [entry] = master_clients(r)
        t = RawClient(r.port)
        t.call("HELLO", "3")
        got = [t.call("CLIENT", "TRACKING", "ON", "REDIRECT", entry["id"]), t.call("GET", "tracked")]
        seen.append((r, t, entry["id"], got))
    m.set("tracked", "2")  # invalidates both readers' key: nothing reaches them
    synced(master, replicas)
    for r, t, master_id, got in seen:
        got.append(t.call("PING"))
        info = t.call("CLIENT", "TRACKINGINFO")
        got.append(info.replace(b":%s\r\n" % master_id.encode(), b":<master>\r\n"))
        got.append(t.call("GET", "tracked"))  # tracked again: the invalidation ended the first read's
        r.client().execute_command("REPLICAOF", "NO", "ONE")
        r.client().set("tracked", "3")  # the redirect target is gone now
        got.append(t.read_reply().replace(b":%s\r\n" % master_id.encode(), b":<master>\r\n"))
        got.append(t.call("CLIENT", "TRACKINGINFO").replace(b":%s\r\n" % master_id.encode(), b":<master>\r\n"))
        t.close()
    assert seen[0][3] == seen[1][3]
    assert seen[1][3][2] == b"+PONG\r\n"
    assert b"tracking-redir-broken" in seen[1][3][5]
    for r, *_ in seen:
        r.client().execute_command("REPLICAOF", "127.0.0.1", str(master.port))
    synced(master, replicas)
