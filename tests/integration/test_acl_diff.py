"""ACL against Debian's redis-server 7.0: user rules and how they read back,
AUTH, NOPERM denials for commands, subcommands, keys and channels (also in
MULTI and scripts), ACL LOG, requirepass as the default user's password, and
the ACL file."""
import random

import pytest
import redis

from conftest import Differ, Kvrocks, RawClient, encode


@pytest.fixture
def d(kvrocks_server, redis_ref):
    diff = Differ(kvrocks_server.port, redis_ref.port)
    yield diff
    for user in ("alice", "bob", "carol", "dave", "eve"):
        diff("ACL", "DELUSER", user)
    diff("ACL", "LOG", "RESET")
    diff.close()


def as_user(kvrocks_server, redis_ref, user, password):
    """A Differ whose connections are authenticated as user."""
    x = Differ(kvrocks_server.port, redis_ref.port)
    x("AUTH", user, password)
    return x


def log_entries(port):
    """ACL LOG's entries but what differs between servers (client-info, age)."""
    log = redis.Redis(port=port, protocol=2).execute_command("ACL", "LOG")
    keep = (b"count", b"reason", b"context", b"object", b"username")
    return [{k: v for k, v in zip(e[::2], e[1::2]) if k in keep} for e in log]


def test_setuser_getuser_list(d):
    d("ACL", "SETUSER", "alice", "on", ">pw", "~foo:*", "&chan", "+get", "+set", "-@all", "+@read")
    d("ACL", "GETUSER", "alice")
    d("ACL", "SETUSER", "bob")
    d("ACL", "GETUSER", "bob")
    d("ACL", "SETUSER", "carol", "on", "nopass", "%R~r:*", "%W~w:*", "allchannels", "+@all", "-debug",
      "+config|get")
    d("ACL", "GETUSER", "carol")
    # (Rules read back from the permission bits: test_rules_read_back_as_redis_rebuilds_them.)
    d("ACL", "SETUSER", "dave", "on", "#" + "a" * 64, "allkeys", "+get", "-get", "+get")
    d("ACL", "GETUSER", "dave")
    d("ACL", "SETUSER", "dave", "resetpass", "resetkeys", "nocommands", "off")
    d("ACL", "GETUSER", "dave")
    d("ACL", "SETUSER", "eve", "on", ">a", ">b", "<a")
    d("ACL", "GETUSER", "eve")
    d("ACL", "LIST")
    d("ACL", "USERS")
    d("ACL", "GETUSER", "default")
    d("ACL", "GETUSER", "nosuch")
    d("ACL", "WHOAMI")
    for bad in (["bogus"], ["#short"], ["<never"], ["%X~k"], ["+nosuchcommand"], ["+@nosuchcategory"],
                ["~*", "~more"], ["&*", "&more"]):
        d("ACL", "SETUSER", "bob", *bad)
    d("ACL", "DELUSER", "bob", "nosuch")
    d("ACL", "DELUSER", "default")
    d("ACL", "CAT")
    d("ACL", "CAT", "bogus")
    d("ACL", "CAT", "x" * 200)  # the name cut at 128 bytes, as Redis
    d("ACL", "GENPASS", "0")
    d("ACL", "GENPASS", "5000")
    d("ACL", "LOAD")
    d("ACL", "SAVE")
    d("ACL", "NOSUCH")


