"""COMMAND INFO / DOCS / LIST and ACL categories against Debian's redis-server
7.0, in RESP2 and RESP3. Redis orders commands and subcommands by its hash
table (a random seed per process), so lists are compared as sets; entries of
container commands only over the subcommands kvrocks has."""
import pytest
import redis


def raw(client, *args):
    conn = client.connection_pool.get_connection()
    try:
        conn.send_command(*args)
        return conn.read_response()
    finally:
        client.connection_pool.release(conn)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def pair(request, kvrocks_server, redis_ref):
    k = redis.Redis(port=kvrocks_server.port, protocol=request.param)
    r = redis.Redis(port=redis_ref.port, protocol=request.param)
    yield k, r
    k.close()
    r.close()


def names(client, *filters):
    return {n.decode() for n in raw(client, "COMMAND", "LIST", *filters)}


def normalize_info(entry, keep):
    """A COMMAND INFO entry with its subcommands sorted and limited to `keep`."""
    entry = list(entry)
    subs = [normalize_info(s, keep) for s in entry[9] if s[0].decode() in keep]
    entry[9] = sorted(subs, key=lambda s: s[0])
    return entry


def normalize_docs(docs, keep):
    """A COMMAND DOCS value (a dict in RESP3, a flat list in RESP2) as a dict."""
    if isinstance(docs, list):
        docs = dict(zip(docs[0::2], docs[1::2]))
    docs = dict(docs)
    if b"subcommands" in docs:
        subs = normalize_docs(docs[b"subcommands"], keep)
        docs[b"subcommands"] = {k: normalize_docs(v, keep) for k, v in subs.items() if k.decode() in keep}
    return docs


def test_list_is_redis_list_of_the_commands_kvrocks_has(pair):
    k, r = pair
    ours, theirs = names(k), names(r)
    # Redis 7.4's hash field expiry and kvrocks' COMPACT, KSLAVEOF and KPSYNC are the only additions.
    assert ours - theirs == {"compact", "kslaveof", "kpsync", "hexpire", "hexpireat", "hexpiretime", "hpersist", "hpexpire",
                             "hpexpireat", "hpexpiretime", "hpttl", "httl"}
    # What kvrocks leaves out: the append-only file.
    missing = {n for n in theirs - ours if "|" not in n}
    assert missing == {"bgrewriteaof"}
    for f in (("FILTERBY", "PATTERN", "config*"), ("FILTERBY", "ACLCAT", "dangerous"),
              ("FILTERBY", "ACLCAT", "keyspace")):
        assert names(k, *f) & theirs == names(r, *f) & ours, f


def test_info_and_docs_of_every_shared_command(pair):
    k, r = pair
    ours = names(k)
    shared = sorted(ours & names(r))
    for name in shared:
        a, b = raw(k, "COMMAND", "INFO", name), raw(r, "COMMAND", "INFO", name)
        assert [normalize_info(e, ours) for e in a] == [normalize_info(e, ours) for e in b], name
        a, b = raw(k, "COMMAND", "DOCS", name), raw(r, "COMMAND", "DOCS", name)
        a, b = (normalize_docs(x, ours) for x in (a, b))  # {name: docs}
        assert {n: normalize_docs(v, ours) for n, v in a.items()} == \
            {n: normalize_docs(v, ours) for n, v in b.items()}, name
    assert raw(k, "COMMAND", "INFO", "get", "nosuch", "config|get") == \
        raw(r, "COMMAND", "INFO", "get", "nosuch", "config|get")


def test_getkeys(pair):
    """Key positions come from kvrocks' own table (locks and ACL key checks use
    them): ZRANGESTORE's source is a key too."""
    k, r = pair
    for line in """ZRANGESTORE dst src 0 -1
                   SMOVE a b m
                   COPY a b
                   COPY a b DB 1 REPLACE
                   MOVE a 1
                   MSET a 1 b 2
                   LMOVE a b LEFT RIGHT
                   SORT abc STORE def
                   SORT abc STORE invalid STORE stillbad STORE def
                   SORT abc LIMIT 0 1 GET x BY y STORE d
                   SORT_RO abc
                   ZUNIONSTORE dst 2 a b
                   ZINTERSTORE dst 2 a b WEIGHTS 1 2
                   ZDIFFSTORE dst 2 a b
                   ZUNION 2 a b
                   ZINTER 2 a b
                   ZDIFF 2 a b
                   ZINTERCARD 2 a b
                   SINTERCARD 2 a b
                   LMPOP 2 a b LEFT
                   BLMPOP 0 2 a b LEFT
                   ZMPOP 2 a b MIN
                   BZMPOP 0 2 a b MIN
                   EVAL x 2 a b c
                   FCALL f 1 a b
                   XREAD COUNT 2 STREAMS a b 0 0
                   XREADGROUP GROUP g c STREAMS a b 0 0
                   GEORADIUS k 0 0 1 km STORE d
                   GEOSEARCHSTORE d k FROMMEMBER m BYRADIUS 1 km
                   MEMORY USAGE k
                   OBJECT ENCODING k
                   OBJECT REFCOUNT k
                   BITOP AND d a b""".splitlines():
        cmd = line.split()
        assert raw(k, "COMMAND", "GETKEYS", *cmd) == raw(r, "COMMAND", "GETKEYS", *cmd), cmd


def test_acl_categories(pair):
    """ACL CAT <category> names Redis' whole command table, commands kvrocks does
    not serve (SYNC, BGREWRITEAOF ...) included, as ACL rules can name them; the
    commands only kvrocks has come on top."""
    k, r = pair
    assert raw(k, "ACL", "CAT") == raw(r, "ACL", "CAT")
    for cat in raw(r, "ACL", "CAT"):
        a = {n.decode() for n in raw(k, "ACL", "CAT", cat)} & names(r)
        b = {n.decode() for n in raw(r, "ACL", "CAT", cat)}
        assert a == b, cat


def test_category_rules_reach_subcommands(kvrocks_server, redis_ref):
    """-@dangerous takes CONFIG GET and SET, KEYS, SORT and INFO but leaves
    CLIENT ID (a subcommand of a container whose other subcommands are
    dangerous); +@all -@admin takes CLIENT KILL and leaves CLIENT ID."""
    for port in (kvrocks_server.port, redis_ref.port):
        admin = redis.Redis(port=port)
        admin.execute_command("ACL", "SETUSER", "cat", "on", ">pw", "~*", "&*", "+@all", "-@dangerous")
        u = redis.Redis(port=port, username="cat", password="pw")
        try:
            assert u.execute_command("CLIENT", "ID") > 0
            for cmd in (("CONFIG", "GET", "maxclients"), ("CONFIG", "SET", "maxclients", "100"), ("KEYS", "*"),
                        ("SORT", "l"), ("INFO",)):
                with pytest.raises(redis.exceptions.NoPermissionError):
                    u.execute_command(*cmd)
            admin.execute_command("ACL", "SETUSER", "cat", "reset", "on", ">pw", "~*", "+@all", "-@admin")
            assert u.execute_command("CLIENT", "ID") > 0
            with pytest.raises(redis.exceptions.NoPermissionError):
                u.execute_command("CLIENT", "KILL", "ID", "999999")
        finally:
            u.close()
            admin.execute_command("ACL", "DELUSER", "cat")
            admin.close()
