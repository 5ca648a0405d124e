"""rdbchecksum as Redis 7.0 has it: with no, the RDB files a server writes end
with a zero checksum, and an RDB file whose checksum is wrong loads; with yes
(the default) it is refused. Compared with redis-server on the same files."""
import os
import shutil
import subprocess

import redis

from conftest import KVROCKS_BIN, REDIS_BIN, Kvrocks, RealRedis, free_port, wait_ready

REDIS_CLI = "/usr/bin/redis-cli" if os.path.exists("/usr/bin/redis-cli") else "redis-cli"


def snapshot(port, path):
    """The server's RDB, as `redis-cli --rdb` fetches it."""
    subprocess.run([REDIS_CLI, "-p", str(port), "--rdb", path], check=True, capture_output=True, timeout=60)
    with open(path, "rb") as f:
        return f.read()


def fill(client):
    client.set("str", "hello")
    client.rpush("list", "a", "b")
    client.hset("hash", "f", "v")


def test_rdb_files_end_with_a_zero_checksum_with_rdbchecksum_no(tmp_path):
    for checksum in ("yes", "no"):
        kv = Kvrocks(extra=["--rdbchecksum", checksum]).start()
        ref = RealRedis(extra=["--rdbchecksum", checksum, "--repl-diskless-sync-delay", "0"])
        try:
            fill(kv.client())
            fill(ref.client())
            ends = [snapshot(s.port, str(tmp_path / f"{name}-{checksum}.rdb"))[-8:] for name, s in
                    (("kvrocks", kv), ("redis", ref))]
            assert [e == bytes(8) for e in ends] == [checksum == "no"] * 2
        finally:
            kv.cleanup()
            ref.cleanup()


def starts_on(cmd, port):
    """Whether a server started with cmd comes up holding the 3 keys (else it exited)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc)
        return redis.Redis(port=port).dbsize() == 3
    except RuntimeError:
        return False
    finally:
        proc.kill()
        proc.wait()


def test_a_wrong_checksum_loads_only_with_rdbchecksum_no(tmp_path):
    ref = RealRedis(extra=["--repl-diskless-sync-delay", "0"])
    try:
        fill(ref.client())
        good = snapshot(ref.port, str(tmp_path / "good.rdb"))
    finally:
        ref.cleanup()
    bad = good[:-1] + bytes([good[-1] ^ 0xff])
    path = tmp_path / "dump.rdb"
    path.write_bytes(bad)
    results = {}
    for checksum in ("yes", "no"):
        port = free_port()
        data = tmp_path / f"kv-{checksum}"
        kv = [KVROCKS_BIN, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data), "--load-rdb", str(path),
              "--rdbchecksum", checksum]
        redis_dir = tmp_path / f"redis-{checksum}"
        redis_dir.mkdir()
        shutil.copy(path, redis_dir / "dump.rdb")
        rport = free_port()
        rd = [REDIS_BIN, "--port", str(rport), "--bind", "127.0.0.1", "--dir", str(redis_dir), "--save", "",
              "--rdbchecksum", checksum]
        results[checksum] = (starts_on(kv, port), starts_on(rd, rport))
    assert results == {"yes": (False, False), "no": (True, True)}
