#!/usr/bin/env python3
"""Side-by-side throughput: kvrocks vs Debian's redis-server on the same machine,
in the same run, alternating servers, several rounds; prints median req/s and
the ratio kvrocks/redis for each case.

  bench/compare.py [--rounds 3] [--requests 200000] [--workers N] [--cases set_p1,get_p1,...]
  bench/compare.py --cases collections      # HSET HGET LPUSH LPOP LRANGE_100 SADD SPOP ZADD ZRANGE
  bench/compare.py --cases large            # a 1M-member sorted set: ZADD ZSCORE ZRANGE BYSCORE LIMIT
  bench/compare.py --cases ranks            # another one, asked for ranks: ZRANK ZREVRANK, then ZADD/ZINCRBY to it
  bench/compare.py --cases types            # SETBIT GETBIT PFADD PFCOUNT GEOADD GEOSEARCH XADD XRANGE
  bench/compare.py --cases scripting        # EVALSHA of small scripts, PUBLISH to 100 subscribers
"""
import argparse
import csv
import hashlib
import selectors
import threading
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from common import REDIS_SERVER, ROOT, call, free_port, machine, wait_ready  # noqa: E402


def info_field(port, section, field):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"INFO %s\r\n" % section.encode())
        data = b""
        while not data.endswith(b"\r\n") or data.count(b"\r\n") < 2 or len(data) < int(data[1:data.index(b"\r\n")]):
            data += s.recv(65536)
    for line in data.decode().split("\r\n"):
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    return None


