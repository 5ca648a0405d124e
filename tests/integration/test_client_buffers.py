"""Buffer memory a big command leaves behind goes back, as Redis' clientsCron
resizes its query and reply buffers: the query buffer and arguments of a big SET,
the reply buffers of big GETs, the worker's write batch. Connections stay open
throughout; the test only waits (bounded) for the once-a-second trimming."""
import time

from conftest import Kvrocks

BIG = 20 * 1024 * 1024


def used_memory(c):
    return c.info("memory")["used_memory"]


def wait_for(pred, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.2)
    return pred()


def client_line(c, name):
    for line in c.execute_command("CLIENT", "LIST").decode().splitlines():
        if f"name={name} " in line:
            return dict(f.split("=", 1) for f in line.split(" "))
    raise AssertionError(f"no client {name}")


def test_big_commands_leave_no_buffers_behind():
    srv = Kvrocks(extra=["--workers", "1", "--rocksdb.write-buffer-size", "64mb"]).start()
    try:
        probe = srv.client()
        writer = srv.client()
        writer.client_setname("writer")
        readers = [srv.client() for _ in range(4)]
        for r in readers:
            r.ping()
        time.sleep(1.5)
        base = used_memory(probe)
        shrinks = probe.info("stats")["reply_buffer_shrinks"]
        writer.set("big", b"v" * BIG)
        for r in readers:
            assert len(r.get("big")) == BIG
        # The value itself stays in the memtable (64 MB write buffer). Kept buffers
        # would be 7 copies more: the query buffer, the argument, the batch, the
        # blob compression sample, 4 replies.
        assert used_memory(probe) > base + 4 * BIG
        assert wait_for(lambda: used_memory(probe) < base + 3 * BIG // 2), (base, used_memory(probe))
        # Each reader's reply buffer went back (INFO counts it as Redis does).
        assert probe.info("stats")["reply_buffer_shrinks"] >= shrinks + 4
        readers[0].client_setname("reader")
        assert int(client_line(probe, "reader")["rbs"]) < BIG
        # Idle over 2 s: the query buffer holds nothing and has nothing allocated, as in Redis.
        assert wait_for(lambda: client_line(probe, "writer")["qbuf-free"] == "0")
        assert client_line(probe, "writer")["qbuf"] == "0"
        # Everything still works on the same connections.
        writer.append("big", b"w")
        assert readers[0].strlen("big") == BIG + 1
    finally:
        srv.cleanup()


def test_a_command_of_many_keys_leaves_no_room_behind():
    # The batch's bookkeeping (ordered writes, lookups, key locks, the argument
    # vector) grew with the command; the next batches do not need that room.
    srv = Kvrocks(extra=["--workers", "1", "--rocksdb.write-buffer-size", "256mb"]).start()
    try:
        probe = srv.client()

        def outside_memtables():
            return probe.info("memory")["used_memory"] - int(probe.info("rocksdb")["memtables_size"])

        writer = srv.client()
        writer.ping()
        time.sleep(1.5)
        base = outside_memtables()
        n = 300000
        # Commands right behind it on the same connection: the parser's argument
        # vectors take turns, and the big one must not stay with the next ones.
        pipe = writer.pipeline(transaction=False)
        pipe.mset({f"key:{i}": "v" for i in range(n)})
        for _ in range(3):
            pipe.set("small", "v")
        pipe.execute()
        assert probe.dbsize() == n + 1
        # Kept, it was about 70 MB here.
        assert wait_for(lambda: outside_memtables() < base + 16 * 1024 * 1024), (base, outside_memtables())
        # Nothing is left to give back: another command (which would swap a kept
        # argument vector out of the parser) frees nothing more.
        time.sleep(2.5)
        settled = outside_memtables()
        writer.set("small", "w")
        deadline = time.time() + 3
        while time.time() < deadline:
            assert outside_memtables() > settled - 8 * 1024 * 1024
            time.sleep(0.2)
    finally:
        srv.cleanup()
