"""Random sequences over several connections, kvrocks against redis-server 7.0,
comparing every connection's whole reply stream (replies, messages, pushes) after
each step; each step waits for its effects to arrive before the next.

  python3 tests/integration/multi_conn_hunt.py pubsub FIRST SEEDS STEPS
  python3 tests/integration/multi_conn_hunt.py blocking FIRST SEEDS STEPS [resp3] [full] [digest]
  python3 tests/integration/multi_conn_hunt.py tracking FIRST SEEDS STEPS [full] [pipe]
  python3 tests/integration/multi_conn_hunt.py watch FIRST SEEDS STEPS [full]
  python3 tests/integration/multi_conn_hunt.py notify FIRST SEEDS STEPS [full]
  python3 tests/integration/multi_conn_hunt.py replica-notify FIRST SEEDS STEPS [full]

pubsub: three connections subscribing, publishing, resetting, killing each other (no-arg
unsubscribes and pattern messages are compared in any order: Redis' dict order).
blocking: four connections blocking (BLPOP ... XREADGROUP) while others push,
rename, swap databases, unblock and kill each other; `digest` also compares
both databases' DEBUG DIGEST after each step. tracking: three RESP3 connections
with CLIENT TRACKING modes (not counted: Redis' placement of an invalidation
redirected to a connection that writes, a known difference; `pipe`: some steps
send two or three commands in one write, and BCAST messages that kvrocks splits
over a pipeline's commits (or, so, ahead of a flush's null) are not counted
either). watch: three
connections with WATCH, MULTI/EXEC and writes that expire, move, rename, flush
and swap the watched keys. notify: the
keyspace notifications of random_commands.py's commands; replica-notify: those of a
kvrocks and a redis-server replica of a master that runs them. Not part of CI (timing-based); what they find becomes a test.

Not every difference is kvrocks': when one SWAPDB (or FLUSHALL) frees clients
blocked on several keys of one database, Redis serves the keys in its hash
table's order, which a random seed per process picks, so two redis-servers
disagree too (blocking 95102 step 148: a BZPOPMAX on z1 and an XREAD on x1 freed
at once; the EVAL queued behind the BZPOPMAX runs before or after the XREAD's
pipeline; 95111 step 85, reduced: which of a BRPOP on l1 and a BLPOP on s1 is
served first, one run of Redis in three or so differs). So a blocking mismatch is
replayed on up to REPLAYS fresh redis-servers, and counted only if none of them
ends as kvrocks did: a filter, not a proof (a long history holds several such
choices, and all of them must come out as kvrocks' did).
"""
import random
import re
import select
import socket
import subprocess
import shutil
import sys
import tempfile
import time

from conftest import KVROCKS_BIN, REDIS_BIN, encode, free_port

HELLO_FIELDS = re.compile(rb"(\$7\r\nversion\r\n)\$\d+\r\n[^\r]*\r\n|(\$2\r\nid\r\n):\d+\r\n")


