#!/usr/bin/env python3
"""Full-sync time: a redis-server master holding N keys of mixed types (or 1 KiB
strings); time from REPLICAOF to master_link_status:up for a kvrocks replica and
for a Redis replica of the same master, in the same run, and the ratio.

  bench/full_sync.py [--keys 2000000] [--kind mixed|strings1k] [--rounds 1]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from common import REDIS_SERVER, ROOT, call, encode, free_port, start_master, wait_ready  # noqa: F401


def populate(port, keys, kind):
    """Pipelines writes: 1 KiB strings, or a mix of strings, hashes, lists, sets and sorted sets."""
    value = b"x" * 1024
    with socket.create_connection(("127.0.0.1", port), timeout=600) as s:
        batch, sent = [], 0

        def cmd(*args):
            batch.append(encode(*args))

        def flush():
            nonlocal batch, sent
            s.sendall(b"".join(batch))
            n, buf = len(batch), b""
            while buf.count(b"\r\n") < n:
                buf += s.recv(1 << 20)
            batch = []

        for i in range(keys):
            if kind == "strings1k":
                cmd("SET", f"key:{i}", value)
            else:
                t = i % 5
                if t == 0:
                    cmd("SET", f"str:{i}", f"value-{i}")
                elif t == 1:
                    cmd("HSET", f"hash:{i}", "a", i, "b", "text", "c", i * 2)
                elif t == 2:
                    cmd("RPUSH", f"list:{i}", "a", "b", i)
                elif t == 3:
                    cmd("SADD", f"set:{i}", "x", "y", i)
                else:
                    cmd("ZADD", f"zset:{i}", 1, "a", 2, "b", i, "c")
            if len(batch) == 1000:
                flush()
        if batch:
            flush()


def link_up(port):
    out = call(port, "INFO", "replication").decode(errors="replace")
    return "master_link_status:up" in out


def time_sync(start_cmd, port, master_port):
    proc = subprocess.Popen(start_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(port)
    t0 = time.time()
    call(port, "REPLICAOF", "127.0.0.1", master_port)
    while not link_up(port):
        time.sleep(0.02)
    elapsed = time.time() - t0
    return proc, elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=2000000)
    ap.add_argument("--kind", default="mixed", choices=["mixed", "strings1k"])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"))
    args = ap.parse_args()
    dirs = [tempfile.mkdtemp(prefix="bench-sync-") for _ in range(3)]
    mport = free_port()
    master = start_master(mport, dirs[0])
    procs = [master]
    results = {"kvrocks": [], "redis": []}
    try:
        wait_ready(mport)
        t0 = time.time()
        populate(mport, args.keys, args.kind)
        print(f"populated {args.keys} {args.kind} keys in {time.time() - t0:.1f}s", file=sys.stderr)
        for rnd in range(args.rounds):
            kport, rport = free_port(), free_port()
            shutil.rmtree(dirs[1], ignore_errors=True)
            shutil.rmtree(dirs[2], ignore_errors=True)
            os.makedirs(dirs[1])
            os.makedirs(dirs[2])
            kv, tk = time_sync([args.kvrocks, "--conf", os.path.join(ROOT, "kvrocks.conf"), "--port", str(kport),
                                "--dir", dirs[1]], kport, mport)
            procs.append(kv)
            kv.terminate()
            kv.wait()
            rd, tr = time_sync([REDIS_SERVER, "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", dirs[2]], rport, mport)
            procs.append(rd)
            rd.terminate()
            rd.wait()
            results["kvrocks"].append(tk)
            results["redis"].append(tr)
            print(f"round {rnd + 1}: kvrocks {tk:.2f}s redis {tr:.2f}s", file=sys.stderr)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait()
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    k, r = statistics.median(results["kvrocks"]), statistics.median(results["redis"])
    print(f"| full sync {args.keys} {args.kind} | {k:.2f} s | {r:.2f} s | {k / r:.2f} |")


if __name__ == "__main__":
    main()
