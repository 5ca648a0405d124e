#!/usr/bin/env python3
"""Keep-up: redis-benchmark writes to a redis-server master with a kvrocks
replica attached, then with a Redis replica attached. Prints the master's
throughput in both cases (ratio), how long each replica needed after the load to
reach the master's offset, whether any extra full sync happened, and the CPU time
each replica process spent from the start of the load until it caught up.

  bench/keep_up.py [--requests 2000000] [--size 100]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"))
    ap.add_argument("--kvrocks-args", default="", help="extra kvrocks arguments, e.g. '--workers 4'")
    ap.add_argument("--apply-rate", action="store_true", help="measure the most each replica applies per second")
    args = ap.parse_args()
    dirs = [tempfile.mkdtemp(prefix="bench-keepup-") for _ in range(3)]
    mport = free_port()
    master = start_master(mport, dirs[0])
    try:
        wait_ready(mport)
        kport, rport = free_port(), free_port()
        kvrocks_cmd = [args.kvrocks, "--conf", os.path.join(ROOT, "kvrocks.conf"), "--port", str(kport),
                       "--dir", dirs[1]] + shlex.split(args.kvrocks_args)
        if args.apply_rate:
            config_set(mport, "client-output-buffer-limit", "replica 0 0 0")
            config_set(mport, "repl-backlog-size", str(1 << 30))
            k = apply_rate(kvrocks_cmd, kport, mport, args)
            r = apply_rate([REDIS_SERVER, "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no", "--dir", dirs[2]], rport, mport, args)
            fmt = lambda v: "caught up at once (faster than the master)" if v is None else f"{v:.0f} commands/s"
            print(f"replica apply rate, SET -d {args.size}: kvrocks {fmt(k)}, Redis {fmt(r)}")
            return
        k = run(kvrocks_cmd, kport, mport, args)
        r = run([REDIS_SERVER, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", dirs[2]], rport, mport, args)
    finally:
        master.terminate()
        master.wait()
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    print(f"master SET -d {args.size} -n {args.requests}: with kvrocks replica {k[0]:.0f} req/s, "
          f"with Redis replica {r[0]:.0f} req/s, ratio {k[0] / r[0]:.2f}")
    print(f"catch-up after the load: kvrocks {k[1]:.2f} s, Redis {r[1]:.2f} s; "
          f"extra full syncs: kvrocks {k[2]}, Redis {r[2]}")
    print(f"replica CPU: kvrocks {k[3]:.2f} s ({k[3] / args.requests * 1e6:.1f} us per write), "
          f"Redis {r[3]:.2f} s ({r[3] / args.requests * 1e6:.1f} us per write)")
    per_thread = lambda t: " ".join(f"{name} {ticks / TICK / args.requests * 1e6:.1f}"
                                    for name, ticks in sorted(t.items()) if ticks > 0)
    print(f"replica CPU per write by thread (us): kvrocks {per_thread(k[4])}; Redis {per_thread(r[4])}")


if __name__ == "__main__":
    main()
