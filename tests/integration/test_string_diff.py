"""Differential tests: string commands against Debian's redis-server 7.0."""
import time

import pytest

from conftest import encode


def test_get_set_basic(diff):
    diff.run("""
    GET missing
    SET k v
    GET k
    SET k v2
    GET k
    SET
    SET k
    GET
    GET a b
    SETNX k x
    SETNX n x
    GET n
    STRLEN k
    STRLEN missing
    """)


def test_set_options(diff):
    diff.run("""
    SET k v NX
    SET k v NX
    SET k w XX
    GET k
    SET nx1 v XX
    GET nx1
    SET k v NX XX
    SET k v XX NX
    SET k v EX 10 PX 100
    SET k v EX 10 KEEPTTL
    SET k v KEEPTTL EX 10
    SET k v EX 0
    SET k v EX -1
    SET k v PX 0
    SET k v EX abc
    SET k v EX
    SET k v FOO
    SET k v EXAT 0
    SET k v EX 9223372036854775807
    SET k v PX 9223372036854775807
    SET k v GET
    SET k v2 GET NX
    SET newkey v GET
    SET newkey2 v GET NX
    SET newkey2 v3 GET NX
    SET k v EX 100
    ~TTL k
    SET k v KEEPTTL
    ~TTL k
    SET k v
    ~TTL k
    SET k v PXAT 99999999999999
    PEXPIRETIME k
    SET k v EXAT 99999999999
    EXPIRETIME k
    SET past v PXAT 1
    EXISTS past
    SET k v EXAT 1 GET
    EXISTS k
    DBSIZE
    """)


def test_set_get_wrongtype_is_reported(diff, kvrocks_server, redis_ref):
    # A non-string type is needed; kvrocks has only strings for now, so use the
    # generic errors that do not need other types.
    diff.run("""
    SET k v
    GETSET k w
    GETSET k
    GETSET missing x
    GET missing
    """)


def test_setex_psetex(diff):
    diff.run("""
    SETEX k 100 v
    ~TTL k
    SETEX k 0 v
    SETEX k -5 v
    SETEX k abc v
    PSETEX k 100000 v
    ~PTTL k
    PSETEX k 0 v
    SETEX k 100
    """)


def test_getdel_getex(diff):
    diff.run("""
    SET k v
    GETDEL k
    GETDEL k
    EXISTS k
    SET k v
    GETEX k
    GETEX k EX 100
    ~TTL k
    GETEX k PERSIST
    ~TTL k
    GETEX k PX 100000
    ~PTTL k
    GETEX k EXAT 99999999999
    EXPIRETIME k
    GETEX k PXAT 99999999999999
    PEXPIRETIME k
    GETEX k EX 0
    GETEX k EX -1
    GETEX k EX abc
    GETEX k PERSIST EX 10
    GETEX k EX 10 PERSIST
    GETEX k FOO
    GETEX missing
    GETEX missing EX 10
    GETEX k EXAT 1
    EXISTS k
    """)


def test_mget_mset(diff):
    diff.run("""
    MSET a 1 b 2 c 3
    MGET a b c d
    MSET a
    MSET a 1 b
    MSETNX a 1 x 2
    MGET x
    MSETNX x 1 y 2
    MGET x y
    MSETNX z 1 z 2
    GET z
    MSET d 1 d 2
    GET d
    DBSIZE
    """)


def test_append_strlen_range(diff):
    diff.run("""
    APPEND k hello
    APPEND k world
    GET k
    STRLEN k
    GETRANGE k 0 4
    GETRANGE k -5 -1
    GETRANGE k 5 2
    GETRANGE k -1 -5
    GETRANGE k 0 -100
    GETRANGE k 100 200
    GETRANGE k -100 100
    GETRANGE missing 0 -1
    GETRANGE k a 1
    SUBSTR k 0 2
    SETRANGE k 5 XX
    GET k
    SETRANGE k 20 tail
    GET k
    SETRANGE new 3 abc
    GET new
    SETRANGE new2 0 ""
    EXISTS new2
    SETRANGE k -1 x
    SETRANGE k x x
    SETRANGE k 536870911 x
    SETRANGE k 536870912 x
    SETRANGE empty 5
    """)


