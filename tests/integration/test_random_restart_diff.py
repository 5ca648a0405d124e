"""Random command sequences over every data type sent to kvrocks and to a
redis-server; then kvrocks stops (kill -9 or SIGTERM) and starts again on its
data directory, and every key must come back as the Redis that kept running
holds it (DEBUG DIGEST, then each key's DEBUG DIGEST-VALUE, type and TTL).
Bounded here; `python3 tests/integration/random_commands.py 0 1000 1000 restart`
hunts longer."""
import pytest

from conftest import Kvrocks, RealRedis
from random_commands import restart_mismatches


@pytest.fixture(scope="module")
def servers():
    kv, ref = Kvrocks().start(), RealRedis()
    yield kv, ref
    kv.cleanup()
    ref.cleanup()


@pytest.mark.parametrize("seed", range(4))
def test_random_commands_survive_restart(servers, seed):
    kv, ref = servers
    mismatches = restart_mismatches(kv, ref.port, seed, 800, kill=seed % 2 == 0)
    assert not mismatches, "\n".join(mismatches)
