"""A client freed by another (CLIENT KILL, CLIENT UNBLOCK) is freed at once for
everyone, as in Redis, although its own worker has yet to act on it: the rest
of the same transaction already sees it gone (PUBLISH's count, PUBSUB, INFO
clients, tracking redirects). Against Debian's redis-server 7.0; `shift` idle
clients put the killer and its victim on the same worker or on different ones."""
import re

import pytest

from conftest import RawClient, encode
from test_blocking_wake_diff import blocked

SHIFTS = range(4)


def transaction(c, *cmds):
    """The EXEC reply of cmds run in MULTI on c."""
    c.send_raw(b"".join(encode(x) for x in [["MULTI"], *cmds, ["EXEC"]]))
    for _ in range(len(cmds) + 1):
        c.read_reply()
    return c.read_reply()


def clients_fields(info):
    """INFO clients' counts, without the fields that depend on the machine."""
    return re.findall(rb"(?:connected|blocked|tracking)_clients:\d+|clients_in_timeout_table:\d+", info)


def with_victim(port, shift, victim_setup, then):
    """`shift` idle clients, then a killer c and a victim v, which sends
    victim_setup; then(c, v, v_id) gives what is compared."""
    extra = [RawClient(port) for _ in range(shift)]
    c = RawClient(port)
    c.call("FLUSHALL")
    v = RawClient(port)
    v_id = v.call("CLIENT", "ID")[1:-2].decode()
    for cmd in victim_setup:
        if cmd[0] == "BLPOP":
            v.send_raw(encode(cmd))
            assert blocked(c)
        else:
            v.call(*cmd)
    out = then(c, v, v_id)
    for x in [c, v] + extra:
        x.close()
    return out


def killed_subscriber(port, shift):
    def then(c, v, v_id):
        return [transaction(c, ["CLIENT", "KILL", "ID", v_id], ["PUBLISH", "ch", "m"], ["PUBLISH", "news", "m"],
                            ["PUBSUB", "NUMSUB", "ch"], ["PUBSUB", "CHANNELS"], ["PUBSUB", "NUMPAT"]),
                v.closed()]
    return with_victim(port, shift, [["SUBSCRIBE", "ch"], ["PSUBSCRIBE", "n*"]], then)


def killed_by_type(port, shift):
    def then(c, v, v_id):
        return [transaction(c, ["CLIENT", "KILL", "TYPE", "pubsub"], ["PUBLISH", "ch", "m"],
                            ["PUBSUB", "NUMSUB", "ch"]), v.closed()]
    return with_victim(port, shift, [["SUBSCRIBE", "ch"]], then)


def killed_blocked(port, shift):
    def then(c, v, v_id):
        info = transaction(c, ["CLIENT", "KILL", "ID", v_id], ["INFO", "clients"], ["CLIENT", "UNBLOCK", v_id],
                           ["LPUSH", "l", "x"])
        return [clients_fields(info), info.split(b"\r\n")[-3:], c.call("LLEN", "l"), v.closed()]
    return with_victim(port, shift, [["BLPOP", "l", "0"]], then)


def unblocked_counts(port, shift):
    def then(c, v, v_id):
        info = transaction(c, ["CLIENT", "UNBLOCK", v_id], ["INFO", "clients"])
        return [clients_fields(info), v.read_reply()]
    return with_victim(port, shift, [["BLPOP", "l", "5"]], then)


def killed_tracker(port, shift):
    def then(c, v, v_id):
        info = transaction(c, ["CLIENT", "KILL", "ID", v_id], ["INFO", "clients"])
        return [clients_fields(info), v.closed()]
    return with_victim(port, shift, [["CLIENT", "TRACKING", "on", "BCAST"]], then)


def killed_redirect_target(port, shift):
    """t tracks k with its invalidations redirected to v; v is killed and k set
    in one transaction: t is told the redirect broke (and the id)."""
    def then(c, v, v_id):
        t = RawClient(port)
        t.call("HELLO", "3")
        t.call("CLIENT", "TRACKING", "on", "REDIRECT", v_id)
        t.call("GET", "k")
        out = [transaction(c, ["CLIENT", "KILL", "ID", v_id], ["SET", "k", "1"])]
        out.append(t.read_reply().replace(b":" + v_id.encode() + b"\r\n", b":<v>\r\n"))
        t.close()
        return out
    return with_victim(port, shift, [["SUBSCRIBE", "x"]], then)


