"""Random command sequences over every data type, sent to kvrocks and to
redis-server: replies must match (random_commands.py says what is normalized).
Bounded here; `python3 tests/integration/random_commands.py 0 1000 5000 [resp3] [pipeline]`
hunts longer."""
import pytest

from conftest import RawClient
from random_commands import VALUES, big_values, run, small_encodings, wide_collections

SEEDS = range(8)
COMMANDS = 3000


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"], scope="module")
def clients(request, kvrocks_server, redis_ref):
    kv, ref = RawClient(kvrocks_server.port), RawClient(redis_ref.port)
    if request.param == 3:
        kv.call("HELLO", "3")
        ref.call("HELLO", "3")
    yield kv, ref
    kv.close()
    ref.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_random_commands_match_redis(clients, seed):
    mismatches = run(*clients, seed, COMMANDS)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("seed", range(100, 104))
def test_pipelined_random_commands_match_redis(clients, seed):
    # Pipelines of up to 20 commands: kvrocks runs them in one write batch
    # (read-your-writes within the batch, counters settled at its commit).
    mismatches = run(*clients, seed, COMMANDS, pipeline=True)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("seed", range(200, 204))
def test_random_commands_with_small_encodings_match_redis(clients, seed):
    # Encoding thresholds of 2 or 3 elements: collections change encoding within the
    # generators' handful of members (OBJECT ENCODING, replies after a conversion).
    with small_encodings(*clients):
        mismatches = run(*clients, seed, COMMANDS)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("seed", range(300, 302))
def test_random_commands_with_compactions_match_redis(clients, kvrocks_server, seed):
    # kvrocks compacts its whole database now and then, sometimes beside the next
    # commands: what the compaction filters drop (old versions, deleted and
    # expired keys' elements, stale ranks) must never be what a later command reads.
    # Values past rocksdb.min-blob-size too: strings out of line, elements in blob files.
    compactor = RawClient(kvrocks_server.port)
    with small_encodings(*clients), big_values(VALUES):
        mismatches = run(*clients, seed, COMMANDS, pipeline=True, compact=compactor)
    compactor.close()
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("seed", range(402, 404))
def test_random_commands_over_wide_collections_match_redis(clients, seed):
    # Collections of hundreds to thousands of members: the real encoding thresholds,
    # sorted sets' rank indexes, whole SCAN iterations with small counts.
    with wide_collections():
        mismatches = run(*clients, seed, COMMANDS)
    assert not mismatches, "\n".join(mismatches)