def test_auth_and_denials(d, kvrocks_server, redis_ref):
    d("ACL", "SETUSER", "alice", "on", ">pw", "~foo:*", "&chan*", "+get", "+set", "+publish", "+subscribe",
      "+psubscribe", "+multi", "+exec", "+eval", "+config|get", "+acl|whoami")
    h = Differ(kvrocks_server.port, redis_ref.port)
    h("HELLO", "2", "AUTH", "alice", "wrong")
    kv, ref = h.both("HELLO", "2", "AUTH", "alice", "pw")
    assert kv.startswith(b"*14\r\n$6\r\nserver\r\n") and ref.startswith(b"*14\r\n$6\r\nserver\r\n")
    h("ACL", "WHOAMI")
    h.close()
    d("AUTH", "alice", "wrong")
    d("AUTH", "nosuch", "pw")
    d("AUTH", "pw")
    a = as_user(kvrocks_server, redis_ref, "alice", "pw")
    try:
        a("ACL", "WHOAMI")
        a("GET", "foo:1")
        a("GET", "bar")
        a("HSET", "foo:1", "f", "v")
        a("CONFIG", "GET", "maxclients")
        a("CONFIG", "SET", "maxclients", "100")
        a("PUBLISH", "chan1", "m")
        a("PUBLISH", "other", "m")
        a("EVAL", "return redis.call('get', KEYS[1])", "1", "foo:x")
        a("EVAL", "return redis.call('get', KEYS[1])", "1", "bar")
        a("EVAL", "return redis.call('get', 'bar')", "0")
        a("EVAL", "return redis.call('del', 'foo:1')", "0")
        a("EVAL", "return redis.pcall('publish', 'other', 'x')", "0")
        a("MULTI")
        a("SET", "foo:2", "v")
        a("GET", "bar")
        a("EXEC")
        a("PSUBSCRIBE", "chan*")
        a("PSUBSCRIBE", "c*")
    finally:
        a.close()
    d("ACL", "DRYRUN", "alice", "get", "foo:1")
    d("ACL", "DRYRUN", "alice", "get", "bar")
    d("ACL", "DRYRUN", "alice", "hset", "foo:1", "a", "b")
    d("ACL", "DRYRUN", "alice", "publish", "zz", "m")
    d("ACL", "DRYRUN", "nosuch", "get", "x")
    d("ACL", "DRYRUN", "alice", "nosuchcmd")
    d("ACL", "DRYRUN", "alice", "get")
    assert log_entries(kvrocks_server.port) == log_entries(redis_ref.port)
    kv, ref = d.both("ACL", "LOG", "1")
    assert kv.startswith(b"*1\r\n*14\r\n") and ref.startswith(b"*1\r\n*14\r\n")
    d("ACL", "LOG", "x")


def canonical_rules(text, kv_only):
    """Redis writes the single-command rules it rebuilds in the order of its
    command dict, which a per-process hash seed shuffles: each run of them is
    sorted, and the commands only kvrocks has are left out."""
    out, run = [], []
    for t in text.replace("(", "( ").replace(")", " )").split(" "):
        if t[:1] in ("+", "-") and t[1:2] != "@":
            if t[1:] not in kv_only:
                run.append(t)
            continue
        out += sorted(run) + [t]
        run = []
    return " ".join(out + sorted(run)).replace("( ", "(").replace(" )", ")")


class AclPair:
    """redis-py clients of both servers without reply parsing, for comparing
    ACL replies with the rules canonicalized."""

    def __init__(self, kvrocks_server, redis_ref):
        self.clients = [redis.Redis(port=p, protocol=2) for p in (kvrocks_server.port, redis_ref.port)]
        for c in self.clients:
            c.response_callbacks.clear()
        names = [{n.decode() for n in c.execute_command("COMMAND", "LIST")} for c in self.clients]
        self.kv_only = names[0] - names[1]

    def both(self, *args):
        out = []
        for c in self.clients:
            try:
                out.append(c.execute_command(*args))
            except redis.ResponseError as e:
                out.append("ERR " + str(e))
        return out

    def canon(self, v):
        if isinstance(v, list):
            return [self.canon(x) for x in v]
        return canonical_rules(v.decode(), self.kv_only) if isinstance(v, bytes) else v

    def same(self, *args):
        kv, ref = self.both(*args)
        assert self.canon(kv) == self.canon(ref), f"{args}: kvrocks {kv!r} != redis {ref!r}"
        return kv

    def user_reads_back_the_same(self, user):
        self.same("ACL", "GETUSER", user)
        kv, ref = (self.canon([x for x in v if x.startswith(f"user {user} ".encode())])
                   for v in self.both("ACL", "LIST"))
        assert kv == ref


