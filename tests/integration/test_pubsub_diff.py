"""Pub/Sub against Debian's redis-server 7.0 (reply bytes compared), and
kvrocks' cross-worker fan-out: many publishers, many subscribers, one order."""
import threading
import time

import pytest
import redis

from conftest import Differ, RawClient, encode


@pytest.fixture
def pair(kvrocks_server, redis_ref):
    """A subscriber and a publisher connection to each server."""
    sub = Differ(kvrocks_server.port, redis_ref.port)
    pub = Differ(kvrocks_server.port, redis_ref.port)
    yield sub, pub
    sub.close()
    pub.close()


def read_both(d):
    """The next pushed message on both servers' subscriber connections, compared."""
    a, b = d.kv.read_reply(), d.ref.read_reply()
    assert a == b, f"kvrocks {a!r} != redis {b!r}"
    return a


def test_subscribe_publish_replies(pair):
    sub, pub = pair
    sub("SUBSCRIBE", "news", "sport")
    read_both(sub)  # second subscription reply
    sub("PSUBSCRIBE", "n*", "x?z")
    read_both(sub)
    sub("SSUBSCRIBE", "shard1")
    pub("PUBLISH", "news", "hello")
    assert read_both(sub).startswith(b"*3\r\n$7\r\nmessage")
    assert read_both(sub).startswith(b"*4\r\n$8\r\npmessage")
    pub("PUBLISH", "xyz", "via pattern")
    read_both(sub)
    pub("PUBLISH", "nobody", "n* matches")
    read_both(sub)
    pub("PUBLISH", "empty", "")
    pub("SPUBLISH", "shard1", "s-msg")
    read_both(sub)
    pub("SPUBLISH", "news", "shard publish does not reach channel subscribers")
    kv, ref = pub.both("PUBSUB", "CHANNELS")  # hash order in Redis: compare as sets
    assert sorted(kv.split(b"\r\n")) == sorted(ref.split(b"\r\n"))
    pub("PUBSUB", "CHANNELS", "n*")
    pub("PUBSUB", "CHANNELS", "zzz*")
    pub("PUBSUB", "NUMSUB", "news", "sport", "none")
    pub("PUBSUB", "NUMSUB")
    pub("PUBSUB", "NUMPAT")
    pub("PUBSUB", "SHARDCHANNELS")
    pub("PUBSUB", "SHARDCHANNELS", "sh*")
    pub("PUBSUB", "SHARDNUMSUB", "shard1", "news")
    pub("PUBSUB", "NUMPAT", "extra")
    pub("PUBSUB", "CHANNELS", "a", "b")
    pub("PUBSUB", "NOSUCH")
    pub("PUBSUB", "HELP")
    sub("UNSUBSCRIBE", "sport")
    sub("PUNSUBSCRIBE", "x?z", "never")
    read_both(sub)
    sub("SUNSUBSCRIBE", "shard1")
    sub("SUNSUBSCRIBE")
    sub("PUNSUBSCRIBE")
    sub("UNSUBSCRIBE")
    sub("UNSUBSCRIBE")
    sub("PUNSUBSCRIBE")
    pub("PUBSUB", "NUMSUB", "news")
    pub("PUBSUB", "NUMPAT")
    sub("GET", "k")  # back to normal mode


def test_resp2_subscribed_context(pair):
    sub, _ = pair
    sub("SUBSCRIBE", "c")
    sub("GET", "k")
    sub("CONFIG", "GET", "maxclients")
    sub("PING")
    sub("PING", "hi")
    sub("SSUBSCRIBE", "s")
    sub("UNSUBSCRIBE")
    sub("GET", "k")  # still subscribed to a shard channel
    sub("SUNSUBSCRIBE")
    sub("GET", "k")


