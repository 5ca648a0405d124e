"""LATENCY HISTOGRAM, INFO latencystats, latency-tracking and
latency-tracking-info-percentiles against redis-server 7.0: the same commands on
both servers, replies compared in everything but the measured times (whose
buckets and percentile formats are checked instead)."""
import re
import threading
import time

import pytest
import redis

from conftest import Differ, RawClient

# Where Redis' histogram reports (the highest value equivalent to 1024 ns * 2^k, in us).
BUCKETS = {1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633, 135266, 270532,
           541065, 1073741}


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def both(request, kvrocks_server, redis_ref):
    clients = [kvrocks_server.client(protocol=request.param), redis_ref.client(protocol=request.param)]
    for c in clients:
        c.flushall()
        c.config_set("latency-tracking", "yes")
        c.config_set("latency-tracking-info-percentiles", "50 99 99.9")
        c.config_resetstat()
    yield clients
    for c in clients:
        c.close()


def histograms(reply):
    """{name: calls} of a LATENCY HISTOGRAM reply (either protocol), checking each histogram."""
    if isinstance(reply, list):  # RESP2: flat [name, [calls, n, histogram_usec, [us, count, ...]], ...]
        entries = []
        for i in range(0, len(reply), 2):
            body = dict(zip(reply[i + 1][::2], reply[i + 1][1::2]))
            flat = body[b"histogram_usec"]
            entries.append((reply[i], body[b"calls"], list(zip(flat[::2], flat[1::2]))))
    else:
        entries = [(name, body[b"calls"], list(body[b"histogram_usec"].items())) for name, body in reply.items()]
    out = {}
    for name, calls, buckets in entries:
        assert buckets and all(us in BUCKETS for us, _ in buckets), buckets
        counts = [c for _, c in buckets]
        assert counts == sorted(set(counts)) and counts[-1] == calls, buckets
        out[name.decode()] = calls
    return out


def run_workload(c):
    c.set("a", "1")
    for _ in range(3):
        c.get("a")
    c.get("missing")
    c.set("s", "x")
    with pytest.raises(redis.ResponseError):
        c.incr("s")  # fails, but ran: counted
    with pytest.raises(redis.ResponseError):
        c.execute_command("GET")  # rejected (arity): not counted
    c.config_get("port")
    c.eval("redis.call('set', KEYS[1], 'v') return redis.call('get', KEYS[1])", 1, "k")
    p = c.pipeline(transaction=True)
    p.incr("n")
    p.lpush("l", "x")
    p.execute()


def test_histogram_of_every_command(both):
    results = []
    for c in both:
        run_workload(c)
        results.append(histograms(c.execute_command("LATENCY", "HISTOGRAM")))
    assert results[0] == results[1]
    assert results[0]["get"] == 5 and results[0]["set"] == 3 and results[0]["eval"] == 1
    assert "latency|histogram" not in results[0]  # counted after it answers, as in Redis


def test_histogram_of_named_commands(both):
    results = []
    for c in both:
        run_workload(c)
        reply = c.execute_command("LATENCY", "HISTOGRAM", "set", "GET", "config", "nosuch", "config|get",
                                  "CONFIG|RESETSTAT", "lpush|x", "incr")
        results.append(sorted(histograms(reply).items()))
    assert results[0] == results[1]


def test_blocked_command_counts_once_when_answered(both):
    for c in both:
        c.config_resetstat()
    results = []
    for c in both:
        pool_client = redis.Redis(connection_pool=c.connection_pool)
        waiter = threading.Thread(target=lambda: pool_client.blpop("q", 10))
        waiter.start()
        deadline = time.time() + 10
        while c.info("clients")["blocked_clients"] == 0:
            assert time.time() < deadline, "BLPOP never blocked"
            time.sleep(0.01)
        c.lpush("q", "x")
        waiter.join()
        results.append(histograms(c.execute_command("LATENCY", "HISTOGRAM", "blpop", "lpush")))
    assert results[0] == results[1] == {"blpop": 1, "lpush": 1}


def latencystats(c):
    raw = RawClient(c.connection_pool.connection_kwargs["port"])
    text = raw.call("INFO", "latencystats").decode()
    raw.close()
    lines = [line for line in text.split("\r\n")[1:] if line]
    assert lines[0] == "# Latencystats"
    out = {}
    for line in lines[1:]:
        name, value = line.split(":", 1)
        assert name.startswith("latency_percentiles_usec_")
        pairs = [p.split("=") for p in value.split(",")] if value else []
        assert all(re.fullmatch(r"\d+\.\d{3}", v) for _, v in pairs), line
        out[name] = [k for k, _ in pairs]
    return out


def test_info_latencystats_and_percentiles_option(both):
    results = []
    for c in both:
        run_workload(c)
        step = [latencystats(c)]
        assert c.config_set("latency-tracking-info-percentiles", "0 50.5 100")
        step.append(latencystats(c))
        step.append(c.config_get("latency-tracking-info-percentiles"))
        for bad in ("101", "-1", "x", "50 abc"):
            with pytest.raises(redis.ResponseError) as e:
                c.config_set("latency-tracking-info-percentiles", bad)
            step.append(str(e.value))
        step.append(c.config_get("latency-tracking-info-percentiles"))
        assert c.config_set("latency-tracking-info-percentiles", "")
        step.append(latencystats(c))
        step.append(c.config_get("latency-tracking-info-percentiles"))
        step.append("latencystats" in str(c.execute_command("INFO")).lower())
        step.append("# Latencystats" in str(c.execute_command("INFO", "everything")))
        results.append(step)
    assert results[0] == results[1]
    assert results[0][1]["latency_percentiles_usec_set"] == ["p0", "p50.5", "p100"]


def test_latency_tracking_off_records_nothing(both):
    results = []
    for c in both:
        assert c.config_set("latency-tracking", "no")
        c.config_resetstat()
        run_workload(c)
        results.append((c.execute_command("LATENCY", "HISTOGRAM"), latencystats(c), c.config_get("latency-tracking")))
        assert c.config_set("latency-tracking", "yes")
    assert results[0] == results[1]
    assert not results[0][0] and results[0][1] == {}


def test_latency_help(both):
    kv, ref = both
    assert kv.execute_command("LATENCY", "HELP") == ref.execute_command("LATENCY", "HELP")


def test_latency_graph(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    d("LATENCY", "RESET")
    d("LATENCY", "GRAPH", "command")
    d("LATENCY", "GRAPH")
    d("LATENCY", "GRAPH", "a", "b")
    graphs = []
    for c in (d.kv, d.ref):
        c.call("CONFIG", "SET", "latency-monitor-threshold", "1")
        c.call("DEBUG", "SLEEP", "0.01")
        graphs.append(c.call("LATENCY", "GRAPH", "command").decode())
        c.call("CONFIG", "SET", "latency-monitor-threshold", "0")
        c.call("LATENCY", "RESET")
    for g in graphs:
        head, rule, rest = g.split("\r\n", 1)[1].split("\n", 2)
        assert re.fullmatch(r"command - high (\d+) ms, low \1 ms \(all time high \1 ms\)", head), g
        assert rule == "-" * 80
        # One sample: the lowest step on the bottom line, a blank line, then its label ("0s" or "1s").
        assert re.fullmatch(r" \n \n \n_\n \n[01]\ns\n\r\n", rest), g
    d.close()
