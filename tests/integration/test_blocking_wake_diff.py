"""What wakes a blocked client, against Debian's redis-server 7.0: any write
that creates the key it waits on (RENAME, COPY, MOVE, SORT STORE, ZUNIONSTORE,
RESTORE, scripts, SWAPDB), and for XREADGROUP the deletion or overwrite of its
stream (-UNBLOCKED) or of its group (-NOGROUP). The blocked client's reply
bytes are compared."""
import socket
import time

import pytest

from conftest import Differ, RawClient, encode

CASES = [
    ([["LPUSH", "src", "a"]], ["BLPOP", "dst", "5"], [["RENAME", "src", "dst"]]),
    ([["LPUSH", "src", "a"]], ["BLPOP", "dst", "5"], [["COPY", "src", "dst"]]),
    ([["SELECT", "1"], ["LPUSH", "dst", "a"]], ["BLPOP", "dst", "5"], [["SELECT", "1"], ["MOVE", "dst", "0"]]),
    ([["LPUSH", "src", "c", "b", "a"]], ["BLPOP", "dst", "5"], [["SORT", "src", "ALPHA", "STORE", "dst"]]),
    ([["ZADD", "a", "1", "x"]], ["BZPOPMIN", "dst", "5"], [["ZUNIONSTORE", "dst", "1", "a"]]),
    ([["ZADD", "a", "1", "x"]], ["BZPOPMIN", "dst", "5"], [["ZRANGESTORE", "dst", "a", "0", "-1"]]),
    ([["GEOADD", "g", "1", "1", "m"]], ["BZPOPMAX", "dst", "5"], [["GEOSEARCHSTORE", "dst", "g", "FROMMEMBER", "m",
                                                                   "BYRADIUS", "1", "km"]]),
    ([["LPUSH", "src", "a"]], ["BLPOP", "dst", "5"], [["EVAL", "redis.call('rename', 'src', 'dst')", "0"]]),
    ([["LPUSH", "src", "a"]], ["BLPOP", "dst", "5"], [["MULTI"], ["RENAME", "src", "dst"], ["EXEC"]]),
    ([["LPUSH", "tmpl", "a"]], ["BLPOP", "dst", "5"], [["RESTORE", "dst", "0", "<dump tmpl>"]]),
    ([["SELECT", "1"], ["LPUSH", "dst", "a"], ["SELECT", "0"]], ["BLPOP", "dst", "5"], [["SWAPDB", "0", "1"]]),
    ([["LPUSH", "src", "a"]], ["BLMOVE", "dst", "x", "LEFT", "LEFT", "5"], [["RENAME", "src", "dst"]]),
    # A key that becomes another type leaves the client blocked.
    ([["SET", "src", "a"]], ["BLPOP", "dst", "0.5"], [["RENAME", "src", "dst"]]),
    # XREADGROUP: the stream deleted, overwritten, flushed, swapped away, or its group gone.
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["DEL", "s"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["SET", "s", "x"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"],
     [["MULTI"], ["DEL", "s"], ["SADD", "s", "e"], ["EXEC"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["FLUSHALL"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["FLUSHDB"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["SWAPDB", "0", "1"]]),
    ([["SELECT", "1"], ["LPUSH", "s", "e1"], ["SELECT", "0"], ["XADD", "s", "1", "f", "v"],
      ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["SWAPDB", "0", "1"]]),
    # A stream swapped in for a stream: the reader is served from its group there.
    ([["SELECT", "1"], ["XADD", "s", "5", "f", "v"], ["XGROUP", "CREATE", "s", "g", "0"], ["SELECT", "0"],
      ["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["SWAPDB", "0", "1"]]),
    # A string swapped in leaves a list waiter blocked.
    ([["SELECT", "1"], ["SET", "dst", "x"], ["SELECT", "0"]], ["BLPOP", "dst", "0.5"], [["SWAPDB", "0", "1"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"],
     [["DEL", "s"], ["XADD", "s", "2", "f", "v"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["XGROUP", "DESTROY", "s", "g"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"], ["XADD", "s2", "5", "f", "v"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["RENAME", "s2", "s"]]),
    ([["XADD", "s", "1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"], ["XADD", "s2", "5", "f", "v"],
      ["XGROUP", "CREATE", "s2", "g", "0"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"], [["RENAME", "s2", "s"]]),
    # XREAD stays blocked when its stream is deleted, and reads the one created after.
    ([["XADD", "s", "1", "f", "v"]], ["XREAD", "BLOCK", "5000", "STREAMS", "s", "$"],
     [["DEL", "s"], ["XADD", "s", "2", "f", "v"]]),
    ([["XADD", "s", "1", "f", "v"]], ["XREAD", "BLOCK", "5000", "STREAMS", "s", "$"],
     [["SET", "s", "x"], ["DEL", "s"], ["XADD", "s", "2", "f", "v"]]),
]


def blocked_reply(port, setup, block, actions):
    c = RawClient(port)
    c.call("FLUSHALL")
    for cmd in setup:
        c.call(*cmd)
    c.call("SELECT", "0")
    dump = c.call("DUMP", "tmpl")
    b = RawClient(port)
    b.send_raw(encode(block))
    assert blocked(c), "the client did not block"
    for cmd in actions:
        if "<dump tmpl>" in cmd:
            payload = dump.split(b"\r\n", 1)[1][:-2]
            cmd = [x if x != "<dump tmpl>" else payload for x in cmd]
        c.call(*cmd)
    reply = b.read_reply()
    b.close()
    c.call("FLUSHALL")
    c.close()
    return reply


def blocked(c, n=1):
    """Waits (up to 10 s) until n clients are blocked."""
    for _ in range(1000):
        if b"blocked_clients:%d\r\n" % n in c.call("INFO", "clients"):
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("case", range(len(CASES)))
def test_what_wakes_a_blocked_client(kvrocks_server, redis_ref, case):
    setup, block, actions = CASES[case]
    ours = blocked_reply(kvrocks_server.port, setup, block, actions)
    theirs = blocked_reply(redis_ref.port, setup, block, actions)
    assert ours == theirs, (block, actions)


def readers_behind_a_reader(port, action):
    """An XREAD blocked on a stream ahead of an XREADGROUP on it, then action:
    the XREADGROUP's reply, and whether the XREAD still waits."""
    c = RawClient(port)
    c.call("FLUSHALL")
    c.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    first, second = RawClient(port), RawClient(port)
    first.send_raw(encode(["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]))  # no timeout: it would pass the turn on
    assert blocked(c)
    second.send_raw(encode(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"]))
    assert blocked(c, 2)
    c.call(*action)
    replies = [second.read_reply(), blocked(c, 1)]
    for x in (first, second, c):
        x.close()
    return replies


@pytest.mark.parametrize("action", [["DEL", "s"], ["FLUSHDB"], ["SET", "s", "x"], ["XGROUP", "DESTROY", "s", "g"]])
def test_xreadgroup_ends_its_wait_behind_a_reader_that_stays(kvrocks_server, redis_ref, action):
    """Redis ends every XREADGROUP wait on a stream deleted or overwritten (its
    group destroyed), whoever waits ahead of it; an XREAD ahead stays blocked."""
    ours = readers_behind_a_reader(kvrocks_server.port, action)
    assert ours == readers_behind_a_reader(redis_ref.port, action), action


def readers_of_a_swapped_in_stream(port):
    """Two XREADs of "$" on s in db 0: the first read the IDs of a stream that
    SWAPDB then took away, the second blocked on no stream; a second SWAPDB brings
    that stream back. The second reader's reply, and whether the first still waits."""
    c = RawClient(port)
    c.call("FLUSHALL")
    c.call("XADD", "s", "5-1", "f", "v")
    first, second = RawClient(port), RawClient(port)
    first.send_raw(encode(["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]))  # waits for IDs after 5-1
    assert blocked(c)
    c.call("SWAPDB", "0", "1")
    second.send_raw(encode(["XREAD", "BLOCK", "5000", "STREAMS", "s", "$"]))  # no stream: any ID
    assert blocked(c, 2)
    c.call("SWAPDB", "0", "1")
    replies = [second.read_reply(), blocked(c, 1)]
    for x in (first, second, c):
        x.close()
    return replies


def test_a_swapped_in_stream_serves_every_reader_it_can(kvrocks_server, redis_ref):
    """SWAPDB signals a waited key that is a stream after the swap to all its
    readers, as XADD does: a reader it cannot serve does not hold up the next."""
    ours = readers_of_a_swapped_in_stream(kvrocks_server.port)
    assert ours == readers_of_a_swapped_in_stream(redis_ref.port)
    assert ours[1] is True


def served_before_reply(port, shift):
    """A BRPOPLPUSH blocked on src, a second one blocked on its destination, a WATCH
    on the last list; then LPUSH src and, pipelined behind it, LRANGE of the last
    list, and the watcher's EXEC. `shift` extra connections move the clients onto
    other workers (kvrocks deals connections round-robin)."""
    extra = [RawClient(port) for _ in range(shift)]
    c = RawClient(port)
    c.call("FLUSHALL")
    b1, b2, w = RawClient(port), RawClient(port), RawClient(port)
    b1.send_raw(encode(["BRPOPLPUSH", "src", "mid", "0"]))
    assert blocked(c)
    b2.send_raw(encode(["BRPOPLPUSH", "mid", "dst", "0"]))
    assert blocked(c, 2)
    w.call("WATCH", "dst")
    w.call("MULTI")
    w.call("GET", "x")
    c.send_raw(encode(["LPUSH", "src", "e"]) + encode(["LRANGE", "dst", "0", "-1"]))
    replies = [c.read_reply(), c.read_reply(), w.call("EXEC"), b1.read_reply(), b2.read_reply()]
    for x in [b1, b2, w, c] + extra:
        x.close()
    return replies


@pytest.mark.parametrize("shift", range(4))
def test_woken_clients_are_served_before_the_reply(kvrocks_server, redis_ref, shift):
    """As Redis' handleClientsBlockedOnKeys: the clients a command unblocks (and
    those they unblock in turn) are served before its reply and before its
    client's next command, wherever they run."""
    ours = served_before_reply(kvrocks_server.port, shift)
    theirs = served_before_reply(redis_ref.port, shift)
    assert ours == theirs
    assert ours[1] == b"*1\r\n$1\r\ne\r\n" and ours[2] == b"*-1\r\n"


def served_in_turn(port, shift):
    """b1 blocks on a list with a second blocking pop pipelined behind; b2 blocks
    on the same list; a push of three elements serves b1's first pop, then b2,
    and only then b1's next command, which finds one element left."""
    extra = [RawClient(port) for _ in range(shift)]
    c = RawClient(port)
    c.call("FLUSHALL")
    b1, b2 = RawClient(port), RawClient(port)
    b1.send_raw(encode(["BLPOP", "l", "0"]) + encode(["BLMPOP", "0", "1", "l", "LEFT", "COUNT", "2"]))
    assert blocked(c)
    b2.send_raw(encode(["BLPOP", "l", "0"]))
    assert blocked(c, 2)
    replies = [c.call("RPUSH", "l", "x", "y", "z"), b1.read_reply(), b1.read_reply(), b2.read_reply()]
    for x in [b1, b2, c] + extra:
        x.close()
    return replies


@pytest.mark.parametrize("shift", range(4))
def test_every_woken_client_is_served_before_their_next_commands(kvrocks_server, redis_ref, shift):
    ours = served_in_turn(kvrocks_server.port, shift)
    theirs = served_in_turn(redis_ref.port, shift)
    assert ours == theirs
    assert ours[3] == b"*2\r\n$1\r\nl\r\n$1\r\ny\r\n"



def blocked_with_an_incr_behind(port, shift):
    """`shift` idle clients, then c, and b blocked in BLPOP l with INCR n pipelined
    behind; returns (idle clients, c, b, b's id). The idle clients move b and c
    to other workers."""
    extra = [RawClient(port) for _ in range(shift)]
    c = RawClient(port)
    c.call("FLUSHALL")
    b = RawClient(port)
    b_id = b.call("CLIENT", "ID")[1:-2].decode()
    b.send_raw(encode(["BLPOP", "l", "0"]) + encode(["INCR", "n"]))
    assert blocked(c)
    return extra, c, b, b_id


def freed_after_batch(port, shift, how):
    """b blocks with an INCR pipelined behind; c frees it (CLIENT UNBLOCK, or a
    push that serves it) with SET and INCR of the same counter pipelined behind:
    Redis runs b's INCR only after c's whole batch (processUnblockedClients in
    beforeSleep)."""
    extra, c, b, b_id = blocked_with_an_incr_behind(port, shift)
    free = ["CLIENT", "UNBLOCK", b_id] if how == "unblock" else ["LPUSH", "l", "x"]
    c.send_raw(encode(free) + encode(["SET", "n", "10"]) + encode(["INCR", "n"]))
    replies = [c.read_reply(), c.read_reply(), c.read_reply(), b.read_reply(), b.read_reply()]
    for x in [b, c] + extra:
        x.close()
    return replies


@pytest.mark.parametrize("how", ["unblock", "push"])
@pytest.mark.parametrize("shift", range(4))
def test_freed_clients_run_their_next_commands_after_the_freeing_batch(kvrocks_server, redis_ref, shift, how):
    ours = freed_after_batch(kvrocks_server.port, shift, how)
    theirs = freed_after_batch(redis_ref.port, shift, how)
    assert ours == theirs
    assert ours[4] == b":12\r\n"


def freed_in_turn(port, shift):
    """b1 and b2 block on l (in that order), b3 on m, each with APPENDs to s
    pipelined behind; c's RPUSH frees b1 and b2, and b1's batch frees b3. Redis runs
    the freed clients' input one client after another in the order they were freed
    (processUnblockedClients): b1's whole batch, then b2's, then b3's."""
    extra = [RawClient(port) for _ in range(shift)]
    c = RawClient(port)
    c.call("FLUSHALL")
    b1, b2, b3 = RawClient(port), RawClient(port), RawClient(port)
    b1.send_raw(encode(["BLPOP", "l", "0"]) + encode(["APPEND", "s", "a"]) + encode(["RPUSH", "m", "z"]) +
                encode(["APPEND", "s", "b"]))
    assert blocked(c)
    b2.send_raw(encode(["BLPOP", "l", "0"]) + encode(["APPEND", "s", "c"]) + encode(["APPEND", "s", "d"]))
    b3.send_raw(encode(["BLPOP", "m", "0"]) + encode(["APPEND", "s", "e"]))
    assert blocked(c, 3)
    replies = [c.call("RPUSH", "l", "x", "y")]
    replies += [b1.read_reply() for _ in range(4)] + [b2.read_reply() for _ in range(3)]
    replies += [b3.read_reply() for _ in range(2)] + [c.call("GET", "s")]
    for x in [b1, b2, b3, c] + extra:
        x.close()
    return replies


@pytest.mark.parametrize("shift", range(4))
def test_freed_clients_run_one_after_another_in_the_order_they_were_freed(kvrocks_server, redis_ref, shift):
    ours = freed_in_turn(kvrocks_server.port, shift)
    theirs = freed_in_turn(redis_ref.port, shift)
    assert ours == theirs
    assert ours[-1] == b"$5\r\nabcde\r\n"


def test_blocking_commands_in_a_transaction(kvrocks_server, redis_ref):
    """In MULTI, with nothing to pop, BLMOVE and BRPOPLPUSH answer a null bulk
    (Redis' addReplyNull), the other blocking commands a null array."""
    for resp in ("2", "3"):
        d = Differ(kvrocks_server.port, redis_ref.port)
        d.both("HELLO", resp)
        d("MULTI")
        for cmd in (["BLMOVE", "e1", "e2", "LEFT", "LEFT", "0"], ["BRPOPLPUSH", "e1", "e2", "0"], ["BLPOP", "e1", "0"],
                    ["BLMPOP", "0", "1", "e1", "LEFT"], ["BZPOPMIN", "e1", "0"], ["BZMPOP", "0", "1", "e1", "MIN"],
                    ["XREAD", "BLOCK", "0", "STREAMS", "e1", "$"]):
            d(*cmd)
        d("EXEC")
        d.close()


# Blocked on several keys, served from the one that got ready (Redis'
# serveClientsBlockedOn*Key): the other keys are not looked at, even when one of
# them now holds another type, and a stream read answers with that stream only.
# (setup, blocking command, commands sent after it blocked)
SERVED_FROM_KEY = [
    ([], ["BLPOP", "a", "b", "0"], [["SET", "a", "x"], ["LPUSH", "b", "v"]]),
    ([], ["BLPOP", "a", "b", "0"], [["ZADD", "a", "1", "x"], ["LPUSH", "b", "v"]]),
    ([], ["BLMPOP", "0", "2", "a", "b", "LEFT"], [["SET", "a", "x"], ["LPUSH", "b", "v"]]),
    ([], ["BZPOPMIN", "a", "b", "0"], [["SET", "a", "x"], ["ZADD", "b", "1", "m"]]),
    ([], ["BZMPOP", "0", "2", "a", "b", "MIN"], [["SET", "a", "x"], ["ZADD", "b", "1", "m"]]),
    ([], ["XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$"], [["SET", "a", "x"], ["XADD", "b", "1-1", "f", "v"]]),
    ([], ["XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$"],
     [["MULTI"], ["XADD", "b", "1-1", "f", "v"], ["XADD", "a", "1-1", "f", "v"], ["EXEC"]]),
    ([["XADD", "a", "1-1", "f", "v"], ["XADD", "b", "1-1", "f", "v"], ["XGROUP", "CREATE", "a", "g", "$"],
      ["XGROUP", "CREATE", "b", "g", "$"]],
     ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "a", "b", ">", ">"],
     [["MULTI"], ["XADD", "b", "2-1", "f", "v"], ["XADD", "a", "2-1", "f", "v"], ["EXEC"]]),
    ([], ["BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "5"],
     [["MULTI"], ["RPUSH", "b", "1", "2"], ["RPUSH", "a", "3"], ["EXEC"]]),
    ([], ["BZMPOP", "0", "3", "a", "b", "c", "MAX", "COUNT", "5"], [["ZADD", "c", "1", "x", "2", "y"]]),
    ([], ["BLPOP", "a", "b", "a", "0"], [["LPUSH", "a", "z"]]),
]


def served_from_key(port, setup, block, actions):
    c = RawClient(port)
    c.call("FLUSHALL")
    for cmd in setup:
        c.call(*cmd)
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    b = RawClient(port)
    b.send_raw(encode(block))
    assert blocked(c)
    c.send_raw(b"".join(encode(cmd) for cmd in actions))
    replies = [c.read_reply() for _ in actions] + [b.read_reply()]
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    # The slow log shows the blocked command as the client sent it.
    replies.append(encode(block)[len(b"*%d\r\n" % len(block)):] in c.call("SLOWLOG", "GET", "100"))
    b.close()
    c.close()
    return replies


@pytest.mark.parametrize("case", range(len(SERVED_FROM_KEY)))
def test_a_client_is_served_from_the_key_that_got_ready(kvrocks_server, redis_ref, case):
    setup, block, actions = SERVED_FROM_KEY[case]
    ours = served_from_key(kvrocks_server.port, setup, block, actions)
    assert ours == served_from_key(redis_ref.port, setup, block, actions), block
    assert not ours[-2].startswith(b"-") and ours[-1]


# Clients one command frees, in the order Redis runs their next commands
# (processUnblockedClients): CLIENT UNBLOCK frees at once, keys are served after
# the command (handleClientsBlockedOnKeys) in the order of their first signal, a
# key's clients one after another, and keys that served clients' writes signal
# in the next round. Each freed client appends its tag to s.
# (blockers: (blocking command, tag), commands of the freeing client; "<id:i>" is
# blocker i's client id)
FREED_ORDER = {
    "keys_in_signal_order": ([(["XREAD", "BLOCK", "0", "STREAMS", "x", "$"], "a"), (["BRPOP", "l", "0"], "b")],
                             [["LPUSH", "l", "v"], ["XADD", "x", "1-1", "f", "v"]]),
    "stream_key_first": ([(["XREAD", "BLOCK", "0", "STREAMS", "x", "$"], "a"), (["BRPOP", "l", "0"], "b")],
                         [["XADD", "x", "1-1", "f", "v"], ["LPUSH", "l", "v"]]),
    "a_keys_clients_in_turn": ([(["BLPOP", "l", "0"], "b1"), (["BLPOP", "l", "0"], "b2"),
                                (["XREAD", "BLOCK", "0", "STREAMS", "x", "$"], "a")],
                               [["LPUSH", "l", "p", "q"], ["XADD", "x", "1-1", "f", "v"]]),
    "next_round": ([(["BLMOVE", "l", "m", "LEFT", "LEFT", "0"], "b"), (["BLPOP", "m", "0"], "c"),
                    (["XREAD", "BLOCK", "0", "STREAMS", "x", "$"], "a")],
                   [["LPUSH", "l", "p"], ["XADD", "x", "1-1", "f", "v"]]),
    "unblock_first": ([(["BLPOP", "l", "0"], "b"), (["BLPOP", "e", "0"], "d")],
                      [["LPUSH", "l", "p"], ["CLIENT", "UNBLOCK", "<id:1>"]]),
    "every_stream_reader": ([(["XREAD", "BLOCK", "0", "STREAMS", "x", "$"], "a1"), (["BLPOP", "l", "0"], "b"),
                             (["XREAD", "BLOCK", "0", "STREAMS", "x", "$"], "a2")],
                            [["XADD", "x", "1-1", "f", "v"], ["LPUSH", "l", "p"]]),
    "group_destroyed_last": ([(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "x", ">"], "a"),
                              (["BLPOP", "l", "0"], "b")],
                             [["LPUSH", "l", "p"], ["XGROUP", "DESTROY", "x", "g"]]),
    # Redis signals a key where it becomes a list, sorted set or stream (dbAdd),
    # not where a command first touches it.
    "created_after_a_string": ([(["BLPOP", "l", "0"], "a"), (["BZPOPMIN", "z", "0"], "b")],
                               [["SET", "l", "x"], ["ZADD", "z", "1", "m"], ["DEL", "l"], ["LPUSH", "l", "v"]]),
    "group_destroyed_first": ([(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "x", ">"], "a"),
                               (["BLPOP", "l", "0"], "b")],
                              [["XGROUP", "DESTROY", "x", "g"], ["LPUSH", "l", "p"]]),
    # SWAPDB signals the waited keys that hold a list, sorted set or stream
    # after it (scanDatabaseForReadyKeys); a key created later has its own place.
    "swapdb_brings_a_list": ([(["BLPOP", "l", "0"], "a"), (["BLPOP", "m", "0"], "b")],
                             [["SELECT", "1"], ["RPUSH", "m", "v"], ["SWAPDB", "0", "1"], ["SELECT", "0"],
                              ["LPUSH", "l", "p"]]),
    # A flush signals the streams it empties (scanDatabaseForDeletedStreams),
    # which ends XREADGROUP waits, and no other key.
    "flushdb_ends_a_stream_wait": ([(["BLPOP", "l", "0"], "a"),
                                    (["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "x", ">"], "b")],
                                   [["FLUSHDB"], ["LPUSH", "l", "p"]]),
    "flushall_then_created": ([(["BLPOP", "l", "0"], "a"), (["BZPOPMIN", "z", "0"], "b")],
                              [["FLUSHALL"], ["ZADD", "z", "1", "m"], ["LPUSH", "l", "v"]]),
    # A key serves all its clients before the next key is looked at, even a client
    # that also waits on that next key and came first there; when the key runs
    # out, that client is served from the next key.
    "a_key_serves_every_client_before_the_next": ([(["BLPOP", "l", "0"], "a"), (["BLPOP", "m", "l", "0"], "b")],
                                                  [["RPUSH", "l", "p", "q"], ["RPUSH", "m", "v"]]),
    "a_sorted_set_too": ([(["BZPOPMIN", "z", "0"], "a"), (["BZPOPMIN", "y", "z", "0"], "b")],
                         [["ZADD", "z", "1", "p", "2", "q"], ["ZADD", "y", "1", "v"]]),
    "the_next_key_when_the_first_runs_out": ([(["BLPOP", "l", "0"], "a"), (["BLPOP", "m", "l", "0"], "b")],
                                             [["RPUSH", "l", "p"], ["RPUSH", "m", "v"]]),
    # Moves from two keys land in the destination in the keys' signal order.
    "moves_in_key_order": ([(["BLMOVE", "l", "d", "LEFT", "LEFT", "0"], "a"),
                            (["BLMOVE", "m", "d", "LEFT", "LEFT", "0"], "b")],
                           [["RPUSH", "m", "q"], ["RPUSH", "l", "p"]]),
    # What a served client's move makes ready waits for this round's keys.
    "the_next_round_after_this_rounds_keys": ([(["BLMOVE", "l", "m", "LEFT", "LEFT", "0"], "a"),
                                               (["BLPOP", "m", "0"], "b"), (["BLPOP", "k", "m", "0"], "c")],
                                              [["RPUSH", "l", "p"], ["RPUSH", "k", "q"]]),
}


def freed_order(port, name, transaction, shift):
    blockers, cmds = FREED_ORDER[name]
    extra = [RawClient(port) for _ in range(shift)]
    c = RawClient(port)
    c.call("FLUSHALL")
    c.call("XADD", "x", "0-1", "f", "v")
    c.call("XGROUP", "CREATE", "x", "g", "$")
    clients, ids = [], []
    for i, (cmd, tag) in enumerate(blockers):
        b = RawClient(port)
        clients.append(b)
        ids.append(b.call("CLIENT", "ID")[1:-2].decode())
        b.send_raw(encode(cmd) + encode(["APPEND", "s", tag + ","]))
        assert blocked(c, i + 1)
    cmds = [[ids[int(x[4:-1])] if x.startswith("<id:") else x for x in cmd] for cmd in cmds]
    data = b"".join(encode(cmd) for cmd in cmds)
    if transaction:
        data = encode(["MULTI"]) + data + encode(["EXEC"])
    c.send_raw(data)
    replies = [c.read_reply() for _ in range(len(cmds) + (2 if transaction else 0))]
    for b in clients:
        replies += [b.read_reply(), b.read_reply()]
    replies.append(c.call("GET", "s"))
    replies.append(c.call("LRANGE", "d", "0", "-1"))
    for x in clients + [c] + extra:
        x.close()
    return replies


@pytest.mark.parametrize("shift", range(2))
@pytest.mark.parametrize("transaction", [True, False])
@pytest.mark.parametrize("name", list(FREED_ORDER))
def test_freed_clients_go_on_in_the_order_redis_frees_them(kvrocks_server, redis_ref, name, transaction, shift):
    ours = freed_order(kvrocks_server.port, name, transaction, shift)
    assert ours == freed_order(redis_ref.port, name, transaction, shift)


def reload_without_the_stream(port):
    """An XREADGROUP blocks on x; DEBUG RELOAD NOSAVE loads a dump saved before
    x existed. Redis signals the stream the reload empties, and its reader's
    wait ends as the key is gone after the load."""
    c = RawClient(port)
    c.call("FLUSHALL")
    c.call("DEBUG", "RELOAD")  # saves the empty data set
    c.call("XADD", "x", "0-1", "f", "v")
    c.call("XGROUP", "CREATE", "x", "g", "$")
    b = RawClient(port)
    b.send_raw(encode(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "x", ">"]))
    assert blocked(c)
    replies = [c.call("DEBUG", "RELOAD", "NOSAVE"), b.read_reply(), c.call("EXISTS", "x")]
    b.close()
    c.close()
    return replies


def test_debug_reload_ends_the_wait_on_a_stream_it_drops(kvrocks_server, redis_ref):
    ours = reload_without_the_stream(kvrocks_server.port)
    assert ours == reload_without_the_stream(redis_ref.port)


def served_in_sending_order(port, rounds):
    """Each round: three fresh clients send BLPOP l one right after the other,
    without waiting, then two elements arrive; who got what, and who still waits."""
    c = RawClient(port)
    c.call("DEL", "l")
    out = []
    for _ in range(rounds):
        clients = [RawClient(port) for _ in range(3)]
        for b in clients:
            b.send_raw(encode(["BLPOP", "l", "0"]))
        assert blocked(c, 3)
        c.call("RPUSH", "l", "first", "second")
        out += [clients[0].read_reply(), clients[1].read_reply()]
        c.call("RPUSH", "l", "third")
        out.append(clients[2].read_reply())
        for b in clients:
            b.close()
    c.close()
    return out


def test_clients_blocked_at_once_are_served_in_the_order_they_sent(kvrocks_server, redis_ref):
    """Redis reads the three BLPOPs in one pass and blocks them in the order they
    came. kvrocks' two workers may parse the second first; the waiters queue by
    the kernel's receive time of their command (about two rounds in three were
    served out of order before)."""
    ours = served_in_sending_order(kvrocks_server.port, 20)
    assert ours == served_in_sending_order(redis_ref.port, 20)


def served_in_order_before_anyone_else_connected(port, rounds):
    """As served_in_sending_order, but each round begins with no connection open:
    four clients connect and send BLPOP l at once, and only then does c connect.
    Their bytes may reach the kernel before kvrocks accepts them, while no socket
    of the server asks for receive times yet (the kernel turns its stamping on
    lazily); a round ended out of order about one time in ten before."""
    out = []
    for _ in range(rounds):
        clients = []
        for _ in range(4):
            clients.append(RawClient(port))
            clients[-1].send_raw(encode(["BLPOP", "l", "0"]))
        c = RawClient(port)
        assert blocked(c, 4)
        c.call("RPUSH", "l", "first", "second", "third", "fourth")
        out += [b.read_reply() for b in clients]
        for b in clients + [c]:
            b.close()
        time.sleep(0.02)  # the kernel turns stamping off a moment after the last socket goes
    return out


def test_clients_that_send_before_they_are_accepted_are_served_in_order(fresh_server, redis_ref):
    fresh_server.start()
    ours = served_in_order_before_anyone_else_connected(fresh_server.port, 40)
    assert ours == served_in_order_before_anyone_else_connected(redis_ref.port, 40)


def swapdb_brings_an_expired_key(port):
    """Redis' list.tcl "SWAPDB wants to wake blocked client, but the key already
    expired" without its replication stream: SWAPDB signals the key it finds in
    the table, expired or not; serving it deletes the key, the client blocks on."""
    c = RawClient(port)
    c.call("FLUSHALL")
    c.call("CONFIG", "RESETSTAT")
    c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        c.call("SELECT", "1")
        c.call("RPUSH", "k", "hello")
        c.call("PEXPIRE", "k", "100")
        b = RawClient(port)
        bid = b.call("CLIENT", "ID")[1:-2].decode()
        b.send_raw(encode(["BRPOP", "k", "0"]))
        assert blocked(c)
        time.sleep(0.2)
        replies = [c.call("SWAPDB", "1", "0"), c.call("INFO", "stats").split(b"expired_keys:")[1].split(b"\r")[0],
                   c.call("DBSIZE"), c.call("CLIENT", "UNBLOCK", bid, "TIMEOUT"), b.read_reply()]
        b.close()
    finally:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.close()
    return replies


def test_swapdb_wakes_a_client_on_a_key_that_expired(kvrocks_server, redis_ref):
    ours = swapdb_brings_an_expired_key(kvrocks_server.port)
    assert ours == swapdb_brings_an_expired_key(redis_ref.port)


def served_across_a_swap_in_the_transaction(port):
    """A waits on z in db 0, B on l in db 1; a transaction pushes l in db 0 and then
    swaps the databases. Redis signals l in db 0 (where the push ran: nobody waits
    there), then the waited keys the swap filled, db 0's first: A is served first
    and runs its next commands first (its INCR gets 1). The push must not count for
    db 1, where l only is after the swap (multi_conn_hunt.py blocking 49007)."""
    c = RawClient(port)
    c.call("FLUSHALL")
    c.call("ZADD", "z", "1", "m")
    c.call("SWAPDB", "0", "1")  # z in db 1
    a = RawClient(port)
    a.send_raw(encode(["BZPOPMAX", "z", "0"]) + encode(["INCR", "n"]))
    assert blocked(c, 1)
    b = RawClient(port)
    b.call("SELECT", "1")
    b.send_raw(encode(["BLPOP", "l", "0"]) + encode(["SELECT", "0"]) + encode(["INCR", "n"]))
    assert blocked(c, 2)
    c.send_raw(encode(["MULTI"]) + encode(["LPUSH", "l", "v"]) + encode(["SWAPDB", "0", "1"]) + encode(["EXEC"]))
    replies = [c.read_reply() for _ in range(4)]
    replies += [a.read_reply(), a.read_reply(), b.read_reply(), b.read_reply(), b.read_reply()]
    for x in (a, b, c):
        x.close()
    return replies


def test_clients_are_served_in_the_db_of_the_write_that_signalled(kvrocks_server, redis_ref):
    ours = served_across_a_swap_in_the_transaction(kvrocks_server.port)
    assert ours == served_across_a_swap_in_the_transaction(redis_ref.port)
    assert ours[5] == b":1\r\n"  # A's INCR ran first


def unblocked_twice(port, shift):
    """b blocks with an INCR pipelined behind; c's transaction unblocks it twice.
    Redis frees b in the first CLIENT UNBLOCK (unblockClient), so the second finds
    it not blocked (0), and b's INCR runs only after the transaction. With b on
    c's worker the second must not see b as still blocked (multi_conn_hunt.py
    blocking 49107)."""
    extra, c, b, b_id = blocked_with_an_incr_behind(port, shift)
    c.send_raw(encode(["MULTI"]) + encode(["CLIENT", "UNBLOCK", b_id, "ERROR"]) +
               encode(["CLIENT", "UNBLOCK", b_id, "TIMEOUT"]) + encode(["SET", "n", "5"]) + encode(["EXEC"]))
    replies = [c.read_reply() for _ in range(5)] + [b.read_reply(), b.read_reply()]
    for x in [b, c] + extra:
        x.close()
    return replies


@pytest.mark.parametrize("shift", range(4))
def test_a_client_unblocked_in_a_transaction_is_not_blocked_for_the_rest_of_it(kvrocks_server, redis_ref, shift):
    ours = unblocked_twice(kvrocks_server.port, shift)
    assert ours == unblocked_twice(redis_ref.port, shift)
    assert ours[4] == b"*3\r\n:1\r\n:0\r\n+OK\r\n"


TAKERS = [
    [["LPOP", "l"]],
    [["LMPOP", "1", "l", "LEFT"]],
    [["MULTI"], ["RPOP", "l"], ["EXEC"]],
    [["BRPOPLPUSH", "l", "mine", "0.2"]],
    [["BLPOP", "l", "0.2"]],
]


def reply_or_timeout(client):
    try:
        return client.read_reply()
    except socket.timeout:
        return b"(still waiting)"


def waiter_and_late_taker(port, taker, rounds):
    """w waits in BLPOP l; then c pushes, and t, on c's worker, sends a pop of l
    right behind the push, without waiting for its reply. Redis serves w before
    any other command runs: w gets the element, t finds nothing. kvrocks serves
    w on w's worker a moment later, and t could take the element first (w then
    waited on; every case failed on the build before). The replies of w and t,
    round by round."""
    out = []
    for _ in range(rounds):
        c, w, t = RawClient(port), RawClient(port), RawClient(port)  # c and t share a worker, w has the other
        c.call("FLUSHALL")
        w.send_raw(encode(["BLPOP", "l", "0"]))
        assert blocked(c)
        c.send_raw(encode(["LPUSH", "l", "e"]))
        t.send_raw(b"".join(encode(cmd) for cmd in taker))
        c.read_reply()
        w.sock.settimeout(2)
        out.append(reply_or_timeout(w))
        out.append([t.read_reply() for _ in taker])
        for x in (c, w, t):
            x.close()
    return out


@pytest.mark.parametrize("taker", range(len(TAKERS)))
def test_a_waiter_is_served_before_a_later_pop_takes_its_element(kvrocks_server, redis_ref, taker):
    ours = waiter_and_late_taker(kvrocks_server.port, TAKERS[taker], 10)
    assert ours == waiter_and_late_taker(redis_ref.port, TAKERS[taker], 10)


def on_the_worker_of(busy, port, same, tries=8):
    """A new client that is (same) or is not on busy's worker, as far as a DEBUG SLEEP
    of busy holds up its PING (redis-server: every client is on its one thread). After
    `tries` misses, whichever came last: the test below only loses its point then."""
    for attempt in range(tries):
        c = RawClient(port)
        busy.send_raw(encode(["DEBUG", "SLEEP", "0.3"]))
        time.sleep(0.05)
        start = time.monotonic()
        c.call("PING")
        held = time.monotonic() - start > 0.15
        busy.read_reply()
        if held == same or attempt == tries - 1:
            return c
        c.close()


def first_waiter_unread(port, variant, workers=True):
    """rd1 sends BRPOPLPUSH while its worker is busy (a DEBUG SLEEP of another client
    on it), then rd2 sends one that blocks at once on another worker, then c pushes.
    Redis runs them in that order: rd1 is served first (WRONGTYPE when its destination
    is a string, the element stays for rd2; or the element, rd2 waiting on)."""
    busy = RawClient(port)
    busy.call("FLUSHALL")
    if workers:
        rd1, rd2, c = (on_the_worker_of(busy, port, same) for same in (True, False, False))
    else:
        rd1, rd2, c = (RawClient(port) for _ in range(3))
    if variant == "wrongtype":
        c.call("SET", "target1", "nolist")
    busy.send_raw(encode(["DEBUG", "SLEEP", "0.5"]))
    time.sleep(0.05)
    rd1.send_raw(encode(["BRPOPLPUSH", "blist", "target1", "5"]))
    time.sleep(0.05)
    rd2.send_raw(encode(["BRPOPLPUSH", "blist", "target2", "5"]))
    time.sleep(0.05)
    out = [c.call("LPUSH", "blist", "foo"), rd1.read_reply()]
    if variant != "wrongtype":
        out.append(c.call("LPUSH", "blist", "bar"))
    out += [rd2.read_reply(), busy.read_reply(), c.call("LRANGE", "target1", "0", "-1"),
            c.call("LRANGE", "target2", "0", "-1"), c.call("LLEN", "blist")]
    for x in (busy, rd1, rd2, c):
        x.close()
    return out


@pytest.mark.parametrize("variant", ["wrongtype", "served"])
def test_a_waiter_still_unread_on_a_busy_worker_is_served_first(kvrocks_server, redis_ref, variant):
    """The push's wake waits for the worker that has unread input (Server::WakeBlocked):
    before, rd2 got the element, and rd1 blocked behind it for nothing."""
    for _ in range(2):
        ours = first_waiter_unread(kvrocks_server.port, variant)
        assert ours == first_waiter_unread(redis_ref.port, variant, workers=False)