def killed_paused(port, shift):
    """A write held by CLIENT PAUSE WRITE counts as blocked until its client is killed."""
    extra = [RawClient(port) for _ in range(shift)]
    c = RawClient(port)
    c.call("FLUSHALL")
    v = RawClient(port)
    v_id = v.call("CLIENT", "ID")[1:-2].decode()
    c.call("CLIENT", "PAUSE", "10000", "WRITE")
    v.send_raw(encode(["SET", "k", "v"]))
    assert blocked(c)
    info = transaction(c, ["CLIENT", "KILL", "ID", v_id], ["INFO", "clients"])
    out = [clients_fields(info), c.call("CLIENT", "UNPAUSE"), v.closed(), c.call("GET", "k")]
    for x in [c, v] + extra:
        x.close()
    return out


CASES = [killed_subscriber, killed_by_type, killed_blocked, unblocked_counts, killed_tracker, killed_redirect_target,
         killed_paused]


@pytest.mark.parametrize("shift", SHIFTS)
@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__)
def test_a_freed_client_is_gone_for_the_rest_of_the_transaction(kvrocks_server, redis_ref, case, shift):
    assert case(kvrocks_server.port, shift) == case(redis_ref.port, shift)


def killed_ahead_in_line(port, shift, free, in_multi):
    """a and then b block on l, b with an INCR pipelined behind; c frees a (kills
    or unblocks it) and pushes, pipelined or in one transaction: b is served,
    and its INCR runs only after c's batch (GET n is still nil)."""
    extra = [RawClient(port) for _ in range(shift)]
    c = RawClient(port)
    c.call("FLUSHALL")
    a, b = RawClient(port), RawClient(port)
    a_id = a.call("CLIENT", "ID")[1:-2].decode()
    a.send_raw(encode(["BLPOP", "l", "0"]))
    assert blocked(c, 1)
    b.send_raw(encode(["BLPOP", "l", "0"]) + encode(["INCR", "n"]))
    assert blocked(c, 2)
    cmds = [free + [a_id], ["LPUSH", "l", "x"], ["LLEN", "l"], ["GET", "n"]]
    if in_multi:
        cmds = [["MULTI"]] + cmds + [["EXEC"]]
    c.send_raw(b"".join(encode(x) for x in cmds))
    out = [c.read_reply() for _ in cmds] + [b.read_reply(), b.read_reply(), c.call("GET", "n")]
    for x in [a, b, c] + extra:
        x.close()
    return out


@pytest.mark.parametrize("shift", SHIFTS)
@pytest.mark.parametrize("in_multi", [False, True])
@pytest.mark.parametrize("free", [["CLIENT", "KILL", "ID"], ["CLIENT", "UNBLOCK"]], ids=["kill", "unblock"])
def test_the_next_in_line_is_served_in_the_freeing_clients_turn(kvrocks_server, redis_ref, free, in_multi, shift):
    ours = killed_ahead_in_line(kvrocks_server.port, shift, free, in_multi)
    assert ours == killed_ahead_in_line(redis_ref.port, shift, free, in_multi)
    assert ours[-3] == b"*2\r\n$1\r\nl\r\n$1\r\nx\r\n"


def kill_filters(port):
    """CLIENT KILL's filters and their refusals, as seen from a killer c with a
    victim v on port: each reply, with the addresses written as which client they are."""
    c, v = RawClient(port), RawClient(port)

    def field(client, name):
        return re.search(rb" %s=(\S+)" % name.encode(), b" " + client.call("CLIENT", "INFO")).group(1).decode()
    me, victim, victim_local = field(c, "addr"), field(v, "addr"), field(v, "laddr")
    cases = [
        ["1.2.3.4:5"], ["ADDR", "1.2.3.4:5"], ["ADDR"], ["ADDR", "1.2.3.4:5", "SKIPME"], ["SKIPME", "maybe"],
        ["TYPE", "bogus"], ["TYPE", "slave"], ["TYPE", "replica"], ["TYPE", "master"], ["LADDR", "1.2.3.4:5"],
        ["USER", "nobody"], ["FOO", "bar"], ["ID", "0"], ["ID", "abc"], ["ID", "99999"],
        ["ADDR", me], ["ADDR", me, "SKIPME", "yes"], ["ADDR", victim, "TYPE", "pubsub"],
        ["ADDR", victim, "LADDR", "1.2.3.4:5"], ["ADDR", victim, "LADDR", victim_local, "SKIPME", "yes"],
    ]
    out = [(case, c.call("CLIENT", "KILL", *case)) for case in cases]
    out.append(("victim closed", v.closed(5.0)))
    out.append(("itself", c.call("CLIENT", "KILL", "ADDR", me, "SKIPME", "no"), c.closed(5.0)))
    names = {me: "<killer>", victim: "<victim>", victim_local: "<server>"}
    return [([names.get(a, a) for a in what] if isinstance(what, list) else what, *replies)
            for what, *replies in out]


def test_kill_filters_and_their_errors(kvrocks_server, redis_ref):
    assert kill_filters(kvrocks_server.port) == kill_filters(redis_ref.port)