@pytest.fixture
def acl(kvrocks_server, redis_ref):
    pair = AclPair(kvrocks_server, redis_ref)
    yield pair
    pair.both("ACL", "DELUSER", "u")


def test_rules_read_back_as_redis_rebuilds_them(acl):
    """Redis keeps command permissions as bits and rebuilds the rules from them:
    +@all or -@all, then categories picked by best fit, then single commands
    (a rule a category already covers disappears, -@dangerous reads back as
    -@admin and its other commands one by one)."""
    for rules in (["+@all", "-get"], ["-@all", "+get", "+set", "+@hash", "-hset"], ["+@read", "-@write", "+set"],
                  ["+client|id", "+config|get", "-config|get", "+@admin"], ["+@all", "-@dangerous", "+keys"],
                  ["allcommands", "nocommands", "+ping", "+@string", "-incr"], ["+@hash", "+@string", "-@write"],
                  ["-@all", "+config", "+config|get"], ["-@all", "+config|get", "+config"],
                  ["+@all", "-config", "+config|get"], ["+@all", "-@keyspace", "+del"], ["+@fast", "-@list", "+lpop"],
                  ["+@all", "-@slow", "-@fast", "+@all"], ["+sync", "+psync", "+bgrewriteaof"],
                  ["+@write", "+cluster|info", "(+publish -blpop)", "+config|get", "+@list"]):
        acl.same("ACL", "SETUSER", "u", "reset", *rules)
        acl.user_reads_back_the_same("u")


def test_first_argument_rules(acl, kvrocks_server, redis_ref):
    """+select|0 allows SELECT 0 alone (Redis' allowed_firstargs, for commands
    without subcommands; DEBUG's are first arguments); -select or -@all drops it."""
    acl.same("ACL", "SETUSER", "u", "on", "nopass", "-@all", "+select|0", "+select|0", "+SELECT|2", "+debug|object",
             "+config|get")
    acl.user_reads_back_the_same("u")
    for probe in (["SELECT", "0"], ["select", "2"], ["SELECT", "1"], ["DEBUG", "OBJECT", "k"], ["DEBUG", "SLEEP", "0"],
                  ["CONFIG", "GET", "x"], ["CONFIG", "SET", "x", "y"], ["AUTH", "x"]):
        acl.same("ACL", "DRYRUN", "u", *probe)
    c = Differ(kvrocks_server.port, redis_ref.port, flush=False)
    c("AUTH", "u", "x")
    for db in ("0", "1", "2"):
        c("SELECT", db)
    c.close()
    acl.same("ACL", "SETUSER", "u", "+select")
    acl.user_reads_back_the_same("u")
    acl.same("ACL", "SETUSER", "u", "-select", "+select|3")
    acl.user_reads_back_the_same("u")
    for bad in ("+config|get|x", "+get|", "-get|x", "+config|nosuch", "-config|", "+|x", "+", "-", "+@", "+get|x|y"):
        acl.same("ACL", "SETUSER", "u", bad)
    acl.user_reads_back_the_same("u")


def test_patterns_passwords_and_channels_as_redis_keeps_them(acl):
    """A key pattern given again gains the new access (%R~a then %W~a reads back
    ~a); %R alone is read access to the empty pattern; a channel or password is
    kept once, in the order given; a #hash must be lower case."""
    acl.same("ACL", "SETUSER", "u", "%R~a*", "%W~a*", "~b", "%R~b", "%RW~c", "%R", "&x", "&y", "&x", ">p2", ">p1",
             ">p2", "#" + "f" * 64)
    acl.user_reads_back_the_same("u")
    for bad in ("%RR~x", "%X~x", "%WRW~x", "#" + "F" * 64, "~a b", "&a b", "%R~a\tb"):
        acl.same("ACL", "SETUSER", "u", bad)
    acl.same("ACL", "SETUSER", "u", "", "<p1", "%RW~*", "~after")
    acl.user_reads_back_the_same("u")
    for probe in (["GET", "a1"], ["SET", "a1", "v"], ["GET", "b"], ["SET", "b", "v"], ["GET", "x"], ["GET", ""],
                  ["SET", "", "v"]):
        acl.same("ACL", "DRYRUN", "u", *probe)


