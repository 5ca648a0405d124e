"""Random commands drawn from Redis' own COMMAND DOCS, for differential testing.

Every command (and subcommand) that both servers have gets arguments that follow
its documented structure (tokens, oneof, blocks, optional and repeated
arguments), with values from small pools over a handful of keys of every type,
and now and then an argument dropped, added or an option repeated, so that
option parsing and its error order are exercised as well as the happy paths.
After each command the data sets are compared with DEBUG DIGEST (active expiry
is off on both servers), so a write that replies the same but changes a
different thing shows at once.

Left out: what changes the connection or the server (SUBSCRIBE, HELLO, CONFIG,
REPLICAOF ...), what blocks, what is random or time-dependent by definition
(RANDOMKEY, SPOP, TIME, INFO, LATENCY ...), what reports the server's own
internals (MEMORY, COMMAND, DEBUG, OBJECT FREQ/IDLETIME). DUMP is compared byte
for byte, a hashtable's by its length only (its order follows Redis' per-process
hash seed). random_commands.py covers scripts,
functions, transactions, RESTORE and SORT ... BY with generators of their own.

  python3 tests/integration/docs_commands.py FIRST_SEED SEEDS COMMANDS [resp3] [expire | restart] [lua | lua3] [small]
      [replica [kill | cut] [master62]]  (the commands go to a redis-server master; kvrocks and redis-server
                  replicate it and are compared after each seed: random_commands.replica_mismatches)
      [compact]   (kvrocks compacts between commands: random_commands.Compactor)
      [big]       (values past rocksdb.min-blob-size: random_commands.BIG_VALUES)
"""
import random
import shutil
import subprocess
import sys
import tempfile
import time

import redis

from conftest import KVROCKS_BIN, REDIS_BIN, RawClient, free_port, wait_ready
import random_commands as rc

SKIP = {
    # connection or server state
    "shutdown", "monitor", "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe",
    "sunsubscribe", "quit", "reset", "hello", "auth", "client", "config", "acl", "slaveof", "replicaof",
    "failover", "sync", "psync", "replconf", "save", "bgsave", "bgrewriteaof", "flushall", "module",
    "cluster", "readonly", "readwrite", "asking", "migrate", "script", "function", "pubsub", "publish",
    "spublish",
    # blocking
    "blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin", "bzpopmax", "bzmpop", "wait", "waitaof",
    # random or time-dependent by definition, or the server's own internals
    "randomkey", "spop", "srandmember", "hrandfield", "zrandmember", "time", "info", "lastsave", "lolwut",
    "command", "memory", "latency", "slowlog", "debug", "pfdebug", "pfselftest", "keys", "scan",
    # generators of their own in random_commands.py
    "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "restore", "restore-asking", "multi", "exec",
    "discard",
}
# What a replica hunt sends as well: the master replicates SPOP's pops as SREMs, and
# PUBLISH reaches the replicas' subscribers (none here: the stream must apply it).
REPLICA_SENDS = {"spop", "publish", "spublish", "srandmember", "hrandfield", "zrandmember", "randomkey"}
KEYS = ["s1", "s2", "h1", "l1", "z1", "set1", "x1", "g1", "none"]
STRINGS = ["v", "", "10", "-1", "3.5", "a b", "x" * 70, "m1", "m2", "f1", "a", "z", "0", "1"]
INTS = ["0", "1", "-1", "2", "5", "-5", "100", "x", "9223372036854775807", "-9223372036854775808", "1.5", ""]
DOUBLES = ["0", "1.5", "-2", "inf", "-inf", "x", "1e3", "3", "nan", ""]
# A relative time of a few milliseconds would expire between the two servers'
# turns; a long one is drawn new each time (DocsGen.value), because the same one
# twice compares (EXPIRE ... GT) by the milliseconds that passed in between.
TIMES = ["0", "-1", "long", "long", "x", "9223372036854775807", "-9223372036854775808"]
OPTIONS = ["NX", "XX", "GT", "LT", "CH", "WITHSCORES", "LIMIT", "COUNT", "REV", "BYSCORE", "BYLEX"]