def wait_quiet(port, timeout=60):
    """Waits until kvrocks has no flush or compaction running, so that its
    background work does not take CPU from the next measurement."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        busy = sum(int(info_field(port, "rocksdb", f) or 0)
                   for f in ("num_running_compactions", "num_running_flushes"))
        if busy == 0:
            return
        time.sleep(0.2)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# name -> (redis-benchmark test or command, value size, pipeline)
CASES = {
    "set_p1": ("set", 100, 1),
    "get_p1": ("get", 100, 1),
    "set_p16": ("set", 100, 16),
    "get_p16": ("get", 100, 16),
    "set_8k": ("set", 8192, 1),
}

# Collection cases (--cases collections): redis-benchmark's own tests where it has
# them, a command line with __rand_int__ where it does not.
COLLECTION_CASES = {
    "hset": ("hset", 100, 1),
    "hget": (["HGET", "myhash", "element:__rand_int__"], 100, 1),
    "lpush": ("lpush", 100, 1),
    "lpop": ("lpop", 100, 1),
    "lrange_100": ("lrange_100", 100, 1),
    "sadd": ("sadd", 100, 1),
    "spop": ("spop", 100, 1),
    "zadd": ("zadd", 100, 1),
    "zrange": (["ZRANGE", "myzset", "0", "9", "WITHSCORES"], 100, 1),
}

# The large-collection case (--cases large): a 1M-member sorted set, then point
# operations and short score ranges on it. Members are m:<i> with i as
# redis-benchmark writes __rand_int__ (12 digits), so that its commands find them.
LARGE_SIZE = 1000000
LARGE_CASES = {
    "big_zadd": (["ZADD", "bigz", "__rand_int__", "m:__rand_int__"], 0, 1),
    "big_zscore": (["ZSCORE", "bigz", "m:__rand_int__"], 0, 1),
    "big_zrange_byscore": (["ZRANGE", "bigz", "__rand_int__", "+inf", "BYSCORE", "LIMIT", "0", "10"], 0, 1),
}
# The other types (--cases types): a bit far into a sparse bitmap (a 512 MB
# string in Redis, one fragment in kvrocks; redis-benchmark cannot randomize an
# offset: __rand_int__ has leading zeros), HyperLogLog, geo and streams.
TYPE_CASES = {
    "setbit": (["SETBIT", "bits", "4294967295", "1"], 0, 1),
    "getbit": (["GETBIT", "bits", "4294967295"], 0, 1),
    "pfadd": (["PFADD", "hll", "e:__rand_int__"], 0, 1),
    "pfcount": (["PFCOUNT", "hll"], 0, 1),
    "geoadd": (["GEOADD", "geo", "13.__rand_int__", "38.__rand_int__", "m:__rand_int__"], 0, 1),
    "geosearch": (["GEOSEARCH", "geo", "FROMLONLAT", "13.5", "38.5", "BYRADIUS", "10", "km", "COUNT", "10"], 0, 1),
    "xadd": (["XADD", "stream", "MAXLEN", "~", "100000", "*", "f", "__rand_int__"], 0, 1),
    "xrange_10": (["XRANGE", "stream", "-", "+", "COUNT", "10"], 0, 1),
}
# Scripting and Pub/Sub (--cases scripting): EVALSHA of two small scripts
# (loaded with SCRIPT LOAD first), and PUBLISH while SUBSCRIBERS connections
# listen on the channel and a reader thread drains them.
SCRIPTS = {
    "get": "return redis.call('get', KEYS[1])",
    "incr": "return redis.call('incr', KEYS[1])",
}
SCRIPT_SHA = {name: hashlib.sha1(body.encode()).hexdigest() for name, body in SCRIPTS.items()}
SUBSCRIBERS = 100
SCRIPT_CASES = {
    "evalsha_get": (["EVALSHA", SCRIPT_SHA["get"], "1", "key:__rand_int__"], 0, 1),
    "evalsha_incr": (["EVALSHA", SCRIPT_SHA["incr"], "1", "counter:__rand_int__"], 0, 1),
    "publish_100": (["PUBLISH", "bench-channel", "message-of-about-thirty-bytes"], 0, 1),
}
# Ranks (--cases ranks): a second 1M-member set, whose ranks are asked for, so
# that kvrocks keeps a rank index for it (docs/encoding.md); ZADD to it then
# measures what keeping the index costs (against big_zadd of --cases large).
RANK_CASES = {
    "rank_zrank": (["ZRANK", "rankz", "m:__rand_int__"], 0, 1),
    "rank_zrevrank": (["ZREVRANK", "rankz", "m:__rand_int__"], 0, 1),
    "rank_zadd": (["ZADD", "rankz", "__rand_int__", "m:__rand_int__"], 0, 1),
    "rank_zincrby": (["ZINCRBY", "rankz", "1", "m:__rand_int__"], 0, 1),
}
ALL_CASES = {**CASES, **COLLECTION_CASES, **LARGE_CASES, **TYPE_CASES, **SCRIPT_CASES, **RANK_CASES}


class Subscribers:
    """SUBSCRIBERS connections subscribed to bench-channel, drained by one thread."""

    def __init__(self, port):
        self.socks = []
        for _ in range(SUBSCRIBERS):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"SUBSCRIBE bench-channel\r\n")
            s.recv(1024)
            s.setblocking(False)
            self.socks.append(s)
        self.stop = False
        self.thread = threading.Thread(target=self.drain, daemon=True)
        self.thread.start()

    def drain(self):
        sel = selectors.DefaultSelector()
        for s in self.socks:
            sel.register(s, selectors.EVENT_READ)
        while not self.stop:
            for key, _ in sel.select(timeout=0.1):
                try:
                    key.fileobj.recv(1 << 20)
                except BlockingIOError:
                    pass

    def close(self):
        self.stop = True
        self.thread.join()
        for s in self.socks:
            s.close()


def load_large_zset(port, key=b"bigz"):
    """Fills key with LARGE_SIZE members m:<i> (score i, i in 12 digits) through pipelined ZADDs."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        batch = 1000
        for start in range(0, LARGE_SIZE, batch):
            parts = [b"*%d\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n" % (2 + 2 * batch, len(key), key)]
            for i in range(start, start + batch):
                sc, m = str(i).encode(), b"m:%012d" % i
                parts.append(b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(sc), sc, len(m), m))
            s.sendall(b"".join(parts))
            buf = b""
            while not buf.endswith(b"\r\n"):
                buf += s.recv(64)


