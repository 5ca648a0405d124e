"""kvrocks as a replica of masters that answer PSYNC other than a Redis 7.0 does:
a scripted master (a socket server here) stands for a Redis older than 2.8 (no
PSYNC, only SYNC), for a master that is loading, and for one that answers
something unexpected. Redis' replica (syncWithMaster, slaveTryPartialResynchronization)
retries later on -LOADING and -NOMASTERLINK and falls back to SYNC on anything else;
after SYNC it sends its master no REPLCONF ACK (CLIENT_PRE_PSYNC)."""
import os
import socket
import threading
import time

import pytest

import rdb_writer
from conftest import Kvrocks, RealRedis, encode, wait_until

REPLID = "a" * 40


def read_command(f):
    """One RESP array of bulk strings from a buffered socket file, or None at EOF."""
    line = f.readline()
    if not line:
        return None
    assert line.startswith(b"*"), line
    args = []
    for _ in range(int(line[1:])):
        size = int(f.readline()[1:])
        args.append(f.read(size + 2)[:-2].decode())
    return args


class ScriptedMaster:
    """Accepts replicas one connection at a time. For the n-th PSYNC it answers
    psync_replies[n] (the last one again once they run out); a +FULLRESYNC or a
    SYNC gets `$<len>` and the RDB, then the stream. Records every command."""

    def __init__(self, rdb, psync_replies, stream=b"", replconf_reply="+OK"):
        self.rdb, self.psync_replies, self.stream = rdb, list(psync_replies), stream
        self.replconf_reply = replconf_reply.encode() + b"\r\n"
        self.commands = []  # (connection number, args)
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.stop = False
        self.open = None  # the connection being served
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.2)
        psyncs = 0
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            self.connections += 1
            n = self.connections
            conn.settimeout(None)  # blocking: close() shuts it down to end the read
            self.open = conn
            f = conn.makefile("rb")
            while not self.stop:
                try:
                    args = read_command(f)
                except OSError:
                    break
                if args is None:
                    break
                self.commands.append((n, args))
                name = args[0].upper()
                if name == "PING":
                    conn.sendall(b"+PONG\r\n")
                elif name == "REPLCONF" and args[1].upper() != "ACK":
                    conn.sendall(self.replconf_reply)
                elif name == "PSYNC":
                    reply = self.psync_replies[min(psyncs, len(self.psync_replies) - 1)]
                    psyncs += 1
                    conn.sendall(reply.encode() + b"\r\n")
                    if reply.startswith("+FULLRESYNC"):
                        self.send_payload(conn)
                elif name == "SYNC":
                    self.send_payload(conn)
            conn.close()

    def send(self, data):
        """More of the stream, on the connection being served."""
        self.open.sendall(data)

    def send_payload(self, conn):
        conn.sendall(b"\n\n$%d\r\n" % len(self.rdb) + self.rdb + self.stream)

    def close(self):
        self.stop = True
        if self.open is not None:
            try:
                self.open.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join()
        self.sock.close()


@pytest.fixture(scope="module")
def rdb():
    """An RDB from Debian's redis-server 7.0: a string, a hash and a list."""
    ref = RealRedis()
    try:
        c = ref.client()
        c.set("s", "v")
        c.hset("h", mapping={"a": "1", "b": "2"})
        c.rpush("l", "x", "y")
        c.save()
        with open(os.path.join(ref.dir, "dump.rdb"), "rb") as f:
            return f.read()
    finally:
        ref.cleanup()


STREAM = encode(["SELECT", "0"]) + encode(["SET", "from-stream", "1"]) + encode(["RPUSH", "l", "z"])


def follow(master):
    kv = Kvrocks().start()
    c = kv.client()
    c.replicaof("127.0.0.1", master.port)
    wait_until(lambda: c.get("from-stream") == b"1", 20, "the RDB and the stream")
    return kv, c


def assert_loaded(c):
    assert c.get("s") == b"v" and c.hgetall("h") == {b"a": b"1", b"b": b"2"}
    assert c.lrange("l", 0, -1) == [b"x", b"y", b"z"]
    assert c.info("replication")["master_link_status"] == "up"


