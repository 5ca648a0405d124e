#!/usr/bin/env python3
"""Active expiry of many keys at once: N keys with a 1 ms TTL are written while active
expiry is off (DEBUG SET-ACTIVE-EXPIRE 0), then it is switched on and the time until
DBSIZE reaches 0 is measured, on kvrocks and on redis-server in the same run. For
kvrocks the length of its (single) active-expire pass is read from the latency monitor
(the "expire-cycle" event, latency-monitor-threshold 1), as microseconds per key.

  bench/expire_pass.py [--keys 30000] [--rounds 5] [--kvrocks build/kvrocks]

Needs redis-py (the test command installs it).
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
from common import REDIS_SERVER, ROOT, free_port, wait_ready  # noqa: E402


def one_round(r, keys):
    """Returns (seconds until empty, kvrocks' pass in ms or None)."""
    r.flushall()
    r.execute_command("LATENCY", "RESET")
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    p = r.pipeline(transaction=False)
    for i in range(keys):
        p.set(f"e:{i}", "v", px=1)
    p.execute()
    time.sleep(0.05)
    r.config_set("latency-monitor-threshold", 1)
    start = time.monotonic()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    while r.dbsize() > 0:
        time.sleep(0.002)
    emptied = time.monotonic() - start
    time.sleep(0.3)  # a pass records its sample when it ends
    events = {e[0]: e for e in r.execute_command("LATENCY", "LATEST")}
    r.config_set("latency-monitor-threshold", 0)
    sample = events.get(b"expire-cycle")
    return emptied, (sample[3] if sample else None)


def run(cmd, port, keys, rounds):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port)
        r = redis.Redis(port=port)
        return [one_round(r, keys) for _ in range(rounds)]
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=30000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="expire-bench-")
    try:
        kport, rport = free_port(), free_port()
        kv = run([args.kvrocks, os.path.join(ROOT, "kvrocks.conf"), "--port", str(kport), "--dir",
                  os.path.join(tmp, "kv"), "--enable-debug-command", "yes"], kport, args.keys, args.rounds)
        rd = run([REDIS_SERVER, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--dir", tmp,
                  "--enable-debug-command", "yes"], rport, args.keys, args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    kv_empty = statistics.median(e for e, _ in kv)
    rd_empty = statistics.median(e for e, _ in rd)
    passes = [ms for _, ms in kv if ms is not None]
    print(f"keys {args.keys}, rounds {args.rounds}")
    print(f"kvrocks: emptied in {kv_empty * 1000:.0f} ms (median)", end="")
    if passes:
        pass_ms = statistics.median(passes)
        print(f", longest pass {pass_ms} ms = {pass_ms * 1000 / args.keys:.1f} us per key (median)")
    else:
        print()
    print(f"redis-server: emptied in {rd_empty * 1000:.0f} ms (median)")
    print(f"ratio redis/kvrocks time to empty: {rd_empty / kv_empty:.2f}")


if __name__ == "__main__":
    main()