RANDOM_CATEGORIES = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "geo",
                     "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
                     "transaction", "scripting", "all", "nosuch"]
RANDOM_COMMANDS = ["get", "set", "config", "config|get", "config|set", "client", "client|id", "client|kill", "select",
                   "debug", "acl|whoami", "sync", "keys", "info", "hset", "incr", "ping", "auth", "function|load",
                   "object|encoding", "sort", "nosuch", "get|x", "select|0", "select|1", "debug|object",
                   "config|get|x", "memory|usage", "script|debug", "lpush", "blpop", "eval", "exec", "publish"]
RANDOM_OTHERS = ["~a*", "%R~b*", "%W~b*", "%RW~c", "%R", "&ch*", "allkeys", "resetkeys", "allchannels",
                 "resetchannels", "allcommands", "nocommands", "reset", "on", ">pw", "<pw", "nopass", "~*", "&*"]
RANDOM_PROBES = [["get", "a1"], ["set", "a1", "v"], ["config", "get", "x"], ["config", "set", "x", "y"],
                 ["client", "id"], ["client", "kill", "x"], ["select", "0"], ["select", "1"], ["debug", "object", "k"],
                 ["keys", "*"], ["info"], ["hset", "h", "f", "v"], ["incr", "c"], ["auth", "x"], ["sort", "k"],
                 ["eval", "return 1", "0"], ["publish", "ch1", "m"], ["acl", "whoami"], ["blpop", "a", "0"]]


def random_rule(rng):
    x = rng.random()
    if x < 0.35:
        return rng.choice("+-") + "@" + rng.choice(RANDOM_CATEGORIES)
    if x < 0.75:
        return rng.choice("++-") + rng.choice(RANDOM_COMMANDS)
    if x < 0.82:
        return "(" + " ".join(random_rule(rng) for _ in range(rng.randint(1, 3))) + ")"
    return rng.choice(RANDOM_OTHERS)


@pytest.mark.parametrize("seed", range(6))
def test_random_rules(acl, seed):
    """Random rule sequences on one user: the SETUSER replies, the rules read
    back and what DRYRUN allows match Redis after each."""
    rng = random.Random(seed)
    for _ in range(25):
        acl.same("ACL", "SETUSER", "u", *[random_rule(rng) for _ in range(rng.randint(1, 5))])
        acl.user_reads_back_the_same("u")
        for probe in RANDOM_PROBES:
            acl.same("ACL", "DRYRUN", "u", *probe)


def test_acl_pubsub_default(d):
    """acl-pubsub-default allchannels: new users, new selectors and "reset" start
    with &*; users made before keep their channels."""
    d("ACL", "SETUSER", "alice", "on")
    d("CONFIG", "GET", "acl-pubsub-default")
    d("CONFIG", "SET", "acl-pubsub-default", "bogus")
    try:
        d("CONFIG", "SET", "acl-pubsub-default", "AllChannels")
        d("CONFIG", "GET", "acl-pubsub-default")
        d("ACL", "SETUSER", "bob", "on", "(+get)")
        d("ACL", "SETUSER", "carol", "&x", "reset")
        d("ACL", "SETUSER", "dave", "resetchannels", "&y")
        d("ACL", "LIST")
        d("ACL", "GETUSER", "bob")
    finally:
        d("CONFIG", "SET", "acl-pubsub-default", "resetchannels")
    d("ACL", "SETUSER", "eve", "reset")
    d("ACL", "GETUSER", "eve")


