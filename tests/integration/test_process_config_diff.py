"""Options that act on the process, compared with redis-server on servers of the
test's own: jemalloc-bg-thread starts and stops jemalloc's background threads;
oom-score-adj and oom-score-adj-values set the OOM killer's score by role."""
import os
import time

from conftest import Differ, Kvrocks, RealRedis


def jemalloc_background_threads(pid):
    names = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                names.append(f.read().strip())
        except FileNotFoundError:  # a thread that has just ended
            pass
    return sum(name.startswith("jemalloc_bg") for name in names)


def test_jemalloc_bg_thread_starts_and_stops_jemallocs_threads():
    kv = Kvrocks(extra=["--jemalloc-bg-thread", "no"]).start()
    ref = RealRedis(extra=["--jemalloc-bg-thread", "no"])
    try:
        for pid, c in ((kv.proc.pid, kv.client()), (ref.proc.pid, ref.client())):
            assert jemalloc_background_threads(pid) == 0
            c.config_set("jemalloc-bg-thread", "yes")
            wait_for(lambda: jemalloc_background_threads(pid) > 0)
            c.config_set("jemalloc-bg-thread", "no")
            wait_for(lambda: jemalloc_background_threads(pid) == 0)
    finally:
        kv.cleanup()
        ref.cleanup()


def wait_for(condition, timeout=10):
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, "timed out"
        time.sleep(0.02)


def oom_score(pid):
    with open(f"/proc/{pid}/oom_score_adj") as f:
        return int(f.read())


def test_oom_score_follows_the_options_and_the_role():
    kv = Kvrocks().start()
    ref = RealRedis()
    d = Differ(kv.port, ref.port, flush=False)
    scores = []

    def step(*cmd):
        d(*cmd)
        scores.append((cmd, oom_score(kv.proc.pid), oom_score(ref.proc.pid)))

    try:
        # Values at or above the start's 0: an unprivileged process may raise its score.
        values, adj = ["CONFIG", "SET", "oom-score-adj-values"], ["CONFIG", "SET", "oom-score-adj"]
        for cmd in (values + ["10 300 900"], adj + ["absolute"], ["REPLICAOF", "127.0.0.1", "1"],
                    ["REPLICAOF", "NO", "ONE"], adj + ["relative"], ["CONFIG", "GET", "oom-score-adj"],
                    values + ["20 3000 1"], values + ["20 30"], values + ["20 30 x"], values + ["1500 1600 1700"],
                    ["CONFIG", "GET", "oom-score-adj-values"], adj + ["no"], adj + ["sometimes"]):
            step(*cmd)
        assert [(k, r) for _, k, r in scores] == [(a, a) for _, a, _ in scores]
        assert [k for _, k, _ in scores] == [0, 10, 300, 10, 10, 10, 10, 10, 10, 1000, 1000, 0, 0]
    finally:
        d.close()
        kv.cleanup()
        ref.cleanup()
