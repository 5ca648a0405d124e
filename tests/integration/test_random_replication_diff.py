"""Random command sequences over every data type sent to a redis-server master
that a kvrocks replica and a redis-server replica follow: once both have applied
the stream, their data sets must be the same (DEBUG DIGEST, then each key's
DEBUG DIGEST-VALUE and TTL). Bounded here;
`python3 tests/integration/random_commands.py 0 1000 3000 replica [kill]` and
`python3 tests/integration/docs_commands.py 0 1000 2000 replica [kill]` hunt longer."""
import pytest
import redis

from conftest import Kvrocks, RawClient, RealRedis
from docs_commands import REPLICA_SENDS, SETUP, SKIP, DocsGen, ReplicaFeed, command_specs
from random_commands import VALUES, ReplicaRestarter, big_values, replica_mismatches


@pytest.fixture(scope="module")
def servers():
    master = RealRedis()
    replicas = [Kvrocks(extra=["--replicaof", f"127.0.0.1 {master.port}"]).start(),
                RealRedis(extra=["--replicaof", f"127.0.0.1 {master.port}"])]
    yield RawClient(master.port), [redis.Redis(port=r.port) for r in replicas], replicas[0].port
    for server in replicas + [master]:
        server.cleanup()


@pytest.mark.parametrize("seed", range(4))
def test_replicas_of_random_commands_match(servers, seed):
    master, (kv_replica, redis_replica), _ = servers
    mismatches = replica_mismatches(master, kv_replica, redis_replica, seed, 1500)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("seed", [870028, 870100, 870101])
def test_replicas_of_documented_commands_match(servers, seed):
    # Every documented command with arguments after its COMMAND DOCS (870028:
    # XADD ... MAXLEN ~ n LIMIT m, which the master propagates as MAXLEN = n' LIMIT m).
    master, (kv_replica, redis_replica), kv_port = servers
    feed = ReplicaFeed(DocsGen(command_specs(master, RawClient(kv_port), SKIP - REPLICA_SENDS), seed), None)
    mismatches = replica_mismatches(master, kv_replica, redis_replica, seed, 2000, gen=feed, setup=SETUP)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("seed", range(300, 302))
def test_compacting_replica_of_random_commands_matches(servers, seed):
    # The replica compacts while it applies the stream: its compaction filters keep
    # what the master has not deleted yet (expired keys' elements included).
    master, (kv_replica, redis_replica), kv_port = servers
    compactor = RawClient(kv_port)
    with big_values(VALUES):
        mismatches = replica_mismatches(master, kv_replica, redis_replica, seed, 1500, compact=compactor)
    compactor.close()
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("seed", range(400, 402))
def test_restarted_replica_of_random_commands_matches(seed):
    # The kvrocks replica is killed (-9) or stopped now and then while the stream
    # runs, and resumes with PSYNC from what it made durable: in the database the
    # stream had selected there, replaying nothing twice, losing nothing.
    master = RealRedis(extra=["--repl-backlog-size", "256mb", "--repl-diskless-sync-delay", "0"])
    kv = Kvrocks(extra=["--replicaof", f"127.0.0.1 {master.port}"]).start()
    ref = RealRedis(extra=["--replicaof", f"127.0.0.1 {master.port}"])
    try:
        restarter = ReplicaRestarter(kv, seed)
        mismatches = replica_mismatches(RawClient(master.port), redis.Redis(port=kv.port), redis.Redis(port=ref.port),
                                        seed, 3000, restarter=restarter)
        assert not mismatches, "\n".join(mismatches)
        assert restarter.stops > 0
    finally:
        for server in (kv, ref, master):
            server.cleanup()