def test_acllog_max_len(d, kvrocks_server, redis_ref):
    """ACL LOG keeps acllog-max-len entries, trimmed when the next new one comes."""
    d("ACL", "SETUSER", "alice", "on", ">pw", "+acl|whoami")
    d("CONFIG", "GET", "acllog-max-len")
    d("CONFIG", "SET", "acllog-max-len", "-1")
    x = as_user(kvrocks_server, redis_ref, "alice", "pw")
    try:
        for cmd in ("GET", "STRLEN", "INCR"):
            x(cmd, "k")
        d("CONFIG", "SET", "acllog-max-len", "2")
        assert log_entries(kvrocks_server.port) == log_entries(redis_ref.port)
        assert len(log_entries(redis_ref.port)) == 3
        x("GET", "k")  # an update of an entry: nothing trimmed
        assert log_entries(kvrocks_server.port) == log_entries(redis_ref.port)
        x("DEL", "k")
        assert log_entries(kvrocks_server.port) == log_entries(redis_ref.port)
        assert len(log_entries(redis_ref.port)) == 2
        d("CONFIG", "SET", "acllog-max-len", "0")
        x("TYPE", "k")
        d("ACL", "LOG")
    finally:
        x.close()
        d("CONFIG", "SET", "acllog-max-len", "128")


def test_reset_sanitizes_payloads(d):
    d("ACL", "SETUSER", "alice", "reset")
    d("ACL", "GETUSER", "alice")
    d("ACL", "SETUSER", "bob", "on")  # created without reset: not sanitized
    d("ACL", "GETUSER", "bob")
    d("ACL", "SETUSER", "bob", "skip-sanitize-payload", "reset")
    d("ACL", "LIST")


def test_selectors_read_back(d):
    d("ACL", "SETUSER", "alice", "reset", "on", "nopass", "%R~r*", "+get", "(~x* &ch +set)", "(%W~w* -@all +del)")
    d("ACL", "GETUSER", "alice")
    d("ACL", "LIST")
    d("ACL", "SETUSER", "bob", "on", "(", "~a", "+get", ")")  # one selector over several arguments
    d("ACL", "SETUSER", "carol", "on", "(~a", "+get)", "(&*", "allkeys", "+@all)", "()")
    d("ACL", "SETUSER", "dave", "on", "(~a", "(~b", "+get)")  # a selector opened again
    d("ACL", "LIST")
    for bad in (["(on)"], ["(~a"], ["~a)"], ["(+nosuch)"], ["(~* ~a)"], ["(>pw)"], ["(nopass)"], ["(reset)"],
                ["(clearselectors)"], ["on", "(~a", "+get"]):
        d("ACL", "SETUSER", "eve", *bad)
    d("ACL", "LIST")
    d("ACL", "SETUSER", "alice", "clearselectors")
    d("ACL", "GETUSER", "alice")
    d("ACL", "SETUSER", "alice", "(+get ~y*)", "reset")  # reset clears the selectors
    d("ACL", "GETUSER", "alice")
    d("ACL", "GETUSER", "carol")


def test_selectors_grant_what_none_alone_does(d, kvrocks_server, redis_ref):
    d("ACL", "SETUSER", "alice", "on", ">pw", "%R~r*", "+get", "+del", "(~x* &ch +set +publish +hset)",
      "(%W~w* +del +publish)")
    x = as_user(kvrocks_server, redis_ref, "alice", "pw")
    try:
        for call in (["GET", "r1"], ["SET", "x1", "v"], ["HSET", "x2", "f", "v"], ["DEL", "w1"], ["DEL", "r1"],
                     ["SET", "r1", "v"], ["GET", "x1"], ["DEL", "x1"], ["SET", "w1", "v"], ["PUBLISH", "ch", "m"],
                     ["PUBLISH", "other", "m"], ["MSET", "x1", "1", "r1", "2"], ["LPUSH", "x1", "a"],
                     ["GET", "w1"], ["DEL", "w1", "r1"], ["DEL", "x1", "w1"]):
            x(*call)
            d("ACL", "DRYRUN", "alice", *call)
        assert log_entries(kvrocks_server.port) == log_entries(redis_ref.port)
    finally:
        x.close()