def test_incr_family(diff):
    diff.run("""
    INCR n
    INCR n
    DECR n
    INCRBY n 10
    DECRBY n 100
    INCRBY n abc
    INCRBY n 1.5
    DECRBY n -9223372036854775808
    SET big 9223372036854775807
    INCR big
    SET small -9223372036854775808
    DECR small
    SET s hello
    INCR s
    SET sp " 1"
    INCR sp
    SET lead 01
    INCR lead
    SET f 10.5
    INCR f
    INCRBYFLOAT f 0.1
    INCRBYFLOAT f -5
    INCRBYFLOAT f 1e3
    INCRBYFLOAT newf 3
    INCRBYFLOAT newf abc
    INCRBYFLOAT s 1
    SET e 5.0e3
    INCRBYFLOAT e 200
    INCRBYFLOAT f inf
    SET ex 100
    EXPIRE ex 100
    INCR ex
    ~TTL ex
    """)


def test_binary_values(diff):
    v = b"\x00\x01\xff\r\n\x00end"
    diff("SET", b"bin\x00key", v)
    diff("GET", b"bin\x00key")
    diff("STRLEN", b"bin\x00key")
    diff("APPEND", b"bin\x00key", b"\xfe")
    diff("GETRANGE", b"bin\x00key", 1, 4)
    diff("MGET", b"bin\x00key", b"bin")
    diff("SET", "big", b"x" * 100000)
    diff("GET", "big")
    diff("SET", "", "empty-key")
    diff("GET", "")
    diff("SET", "emptyval", "")
    diff("GET", "emptyval")
    diff("STRLEN", "emptyval")


def test_lcs(diff):
    diff.run("""
    MSET key1 ohmytext key2 mynewtext
    LCS key1 key2
    LCS key1 key2 LEN
    LCS key1 key2 IDX
    LCS key1 key2 IDX MINMATCHLEN 4
    LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN
    LCS key1 key2 IDX WITHMATCHLEN
    LCS key1 key2 LEN IDX
    LCS key1 key2 FOO
    LCS key1 key2 MINMATCHLEN
    LCS key1 key2 IDX MINMATCHLEN -1
    LCS key1 missing
    LCS missing missing2 IDX
    MSET a ABCBDAB b BDCABA
    LCS a b
    LCS a b IDX WITHMATCHLEN
    LCS b a IDX
    MSET x aaaa y aa
    LCS x y IDX
    """)


def test_object_encoding(diff):
    diff.run("""
    SET i 12345
    OBJECT ENCODING i
    SET s hello
    OBJECT ENCODING s
    SET l 012345678901234567890123456789012345678901234567890
    OBJECT ENCODING l
    SET neg -5
    OBJECT ENCODING neg
    OBJECT ENCODING missing
    APPEND neg 1
    OBJECT ENCODING neg
    APPEND fresh 123
    OBJECT ENCODING fresh
    SETRANGE sr 0 1
    OBJECT ENCODING sr
    INCR counter
    OBJECT ENCODING counter
    INCRBYFLOAT fl 1.5
    OBJECT ENCODING fl
    COPY neg negcopy
    OBJECT ENCODING negcopy
    OBJECT FOO bar
    OBJECT ENCODING
    OBJECT FREQ neg
    OBJECT FREQ missing
    OBJECT FREQ
    OBJECT HELP extra
    """)


def test_big_values_stored_out_of_line(diff):
    big = b"0123456789abcdef" * 400  # 6400 bytes: above the inline limit
    diff("SET", "big", big)
    diff("GET", "big")
    diff("STRLEN", "big")
    diff("OBJECT", "ENCODING", "big")
    diff("APPEND", "big", b"tail")
    diff("GETRANGE", "big", 6390, -1)
    diff("SETRANGE", "big", 10, b"XYZ")
    diff("GET", "big")
    diff("SET", "big", "small now")
    diff("GET", "big")
    diff("SETRANGE", "grow", 5000, b"x")
    diff("GET", "grow")
    diff("SET", "b2", big, "EX", 100)
    diff("GETEX", "b2", "PERSIST")
    diff.approx("TTL", "b2")
    diff("SET", "b2", big + b"!", "GET")
    diff("COPY", "b2", "b3")
    diff("RENAME", "b2", "b4")
    diff("GET", "b2")
    diff("GET", "b3")
    diff("GET", "b4")
    diff("MOVE", "b4", "3")
    diff("SELECT", "3")
    diff("GET", "b4")
    diff("GETDEL", "b4")
    diff("SELECT", "0")
    diff("MSET", "m1", big, "m2", "x", "m1", big + b"2")
    diff("MGET", "m1", "m2")
    diff("DBSIZE")


