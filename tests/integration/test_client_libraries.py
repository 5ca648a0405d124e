"""Real client libraries against kvrocks: node-redis 4 (commands, MULTI,
EVAL, SCAN, pub/sub), node-redis 3, whose ready check waits for INFO's
loading:0, and go-redis v9 in RESP3 and RESP2, whose view of every reply is
compared with its view of redis-server's. (redis-py is what every other test uses.)"""
import difflib
import os
import shutil
import subprocess

import pytest

from conftest import RealRedis

NODE_DIR = os.path.join(os.path.dirname(__file__), "..", "clients", "node")
GO_DIR = os.path.join(os.path.dirname(__file__), "..", "clients", "go")


@pytest.fixture(scope="module")
def node_modules():
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm are needed (scripts/deps.sh --test installs them)")
    if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "redis3")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=300)
    return NODE_DIR


def test_node_redis(kvrocks_server, node_modules):
    out = subprocess.run(["node", "client_test.js", str(kvrocks_server.port)], cwd=node_modules,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "node-redis checks passed" in out.stdout


def test_node_redis_ready_check_on_replica(node_modules):
    from test_replication import Master, start_replica, wait_synced
    m = Master()
    kv = None
    try:
        m.client().set("from-master", "hello")
        kv = start_replica(m)
        wait_synced(m.client(), kv)
        out = subprocess.run(["node", "client_test.js", str(kv.port), "replica"], cwd=node_modules,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
    finally:
        if kv:
            kv.cleanup()
        m.cleanup()


@pytest.fixture(scope="module")
def go_client(tmp_path_factory):
    """tests/clients/go built (go-redis from the Go module proxy, as go.sum pins it)."""
    if shutil.which("go") is None:
        pytest.fail("go is needed (scripts/deps.sh --test installs Debian's golang-go)")
    binary = str(tmp_path_factory.mktemp("go") / "go_client")
    out = subprocess.run(["go", "build", "-o", binary, "."], cwd=GO_DIR, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return binary


@pytest.mark.parametrize("protocol", [3, 2])
def test_go_redis_sees_what_it_sees_of_redis(kvrocks_server, go_client, protocol):
    ref = RealRedis()
    try:
        runs = [subprocess.run([go_client, str(port), str(protocol)], capture_output=True, text=True, timeout=120)
                for port in (kvrocks_server.port, ref.port)]
    finally:
        ref.cleanup()
    for run in runs:
        assert run.returncode == 0 and run.stdout.endswith("go-redis transcript done\n"), run.stdout + run.stderr
    kv, redis = runs[0].stdout.splitlines(), runs[1].stdout.splitlines()
    assert kv == redis, "\n".join(difflib.unified_diff(redis, kv, "redis-server", "kvrocks", lineterm=""))