def test_requirepass_is_the_default_password(fresh_server):
    srv = fresh_server.start()
    admin = RawClient(srv.port)
    assert admin.call("CONFIG", "SET", "requirepass", "secret") == b"+OK\r\n"
    c = RawClient(srv.port)
    assert c.call("GET", "x") == b"-NOAUTH Authentication required.\r\n"
    assert c.call("AUTH", "wrong") == b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    assert c.call("AUTH", "secret") == b"+OK\r\n"
    assert c.call("ACL", "WHOAMI") == b"$7\r\ndefault\r\n"
    # Pipelined GETs (read ahead with one MultiGet once authenticated, dispatch.cc)
    # before and after AUTH in one write.
    assert admin.call("SET", "pk", "val") == b"+OK\r\n"
    p = RawClient(srv.port)
    p.send_raw(b"".join(encode(a) for a in [("GET", "pk")] * 3 + [("AUTH", "secret")] + [("GET", "pk")] * 3))
    assert [p.read_reply() for _ in range(7)] == [b"-NOAUTH Authentication required.\r\n"] * 3 + [b"+OK\r\n"] + \
        [b"$3\r\nval\r\n"] * 3
    assert c.call("AUTH", "default", "secret") == b"+OK\r\n"
    info = c.call("ACL", "GETUSER", "default")
    assert b"2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b" in info  # sha256("secret")
    assert c.call("CONFIG", "SET", "requirepass", "") == b"+OK\r\n"
    assert RawClient(srv.port).call("GET", "x") == b"$-1\r\n"
    r = redis.Redis(port=srv.port, username="default", password="anything-goes-with-nopass")
    assert r.ping()


def test_deluser_closes_its_connections_and_acl_file(tmp_path):
    aclfile = tmp_path / "users.acl"
    aclfile.write_text("user default on nopass ~* &* +@all\nuser app on >apppw ~app:* resetchannels -@all +get +set\n")
    srv = Kvrocks(extra=["--aclfile", str(aclfile)]).start()
    try:
        app = redis.Redis(port=srv.port, username="app", password="apppw", protocol=2)
        assert app.set("app:k", "v") and app.get("app:k") == b"v"
        with pytest.raises(redis.exceptions.NoPermissionError):
            app.get("other")
        admin = RawClient(srv.port)
        assert admin.call("ACL", "SETUSER", "app", ">second") == b"+OK\r\n"
        assert admin.call("ACL", "SAVE") == b"+OK\r\n"
        assert "#" in aclfile.read_text() and "user app on" in aclfile.read_text()
        raw = RawClient(srv.port)
        assert raw.call("AUTH", "app", "second") == b"+OK\r\n"
        assert admin.call("ACL", "DELUSER", "app") == b":1\r\n"
        assert raw.closed()
        assert admin.call("ACL", "LOAD") == b"+OK\r\n"  # back from the saved file
        assert RawClient(srv.port).call("AUTH", "app", "second") == b"+OK\r\n"
    finally:
        srv.cleanup()


