"""Real client libraries against kvrocks: node-redis 4 (commands, MULTI,
EVAL, SCAN, pub/sub) and node-redis 3, whose ready check waits for INFO's
loading:0. (redis-py is what every other test uses.)"""
import os
import shutil
import subprocess

import pytest

NODE_DIR = os.path.join(os.path.dirname(__file__), "..", "clients", "node")


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
