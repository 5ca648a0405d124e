#!/usr/bin/env python3
"""Keep-up: redis-benchmark writes to a redis-server master with a kvrocks
replica attached, then with a Redis replica attached. Prints the master's
throughput in both cases (ratio), how long each replica needed after the load to
reach the master's offset, whether any extra full sync happened, and the CPU time
each replica process spent from the start of the load until it caught up.

  bench/keep_up.py [--requests 2000000] [--size 100] [--rounds 1]
      each run against a fresh, empty master; with --rounds N the replicas take
      turns going first and the figures are medians
  bench/keep_up.py --apply-rate [--requests 3000000]
      the most each replica applies: the master takes pipelined writes faster than
      the replica can apply them (no output-buffer limit, a backlog big enough),
      then the replica's applied commands per second are sampled while it catches up.
"""
import argparse
import contextlib
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import REDIS_SERVER, ROOT, call, free_port, start_master, wait_ready  # noqa: E402
from cpu_per_request import TICK, thread_cpu  # noqa: E402


def info(port, section):
    text = call(port, "INFO", section).decode(errors="replace")
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def config_set(port, name, value):
    reply = call(port, "CONFIG", "SET", name, value)
    if not reply.startswith(b"+OK"):
        raise RuntimeError(f"CONFIG SET {name}: {reply!r}")


