"""Every RDB fixture in ../shared/rdb-fixtures loads (kvrocks --load-rdb) to
exactly the content its JSON describes, and the files Redis refuses are refused."""
import base64
import glob
import json
import math
import os

import pytest
import redis

from conftest import Kvrocks

# A copy of ../shared/rdb-fixtures (see its README.md), kept in the repository so CI has it.
FIXTURES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "rdb-fixtures"))
CASES = sorted(glob.glob(os.path.join(FIXTURES, "*", "*.rdb")))


def b(s):
    """A fixture string as bytes."""
    if isinstance(s, str) and s.startswith("base64:"):
        return base64.b64decode(s[7:])
    return s.encode() if isinstance(s, str) else s


def score(x):
    if x == "inf":
        return math.inf
    if x == "-inf":
        return -math.inf
    return float(x)


def raw_client(port):
    c = redis.Redis(port=port, protocol=2)
    for cmd in ("XINFO STREAM", "XRANGE", "ZRANGE", "HGETALL", "SMEMBERS"):
        c.response_callbacks.pop(cmd, None)
    return c


def stream_value(c, key):
    info = c.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", "0")
    info = dict(zip(info[::2], info[1::2]))
    entries = [[e[0], list(e[1])] for e in info[b"entries"]]
    groups = []
    for g in info[b"groups"]:
        g = dict(zip(g[::2], g[1::2]))
        consumers = []
        for cons in g[b"consumers"]:
            cons = dict(zip(cons[::2], cons[1::2]))
            consumers.append({"name": cons[b"name"], "seen-time": cons[b"seen-time"], "pel-count": cons[b"pel-count"],
                              "pending": [list(p) for p in cons[b"pending"]]})
        groups.append({"name": g[b"name"], "last-delivered-id": g[b"last-delivered-id"],
                       "entries-read": g[b"entries-read"], "lag": g[b"lag"], "pel-count": g[b"pel-count"],
                       "pending": [list(p) for p in g[b"pending"]], "consumers": consumers})
    return {"entries": entries, "length": info[b"length"], "last-generated-id": info[b"last-generated-id"],
            "max-deleted-entry-id": info[b"max-deleted-entry-id"], "entries-added": info[b"entries-added"],
            "recorded-first-entry-id": info[b"recorded-first-entry-id"], "groups": groups}


def expected_stream(v):
    def pend(p):
        return [b(x) if isinstance(x, str) else x for x in p]
    groups = []
    for g in v["groups"]:
        groups.append({"name": b(g["name"]), "last-delivered-id": b(g["last-delivered-id"]),
                       "entries-read": g["entries-read"], "lag": g["lag"], "pel-count": g["pel-count"],
                       "pending": [pend(p) for p in g["pending"]],
                       "consumers": [{"name": b(c["name"]), "seen-time": c["seen-time"], "pel-count": c["pel-count"],
                                      "pending": [pend(p) for p in c["pending"]]} for c in g["consumers"]]})
    return {"entries": [[b(e[0]), [b(x) for x in e[1]]] for e in v["entries"]], "length": v["length"],
            "last-generated-id": b(v["last-generated-id"]), "max-deleted-entry-id": b(v["max-deleted-entry-id"]),
            "entries-added": v["entries-added"], "recorded-first-entry-id": b(v["recorded-first-entry-id"]),
            "groups": groups}


def function_libraries(c):
    """FUNCTION LIST WITHCODE in the fixtures' JSON shape (functions sorted by name)."""
    libs = []
    for lib in c.execute_command("FUNCTION", "LIST", "WITHCODE"):
        lib = dict(zip(lib[::2], lib[1::2]))
        fns = []
        for f in lib[b"functions"]:
            f = dict(zip(f[::2], f[1::2]))
            desc = f[b"description"]
            fns.append({"name": f[b"name"].decode(), "description": desc.decode() if desc is not None else None,
                        "flags": sorted(x.decode() for x in f[b"flags"])})
        libs.append({"library_name": lib[b"library_name"].decode(), "engine": lib[b"engine"].decode(),
                     "functions": sorted(fns, key=lambda f: f["name"]),
                     "library_code": lib[b"library_code"].decode()})
    return libs


@pytest.mark.parametrize("rdb", CASES, ids=[os.path.relpath(p, FIXTURES) for p in CASES])
def test_fixture_loads_to_expected_content(rdb):
    expected = json.load(open(rdb[:-4] + ".json"))
    server = Kvrocks(extra=["--load-rdb", rdb])
    try:
        if expected["databases"] is None:
            with pytest.raises(RuntimeError):
                server.start()
            return
        server.start()
        c = raw_client(server.port)
        for db in range(16):
            c.execute_command("SELECT", db)
            want = expected["databases"].get(str(db), {})
            assert c.dbsize() == len(want), f"db {db}"
            for name, e in want.items():
                key = b(name)
                assert c.type(key).decode() == e["type"], name
                expire = c.pexpiretime(key)
                assert (expire if expire > 0 else None) == e["expire_at_ms"], name
                t, v = e["type"], e["value"]
                if t == "string":
                    assert c.get(key) == b(v), name
                elif t == "list":
                    assert c.lrange(key, 0, -1) == [b(x) for x in v], name
                elif t == "set":
                    assert sorted(c.smembers(key)) == [b(x) for x in v], name
                elif t == "hash":
                    got = c.execute_command("HGETALL", key)
                    assert dict(zip(got[::2], got[1::2])) == {b(f): b(x) for f, x in v.items()}, name
                elif t == "zset":
                    got = c.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
                    assert [(m, float(s)) for m, s in zip(got[::2], got[1::2])] == \
                        [(b(m), score(s)) for m, s in v], name
                elif t == "stream":
                    assert stream_value(c, key) == expected_stream(v), name
        assert function_libraries(c) == expected.get("functions", [])
    finally:
        server.cleanup()