def test_lcs_checks_key_types_before_options(diff):
    diff.run("""
    RPUSH list a
    SET s ohmytext
    LCS list s IDX MINMATCHLEN x
    LCS s s IDX MINMATCHLEN x
    LCS s nosuch FOO
    """)


def _pipelined(diff, commands):
    """Sends commands in one write to each server and compares every reply."""
    data = b"".join(encode(c) for c in commands)
    diff.kv.send_raw(data)
    diff.ref.send_raw(data)
    for c in commands:
        a, b = diff.kv.read_reply(), diff.ref.read_reply()
        assert a == b, f"{c!r}: kvrocks {a!r} != redis {b!r}"


def test_pipelined_gets(diff):
    """A run of pipelined GETs is read with one MultiGet (dispatch.cc,
    PrefetchGets): replies must be those of GETs one by one, whatever the keys
    hold, and writes earlier in the pipeline must be seen."""
    diff("SET", "a", "1")
    diff("SET", "empty", "")
    diff("SET", "big", "x" * 9000)
    diff("HSET", "h", "f", "v")
    diff("SET", "gone", "v", "PX", "1")
    diff("SELECT", "1")
    diff("SET", "a", "in db 1")
    diff("SELECT", "0")
    time.sleep(0.01)
    keys = ["a", "missing", "empty", "big", "h", "gone", "a", "A"]
    _pipelined(diff, [["GET", k] for k in keys])
    _pipelined(diff, [["get", "a"], ["GeT", "big"], ["GET", "a", "extra"], ["GET"], ["GET", "a"]])
    # Writes before and between the GETs of one pipeline.
    _pipelined(diff, [["SET", "a", "2"], ["GET", "a"], ["GET", "a"], ["DEL", "a"], ["GET", "a"], ["GET", "empty"],
                      ["APPEND", "empty", "x"], ["GET", "empty"], ["GET", "empty"]])
    # Another database, and a swap in the middle of a run.
    _pipelined(diff, [["SELECT", "1"], ["GET", "a"], ["GET", "a"], ["SWAPDB", "0", "1"], ["GET", "a"], ["GET", "big"],
                      ["SELECT", "0"], ["SWAPDB", "0", "1"], ["GET", "big"], ["GET", "a"]])
    # Inside MULTI the GETs are queued, and run by EXEC.
    _pipelined(diff, [["MULTI"], ["GET", "big"], ["GET", "h"], ["SET", "m", "1"], ["GET", "m"], ["EXEC"]])
    # Many GETs in one pipeline, over more keys than one run covers.
    _pipelined(diff, [["GET", "k%d" % (i % 50)] if i % 7 else ["SET", "k%d" % (i % 50), str(i)] for i in range(3000)])


def test_appends_and_setranges_of_big_strings_edit_in_place(diff):
    """Past 64 KiB APPEND and SETRANGE write only the fragments they touch
    (types/string_editor.h); whatever the layout, every read must be Redis'."""
    for i in range(100):
        diff("APPEND", "log", (b"%03d" % i) * 333 + b"\x00\xff")
    diff("STRLEN", "log")
    diff("GETRANGE", "log", 65530, 65545)
    diff("GETRANGE", "log", -5, -1)
    diff("OBJECT", "ENCODING", "log")
    diff("EXPIRE", "log", 1000)
    diff("APPEND", "log", b"")
    diff("APPEND", "log", b"z" * 3000)
    diff.approx("TTL", "log")
    diff("SETRANGE", "log", 1000, b"middle")
    diff("SETRANGE", "log", 99990, b"across the end" * 5)
    diff("SETRANGE", "log", 5, b"")
    diff("GET", "log")
    diff("DUMP", "log")
    diff("BITCOUNT", "log")
    diff("SETBIT", "log", 8, 1)
    diff("APPEND", "log", b"after a bit")
    diff("GET", "log")
    diff("SET", "big", b"x" * 70000)
    diff("APPEND", "big", b"y")
    diff("SETRANGE", "big", 69990, b"Z" * 20)
    diff("GET", "big")
    diff("SETRANGE", "sparse", 3000000, b"end")
    diff("STRLEN", "sparse")
    diff("GETRANGE", "sparse", 2999990, -1)
    diff("APPEND", "sparse", b"!")
    diff("GET", "sparse")
    diff("INCR", "log")
    diff("COPY", "log", "log2")
    diff("GET", "log2")
    diff("SET", "log", "small")
    diff("APPEND", "log", "er")
    diff("GET", "log")
    diff("OBJECT", "ENCODING", "log")