def start_redis(port, d):
    """A redis-server (DEBUG enabled, no persistence) on port with d as its dir."""
    return subprocess.Popen([REDIS_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", d, "--enable-debug-command", "yes"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_servers():
    """A kvrocks and a redis-server (DEBUG enabled) on free ports in a temp dir."""
    d = tempfile.mkdtemp()
    kp, rp = free_port(), free_port()
    ps = [subprocess.Popen([KVROCKS_BIN, "--port", str(kp), "--dir", d + "/kv", "--bind", "127.0.0.1",
                            "--enable-debug-command", "yes"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
          start_redis(rp, d)]
    time.sleep(1)
    return d, kp, rp, ps


def report(seed, step, what, a, b, hist):
    """Prints a mismatch (the whole history with `full`, else its last steps); returns 1."""
    print(f"seed {seed} step {step} {what}\n kv {a}\n rd {b}\n hist {hist if 'full' in sys.argv else hist[-10:]}",
          flush=True)
    return 1


def connect(port, n, resp3=False):
    """n connections to the server at port, RESP3 if asked."""
    conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    for c in conns:
        if resp3:
            c.sendall(b"HELLO 3\r\n")
            time.sleep(0.01)
            c.recv(1000)
    return conns


def open_conns(kp, rp, n, resp3=False):
    """n connections to each server (port -> list), RESP3 if asked."""
    return {port: connect(port, n, resp3) for port in (kp, rp)}


def close_all(conns):
    for port in conns:
        for c in conns[port]:
            c.close()
    time.sleep(0.2)  # the closed connections' subscriptions and blocks go asynchronously


def stop_servers(d, ps):
    for p in ps:
        p.terminate()
    shutil.rmtree(d, ignore_errors=True)


def hunt(first, seeds, one_seed):
    """Runs one_seed(seed, kvrocks_port, redis_port) -> mismatches for each seed
    against one pair of servers, and prints the total."""
    d, kp, rp, ps = start_servers()
    bad = 0
    try:
        for seed in range(first, first + seeds):
            bad += one_seed(seed, kp, rp)
    finally:
        stop_servers(d, ps)
    print("bad", bad, flush=True)


def parse_one(buf, pos):
    """End of the reply starting at pos, or None if incomplete."""
    eol = buf.find(b"\r\n", pos)
    if eol < 0: return None
    t = buf[pos:pos+1]
    if t in b"+-:_,#(":
        return eol + 2
    if t in b"$=!":
        n = int(buf[pos+1:eol])
        if n < 0: return eol + 2
        end = eol + 2 + n + 2
        return end if len(buf) >= end else None
    if t in b"*~>%|":
        n = int(buf[pos+1:eol])
        if n < 0: return eol + 2
        if t in b"%|": n *= 2
        p = eol + 2
        for _ in range(n):
            p = parse_one(buf, p)
            if p is None: return None
        return p
    raise ValueError(buf[pos:pos+20])

def drain(sock, settle=0.03, first_wait=0.3, expect=False):
    data = b""
    deadline = time.time() + (first_wait if expect else settle)
    while True:
        r, _, _ = select.select([sock], [], [], max(0, deadline - time.time()))
        if not r:
            # complete replies only
            break
        c = sock.recv(65536)
        if not c:
            data += b"<closed>"
            break
        data += c
        deadline = time.time() + settle
    return data

def split(data):
    out, p = [], 0
    while p < len(data):
        if data[p:].startswith(b"<closed>"):
            out.append(b"<closed>"); break
        e = parse_one(data, p)
        if e is None:
            out.append(data[p:]); break
        out.append(data[p:e]); p = e
    return out


CH = ["ch1", "ch2", "x"]
PAT = ["ch*", "c?2", "*", "x"]
def pubsub_command(rng):
    r = rng.random()
    k = rng.choice
    opts = [
        lambda: ["SUBSCRIBE"] + rng.sample(CH, rng.randint(1, 2)),
        lambda: ["PSUBSCRIBE"] + rng.sample(PAT, rng.randint(1, 2)),
        lambda: ["SSUBSCRIBE"] + rng.sample(CH, rng.randint(1, 2)),
        lambda: ["UNSUBSCRIBE"] + rng.sample(CH, rng.randint(0, 2)),
        lambda: ["PUNSUBSCRIBE"] + rng.sample(PAT, rng.randint(0, 2)),
        lambda: ["SUNSUBSCRIBE"] + rng.sample(CH, rng.randint(0, 2)),
        lambda: ["PUBLISH", k(CH), k(["m", "", "hello"])],
        lambda: ["PUBLISH", k(CH), k(["m", "", "hello"])],
        lambda: ["SPUBLISH", k(CH), "sm"],
        lambda: ["PUBSUB", "NUMSUB"] + rng.sample(CH, rng.randint(0, 3)),
        lambda: ["PUBSUB", "NUMPAT"],
        lambda: ["PUBSUB", "SHARDNUMSUB"] + rng.sample(CH, rng.randint(0, 2)),
        lambda: ["PING"] + ([k(["", "p"])] if rng.random() < 0.5 else []),
        lambda: ["RESET"],
        lambda: ["HELLO", k(["2", "3"])],
        lambda: ["GET", "k"],
        lambda: ["ECHO", "e"],
        lambda: ["SUBSCRIBE"],
        lambda: ["CLIENT", "REPLY", k(["ON", "OFF", "SKIP"])],
        lambda: ["MULTI"], lambda: ["EXEC"], lambda: ["DISCARD"],
        lambda: ["QUIT"],
        lambda: ["CLIENT", "KILL", "ID", "<conn>", "SKIPME", k(["yes", "no"])],
        lambda: ["CLIENT", "KILL", "TYPE", "pubsub"],
        lambda: ["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"],
    ]
    return k(opts)()


def send_step(sock, cmd, target_id):
    """Sends cmd (or a list of commands, in one write) with "<conn>" naming the
    target connection's client id (a connection killed meanwhile takes nothing)."""
    cmds = cmd if isinstance(cmd[0], list) else [cmd]
    try:
        sock.sendall(b"".join(encode([target_id if x == "<conn>" else x for x in c]) for c in cmds))
    except OSError:
        pass


def client_id(sock):
    """sock's client id, asked right after connecting."""
    sock.sendall(b"CLIENT ID\r\n")
    return drain(sock, expect=True)[1:-2].decode()


def pubsub_main(first, seeds, steps):
    def one_seed(seed, kp, rp):
        found = 0
        rng = random.Random(seed)
        conns = open_conns(kp, rp, 3)
        ids = {port: [client_id(c) for c in conns[port]] for port in conns}
        hist = []
        for step in range(steps):
            i = rng.randrange(3)
            cmd = pubsub_command(rng)
            target = rng.randrange(3)
            hist.append((i, cmd))
            outs = {}
            for port in (kp, rp):
                s = conns[port][i]
                sent = [ids[port][target] if x == "<conn>" else x for x in cmd]
                try:
                    s.sendall(encode(sent))
                except OSError:
                    pass
                res = []
                for j in range(3):
                    res.append(split(drain(conns[port][j], expect=(j == i))))
                outs[port] = res
            a, b = outs[kp], outs[rp]
            # HELLO replies carry ids/versions: compare only the first byte, and mask
            # them in a HELLO that a transaction ran
            for res in (a, b):
                if cmd[0] == "HELLO":
                    res[i] = [x[:1] for x in res[i]]
                res[i] = [HELLO_FIELDS.sub(lambda m: (m.group(1) or m.group(2)) + b"?\r\n", x) for x in res[i]]
                if cmd[0] in ("UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE", "RESET") and len(cmd) == 1:
                    # dict order: names as a set, counts as a multiset
                    names = sorted(re.sub(rb":\d+\r\n$", b"", x) for x in res[i])
                    counts = sorted(re.findall(rb":(\d+)\r\n$", x)[0] if re.findall(rb":(\d+)\r\n$", x) else b"" for x in res[i])
                    res[i] = [names, counts]
                for j in range(3):
                    # pmessages of one message come in pattern-dict order
                    out, run = [], []
                    for x in res[j]:
                        if b"pmessage" in x[:20]:
                            run.append(x)
                        else:
                            out += sorted(run) + [x]; run = []
                    res[j] = out + sorted(run)
                if cmd[0] == "QUIT":
                    res[i] = [x for x in res[i] if x != b"<closed>"]
            if a != b:
                print(f"seed {seed} step {step} conn {i} {cmd}\n kv {a}\n rd {b}\n hist {hist[-8:]}", flush=True)
                found += 1
                break
            for j in range(3):  # QUIT, CLIENT KILL: a new connection in its place
                if b"<closed>" in outs[kp][j] or cmd[0] == "QUIT" and j == i:
                    for port in (kp, rp):
                        conns[port][j].close()
                        conns[port][j] = socket.create_connection(("127.0.0.1", port))
                        ids[port][j] = client_id(conns[port][j])
        close_all(conns)
        return found

    hunt(first, seeds, one_seed)


L = ["l1", "l2", "s1"]
Z = ["z1", "z2"]
X = ["x1"]
def blocking_command(rng):
    k = rng.choice
    return k([
        lambda: ["BLPOP"] + rng.sample(L, rng.randint(1, 2)) + ["0"],
        lambda: ["BRPOP"] + rng.sample(L, rng.randint(1, 2)) + ["0"],
        lambda: ["BRPOPLPUSH", k(L), k(L), "0"],
        lambda: ["BLMOVE", k(L), k(L), k(["LEFT", "RIGHT"]), k(["LEFT", "RIGHT"]), "0"],
        lambda: ["BLMPOP", "0", "2", "l1", "l2", k(["LEFT", "RIGHT"])] + (["COUNT", "2"] if rng.random() < .5 else []),
        lambda: ["BZPOPMIN"] + rng.sample(Z, rng.randint(1, 2)) + ["0"],
        lambda: ["BZPOPMAX", k(Z), "0"],
        lambda: ["BZMPOP", "0", "2", "z1", "z2", k(["MIN", "MAX"])],
        lambda: ["XREAD", "BLOCK", "0", "STREAMS", "x1", "$"],
        lambda: ["LPUSH", k(L)] + [k("abc") for _ in range(rng.randint(1, 3))],
        lambda: ["RPUSH", k(L)] + [k("abc") for _ in range(rng.randint(1, 3))],
        lambda: ["LPUSH", k(L), "v"],
        lambda: ["ZADD", k(Z), str(rng.randint(0, 5)), k("mno")],
        lambda: ["XADD", "x1", f"{rng.randint(1, 10**6)}-1", "f", "v"],
        lambda: ["LMOVE", k(L), k(L), "LEFT", "RIGHT"],
        lambda: ["DEL", k(L + Z)],
        lambda: ["SET", k(L + Z), "str"],
        lambda: ["MULTI"], lambda: ["EXEC"],
        lambda: ["RENAME", k(L), k(L)],
        lambda: ["SORT", k(L), "ALPHA", "STORE", k(L)],
        lambda: ["ZUNIONSTORE", k(Z), "1", k(Z)],
        lambda: ["LRANGE", k(L), "0", "-1"],
        lambda: ["CLIENT", "UNBLOCK", "ID", k(["TIMEOUT", "ERROR"])],
        lambda: ["CLIENT", "KILL", "ID", "ID"],
        lambda: ["XGROUP", "CREATE", "x1", k(["g1", "g2"]), k(["$", "0"]), "MKSTREAM"],
        lambda: ["XREADGROUP", "GROUP", k(["g1", "g2"]), k(["c1", "c2"]), "BLOCK", "0", "STREAMS", "x1", ">"],
        lambda: ["XREADGROUP", "GROUP", k(["g1", "g2"]), "c1", "COUNT", "1", "BLOCK", "0", "NOACK", "STREAMS", "x1", ">"],
        lambda: ["XGROUP", "DESTROY", "x1", k(["g1", "g2"])],
        lambda: ["DEL", "x1"],
        lambda: ["XADD", "x1", f"{rng.randint(1, 10**6)}-1", "f", "v"],
        lambda: ["BLPOP", k(L), "0"],
        lambda: ["LPUSH", k(L), "v"],
        lambda: ["ZADD", k(Z), "1", "m", "2", "n"],
        lambda: ["EVAL", "redis.call('lpush', KEYS[1], 'e'); return redis.call('rpush', KEYS[1], 'f')", "1", k(L)],
        lambda: ["SWAPDB", "0", "1"],
        lambda: ["SELECT", k(["0", "1"])],
        lambda: ["FLUSHDB"],
    ])()


def blocking_step(conns, ids, port, i, cmd, target, digest, resp3=False):
    """Sends cmd on connection i of the server at port; returns what every connection
    then received (and both databases' digests if asked)."""
    c = list(cmd)
    if c[:2] == ["CLIENT", "UNBLOCK"]:
        c[2] = ids[target][1:-2].decode()
    if c[:2] == ["CLIENT", "KILL"]:
        c[3] = ids[target][1:-2].decode()
    try:
        conns[i].sendall(encode(c))
    except OSError:
        pass
    time.sleep(0.02)
    out = [split(drain(conns[j], settle=0.04)) for j in range(4)]
    for j in range(4):  # killed: a new connection in its place
        if b"<closed>" in out[j]:
            conns[j].close()
            conns[j] = connect(port, 1, resp3)[0]
            conns[j].sendall(b"CLIENT ID\r\n")
            ids[j] = conns[j].recv(100)
    if digest:
        cc = socket.create_connection(("127.0.0.1", port))
        dg = b""
        for db in ("0", "1"):
            cc.sendall(encode(["SELECT", db])); drain(cc, expect=True)
            cc.sendall(encode(["DEBUG", "DIGEST"])); dg += drain(cc, expect=True)
            cc.sendall(encode(["XINFO", "GROUPS", "x1"])); dg += drain(cc, expect=True)
        cc.close()
        out.append(dg)
    return out


def blocking_conns(port, resp3):
    """Four connections to a flushed server, and their CLIENT ID replies."""
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"FLUSHALL\r\n"); s.recv(100); s.close()
    conns = connect(port, 4, resp3)
    ids = []
    for s in conns:
        s.sendall(b"CLIENT ID\r\n"); ids.append(s.recv(100))
    return conns, ids


def redis_replay(steps, resp3, digest):
    """The last step's outputs of a fresh redis-server given the same steps
    ((conn, cmd, target)). They may differ from run to run: Redis serves the keys
    one SWAPDB or FLUSHALL frees in its hash table's order, which a random seed per
    process picks."""
    d = tempfile.mkdtemp()
    port = free_port()
    p = start_redis(port, d)
    time.sleep(1)
    try:
        conns, ids = blocking_conns(port, resp3)
        for i, cmd, target in steps:
            out = blocking_step(conns, ids, port, i, cmd, target, digest, resp3)
        for c in conns:
            c.close()
        return out
    finally:
        stop_servers(d, [p])


REPLAYS = 10


def killed_alike(a, b):
    """a (kvrocks' streams), where a connection both servers closed got replies
    redis-server never sent, taken as b's. Redis frees a killed client with the
    replies it has not written yet, and it writes replies only after it has run
    the clients its commands freed: so a client that is killed by a client its
    own last command woke never sees that command's reply (blocking 50304, step
    82: an EXEC that serves a BLPOP with a CLIENT KILL of the EXEC's client
    pipelined behind). kvrocks writes the reply first."""
    out = list(a)
    for j, (x, y) in enumerate(zip(a, b)):
        if x[-1:] == y[-1:] == [b"<closed>"] and x[:len(y) - 1] == y[:-1]:
            out[j] = y
    return out


def blocking_main(first, seeds, steps):
    resp3 = "resp3" in sys.argv
    digest = "digest" in sys.argv

    def one_seed(seed, kp, rp):
        found = 0
        rng = random.Random(seed)
        conns, ids = {}, {}
        for port in (kp, rp):
            conns[port], ids[port] = blocking_conns(port, resp3)
        played = []
        for step in range(steps):
            i = rng.randrange(4)
            cmd = blocking_command(rng)
            target = rng.randrange(4)
            played.append((i, cmd, target))
            outs = {port: blocking_step(conns[port], ids[port], port, i, cmd, target, digest, resp3)
                    for port in (kp, rp)}
            a, b = killed_alike(outs[kp], outs[rp]), outs[rp]
            if a != b:
                if any(redis_replay(played, resp3, digest) == a for _ in range(REPLAYS)):
                    print(f"seed {seed} step {step}: a fresh redis-server ends as kvrocks did; not counted", flush=True)
                else:
                    found += report(seed, step, f"conn {i} {cmd} target {target}", a, b,
                                    [(j, c) for j, c, _ in played])
                break
        close_all(conns)
        return found

    hunt(first, seeds, one_seed)


K = ["a1", "a2", "b1", "x"]
def tracking_command(rng, i):
    k = rng.choice
    return k([
        lambda: ["CLIENT", "TRACKING", "ON"] + k([[], ["BCAST"], ["BCAST", "PREFIX", "a"], ["OPTIN"], ["OPTOUT"], ["NOLOOP"],
                                                 ["BCAST", "PREFIX", "a", "PREFIX", "b", "NOLOOP"], ["PREFIX", "a"], ["OPTIN", "OPTOUT"]]),
        lambda: ["CLIENT", "TRACKING", "OFF"],
        lambda: ["CLIENT", "CACHING", k(["YES", "NO"])],
        lambda: ["GET", k(K)], lambda: ["GET", k(K)], lambda: ["MGET"] + rng.sample(K, 2),
        lambda: ["SET", k(K), k(["v", "w"])], lambda: ["SET", k(K), "v"], lambda: ["DEL", k(K)],
        lambda: ["INCR", k(K)], lambda: ["APPEND", k(K), "z"], lambda: ["EXISTS", k(K)], lambda: ["STRLEN", k(K)],
        lambda: ["EXPIRE", k(K), "100"], lambda: ["PERSIST", k(K)], lambda: ["RENAME", k(K), k(K)],
        lambda: ["MULTI"], lambda: ["EXEC"], lambda: ["FLUSHALL"], lambda: ["FLUSHDB"],
        lambda: ["CLIENT", "TRACKINGINFO"], lambda: ["CLIENT", "GETREDIR"],
        lambda: ["EVAL", "return redis.call('get', KEYS[1])", "1", k(K)],
        lambda: ["EVAL", "return redis.call('set', KEYS[1], 'e')", "1", k(K)],
        lambda: ["SELECT", k(["0", "1"])], lambda: ["SWAPDB", "0", "1"],
        lambda: ["HSET", "h", "f", "v"], lambda: ["HGET", "h", "f"],
        lambda: ["RESET"],
        lambda: ["CLIENT", "TRACKING", "ON", "REDIRECT", "<conn>"] + k([[], ["BCAST"], ["OPTIN"]]),
        lambda: ["CLIENT", "KILL", "ID", "<conn>"],
    ])()


def name_ids(data, ids, getredir):
    """data with the client ids that CLIENT TRACKINGINFO and tracking-redir-broken
    give (and CLIENT GETREDIR's reply, if data is one) replaced by their
    connection's index (the two servers number clients differently)."""
    names = {i.encode(): b"<c%d>" % n for n, i in enumerate(ids)}
    pattern = rb"((?:redirect|tracking-redir-broken)\r\n" + (rb"|^" if getredir else b"") + rb"):(-?\d+)\r\n"
    return re.sub(pattern, lambda m: m.group(1) + b":" + names.get(m.group(2), m.group(2)) + b"\r\n", data)


def redirect_placement_only(a, b, i, redis_port, conn_id):
    """Whether streams a (kvrocks) and b (Redis) differ only where docs/design.md
    says they may: connection i writes while another client redirects its
    invalidations to it, and Redis put an invalidation before or inside the
    reply (where its command signals the key) that kvrocks sends after it."""
    if any(a[j] != b[j] for j in range(3) if j != i):
        return False
    pushes = [[x for x in s if x.startswith(b">")] for s in (a[i], b[i])]
    replies = [[x for x in s if not x.startswith(b">")] for s in (a[i], b[i])]
    if pushes[0] != pushes[1] or replies[0] != replies[1]:
        return False
    with socket.create_connection(("127.0.0.1", redis_port)) as c:
        c.sendall(b"CLIENT LIST\r\n")
        listing = drain(c, expect=True)
    return any(f"redir={conn_id} ".encode() in line and not f"id={conn_id} ".encode() in line
               for line in listing.split(b"\n"))


INVALIDATE = re.compile(rb">2\r\n\$10\r\ninvalidate\r\n\*(\d+)\r\n((?:\$\d+\r\n[^\r]*\r\n)*)$")


FLUSH_NULL = re.compile(rb">2\r\n\$10\r\ninvalidate\r\n(?:_|\$-1)\r\n$")


def merged_invalidations(stream):
    """stream with each run of adjacent invalidation messages turned into one
    entry: its flush nulls, then the keys the others name (sorted, once each)."""
    out, run = [], None
    for frame in stream + [b""]:
        m = INVALIDATE.match(frame)
        if m or FLUSH_NULL.match(frame):
            run = run or ([], set())
            if m:
                run[1].update(re.findall(rb"\$\d+\r\n([^\r]*)\r\n", m.group(2)))
            else:
                run[0].append(frame)
            continue
        if run is not None:
            out.append((tuple(sorted(run[0])), tuple(sorted(run[1]))))
            run = None
        out.append(frame)
    return out[:-1]


def bcast_split_only(a, b):
    """Whether streams a (kvrocks) and b (Redis) differ only where docs/design.md
    says they may for a pipeline: BCAST messages of one pass that kvrocks sends
    per commit (split by an exclusive command or a tracking writer's wait), and
    those of a commit that a tracking writer's wait ended ahead of its flush,
    which come before the flush's null (Redis: after it)."""
    return [merged_invalidations(x) for x in a] == [merged_invalidations(x) for x in b]


def tracking_main(first, seeds, steps):
    pipe = "pipe" in sys.argv

    def one_seed(seed, kp, rp):
        found = 0
        rng = random.Random(seed)
        conns = open_conns(kp, rp, 3, True)
        ids = {port: [client_id(c) for c in conns[port]] for port in conns}
        seen = {port: list(ids[port]) for port in conns}  # every id so far, named by place
        in_multi = [False] * 3
        for port in conns:
            conns[port][0].sendall(b"FLUSHALL\r\n")
            drain(conns[port][0], expect=True)
        hist = []
        for step in range(steps):
            i = rng.randrange(3)
            # `pipe`: some steps send two or three commands in one write.
            n = rng.randrange(2, 4) if pipe and rng.random() < 0.3 else 1
            cmds = [tracking_command(rng, i) for _ in range(n)]
            target = rng.randrange(3)
            if i == 2 and any(c[:2] == ["CLIENT", "TRACKING"] for c in cmds):
                continue
            multi = in_multi[i]
            skip = False
            for c in cmds:
                if multi and c[:2] == ["CLIENT", "GETREDIR"]:
                    skip = True  # an id inside EXEC's reply: not told from other integers
                if c[0] in ("MULTI", "EXEC", "RESET"):
                    multi = c[0] == "MULTI"
            if skip or (n > 1 and any(c[:2] == ["CLIENT", "GETREDIR"] for c in cmds)):
                continue  # GETREDIR's id is told from other integers only alone
            in_multi[i] = multi
            cmd = cmds[0] if n == 1 else cmds
            hist.append((i, cmd, target))
            outs = {}
            for port in (kp, rp):
                send_step(conns[port][i], cmd, ids[port][target])
                time.sleep(0.01)
                getredir = any(c[:2] == ["CLIENT", "GETREDIR"] for c in cmds)
                outs[port] = [[name_ids(x, seen[port], getredir and j == i)
                               for x in split(drain(conns[port][j], settle=0.03, expect=(j == i)))] for j in range(3)]
            a, b = outs[kp], outs[rp]
            if a != b and not (redirect_placement_only(a, b, i, rp, ids[rp][i]) or
                               (n > 1 and bcast_split_only(a, b))):
                found += report(seed, step, f"conn {i} {cmd} target {target}", a, b, hist)
                break
            for j in range(3):  # killed: a new connection in its place
                if b"<closed>" in a[j]:
                    for port in (kp, rp):
                        conns[port][j].close()
                        conns[port][j] = connect(port, 1, True)[0]
                        ids[port][j] = client_id(conns[port][j])
                        seen[port].append(ids[port][j])
                    in_multi[j] = False
        close_all(conns)
        return found

    hunt(first, seeds, one_seed)


W = ["w1", "w2", "w3"]
def watch_command(rng):
    k = rng.choice
    return k([
        lambda: ["WATCH", k(W)], lambda: ["WATCH"] + rng.sample(W, 2), lambda: ["UNWATCH"],
        lambda: ["MULTI"], lambda: ["EXEC"], lambda: ["EXEC"], lambda: ["DISCARD"],
        lambda: ["GET", k(W)], lambda: ["SET", k(W), k(["v", "w"])], lambda: ["INCR", k(W)], lambda: ["DEL", k(W)],
        lambda: ["EXISTS", k(W)], lambda: ["SET", k(W), "v", "PX", "1"], lambda: ["PEXPIRE", k(W), "1"],
        lambda: ["EXPIRE", k(W), "100"], lambda: ["EXPIREAT", k(W), "1"], lambda: ["PERSIST", k(W)],
        lambda: ["SET", k(W), "v", "EX", "100"], lambda: ["GETEX", k(W), "PERSIST"], lambda: ["GETDEL", k(W)],
        lambda: ["APPEND", k(W), k(["", "z"])], lambda: ["SETRANGE", k(W), "0", k(["", "q"])],
        lambda: ["LPUSH", k(W), "a"], lambda: ["LPOP", k(W)], lambda: ["SADD", k(W), "m"], lambda: ["SREM", k(W), "m"],
        lambda: ["HSET", k(W), "f", "v"], lambda: ["HDEL", k(W), "f"],
        lambda: ["RENAME", k(W), k(W)], lambda: ["COPY", k(W), k(W), "REPLACE"], lambda: ["MOVE", k(W), k(["0", "1"])],
        lambda: ["FLUSHDB"], lambda: ["FLUSHALL"], lambda: ["SWAPDB", "0", "1"], lambda: ["SELECT", k(["0", "1"])],
        lambda: ["EVAL", "return redis.call('set', KEYS[1], 'e')", "1", k(W)],
        lambda: ["EVAL", "return redis.call('get', KEYS[1])", "1", k(W)],
        lambda: ["RESET"], lambda: ["CLIENT", "KILL", "ID", "<conn>"],
    ])()


def watch_main(first, seeds, steps):
    """Three connections watching keys, running transactions and writing: EXEC's
    outcome and every reply compared."""
    def one_seed(seed, kp, rp):
        rng = random.Random(seed)
        conns = open_conns(kp, rp, 3)
        ids = {port: [client_id(c) for c in conns[port]] for port in conns}
        for port in conns:
            conns[port][0].sendall(b"FLUSHALL\r\n")
            drain(conns[port][0], expect=True)
        hist = []
        for step in range(steps):
            i, cmd, target = rng.randrange(3), watch_command(rng), rng.randrange(3)
            hist.append((i, cmd, target))
            outs = {}
            for port in (kp, rp):
                send_step(conns[port][i], cmd, ids[port][target])
                outs[port] = [split(drain(conns[port][j], expect=(j == i))) for j in range(3)]
            a, b = outs[kp], outs[rp]
            if a != b:
                found = report(seed, step, f"conn {i} {cmd} target {target}", a, b, hist)
                close_all(conns)
                return found
            for j in range(3):  # killed: a new connection in its place
                if b"<closed>" in a[j]:
                    for port in (kp, rp):
                        conns[port][j].close()
                        conns[port][j] = connect(port, 1)[0]
                        ids[port][j] = client_id(conns[port][j])
        close_all(conns)
        return 0

    hunt(first, seeds, one_seed)


def notify_main(first, seeds, steps):
    """Commands of random_commands.py's generator on one connection while another
    gets every keyspace notification (PSUBSCRIBE __key*__:*, events KEA): the
    notification streams compared (the commands' replies are random_commands.py's)."""
    from random_commands import Gen

    def one_seed(seed, kp, rp):
        gen = Gen(seed)
        conns = open_conns(kp, rp, 2)
        for port in conns:
            for cmd in (["CONFIG", "SET", "notify-keyspace-events", "KEA"], ["FLUSHALL"]):
                conns[port][0].sendall(encode(cmd))
                drain(conns[port][0], expect=True)
            conns[port][1].sendall(encode(["PSUBSCRIBE", "__key*__:*"]))
            drain(conns[port][1], expect=True)
        hist = []
        found = 0
        for step in range(steps):
            cmd = gen.command()
            # Other servers' payloads, and waits that end by time.
            if cmd[0].startswith("restore-from") or cmd[0].upper() in ("BLPOP", "BRPOP", "BLMOVE", "BRPOPLPUSH",
                                                                        "BZPOPMIN", "BZPOPMAX", "BLMPOP", "BZMPOP",
                                                                        "XREAD", "XREADGROUP", "WAIT", "DEBUG"):
                continue
            hist.append(cmd)
            outs = {}
            for port in (kp, rp):
                send_step(conns[port][0], cmd, "")
                drain(conns[port][0], expect=True)
                outs[port] = split(drain(conns[port][1], settle=0.05))
            if outs[kp] != outs[rp]:
                found = report(seed, step, f"{cmd}", outs[kp], outs[rp], hist)
                break
        close_all(conns)
        return found

    hunt(first, seeds, one_seed)


class ReplicaNotifications:
    """A redis-server master that a kvrocks and a redis-server replicate, each
    replica with a subscriber to every keyspace notification (events KEA)."""

    def __init__(self):
        from conftest import Kvrocks, RawClient, RealRedis
        self.master = RealRedis(extra=["--repl-backlog-size", "256mb"])
        self.replicas = [Kvrocks(extra=["--replicaof", f"127.0.0.1 {self.master.port}"]).start(),
                         RealRedis(extra=["--replicaof", f"127.0.0.1 {self.master.port}"])]
        self.subs = []
        for r in self.replicas:
            c = RawClient(r.port)
            deadline = time.time() + 30
            while b"master_link_status:up" not in c.call("INFO", "replication"):
                if time.time() > deadline:
                    raise RuntimeError("the replicas' links did not come up")
                time.sleep(0.05)
            assert c.call("CONFIG", "SET", "notify-keyspace-events", "KEA") == b"+OK\r\n"
            sub = connect(r.port, 1)[0]
            sub.sendall(encode(["PSUBSCRIBE", "__key*__:*"]))
            drain(sub, expect=True)
            self.subs.append(sub)
        self.m = RawClient(self.master.port)

    def mismatch(self, seed, steps):
        """Sends steps of random_commands.py's commands of seed to the master; once both
        replicas have applied them, the two subscribers' message streams must be the same
        (a replica notifies what the stream does to it: SPOP's SREMs, an expired key's
        DEL ...). Returns the first difference as text, or None."""
        import random_commands as rc
        import redis
        self.m.call("SELECT", "0")
        self.m.call("FLUSHALL")
        # Not what blocks, waits or acts on the server.
        hist = rc.feed_master(self.m, rc.Gen(seed), steps,
                              skip=("BLPOP", "BRPOP", "BLMOVE", "BRPOPLPUSH", "BZPOPMIN", "BZPOPMAX", "BLMPOP",
                                    "BZMPOP", "XREAD", "XREADGROUP", "WAIT", "DEBUG"))
        behind = rc.replicas_behind(self.m, {name: redis.Redis(port=r.port)
                                             for name, r in zip(("kvrocks", "Redis"), self.replicas)})
        if behind:
            return f"seed {seed}: {behind}"
        streams = [split(drain(sub, settle=0.5, expect=True)) for sub in self.subs]
        if streams[0] == streams[1]:
            return None
        i = next((i for i, (a, b) in enumerate(zip(*streams)) if a != b), min(map(len, streams)))
        return (f"seed {seed}: notification {i} of {len(streams[0])} (kvrocks) / {len(streams[1])} (Redis)\n"
                f" kv {streams[0][max(0, i - 3):i + 3]}\n rd {streams[1][max(0, i - 3):i + 3]}\n"
                f" hist {hist if 'full' in sys.argv else hist[-10:]}")

    def cleanup(self):
        for sub in self.subs:
            sub.close()
        for server in self.replicas + [self.master]:
            server.cleanup()


def replica_notify_main(first, seeds, steps):
    """ReplicaNotifications.mismatch for each seed."""
    hunt = ReplicaNotifications()
    bad = 0
    try:
        for seed in range(first, first + seeds):
            found = hunt.mismatch(seed, steps)
            if found:
                print(found, flush=True)
                bad += 1
    finally:
        hunt.cleanup()
    print("bad", bad, flush=True)


if __name__ == "__main__":
    mode, args = sys.argv[1], [int(x) for x in sys.argv[2:5]]
    {"pubsub": pubsub_main, "blocking": blocking_main, "tracking": tracking_main, "watch": watch_main, "notify": notify_main,
     "replica-notify": replica_notify_main}[mode](*args)
