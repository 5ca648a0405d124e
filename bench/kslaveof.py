#!/usr/bin/env python3
"""kvrocks replicating kvrocks (KSLAVEOF) beside Redis replicating Redis, on the
same machine in the same run:

  bench/kslaveof.py [--requests 1000000] [--size 100] [--rounds 3]
      redis-benchmark SET against a kvrocks master alone, a kvrocks master with a
      kvrocks replica, a Redis master alone and a Redis master with a Redis
      replica; prints medians and ratios, how long each replica needed after the
      load to reach its master, and the replica's CPU per write.
  bench/kslaveof.py --wait [--requests 2000]
      SET, its reply, then WAIT 1 0, its reply: one client: the time per pair with a
      kvrocks master and replica, and with a Redis master and replica.
  bench/kslaveof.py --apply-rate [--requests 1000000]
      the most each replica applies: the replica is stopped (SIGSTOP) while the
      master takes pipelined writes, then continued; the writes over the time it
      takes to reach its master (the master's sending included).
"""
import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import REDIS_SERVER, ROOT, call, encode, free_port, machine, wait_ready  # noqa: E402
from keep_up import benchmark, config_set, cpu_seconds, info  # noqa: E402


class Pair:
    """A master and, if wanted, its replica, each in a temp dir; stopped on exit."""

    def __init__(self, kind, args, with_replica):
        self.kind, self.procs, self.dirs = kind, [], []
        self.mport = self._start(args)
        self.rport = self._start(args) if with_replica else None
        self.replica = self.procs[1] if with_replica else None

    def _start(self, args):
        d = tempfile.mkdtemp(prefix="bench-kslaveof-")
        port = free_port()
        if self.kind == "kvrocks":
            cmd = [args.kvrocks, "--conf", os.path.join(ROOT, "kvrocks.conf"), "--port", str(port), "--dir", d]
        else:
            cmd = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                   "--dir", d, "--repl-diskless-sync-delay", "0"]
        self.procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.dirs.append(d)
        wait_ready(port)
        return port

    def __enter__(self):
        if self.rport:
            call(self.rport, "KSLAVEOF" if self.kind == "kvrocks" else "REPLICAOF", "127.0.0.1", self.mport)
            while (info(self.rport, "replication").get("master_link_status") != "up"
                   or int(info(self.mport, "replication").get("connected_slaves", "0")) < 1):
                time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.send_signal(signal.SIGCONT)
            p.terminate()
            p.wait()
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)

    def master_position(self):
        field = "wal_sequence" if self.kind == "kvrocks" else "master_repl_offset"
        return int(info(self.mport, "replication")[field])

    def replica_position(self):
        return int(info(self.rport, "replication").get("slave_repl_offset", "0"))


def load(pair, args):
    """The master's SET throughput; with a replica, its catch-up time and CPU per write."""
    cpu0 = cpu_seconds(pair.replica.pid) if pair.replica else 0
    rps = benchmark(pair.mport, args)
    if not pair.replica:
        return rps, 0.0, 0.0
    t0, target = time.time(), pair.master_position()
    while pair.replica_position() < target:
        time.sleep(0.01)
    return rps, time.time() - t0, (cpu_seconds(pair.replica.pid) - cpu0) / args.requests * 1e6


def apply_rate(pair, args):
    if pair.kind == "Redis":
        config_set(pair.mport, "client-output-buffer-limit", "replica 0 0 0")
        config_set(pair.mport, "repl-backlog-size", str(1 << 30))
    else:
        config_set(pair.mport, "repl-timeout", "600")
    start = pair.master_position()
    pair.replica.send_signal(signal.SIGSTOP)
    benchmark(pair.mport, args, pipeline=32)
    end = pair.master_position()
    pair.replica.send_signal(signal.SIGCONT)
    t0 = time.time()
    while pair.replica_position() < end:
        time.sleep(0.005)
    return args.requests / (time.time() - t0)


def wait_pairs(pair, args):
    """Seconds per SET + WAIT 1 0 pair over one connection."""
    with socket.create_connection(("127.0.0.1", pair.mport)) as sock:
        t0 = time.time()
        for i in range(args.requests):
            for cmd, reply in ((encode("SET", f"k{i}", "v"), b"+OK\r\n"), (encode("WAIT", 1, 0), b":1\r\n")):
                sock.sendall(cmd)
                buf = b""
                while not buf.endswith(b"\r\n"):
                    buf += sock.recv(4096)
                if buf != reply:
                    raise RuntimeError(f"answered {buf!r}")
        return (time.time() - t0) / args.requests


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"))
    ap.add_argument("--apply-rate", action="store_true")
    ap.add_argument("--wait", action="store_true")
    args = ap.parse_args()
    print(machine())
    if args.wait:
        times = {"kvrocks": [], "Redis": []}
        for _ in range(3):
            for kind in ("kvrocks", "Redis"):
                with Pair(kind, args, True) as pair:
                    times[kind].append(wait_pairs(pair, args))
        k, r = statistics.median(times["kvrocks"]), statistics.median(times["Redis"])
        print(f"SET + WAIT 1 0, {args.requests} pairs, medians of 3 runs: kvrocks {k * 1e3:.3f} ms, "
              f"Redis {r * 1e3:.3f} ms per pair, ratio {k / r:.2f}")
        return
    if args.apply_rate:
        rates = {}
        for kind in ("kvrocks", "Redis"):
            with Pair(kind, args, True) as pair:
                rates[kind] = apply_rate(pair, args)
        print(f"replica catch-up rate after SIGCONT, SET -d {args.size} -P 32 -n {args.requests}: "
              f"kvrocks {rates['kvrocks']:.0f} writes/s, Redis {rates['Redis']:.0f} writes/s, "
              f"ratio {rates['kvrocks'] / rates['Redis']:.2f}")
        return
    cases = [("kvrocks", False), ("kvrocks", True), ("Redis", False), ("Redis", True)]
    results = {c: [] for c in cases}
    for rnd in range(args.rounds):
        for case in (cases if rnd % 2 == 0 else cases[::-1]):
            with Pair(case[0], args, case[1]) as pair:
                results[case].append(load(pair, args))
        print(f"round {rnd + 1}: " + ", ".join(f"{k}{'+replica' if r else ''} {results[(k, r)][-1][0]:.0f}"
                                               for k, r in cases), file=sys.stderr, flush=True)
    med = lambda case, i: statistics.median(x[i] for x in results[case])
    k0, k1, r0, r1 = (med(c, 0) for c in cases)
    print(f"SET -d {args.size} -n {args.requests} -c 50, medians of {args.rounds} rounds (req/s):")
    print(f"  kvrocks master alone {k0:.0f}, with a kvrocks replica {k1:.0f} ({k1 / k0:.2f} of alone)")
    print(f"  Redis master alone {r0:.0f}, with a Redis replica {r1:.0f} ({r1 / r0:.2f} of alone)")
    print(f"  ratio kvrocks/Redis with a replica: {k1 / r1:.2f} (alone: {k0 / r0:.2f})")
    print(f"catch-up after the load (longest): kvrocks {max(x[1] for x in results[cases[1]]):.2f} s, "
          f"Redis {max(x[1] for x in results[cases[3]]):.2f} s")
    print(f"replica CPU per write (median): kvrocks {med(cases[1], 2):.1f} us, Redis {med(cases[3], 2):.1f} us")


if __name__ == "__main__":
    main()
