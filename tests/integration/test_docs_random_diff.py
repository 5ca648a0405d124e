"""Random commands drawn from Redis' COMMAND DOCS (docs_commands.py), sent to
kvrocks and to redis-server: replies and data sets must match after every
command. Bounded here; `python3 tests/integration/docs_commands.py 0 100 2000
[resp3]` hunts longer."""
import pytest

from conftest import RawClient
from docs_commands import STRINGS, run
from random_commands import big_values, small_encodings

COMMANDS = 2000


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"], scope="module")
def clients(request, kvrocks_server, redis_ref):
    kv, ref = RawClient(kvrocks_server.port), RawClient(redis_ref.port)
    if request.param == 3:
        kv.call("HELLO", "3")
        ref.call("HELLO", "3")
    yield kv, ref
    for c in (kv, ref):
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.call("FLUSHALL")
        c.close()


@pytest.mark.parametrize("seed", range(8))
def test_documented_commands_match_redis(clients, seed):
    mismatch = run(*clients, seed, COMMANDS)
    assert mismatch is None, mismatch


@pytest.mark.parametrize("seed", range(100, 102))
def test_documented_commands_over_expired_keys_match_redis(clients, seed):
    """Now and then keys expire (still stored: only a lookup deletes them): each
    command must look its keys up, and so delete them, as Redis' does."""
    mismatch = run(*clients, seed, 1000, expire_share=0.07)
    assert mismatch is None, mismatch


@pytest.mark.parametrize("seed", range(200, 204))
def test_documented_commands_with_small_encodings_match_redis(clients, seed):
    """Encoding thresholds of 2 or 3 elements (random_commands.SMALL_ENCODINGS): DUMP
    payloads and OBJECT ENCODING after conversions, lists over several nodes."""
    with small_encodings(*clients):
        mismatch = run(*clients, seed, COMMANDS)
    assert mismatch is None, mismatch


@pytest.mark.parametrize("seed", range(300, 302))
def test_documented_commands_with_compactions_match_redis(clients, kvrocks_server, seed):
    """kvrocks compacts its whole database now and then (random_commands.Compactor),
    the data sets compared after each command, keys expiring meanwhile, values past
    rocksdb.min-blob-size among the others (random_commands.BIG_VALUES)."""
    compactor = RawClient(kvrocks_server.port)
    with big_values(STRINGS):
        mismatch = run(*clients, seed, 1000, expire_share=0.07, compact=compactor)
    compactor.close()
    assert mismatch is None, mismatch
