#!/usr/bin/env python3
"""Starved replica: how far a kvrocks replica's idle-priority applier falls behind
when every CPU is busy (replica-idle-apply-max-lag-ms, src/replication/apply_priority.h).

A redis-server master takes pipelined SETs at a fixed rate while one busy
loop per CPU runs at normal priority; the kvrocks replica follows with
kvrocks.conf. Every second it prints the applier thread's CPU time and run-queue
wait (/proc schedstat), the replica's lag in bytes of stream, and the share of
samples (every 2 ms) that found the applier at SCHED_IDLE; then the median and
the largest lag.

  bench/starved_replica.py [--seconds 20] [--rate 20000] [--kvrocks build/kvrocks]
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

sys.path.insert(0, os.path.dirname(__file__))
from common import ROOT, call, encode, free_port, machine, start_master, wait_ready  # noqa: E402

SCHED_IDLE = 5


def info_field(port, name):
    for line in call(port, "INFO", "replication").decode().split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    return None


def thread_id(pid, name):
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() == name:
                    return tid
        except FileNotFoundError:
            continue
    return None


def thread_policy(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[38])


def schedstat_ms(pid, tid):
    """(CPU time, run-queue wait) of a thread so far, in ms."""
    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
        run, wait, _ = f.read().split()
    return int(run) / 1e6, int(wait) / 1e6


def write(port, rate):
    """SETs of 200 bytes over 2000 keys, 100 to a pipeline, paced to rate a second."""
    batch = b"".join(encode("SET", f"key:{i % 2000}", "v" * 200) for i in range(100))
    with socket.create_connection(("127.0.0.1", port)) as s:
        start, sent = time.time(), 0
        while True:
            s.sendall(batch)
            got = 0
            while got < 100 * len(b"+OK\r\n"):
                got += len(s.recv(1 << 16))
            sent += 100
            ahead = start + sent / rate - time.time()
            if ahead > 0:
                time.sleep(ahead)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rate", type=int, default=20000, help="SETs a second to the master")
    ap.add_argument("--kvrocks", default=os.path.join(ROOT, "build", "kvrocks"))
    ap.add_argument("--write", nargs=2, type=int, metavar=("PORT", "RATE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write:
        return write(*args.write)
    print(machine())
    tmp = tempfile.mkdtemp(prefix="starved-")
    procs = []
    try:
        mport, kport = free_port(), free_port()
        procs.append(start_master(mport, tmp))
        wait_ready(mport)
        kv = subprocess.Popen([args.kvrocks, "--conf", os.path.join(ROOT, "kvrocks.conf"), "--port", str(kport),
                               "--dir", os.path.join(tmp, "kv"), "--replicaof", f"127.0.0.1 {mport}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(kv)
        wait_ready(kport)
        deadline = time.time() + 60
        while time.time() < deadline:
            tid = thread_id(kv.pid, "replica")
            if tid and thread_policy(kv.pid, tid) == SCHED_IDLE:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("the applier never reached SCHED_IDLE (no CAP_SYS_NICE?)")
        procs += [subprocess.Popen(["python3", "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
        procs.append(subprocess.Popen([sys.executable, __file__, "--write", str(mport), str(args.rate)]))
        lags, idle_shares = [], []
        last = schedstat_ms(kv.pid, tid)
        for second in range(1, args.seconds + 1):
            idle = samples = 0
            end = time.time() + 1
            while time.time() < end:
                idle += thread_policy(kv.pid, tid) == SCHED_IDLE
                samples += 1
                time.sleep(0.002)
            now = schedstat_ms(kv.pid, tid)
            lag = info_field(mport, "master_repl_offset") - info_field(kport, "slave_repl_offset")
            lags.append(lag)
            idle_shares.append(idle / samples)
            print(f"{second:3d} s: applier CPU {now[0] - last[0]:6.1f} ms, "
                  f"waited for a CPU {now[1] - last[1]:6.1f} ms, lag {lag / 1e6:5.1f} MB, "
                  f"at SCHED_IDLE {100 * idle / samples:3.0f}% of samples", flush=True)
            last = now
        print(f"lag: median {statistics.median(lags) / 1e6:.1f} MB, largest {max(lags) / 1e6:.1f} MB; "
              f"at SCHED_IDLE {100 * statistics.mean(idle_shares):.0f}% of the time")
    finally:
        for p in reversed(procs):
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