def test_resp3_push_and_commands(pair):
    sub, pub = pair
    sub.both("HELLO", "3")
    sub("SUBSCRIBE", "c3")
    sub("PSUBSCRIBE", "c*")
    sub("PUBSUB", "NUMSUB", "c3", "x")
    sub("PUBSUB", "SHARDNUMSUB", "c3")
    sub("PUBSUB", "CHANNELS", "c3")
    sub("SET", "k", "v")  # RESP3 clients may run anything while subscribed
    sub("GET", "k")
    sub("PING")
    pub("PUBLISH", "c3", "m")
    assert read_both(sub).startswith(b">3\r\n")
    assert read_both(sub).startswith(b">4\r\n")
    sub("UNSUBSCRIBE", "c3")
    sub("PUNSUBSCRIBE")
    sub("UNSUBSCRIBE")


def test_publish_to_self_in_resp3(pair):
    sub, _ = pair
    sub.both("HELLO", "3")
    sub("SUBSCRIBE", "me")
    sub("PUBLISH", "me", "to myself")  # the push arrives before the reply
    read_both(sub)


def test_reset(pair):
    sub, _ = pair
    sub("SELECT", "3")
    sub("SUBSCRIBE", "a")
    sub("RESET")
    sub("GET", "k")
    sub("CLIENT", "GETNAME")
    sub("MULTI")
    sub("SET", "k", "1")
    sub("RESET")
    sub("EXEC")
    sub("RESET", "extra")


def test_subscribe_commands_in_a_transaction(pair):
    # SUBSCRIBE and PSUBSCRIBE run in EXEC (an old exception); SSUBSCRIBE is refused
    # to the client EXEC denies blocking.
    sub, _ = pair
    sub("MULTI")
    sub("SSUBSCRIBE", "s1")
    sub("SUBSCRIBE", "c1")
    sub("PSUBSCRIBE", "p*")
    sub("EXEC")
    sub("RESET")


