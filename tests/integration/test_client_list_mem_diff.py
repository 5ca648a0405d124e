"""CLIENT LIST's argv-mem, multi-mem and events against redis-server 7.0: the
bytes of the running (or blocked) command's arguments, of the commands a
transaction queued (8 more per argument, as Redis counts them), and r/rw."""
import time

from conftest import RawClient


def fields(lister, client_id):
    reply = lister.call("CLIENT", "LIST", "ID", str(client_id))
    line = reply.split(b"\r\n")[1].decode()
    return dict(f.split("=", 1) for f in line.split(" "))


def observe(diff, setup):
    """Runs setup(client) on a fresh client of each server; returns, for each,
    the client's argv-mem, multi-mem, multi and events seen from another client."""
    seen = []
    for server in (diff.kv, diff.ref):
        client, lister = RawClient(server.port), RawClient(server.port)
        client_id = int(client.call("CLIENT", "ID")[1:-2])
        setup(client)
        time.sleep(0.2)  # a blocking command sent without waiting is blocked by now
        f = fields(lister, client_id)
        seen.append({k: f[k] for k in ("argv-mem", "multi-mem", "multi", "events", "cmd")})
        client.close()
        lister.close()
    return seen


def test_own_command_arguments(diff):
    c = RawClient(diff.kv.port)
    r = RawClient(diff.ref.port)
    lines = [x.call("CLIENT", "INFO") for x in (c, r)]
    got = [dict(f.split("=", 1) for f in line.split(b"\r\n")[1].decode().split(" ")) for line in lines]
    assert got[0]["argv-mem"] == got[1]["argv-mem"] == "10"  # "client" + "info"


def test_queued_commands(diff):
    def setup(c):
        c.call("MULTI")
        c.call("SET", "a", "bbbbbbbbbb")
        c.call("GET", "a")
        c.call("HSET", "h", "f", "v", "g", "w")
    kv, ref = observe(diff, setup)
    assert kv == ref
    assert ref["multi-mem"] != "0"


def test_idle_client_and_exec(diff):
    def setup(c):
        c.call("MULTI")
        c.call("SET", "a", "b")
        c.call("EXEC")
        c.call("MULTI")
    kv, ref = observe(diff, setup)
    assert kv == ref


def test_blocked_command_keeps_its_arguments(diff):
    def setup(c):
        c.send_raw(b"*3\r\n$5\r\nBLPOP\r\n$6\r\nnolist\r\n$1\r\n0\r\n")
    kv, ref = observe(diff, setup)
    assert kv == ref
    assert ref["argv-mem"] == "12"


def test_clients_in_timeout_table(diff):
    """INFO clients counts the clients blocked with a timeout, as Redis' table of them."""
    seen = []
    for server in (diff.kv, diff.ref):
        timed, forever, lister = RawClient(server.port), RawClient(server.port), RawClient(server.port)
        timed.send_raw(b"*3\r\n$5\r\nBLPOP\r\n$2\r\nq1\r\n$2\r\n30\r\n")
        forever.send_raw(b"*3\r\n$5\r\nBLPOP\r\n$2\r\nq2\r\n$1\r\n0\r\n")
        time.sleep(0.2)
        counts = [info_field(lister, "clients_in_timeout_table"), info_field(lister, "blocked_clients")]
        lister.call("RPUSH", "q1", "x")
        timed.read_reply()
        time.sleep(0.1)
        counts.append(info_field(lister, "clients_in_timeout_table"))
        for c in (timed, forever, lister):
            c.close()
        seen.append(counts)
    assert seen[0] == seen[1] == [b"1", b"2", b"0"]


def info_field(client, name):
    for line in client.call("INFO", "clients").split(b"\r\n"):
        if line.startswith(name.encode() + b":"):
            return line.split(b":", 1)[1]
    raise AssertionError(name)
