"""COMMAND GETKEYS / GETKEYSANDFLAGS against Debian's redis-server 7.0 for every
command and subcommand both have, over argument lists that reach each way Redis
finds keys (index, keyword and numkeys specs, and its parsers for SORT, SET,
BITFIELD, GEORADIUS, XREAD, EVAL ...), errors included; and the ACL key
permissions that follow from the same keys and flags."""
import pytest
import redis

ARGUMENT_LISTS = [
    [], ["a"], ["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d"], ["a", "b", "c", "d", "e"],
    ["a", "b", "c", "d", "e", "f", "g"],
    ["2", "a", "b", "c", "d", "e"], ["d", "2", "a", "b", "c", "d"], ["0", "2", "a", "b", "LEFT"],
    ["x", "0"], ["x", "1", "a"], ["x", "2", "a", "b", "c"], ["x", "-1", "a"], ["x", "3abc", "a", "b", "c"],
    ["d", "0", "a"], ["d", "9", "a"], ["d", "1", "a", "WEIGHTS", "2"], ["2", "a"], ["notanumber", "a", "b"],
    ["a", "0", "0", "1", "km", "STORE", "d"], ["a", "0", "0", "1", "km", "STORE", "d", "STOREDIST", "e"],
    ["a", "m", "1", "km", "STOREDIST", "e"], ["a", "0", "0", "1", "km", "STORE"],
    ["STREAMS", "a", "b", "0", "0"], ["COUNT", "2", "STREAMS", "a", "0"], ["STREAMS", "a", "b", "0"],
    ["GROUP", "g", "c", "STREAMS", "a", "b", "0", "0"], ["GROUP", "g", "c", "NOACK", "STREAMS", "a", "0"],
    ["a", "BY", "x", "STORE", "d"], ["a", "LIMIT", "0", "1", "STORE", "d", "GET", "#"],
    ["a", "STORE", "x", "STORE", "d"], ["a", "GET", "STORE", "STORE", "d"],
    ["a", "get", "u8", "0"], ["a", "set", "u8", "0", "1"], ["a", "overflow", "wrap", "get", "u8", "0"],
    ["a", "get", "u8"], ["a", "v", "GET"], ["a", "v", "EX", "1", "get"],
    ["d", "a", "FROMMEMBER", "m", "BYRADIUS", "1", "km"], ["a", "b", "DB", "1", "REPLACE"],
    ["a", "b", "LEFT", "RIGHT"], ["a", "1", "FIELDS", "1", "f"], ["a", "FIELDS", "2", "f", "g"],
    ["h", "1", "", "0", "5", "KEYS", "a", "b"], ["h", "1", "k", "0", "5", "KEYS", "a"],
    ["h", "1", "", "0", "5", "COPY", "KEYS"], ["h", "1", "", "0", "5", "AUTH", "keys", "KEYS", "a"],
]


def replies(client, commands):
    pipe = client.pipeline(transaction=False)
    for c in commands:
        pipe.execute_command(*c)
    return [(type(x).__name__, str(x)) if isinstance(x, Exception) else x for x in pipe.execute(raise_on_error=False)]


def plain(client):
    """client, with COMMAND's replies as the server sent them."""
    client.set_response_callback("COMMAND", lambda response, **options: response)
    return client


def shared_names(k, r):
    ours = {n.decode() for n in k.execute_command("COMMAND", "LIST")}
    theirs = {n.decode() for n in r.execute_command("COMMAND", "LIST")}
    return sorted(ours & theirs)


@pytest.mark.parametrize("protocol", [2, 3])
def test_getkeys_of_every_shared_command(kvrocks_server, redis_ref, protocol):
    k = plain(redis.Redis(port=kvrocks_server.port, protocol=protocol))
    r = plain(redis.Redis(port=redis_ref.port, protocol=protocol))
    try:
        names = shared_names(k, r)
        assert len(names) > 300
        for name in names:
            prefix = name.split("|")
            commands = [["COMMAND", sub] + prefix + args for sub in ("GETKEYS", "GETKEYSANDFLAGS")
                        for args in ARGUMENT_LISTS]
            assert replies(k, commands) == replies(r, commands), name
        odd = [["COMMAND", "GETKEYS", "nosuchcommand", "a"], ["COMMAND", "GETKEYSANDFLAGS", "config", "nosuch", "a"],
               ["COMMAND", "GETKEYS", "config"], ["COMMAND", "GETKEYSANDFLAGS"], ["COMMAND", "GETKEYS"],
               ["COMMAND", "GETKEYS", "GET"], ["COMMAND", "GETKEYSANDFLAGS", "xgroup", "CREATE", "s", "g", "$"],
               ["COMMAND", "HELP"]]
        assert replies(k, odd) == replies(r, odd)
    finally:
        k.close()
        r.close()