@pytest.mark.parametrize("reply, replconf", [
    ("-ERR unknown command 'PSYNC'", "-ERR unknown command 'REPLCONF'"),  # Redis 2.6
    ("-ERR unknown command 'PSYNC'", "+OK"),
    ("+WHAT", "+OK"),
])
def test_master_without_psync_gets_sync(rdb, reply, replconf):
    master = ScriptedMaster(rdb, [reply], STREAM, replconf)
    kv = None
    try:
        kv, c = follow(master)
        assert_loaded(c)
        names = [args[0].upper() for _, args in master.commands]
        assert names.index("SYNC") == names.index("PSYNC") + 1
        time.sleep(2.5)  # Redis' replicationCron would have acked twice by now
        assert not [args for _, args in master.commands if args[:2] == ["REPLCONF", "ACK"]]
        master.send(encode(["REPLCONF", "GETACK", "*"]))  # asked, it answers (replconfCommand)
        wait_until(lambda: [args for _, args in master.commands if args[:2] == ["REPLCONF", "ACK"]], 10,
                   "the answer to GETACK")
        time.sleep(1.5)
        assert len([args for _, args in master.commands if args[:2] == ["REPLCONF", "ACK"]]) == 1
        assert master.connections == 1
    finally:
        if kv:
            kv.cleanup()
        master.close()


@pytest.mark.parametrize("busy", ["-LOADING Redis is loading the dataset in memory",
                                  "-NOMASTERLINK Can't SYNC while not connected with my master"])
def test_busy_master_is_asked_again_later(rdb, busy):
    master = ScriptedMaster(rdb, [busy, f"+FULLRESYNC {REPLID} 100"], STREAM)
    kv = None
    try:
        kv, c = follow(master)
        assert_loaded(c)
        assert master.connections == 2
        assert "SYNC" not in [args[0].upper() for _, args in master.commands]
        assert c.info("replication")["master_replid"] == REPLID
        wait_until(lambda: any(n == 2 and args[:2] == ["REPLCONF", "ACK"] for n, args in master.commands),
                   20, "an ACK to a PSYNC master")
    finally:
        if kv:
            kv.cleanup()
        master.close()


@pytest.mark.parametrize("aux, db", [("2", 2), ("15", 15), ("16", 0), ("-1", 0), ("x", 0), (None, 0)])
def test_full_sync_starts_in_the_rdbs_repl_stream_db(aux, db):
    # Redis' replica starts its master client in the RDB's repl-stream-db aux field
    # (readSyncBulkPayload; a database it does not have leaves it in 0), and a master
    # whose stream goes on in that database sends no SELECT first.
    body = rdb_writer.string("repl-stream-db") + rdb_writer.string(aux) if aux is not None else b""
    rdb = rdb_writer.rdb(9, (b"\xfa" + body) if body else b"")
    master = ScriptedMaster(rdb, [f"+FULLRESYNC {REPLID} 100"], encode(["SET", "k", "v"]))
    kv = Kvrocks().start()
    try:
        c = kv.client()
        c.replicaof("127.0.0.1", master.port)
        wait_until(lambda: kv.client(db=db).get("k") == b"v", 20, f"the stream's SET in database {db}")
        assert sum(kv.client(db=n).dbsize() for n in range(16)) == 1
    finally:
        kv.cleanup()
        master.close()


def test_commands_of_the_master_that_fail_are_counted_as_redis_counts_them(rdb):
    # A command the master sends that fails here (a 6.2 master's DECRBY of
    # -9223372036854775808, which 7.0 refuses) is logged and counted in INFO stats'
    # unexpected_error_replies, total_error_replies and errorstats, as in Redis
    # (afterErrorReply); the stream goes on.
    master = ScriptedMaster(rdb, [f"+FULLRESYNC {REPLID} 100"], STREAM)
    kv = None
    try:
        kv, c = follow(master)
        before = c.info("stats")
        errors = c.info("errorstats")
        master.send(encode(["SET", "n", "5"]) + encode(["DECRBY", "n", "-9223372036854775808"]) +
                    encode(["LPUSH", "n", "x"]) + encode(["SET", "after", "1"]))
        wait_until(lambda: c.get("after") == b"1", 20, "the stream")
        stats = c.info("stats")
        assert stats["unexpected_error_replies"] == before["unexpected_error_replies"] + 2 == 2
        assert stats["total_error_replies"] == before["total_error_replies"] + 2
        after = c.info("errorstats")
        for code in ("ERR", "WRONGTYPE"):
            assert after[f"errorstat_{code}"]["count"] == errors.get(f"errorstat_{code}", {"count": 0})["count"] + 1
        assert c.info("replication")["replica_apply_errors"] == 2
        assert c.get("n") == b"5"
        with open(kv.log_path, "rb") as f:
            assert b"cannot apply 'DECRBY n -9223372036854775808': ERR decrement would overflow" in f.read()
        c.config_resetstat()
        assert c.info("stats")["unexpected_error_replies"] == 0
    finally:
        if kv:
            kv.cleanup()
        master.close()
