"""`save <seconds> <changes> ...` as in Redis: CONFIG SET/GET checked against
redis-server 7.0, a BGSAVE (kvrocks: a checkpoint) once a save point is reached,
and a save on SHUTDOWN or SIGTERM while save points are set (none with NOSAVE).
Also the protected configs (dir, dbfilename) and dbfilename, DEBUG RELOAD's file."""
import os
import time

import pytest
import redis

from conftest import Differ, Kvrocks, RealRedis


def test_config_save_matches_redis(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    try:
        d("CONFIG", "GET", "save")
        d("CONFIG", "SET", "save", "100 10 60 5")
        d("CONFIG", "GET", "save")
        for bad in ["1", "0 1", "1 -1", "a b", "1 2 3", "1.5 2"]:
            d("CONFIG", "SET", "save", bad)
        d("CONFIG", "GET", "save")
        d("CONFIG", "SET", "save", "")
        d("CONFIG", "GET", "save")
        # SHUTDOWN's refusals (Redis' illegal combinations).
        for args in (["NOSAVE", "SAVE"], ["ABORT", "NOW"], ["ABORT"], ["ABORT", "ABORT"], ["BAD"]):
            d("SHUTDOWN", *args)
    finally:
        d("CONFIG", "SET", "save", "")
        d.close()


def wait_for(predicate, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def checkpoint(srv):
    return os.path.join(srv.dir, "checkpoint")


def test_a_save_point_starts_a_bgsave(fresh_server):
    srv = fresh_server
    srv.extra = ["--save", "1 2"]
    srv.start()
    c = srv.client()
    assert c.config_get("save") == {"save": "1 2"}
    c.set("a", "1")
    time.sleep(1.5)
    # One change: below the save point, however long it waits.
    assert c.info("persistence")["rdb_changes_since_last_save"] == 1
    assert not os.path.exists(checkpoint(srv))
    c.set("b", "2")
    assert wait_for(lambda: c.info("persistence")["rdb_changes_since_last_save"] == 0)
    assert wait_for(lambda: os.path.isdir(checkpoint(srv)))
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    c.close()


def test_save_lines_in_the_config_file_add_up(tmp_path):
    conf = tmp_path / "k.conf"
    conf.write_text('save 3600 1\nsave 300 100\n')
    srv = Kvrocks(conf=str(conf))
    try:
        srv.start()
        c = srv.client()
        assert c.config_get("save") == {"save": "3600 1 300 100"}
        c.config_set("save", "")
        c.execute_command("CONFIG", "REWRITE")
        assert 'save ""' in conf.read_text()
        c.close()
    finally:
        srv.cleanup()


def test_shutdown_saves_when_save_points_are_set(fresh_server):
    srv = fresh_server
    srv.extra = ["--save", "3600 1"]
    srv.start()
    c = srv.client()
    c.set("k", "v")
    c.shutdown(nosave=True)  # no save with NOSAVE
    srv.stop()
    assert not os.path.exists(checkpoint(srv))
    srv.start()
    srv.stop()  # SIGTERM with a save point: a save
    assert os.path.isdir(checkpoint(srv))
    srv.extra = []
    srv.start()
    c = srv.client()
    assert c.get("k") == b"v"
    c.close()


def test_shutdown_save_forces_a_save(fresh_server):
    srv = fresh_server.start()
    c = srv.client()
    c.set("k", "v")
    c.shutdown(save=True)
    srv.stop()
    assert os.path.isdir(checkpoint(srv))


def test_protected_configs_and_dbfilename_match_redis(kvrocks_server, redis_ref):
    d = Differ(kvrocks_server.port, redis_ref.port)
    try:
        d("CONFIG", "GET", "dbfilename")
        d("CONFIG", "GET", "enable-protected-configs")
        d("CONFIG", "SET", "DIR", "/tmp")
        d("CONFIG", "SET", "dbfilename", "other.rdb")
        d("CONFIG", "SET", "Hz", "abc")  # a value error names the option
        d("CONFIG", "SET", "Databases", "4")  # a refusal names the argument as it was given
        d("CONFIG", "SET", "enable-protected-configs", "yes")
    finally:
        d.close()


def test_dbfilename_checks_match_redis_when_protected_configs_are_allowed(fresh_server):
    kv = fresh_server
    kv.extra = ["--enable-protected-configs", "yes"]
    kv.start()
    ref = RealRedis(extra=["--enable-protected-configs", "yes"])
    try:
        d = Differ(kv.port, ref.port)
        d("CONFIG", "SET", "dbfilename", "a/b.rdb")
        d("CONFIG", "SET", "dbfilename", "other.rdb")
        d("CONFIG", "GET", "dbfilename")
        d.close()
    finally:
        ref.cleanup()


def test_dbfilename_names_the_file_debug_reload_writes(tmp_path):
    srv = Kvrocks(extra=["--dbfilename", "mine.rdb", "--enable-protected-configs", "local"])
    try:
        srv.start()
        c = srv.client()
        c.set("k", "v")
        c.execute_command("DEBUG", "RELOAD")
        assert os.path.exists(os.path.join(srv.dir, "mine.rdb"))
        with pytest.raises(redis.ResponseError, match="can't be a path"):
            c.config_set("dbfilename", "a/b.rdb")
        c.config_set("dbfilename", "next.rdb")  # a local client may, with "local"
        c.execute_command("DEBUG", "RELOAD")
        assert os.path.exists(os.path.join(srv.dir, "next.rdb"))
        assert c.get("k") == b"v"
        c.close()
    finally:
        srv.cleanup()