def test_getkeysandflags_examples(kvrocks_server):
    """Redis' own test (unit/introspection-2)."""
    c = plain(kvrocks_server.client())
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "set", "k1", "v1") == [[b"k1", [b"OW", b"update"]]]
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "LMOVE", "k1", "k2", "left", "right") == \
        [[b"k1", [b"RW", b"access", b"delete"]], [b"k2", [b"RW", b"insert"]]]
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "sort", "k1", "store", "k2") == \
        [[b"k1", [b"RO", b"access"]], [b"k2", [b"OW", b"update"]]]
    # Redis 7.4's hash field expiry, which Redis 7.0 does not have: read or written as in 7.4.
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "HEXPIRE", "h", "10", "FIELDS", "1", "f") == \
        [[b"h", [b"RW", b"update"]]]
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "HTTL", "h", "FIELDS", "1", "f") == \
        [[b"h", [b"RO", b"access"]]]
    c.close()


def test_acl_key_permissions_follow_key_flags(kvrocks_server, redis_ref):
    """A key needs read permission when the command accesses it and write
    permission when it inserts, deletes or updates it: ACL DRYRUN of every
    shared command over keys readable only (r:), writable only (w:), both
    (rw:) or neither."""
    k = plain(redis.Redis(port=kvrocks_server.port))
    r = plain(redis.Redis(port=redis_ref.port))
    try:
        for c in (k, r):
            c.execute_command("ACL", "SETUSER", "keys", "on", "nopass", "%R~r:*", "%W~w:*", "~rw:*", "+@all")
        names = shared_names(k, r)
        for mapping in ({"a": "r:a", "b": "w:b", "c": "rw:c", "d": "no:d"},
                        {"a": "w:a", "b": "rw:b", "c": "no:c", "d": "r:d"},
                        {"a": "rw:a", "b": "r:b", "c": "w:c", "d": "rw:d"}):
            commands = []
            for name in names:
                prefix = name.split("|")
                for args in ARGUMENT_LISTS:
                    commands.append(["ACL", "DRYRUN", "keys"] + prefix + [mapping.get(x, x) for x in args])
            assert replies(k, commands) == replies(r, commands)
        # Executed: ZUNIONSTORE's and XREAD's sources are keys too.
        for c in (k, r):
            c.execute_command("ZADD", "no:z", "1", "m")
        u = [redis.Redis(port=p, username="keys", password="x") for p in (kvrocks_server.port, redis_ref.port)]
        for cmd in (["ZUNIONSTORE", "rw:dst", "1", "no:z"], ["XREAD", "STREAMS", "no:s", "0"],
                    ["COPY", "r:src", "w:dst"], ["LMOVE", "r:src", "w:dst", "LEFT", "RIGHT"],
                    ["EVAL", "return 1", "1", "no:k"], ["SORT", "r:l", "STORE", "w:d"],
                    # BY and GET patterns read keys no pattern was checked against.
                    ["SORT", "rw:l", "BY", "w_*"], ["SORT", "rw:l", "BY", "nosort"], ["SORT", "rw:l", "GET", "#"],
                    ["SORT_RO", "r:l", "BY", "x_*"], ["EVAL", "return redis.pcall('sort', KEYS[1], 'GET', '#')",
                                                      "1", "rw:l"]):
            assert replies(u[0], [cmd]) == replies(u[1], [cmd]), cmd
        for c in (k, r):
            c.execute_command("ACL", "SETUSER", "keys", "resetkeys", "%R~*")
        for cmd in (["SORT", "rw:l", "BY", "w_*", "GET", "#"], ["SORT", "rw:l", "BY", "w_*", "STORE", "x"]):
            assert replies(u[0], [cmd]) == replies(u[1], [cmd]), cmd
        for c in u:
            c.close()
    finally:
        for c in (k, r):
            c.execute_command("ACL", "DELUSER", "keys")
            c.execute_command("DEL", "no:z")
        k.close()
        r.close()
