#!/usr/bin/env python3
"""CPU time per request, by thread, inside the benchmark window.

On these noisy 2-core VMs a server's CPU time per request varies less than its
req/s, and per-thread figures show where a change moved work (workers, flush,
compaction). Starts kvrocks (or with --redis a redis-server) on a free port with a
fresh data dir, optionally fills it, then runs rounds of one redis-benchmark case;
each round prints req/s, the whole machine's busy CPU per request (all of
/proc/stat: the benchmark and kernel threads included) and the server's CPU per
request by thread name, read right before and right after the round (background
work after the round does not count, unless --drain waits for the compactions the
round caused and counts them too), and the server's minor page faults per request
(a new page costs 0-8 us on these VMs, bench/RESULTS.md session 34).

  bench/cpu_per_request.py                       # rounds of 25k 8 KiB SETs after a 400k fill
  bench/cpu_per_request.py --kvrocks-args "--rocksdb.wal-compression no"
  bench/cpu_per_request.py --test get --size 8192 --fill-size 8192 --fill-requests 300000 \\
      --keyspace 75000 --rounds 1 --requests 100000    # GETs of big values only
  bench/cpu_per_request.py --redis ...           # the same against redis-server
  bench/cpu_per_request.py --requests 200000 --rounds 1 --drain   # compactions included
"""
import argparse
import collections
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import REDIS_SERVER, ROOT, call, free_port, machine, wait_ready  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """Ticks of user+system CPU per thread name of process pid."""
    ticks = collections.Counter()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue  # the thread ended
        ticks[name] += int(fields[11]) + int(fields[12])
    return ticks


def minor_faults(pid):
    """Minor page faults of process pid so far (field 10 of /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def machine_busy():
    with open("/proc/stat") as f:
        cpu = f.readline().split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in cpu[:7])
    return user + nice + system + irq + softirq


def benchmark(port, test, size, requests, keyspace, pipeline, clients):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", test, "-d", str(size), "-n", str(requests),
                          "-r", str(keyspace), "-c", str(clients), "-P", str(pipeline), "-q"],
                         capture_output=True, text=True, check=True).stdout
    last = [line for line in out.replace("\r", "\n").splitlines() if "requests per second" in line][-1]
    return float(last.split(":")[1].split()[0])


def wait_compactions(port, timeout=120):
    """Waits until kvrocks runs no compaction and owes none."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        time.sleep(1)
        info = call(port, "INFO", "rocksdb").decode()  # "$<len>" and the text: sent in one piece
        if "num_running_compactions:0" in info and "pending_compaction_bytes:0" in info:
            return
    print("compactions still running after", timeout, "s", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", default="set")
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--requests", type=int, default=25000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--keyspace", type=int, default=1000000)
    ap.add_argument("--pipeline", type=int, default=1)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--fill-requests", type=int, default=400000, help="pipelined SETs before the rounds (0: none)")
    ap.add_argument("--fill-size", type=int, default=100)
    ap.add_argument("--settle", type=float, default=4, help="seconds of quiet before each round")
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"))
    ap.add_argument("--kvrocks-args", default="")
    ap.add_argument("--redis", action="store_true", help="measure redis-server instead of kvrocks")
    ap.add_argument("--drain", action="store_true",
                    help="count the compactions a round leaves behind (waits for them after the round)")
    args = ap.parse_args()

    port = free_port()
    data = tempfile.mkdtemp(prefix="kvrocks-cpu-")
    if args.redis:
        cmd = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", data]
    else:
        cmd = [args.kvrocks, "--conf", os.path.join(ROOT, "kvrocks.conf"), "--port", str(port), "--dir", data]
        cmd += shlex.split(args.kvrocks_args)
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port)
        print(machine(), flush=True)
        if args.fill_requests:
            benchmark(port, "set", args.fill_size, args.fill_requests, args.keyspace, 16, args.clients)
        for r in range(1, args.rounds + 1):
            time.sleep(args.settle)
            before, busy0, faults0 = thread_cpu(server.pid), machine_busy(), minor_faults(server.pid)
            rps = benchmark(port, args.test, args.size, args.requests, args.keyspace, args.pipeline, args.clients)
            busy1, faults1 = machine_busy(), minor_faults(server.pid)
            if args.drain and not args.redis:
                wait_compactions(port)
            after = thread_cpu(server.pid)
            per_req = {k: (after[k] - before[k]) * 1e6 / TICK / args.requests for k in after}
            threads = " ".join(f"{k} {v:.1f}" for k, v in sorted(per_req.items()) if v > 0)
            print(f"round {r}: {rps:.0f} req/s, machine {(busy1 - busy0) * 1e6 / TICK / args.requests:.1f} us/req, "
                  f"server {sum(per_req.values()):.1f} us/req ({threads}), "
                  f"{(faults1 - faults0) / args.requests:.2f} page faults/req", flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