def run_benchmark(port, test, size, pipeline, requests, clients):
    cmd = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-r", "1000000", "-c", str(clients),
           "-n", str(requests), "-P", str(pipeline), "--csv"]
    if isinstance(test, list):
        cmd += test
    else:
        cmd += ["-t", test, "-d", str(size)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = [row for row in csv.reader(io.StringIO(out)) if len(row) > 1 and row[0] != "test"]
    if rows:
        return float(rows[-1][1])
    raise RuntimeError(f"no result in {out!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"))
    ap.add_argument("--kvrocks-args", default="", help="extra kvrocks arguments, e.g. '--rocksdb.write-buffer-size 32mb'")
    ap.add_argument("--no-wait", action="store_true",
                    help="do not wait for kvrocks' flushes/compactions before measuring Redis "
                         "(its background work then also slows Redis' turn)")
    args = ap.parse_args()
    cases = []
    for c in args.cases.split(","):
        if c == "collections":
            cases += list(COLLECTION_CASES)
        elif c == "large":
            cases += list(LARGE_CASES)
        elif c == "types":
            cases += list(TYPE_CASES)
        elif c == "scripting":
            cases += list(SCRIPT_CASES)
        elif c == "ranks":
            cases += list(RANK_CASES)
        else:
            cases.append(c)

    kv_dir = tempfile.mkdtemp(prefix="bench-kvrocks-")
    rd_dir = tempfile.mkdtemp(prefix="bench-redis-")
    kv_port, rd_port = free_port(), free_port()
    kv_cmd = [args.kvrocks, "--conf", os.path.join(ROOT, "kvrocks.conf"), "--port", str(kv_port), "--dir", kv_dir]
    if args.workers:
        kv_cmd += ["--workers", str(args.workers)]
    kv_cmd += args.kvrocks_args.split()
    kv = subprocess.Popen(kv_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rd = subprocess.Popen([REDIS_SERVER, "--port", str(rd_port), "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no", "--dir", rd_dir], stdout=subprocess.DEVNULL)
    results = {c: {"kvrocks": [], "redis": []} for c in cases}
    peak_rss = 0
    try:
        wait_ready(kv_port)
        wait_ready(rd_port)
        if any(c in LARGE_CASES for c in cases):
            for port in (kv_port, rd_port):
                t0 = time.time()
                load_large_zset(port)
                print(f"loaded {LARGE_SIZE} members on port {port} in {time.time() - t0:.1f}s",
                      file=sys.stderr, flush=True)
            wait_quiet(kv_port)
        if any(c in RANK_CASES for c in cases):
            for port in (kv_port, rd_port):
                t0 = time.time()
                load_large_zset(port, b"rankz")
                call(port, "ZRANK", "rankz", "m:000000000001")  # kvrocks builds the rank index here
                print(f"loaded and ranked {LARGE_SIZE} members on port {port} in {time.time() - t0:.1f}s",
                      file=sys.stderr, flush=True)
            wait_quiet(kv_port)
        if any(c in SCRIPT_CASES for c in cases):
            for port in (kv_port, rd_port):
                for body in SCRIPTS.values():
                    call(port, "SCRIPT", "LOAD", body)
        for rnd in range(args.rounds):
            for case in cases:
                test, size, pipeline = ALL_CASES[case]
                n = args.requests * (4 if pipeline > 1 else 1) // (4 if size > 1000 else 1)
                order = [("kvrocks", kv_port), ("redis", rd_port)]
                if rnd % 2:
                    order.reverse()
                for name, port in order:
                    subs = Subscribers(port) if case == "publish_100" else None
                    if subs is not None:
                        assert call(port, *test) == b":%d\r\n" % SUBSCRIBERS
                    try:
                        rps = run_benchmark(port, test, size, pipeline, n, args.clients)
                    finally:
                        if subs is not None:
                            subs.close()
                    results[case][name].append(rps)
                    if name == "kvrocks":
                        peak_rss = max(peak_rss, rss_kb(kv.pid))
                        if not args.no_wait:
                            wait_quiet(kv_port)
                print(f"round {rnd + 1} {case}: kvrocks {results[case]['kvrocks'][-1]:.0f} "
                      f"redis {results[case]['redis'][-1]:.0f}", file=sys.stderr, flush=True)
    finally:
        kv.terminate()
        rd.terminate()
        kv.wait()
        rd.wait()
        shutil.rmtree(kv_dir, ignore_errors=True)
        shutil.rmtree(rd_dir, ignore_errors=True)

    print(f"{'case':10} {'kvrocks req/s':>14} {'redis req/s':>12} {'ratio':>7}")
    for case in cases:
        k = statistics.median(results[case]["kvrocks"])
        r = statistics.median(results[case]["redis"])
        print(f"{case:10} {k:14.0f} {r:12.0f} {k / r:7.2f}")
    print(f"kvrocks peak RSS during the run: {peak_rss / 1024:.0f} MiB")
    print(machine())


if __name__ == "__main__":
    main()