SETUP = (["FLUSHALL"], ["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["SELECT", "0"], ["SET", "s1", "10"],
         ["SET", "s2", "hello"], ["HSET", "h1", "f1", "v1", "f2", "2"], ["RPUSH", "l1", "a", "b", "c", "a"],
         ["ZADD", "z1", "1", "m1", "2", "m2", "2", "m3"], ["SADD", "set1", "a", "b", "1"],
         ["XADD", "x1", "1-1", "f", "v"], ["XADD", "x1", "2-1", "g", "w"], ["XGROUP", "CREATE", "x1", "grp", "0"],
         ["GEOADD", "g1", "13.36", "38.11", "m1", "15.08", "37.5", "m2"])


def _text(x):
    if isinstance(x, bytes):
        return x.decode()
    if isinstance(x, rc.Map):  # RESP3
        return {_text(k): _text(v) for k, v in x}
    if isinstance(x, list):
        return [_text(v) for v in x]
    return x


def _fields(x):
    """A RESP2 flat list of name, value pairs (or a RESP3 map) as a dict."""
    if isinstance(x, dict):
        return x
    return dict(zip(x[::2], x[1::2]))


def command_specs(ref, kv, skip=SKIP):
    """(name, docs) of every command and subcommand of ref's COMMAND DOCS that kv
    has too and skip does not name, names lower case ("xgroup|create"), in name order."""
    docs = _fields(_text(rc.parse(ref.call("COMMAND", "DOCS"))))
    have = {n.lower() for n in _text(rc.parse(kv.call("COMMAND", "LIST")))}
    specs = []
    for name, doc in docs.items():
        doc = _fields(doc)
        subs = doc.get("subcommands")
        for sub, sub_doc in (_fields(subs).items() if subs else [(name, doc)]):
            base = sub.split("|")[0].lower()
            if base in have and base not in skip:
                specs.append((sub.lower(), _fields(sub_doc)))
    return sorted(specs, key=lambda s: s[0])


class DocsGen:
    def __init__(self, specs, seed):
        self.specs = specs
        self.rnd = random.Random(seed)
        self.long_times = 0

    def value(self, arg):
        kind, name = arg.get("type", ""), arg.get("name", "")
        r = self.rnd
        if kind == "key":
            return r.choice(KEYS)
        if kind == "integer" and "second" in name:
            t = r.choice(TIMES)
            if t == "long":  # a second later than the last one drawn
                self.long_times += 1
                t = str(100000 + 1000 * self.long_times)
            return t
        if kind == "integer":
            return r.choice(INTS) if r.random() < 0.3 else str(r.randint(-2, 5))
        if kind == "double":
            return r.choice(DOUBLES)
        if kind == "unix-time":
            return r.choice(["0", "4102444800", "-1", "1000000000", "x"])
        if kind == "pattern":
            return r.choice(["*", "h*", "?1", "[a-z]*", "\\"])
        return r.choice(STRINGS)

    def add(self, arg, out):
        """Appends arguments for one documented argument spec."""
        arg = _fields(arg)
        flags = arg.get("flags", [])
        if "optional" in flags and self.rnd.random() < 0.5:
            return
        kind = arg.get("type", "")
        for _ in range(self.rnd.randint(1, 3) if "multiple" in flags else 1):
            token = arg.get("token")
            if token is not None:
                out.append(token if self.rnd.random() < 0.9 else token.lower())
            if kind == "pure-token":
                continue
            if kind == "oneof":
                subs = arg.get("arguments", [])
                if subs:
                    self.add(self.rnd.choice(subs), out)
            elif kind == "block":
                for sub in arg.get("arguments", []):
                    self.add(sub, out)
            elif arg.get("name") == "cursor":
                out.append("0")  # any other cursor is a position of the server's own
            else:
                out.append(self.value(arg))

    def command(self):
        name, doc = self.rnd.choice(self.specs)
        args = name.split("|")
        for arg in doc.get("arguments", []):
            self.add(arg, args)
        r = self.rnd
        if args[0] in ("xread", "xreadgroup") and "BLOCK" in [a.upper() for a in args]:
            i = [a.upper() for a in args].index("BLOCK")
            del args[i:i + 2]
        if args[0] in ("sort", "sort_ro") and "BY" in [a.upper() for a in args]:
            # Ties of a BY pattern over a set or sorted set come in Redis' dict order
            # (random_commands.py covers BY over what has an order of its own).
            i = [a.upper() for a in args].index("BY")
            del args[i:i + 2]
        if args[0] == "object" and len(args) > 1 and args[1].lower() in ("freq", "idletime"):
            args[1] = "encoding"
        if args[0] == "xadd":  # an id from the clock differs between the servers
            args = [r.choice(["1-1", "3-0", "9-9", "0-0", "x", "5-*"]) if a == "*" else a for a in args]
        mangle = r.random()
        if mangle < 0.1 and len(args) > 1:
            args.pop(r.randrange(1, len(args)))
        elif mangle < 0.2:
            args.insert(r.randint(1, len(args)), r.choice(STRINGS + INTS + KEYS))
        elif mangle < 0.25:
            args.append(r.choice(OPTIONS))
        return args


def same(args, a, b):
    """Whether replies a and b of args agree: byte for byte, or after
    random_commands' normalization. Of SCAN-family replies only a scan both
    servers finished in one call is compared: a cursor is each server's own, and
    either may answer a small collection whole or in pages."""
    if a == b:
        return True
    a, b = rc.parse(a), rc.parse(b)
    if args[0].lower() in ("sscan", "hscan", "zscan") and all(isinstance(x, list) and len(x) == 2 for x in (a, b)):
        if a[0] != b"0" or b[0] != b"0":
            return True
    return rc.normalize(args, a) == rc.normalize(args, b)


def restores_to_same_list(ref, key, dumped):
    """Whether kvrocks' DUMP reply of a list, restored in Redis, is the list Redis holds
    at key. kvrocks lays a list out in nodes as pushes at its tail would (docs/design.md,
    "Payload bytes"), Redis as the list's history left them: with a small list-max-listpack-size
    ([small]) the nodes of one list can differ, its elements and their order cannot."""
    if not ref.call("OBJECT", "ENCODING", key).endswith(b"quicklist\r\n"):
        return False
    payload, copy = rc.parse(dumped), "docs-hunt:restored"
    same = ref.call("RESTORE", copy, "0", payload, "REPLACE") == b"+OK\r\n" and \
        ref.call("LRANGE", copy, "0", "-1") == ref.call("LRANGE", key, "0", "-1")
    ref.call("DEL", copy)
    return same


def run(kv, ref, seed, count, expire_share=0.0, lua=None, compact=None):
    """Sends count commands of seed to both servers (RawClients, data flushed);
    returns the first mismatch, of a reply or of the data set, or None. With
    expire_share, that share of the commands first has one to three keys expire
    on both servers (their time passed, active expiry off: still stored), so
    that commands meet keys only a lookup deletes, and whether each command
    looks its keys up (Redis' expireIfNeeded) shows in the data sets. With lua
    (a key of random_commands.LUA_WRAPPERS), each command but those of
    transactions runs inside EVAL through redis.pcall. With compact (a RawClient
    of kvrocks), kvrocks compacts between commands (random_commands.Compactor)."""
    for c in (kv, ref):
        for setup in SETUP:
            c.call(*setup)
    gen = DocsGen(command_specs(ref, kv), seed)
    compactor = rc.Compactor(compact, seed) if compact else None
    try:
        return first_mismatch(kv, ref, seed, count, gen, expire_share, lua, compactor)
    finally:
        if compactor:
            compactor.finish()


def first_mismatch(kv, ref, seed, count, gen, expire_share, lua, compactor):
    """run's commands and comparisons, up to the first mismatch (or None)."""
    for i in range(count):
        if gen.rnd.random() < expire_share:
            for key in gen.rnd.sample(KEYS, gen.rnd.randint(1, 3)):
                for c in (kv, ref):
                    c.call("PEXPIRE", key, "30")
            time.sleep(0.06)
        args = gen.command()
        sent = rc.wrapped(args, lua)
        a, b = kv.call(*sent), ref.call(*sent)
        if args[0] == "dump" and len(args) == 2 and a != b and len(a) == len(b) and \
                ref.call("OBJECT", "ENCODING", args[1]).endswith(b"hashtable\r\n"):
            a = b  # a hashtable's order is Redis' hash seed's; its elements' encodings still show in the length
        if args[0] == "dump" and len(args) == 2 and a != b and restores_to_same_list(ref, args[1], a):
            a = b
        if not same(args, a, b):
            return f"seed {seed} #{i}: {args!r}\n  kvrocks {a[:300]!r}\n  redis   {b[:300]!r}"
        if compactor:
            compactor.step()
        da, db = kv.call("DEBUG", "DIGEST"), ref.call("DEBUG", "DIGEST")
        if da != db:
            return f"seed {seed} #{i}: {args!r} replied {a[:100]!r} on both, but the data sets differ after it"
    return None


class ReplicaFeed:
    """DocsGen's commands as random_commands.replica_mismatches takes them (in lua
    mode inside EVAL)."""
    in_multi = False

    def __init__(self, gen, lua):
        self.gen, self.lua = gen, lua

    def command(self):
        return rc.wrapped(self.gen.command(), self.lua)


def replica_main(first, seeds, count, argv):
    """The commands of seeds first.. go to a redis-server master that a kvrocks and a
    redis-server replicate ([kill]: kvrocks stops and starts meanwhile, [cut]: the
    master cuts the links; see random_commands.ReplicaRestarter); after each seed the
    replicas' data sets are compared. Not with [expire]: a key whose time passed
    stays in a Redis replica until the master deletes it, and only the master's
    lookups do that."""
    from conftest import Kvrocks, RealRedis

    master = rc.replica_hunt_master(argv)
    replicas = [Kvrocks(extra=["--replicaof", f"127.0.0.1 {master.port}"]).start(),
                RealRedis(extra=["--replicaof", f"127.0.0.1 {master.port}"])]
    try:
        clients = [redis.Redis(port=r.port) for r in replicas]
        rc.use_small_encodings(argv, RawClient(master.port), *(RawClient(r.port) for r in replicas))
        # The docs of the Redis replica (7.0): a 6.2 master ([master62]) has no COMMAND DOCS.
        specs = command_specs(RawClient(replicas[1].port), RawClient(replicas[0].port), SKIP - REPLICA_SENDS)
        for seed in range(first, first + seeds):
            restarter = None
            if "kill" in argv or "cut" in argv:
                restarter = rc.ReplicaRestarter(
                    replicas[0], seed, lambda: rc.use_small_encodings(argv, RawClient(replicas[0].port)),
                    cut_master=master.port if "cut" in argv else None)
            compact = RawClient(replicas[0].port) if "compact" in argv else None
            feed = ReplicaFeed(DocsGen(specs, seed), rc.lua_mode(argv))
            for m in rc.replica_mismatches(RawClient(master.port), *clients, seed, count, compact=compact,
                                           restarter=restarter, gen=feed, setup=SETUP):
                print(m, flush=True)
    finally:
        for server in replicas + [master]:
            server.cleanup()


def main():
    first, seeds, count = (int(x) for x in sys.argv[1:4])
    if "replica" in sys.argv[4:]:
        return replica_main(first, seeds, count, sys.argv[4:])
    resp3 = "resp3" in sys.argv[4:]
    # [restart]: after each seed kvrocks is killed (-9) and started again on its data,
    # which must then be what Redis holds (not with [expire]: a restarted kvrocks
    # expires actively until the next seed's setup turns that off again).
    restart = "restart" in sys.argv[4:]
    if "big" in sys.argv[4:]:
        STRINGS.extend(rc.BIG_VALUES)
    d = tempfile.mkdtemp(prefix="docs-hunt-")
    kv_port, ref_port = free_port(), free_port()

    def start_kvrocks():
        return subprocess.Popen([KVROCKS_BIN, "--port", str(kv_port), "--dir", d + "/kv", "--bind", "127.0.0.1",
                                 "--enable-debug-command", "yes"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    procs = [start_kvrocks(),
             subprocess.Popen([REDIS_BIN, "--port", str(ref_port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", d, "--enable-debug-command", "yes"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        time.sleep(1)
        kv, ref = RawClient(kv_port), RawClient(ref_port)
        rc.use_small_encodings(sys.argv[4:], kv, ref)
        if resp3:
            kv.call("HELLO", "3")
            ref.call("HELLO", "3")
        expire_share = 0.07 if "expire" in sys.argv[4:] else 0.0
        lua = rc.lua_mode(sys.argv[4:])
        compact = RawClient(kv_port) if "compact" in sys.argv[4:] else None
        for seed in range(first, first + seeds):
            mismatch = run(kv, ref, seed, count, expire_share, lua, compact)
            if mismatch:
                print(mismatch, flush=True)
            elif restart:
                procs[0].kill()
                procs[0].wait()
                procs[0] = start_kvrocks()
                wait_ready(kv_port, procs[0])
                kv = RawClient(kv_port)
                compact = compact and RawClient(kv_port)
                rc.use_small_encodings(sys.argv[4:], kv)
                if resp3:
                    kv.call("HELLO", "3")
                if kv.call("DEBUG", "DIGEST") != ref.call("DEBUG", "DIGEST"):
                    diffs = rc.key_differences(redis.Redis(port=kv_port), redis.Redis(port=ref_port), seed, [])
                    print(f"seed {seed}: the data sets differ after kill -9 and a start\n" + "".join(diffs), flush=True)
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