@contextlib.contextmanager
def attached_replica(replica_cmd, rport, mport):
    """A replica process, synced with the master, stopped on exit."""
    rep = subprocess.Popen(replica_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(rport)
        call(rport, "REPLICAOF", "127.0.0.1", mport)
        while info(rport, "replication").get("master_link_status") != "up":
            time.sleep(0.05)
        yield rep
    finally:
        rep.terminate()
        rep.wait()


def benchmark(mport, args, pipeline=1):
    out = subprocess.run(["redis-benchmark", "-p", str(mport), "-t", "set", "-d", str(args.size), "-n",
                          str(args.requests), "-r", "1000000", "-c", "50", "-P", str(pipeline), "-q"],
                         capture_output=True, text=True).stdout
    return float(re.findall(r"([\d.]+) requests per second", out)[-1])


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(replica_cmd, rport, mport, args):
    with attached_replica(replica_cmd, rport, mport) as rep:
        full0 = int(info(mport, "stats")["sync_full"])
        cpu0, threads0 = cpu_seconds(rep.pid), thread_cpu(rep.pid)
        rps = benchmark(mport, args)
        t0 = time.time()
        target = int(info(mport, "replication")["master_repl_offset"])
        while int(info(rport, "replication").get("slave_repl_offset", "0")) < target:
            time.sleep(0.01)
        lag = time.time() - t0
        cpu = cpu_seconds(rep.pid) - cpu0
        threads = thread_cpu(rep.pid)
        threads.subtract(threads0)
        full1 = int(info(mport, "stats")["sync_full"])
        return rps, lag, full1 - full0, cpu, threads


def apply_rate(replica_cmd, rport, mport, args):
    with attached_replica(replica_cmd, rport, mport):
        start = int(info(mport, "replication")["master_repl_offset"])
        benchmark(mport, args, pipeline=32)
        end = int(info(mport, "replication")["master_repl_offset"])
        per_command = (end - start) / args.requests
        o0, t0 = int(info(rport, "replication")["slave_repl_offset"]), time.time()
        time.sleep(5)
        o1, t1 = int(info(rport, "replication")["slave_repl_offset"]), time.time()
        if o1 >= end:
            return None  # caught up within the sample: faster than the master wrote
        return (o1 - o0) / per_command / (t1 - t0)


def with_fresh_master(fn):
    """fn(mport) against a master of its own, empty. A master that holds an earlier
    run's keys takes writes at another speed (it overwrites them; 8 KiB SETs went
    29k/s against 47k/s on a fresh master in session 59, and the other way in
    others: bench/RESULTS.md, sessions 34 and 59), so the second replica of a
    shared master would be measured against another master."""
    d = tempfile.mkdtemp(prefix="bench-keepup-")
    mport = free_port()
    master = start_master(mport, d)
    try:
        wait_ready(mport)
        return fn(mport)
    finally:
        master.terminate()
        master.wait()
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=1, help="runs of each replica, alternating which goes first")
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"))
    ap.add_argument("--kvrocks-args", default="", help="extra kvrocks arguments, e.g. '--workers 4'")
    ap.add_argument("--apply-rate", action="store_true", help="measure the most each replica applies per second")
    args = ap.parse_args()
    kport, rport = free_port(), free_port()
    replicas = {"kvrocks": lambda d: [args.kvrocks, "--conf", os.path.join(ROOT, "kvrocks.conf"), "--port",
                                      str(kport), "--dir", d] + shlex.split(args.kvrocks_args),
                "Redis": lambda d: [REDIS_SERVER, "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                                    "--appendonly", "no", "--dir", d]}
    ports = {"kvrocks": kport, "Redis": rport}

    def once(name, fn):
        d = tempfile.mkdtemp(prefix="bench-keepup-")
        try:
            return with_fresh_master(lambda mport: fn(replicas[name](d), ports[name], mport))
        finally:
            shutil.rmtree(d, ignore_errors=True)

    if args.apply_rate:
        def rate(cmd, port, mport):
            config_set(mport, "client-output-buffer-limit", "replica 0 0 0")
            config_set(mport, "repl-backlog-size", str(1 << 30))
            return apply_rate(cmd, port, mport, args)
        k, r = once("kvrocks", rate), once("Redis", rate)
        fmt = lambda v: "caught up at once (faster than the master)" if v is None else f"{v:.0f} commands/s"
        print(f"replica apply rate, SET -d {args.size}: kvrocks {fmt(k)}, Redis {fmt(r)}")
        return
    results = {"kvrocks": [], "Redis": []}
    for rnd in range(args.rounds):
        order = ["kvrocks", "Redis"] if rnd % 2 == 0 else ["Redis", "kvrocks"]
        for name in order:
            results[name].append(once(name, lambda cmd, port, mport: run(cmd, port, mport, args)))
        if args.rounds > 1:
            print(f"round {rnd + 1}: master with kvrocks replica {results['kvrocks'][-1][0]:.0f} req/s, "
                  f"with Redis replica {results['Redis'][-1][0]:.0f} req/s", file=sys.stderr, flush=True)
    median = lambda name, i: statistics.median(x[i] for x in results[name])
    k_rps, r_rps = median("kvrocks", 0), median("Redis", 0)
    print(f"master SET -d {args.size} -n {args.requests}: with kvrocks replica {k_rps:.0f} req/s, "
          f"with Redis replica {r_rps:.0f} req/s, ratio {k_rps / r_rps:.2f}"
          + (f" (medians of {args.rounds} rounds)" if args.rounds > 1 else ""))
    print(f"catch-up after the load (longest): kvrocks {max(x[1] for x in results['kvrocks']):.2f} s, "
          f"Redis {max(x[1] for x in results['Redis']):.2f} s; extra full syncs: "
          f"kvrocks {sum(x[2] for x in results['kvrocks'])}, Redis {sum(x[2] for x in results['Redis'])}")
    k_cpu, r_cpu = median("kvrocks", 3), median("Redis", 3)
    print(f"replica CPU (median): kvrocks {k_cpu:.2f} s ({k_cpu / args.requests * 1e6:.1f} us per write), "
          f"Redis {r_cpu:.2f} s ({r_cpu / args.requests * 1e6:.1f} us per write)")
    per_thread = lambda t: " ".join(f"{name} {ticks / TICK / args.requests * 1e6:.1f}"
                                    for name, ticks in sorted(t.items()) if ticks > 0)
    print(f"replica CPU per write by thread (us, last round): kvrocks {per_thread(results['kvrocks'][-1][4])}; "
          f"Redis {per_thread(results['Redis'][-1][4])}")


if __name__ == "__main__":
    main()