def test_unsubscribe_all_lists_each_channel(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.call("SUBSCRIBE", "a", "b", "c")
    c.read_reply(), c.read_reply()
    replies = [c.call("UNSUBSCRIBE")] + [c.read_reply() for _ in range(2)]
    parts = [r.split(b"\r\n") for r in replies]
    # One reply per channel (in any order), the count going down to 0.
    assert all(p[0] == b"*3" and p[2] == b"unsubscribe" for p in parts)
    assert sorted(p[4] for p in parts) == [b"a", b"b", b"c"]
    assert [p[5] for p in parts] == [b":2", b":1", b":0"]
    assert c.call("PING") == b"+PONG\r\n"  # no longer in subscribed mode
    c.close()


def test_disconnect_drops_subscriptions(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.call("SUBSCRIBE", "gone")
    c.call("PSUBSCRIBE", "g*")
    r = kvrocks_server.client()
    assert r.pubsub_numsub("gone") == [(b"gone", 1)]
    assert r.pubsub_numpat() == 1
    c.close()
    for _ in range(100):
        if r.pubsub_numsub("gone") == [(b"gone", 0)] and r.pubsub_numpat() == 0:
            break
        time.sleep(0.05)
    assert r.pubsub_numsub("gone") == [(b"gone", 0)]
    assert r.pubsub_numpat() == 0
    assert r.publish("gone", "x") == 0
    info = r.info("stats")
    assert info["pubsub_channels"] == 0 and info["pubsub_patterns"] == 0


def test_client_list_shows_subscriptions(kvrocks_server):
    c = RawClient(kvrocks_server.port)
    c.call("CLIENT", "SETNAME", "listener")
    c.call("SUBSCRIBE", "a")
    c.call("PSUBSCRIBE", "p1", "p2")
    c.read_reply()
    r = kvrocks_server.client()
    line = [x for x in r.client_list() if x["name"] == "listener"][0]
    assert (line["sub"], line["psub"], line["ssub"], line["flags"]) == ("1", "2", "0", "P")
    c.close()


def test_redis_py_pubsub(kvrocks_server):
    r = kvrocks_server.client()
    p = r.pubsub()
    p.subscribe("chan")
    p.psubscribe("ch*")
    assert p.get_message(timeout=5)["type"] == "subscribe"
    assert p.get_message(timeout=5)["type"] == "psubscribe"
    assert r.publish("chan", "hello") == 2
    m1, m2 = p.get_message(timeout=5), p.get_message(timeout=5)
    assert {(m1["type"], m1["data"]), (m2["type"], m2["data"])} == {("message", b"hello"), ("pmessage", b"hello")}
    p.close()


def test_many_publishers_one_order(kvrocks_server):
    """Messages of concurrent publishers reach every subscriber (on both
    workers) completely, each publisher's in its order, all in the same order."""
    publishers, per_publisher, subscribers = 6, 300, 5
    subs = [RawClient(kvrocks_server.port) for _ in range(subscribers)]
    for s in subs:
        s.call("SUBSCRIBE", "order")
    r = kvrocks_server.client()
    assert r.pubsub_numsub("order") == [(b"order", subscribers)]

    def publish(p):
        c = kvrocks_server.client()
        pipe = c.pipeline(transaction=False)
        for i in range(per_publisher):
            pipe.publish("order", f"{p}:{i}")
            if i % 50 == 49:
                assert pipe.execute() == [subscribers] * 50
        c.close()

    threads = [threading.Thread(target=publish, args=(p,)) for p in range(publishers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seen = []
    for s in subs:
        got = []
        for _ in range(publishers * per_publisher):
            reply = s.read_reply()
            got.append(reply.split(b"\r\n")[-2].decode())
        seen.append(got)
        s.close()
    for got in seen:
        for p in range(publishers):
            mine = [int(m.split(":")[1]) for m in got if m.startswith(f"{p}:")]
            assert mine == list(range(per_publisher))
    assert all(got == seen[0] for got in seen)


def test_output_limit_closes_slow_subscriber(fresh_server):
    fresh_server.extra = ["--client-output-buffer-limit", "pubsub 1mb 512kb 60"]
    srv = fresh_server.start()
    slow = RawClient(srv.port)
    slow.call("SUBSCRIBE", "flood")
    r = srv.client()
    payload = "x" * 65536
    for _ in range(200):  # 12.8 MB never read
        r.publish("flood", payload)
    for _ in range(100):
        if r.pubsub_numsub("flood") == [(b"flood", 0)]:
            break
        time.sleep(0.05)
    assert r.pubsub_numsub("flood") == [(b"flood", 0)]
    assert r.ping()


@pytest.mark.parametrize("protocol", ["2", "3"])
def test_client_reply_off_keeps_pushes(pair, protocol):
    """CLIENT REPLY OFF / SKIP silence replies, not Pub/Sub confirmations and
    messages (Redis' unit/pubsub "PubSub messages with CLIENT REPLY OFF")."""
    sub, pub = pair
    sub.both("HELLO", protocol)

    def send(*args):
        for c in (sub.kv, sub.ref):
            c.send_raw(encode(args))

    send("CLIENT", "REPLY", "OFF")
    send("SUBSCRIBE", "channel")
    read_both(sub)
    if protocol == "3":  # RESP2 allows only (un)subscribe commands here
        send("GET", "silenced")
        send("PSUBSCRIBE", "ch*")
        read_both(sub)
    pub("PUBLISH", "channel", "hello")
    read_both(sub)
    if protocol == "3":
        read_both(sub)
        send("PUBLISH", "channel", "to myself")  # its own messages, not its reply
        read_both(sub)
        read_both(sub)
        send("CLIENT", "REPLY", "ON")
        read_both(sub)
        send("CLIENT", "REPLY", "SKIP")
        send("UNSUBSCRIBE", "channel")
        read_both(sub)
        sub("PING")
    else:
        send("UNSUBSCRIBE", "channel")
        read_both(sub)
        send("CLIENT", "REPLY", "ON")
        read_both(sub)