@pytest.mark.parametrize("subscribe", [["SUBSCRIBE", "ab"], ["PSUBSCRIBE", "a*"], ["SSUBSCRIBE", "ab"]])
def test_setuser_closes_subscribers_it_no_longer_allows(kvrocks_server, redis_ref, subscribe):
    """Redis' ACLKillPubsubClientsIfNeeded: a changed user's subscribed clients
    whose channels the new rules no longer allow are closed."""
    cases = [(["&*"], ["resetchannels", "&x*"]), (["&a*"], ["resetchannels", "&x*"]), (["&a*"], ["&b*"]),
             (["&a*"], ["(&a*)", "resetchannels"]), (["&a*"], ["resetchannels", "(&*)"]),
             (["&a*", "&b*"], ["resetchannels", "&a*"]), (["&a*"], ["resetchannels", "&ab"]),
             (["&a*"], ["resetchannels", "&a?"])]
    outcomes = {}
    for port in (kvrocks_server.port, redis_ref.port):
        admin = RawClient(port)
        for first, second in cases:
            assert admin.call("ACL", "SETUSER", "subu", "reset", "on", "nopass", "~*", *first, "+@all") == b"+OK\r\n"
            sub = RawClient(port)
            sub.call("AUTH", "subu", "x")
            sub.call(*subscribe)
            assert admin.call("ACL", "SETUSER", "subu", *second) == b"+OK\r\n"
            sub.send_raw(encode(["PING"]))
            try:
                outcome = sub.read_reply()
            except (ConnectionError, OSError):
                outcome = "closed"
            outcomes.setdefault((tuple(first), tuple(second)), []).append(outcome)
            sub.close()
        admin.call("ACL", "DELUSER", "subu")
        admin.close()
    for case, (kv, ref) in outcomes.items():
        assert kv == ref, f"{case}: kvrocks {kv!r}, redis {ref!r}"
    assert "closed" in [kv for kv, _ in outcomes.values()]


def test_acl_load_closes_the_clients_of_every_user_but_default(tmp_path):
    aclfile = tmp_path / "users.acl"
    aclfile.write_text("user default on nopass ~* &* +@all\nuser app on nopass ~* &* +@all\n")
    srv = Kvrocks(extra=["--aclfile", str(aclfile)]).start()
    try:
        app, plain, admin = RawClient(srv.port), RawClient(srv.port), RawClient(srv.port)
        assert app.call("AUTH", "app", "x") == b"+OK\r\n"
        assert admin.call("AUTH", "app", "x") == b"+OK\r\n"
        assert admin.call("ACL", "LOAD") == b"+OK\r\n"  # then closed, signed in as app
        assert admin.closed() and app.closed()
        assert plain.call("PING") == b"+PONG\r\n"
    finally:
        srv.cleanup()


def test_selectors_in_the_acl_file(tmp_path):
    aclfile = tmp_path / "users.acl"
    aclfile.write_text("user default on nopass ~* &* +@all\n"
                       "user sel on nopass ~r* resetchannels -@all +get (~w* resetchannels -@all +set)\n")
    srv = Kvrocks(extra=["--aclfile", str(aclfile)]).start()
    try:
        sel = redis.Redis(port=srv.port, username="sel", password="x", protocol=2)
        assert sel.set("w1", "v") and sel.get("r1") is None
        with pytest.raises(redis.exceptions.NoPermissionError):
            sel.set("r1", "v")
        admin = RawClient(srv.port)
        assert admin.call("ACL", "SAVE") == b"+OK\r\n"
        assert "(~w* resetchannels -@all +set)" in aclfile.read_text()
        assert admin.call("ACL", "LOAD") == b"+OK\r\n"
        assert b"(~w* resetchannels -@all +set)" in admin.call("ACL", "LIST")
        aclfile.write_text("user default on nopass ~* &* +@all\nuser bad on (~w* +set\n")
        assert b"Unmatched parenthesis" in admin.call("ACL", "LOAD")
    finally:
        srv.cleanup()


def test_users_in_config_file(tmp_path):
    conf = tmp_path / "kvrocks.conf"
    conf.write_text("user default off\nuser ops on >opspw ~* &* +@all\n")
    srv = Kvrocks(conf=str(conf)).start()  # the readiness probe's PING gets -NOAUTH: an answer
    try:
        c = RawClient(srv.port)
        assert c.call("PING") == b"-NOAUTH Authentication required.\r\n"
        assert c.call("AUTH", "ops", "opspw") == b"+OK\r\n"
        assert c.call("ACL", "USERS") == b"*2\r\n$7\r\ndefault\r\n$3\r\nops\r\n"
    finally:
        srv.cleanup()
