"""Single-element commands on big collections, kvrocks against redis-server.

Both servers get the same data (300k-member sorted set, hash, set and list, a
5 MB string, a 100k-entry stream), then each command runs `--repeat` times on
each; the median time per call is printed with the ratio kvrocks/redis. Writes
that change the data are run once (their first call is what they cost). A
command whose time grows with the collection shows here as a ratio far above the
others (the guide: single-element operations on huge collections stay O(log n)).

    python3 bench/big_collections.py [--members 300000] [--repeat 15] [--kvrocks path]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import redis

sys.path.insert(0, os.path.dirname(__file__))
from common import REDIS_SERVER, ROOT, free_port, machine, wait_ready  # noqa: E402

READS = [
    ["ZSCORE", "z", "m150000"], ["ZRANK", "z", "m150000"], ["ZREVRANK", "z", "m150000"],
    ["ZRANGE", "z", "150000", "150005"], ["ZCOUNT", "z", "1000", "290000"],
    ["ZLEXCOUNT", "zl", "[m001000", "[m290000"],
    ["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "150000", "5"],
    ["ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "150000", "5"],
    ["ZRANGEBYLEX", "zl", "-", "+", "LIMIT", "150000", "3"],
    ["ZRANDMEMBER", "z"], ["ZRANDMEMBER", "z", "5"],
    ["HGET", "h", "f150000"], ["HRANDFIELD", "h"],
    ["SISMEMBER", "s", "m150000"], ["SRANDMEMBER", "s", "3"], ["SINTER", "small", "s"],
    ["LINDEX", "l", "150000"], ["LRANGE", "l", "150000", "150003"],
    ["GETRANGE", "str", "2500000", "2500010"], ["XRANGE", "x", "50000", "+", "COUNT", "3"],
]
WRITES = [
    ["APPEND", "str", "z" * 100], ["SETRANGE", "str", "2500000", "abc"],
    ["LINSERT", "l", "BEFORE", "e000010", "x"], ["LINSERT", "l", "BEFORE", "e299990", "x"],
    ["ZADD", "z", "5", "new"], ["HSET", "h", "nf", "1"], ["SADD", "s", "nm"],
    ["RENAME", "h", "h2"], ["RENAME", "str", "str2"], ["MOVE", "s", "1"], ["MOVE", "str2", "1"],
]


def load(r, n):
    r.flushall()
    p = r.pipeline(transaction=False)
    for i in range(0, n, 5000):
        span = range(i, min(i + 5000, n))
        p.zadd("z", {f"m{j:06}": j for j in span})
        p.zadd("zl", {f"m{j:06}": 0 for j in span})
        p.hset("h", mapping={f"f{j:06}": j for j in span})
        p.sadd("s", *[f"m{j:06}" for j in span])
        p.rpush("l", *[f"e{j:06}" for j in span])
        p.execute()
    p.sadd("small", "m000001", "m000005", "x")
    p.set("str", "x" * 5000000)
    for j in range(100000):
        p.xadd("x", {"f": j}, id=f"{j + 1}-0")
        if j % 5000 == 0:
            p.execute()
    p.execute()


def timed(r, cmd, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        r.execute_command(*cmd)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--members", type=int, default=300000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"), help="the binary to measure")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="kvrocks-bigcoll-")
    kv_port, ref_port = free_port(), free_port()
    procs = [
        subprocess.Popen([args.kvrocks, "--conf", os.path.join(ROOT, "kvrocks.conf"),
                          "--port", str(kv_port), "--dir", os.path.join(tmp, "kv"), "--bind", "127.0.0.1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([REDIS_SERVER, "--port", str(ref_port), "--save", "", "--appendonly", "no",
                          "--bind", "127.0.0.1", "--dir", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    try:
        for port in (kv_port, ref_port):
            wait_ready(port)
        kv, ref = redis.Redis(port=kv_port), redis.Redis(port=ref_port)
        for r in (kv, ref):
            load(r, args.members)
        print(f"{'command':62} {'kvrocks ms':>10} {'redis ms':>9} {'ratio':>7}")
        for cmd in READS + WRITES:
            repeat = args.repeat if cmd in READS else 1
            a, b = timed(kv, cmd, repeat), timed(ref, cmd, repeat)
            print(f"{' '.join(cmd)[:62]:62} {a:10.3f} {b:9.3f} {a / b:7.1f}")
        print(machine())
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
