"""HyperLogLog (PFADD PFCOUNT PFMERGE) against Debian's redis-server 7.0. The
values are compared byte for byte with GET: kvrocks writes Redis' own sparse
and dense formats, including the cached cardinality that PFCOUNT stores."""
import random


def test_pfadd_pfcount_basics(diff):
    diff.run("""
    PFADD h a b c d e
    PFADD h a b
    PFADD h f
    GET h
    PFCOUNT h
    GET h
    PFCOUNT h
    PFADD empty
    GET empty
    PFCOUNT empty
    GET empty
    PFADD empty
    PFCOUNT nokey
    PFCOUNT h nokey
    PFCOUNT h empty
    OBJECT ENCODING h
    TYPE h
    SET s notanhll
    PFADD s a
    PFCOUNT s
    PFMERGE s h
    PFMERGE h s
    SET n 123
    PFADD n a
    LPUSH l a
    PFADD l a
    PFCOUNT l
    PFCOUNT h l
    PFMERGE l h
    PFADD
    PFCOUNT
    PFMERGE
    """)


def test_sparse_to_dense_and_counts(diff):
    rng = random.Random(3)
    added = []
    for batch in range(30):
        elems = [f"e{rng.randrange(10**9)}" for _ in range(rng.choice([1, 5, 50]))]
        added += elems
        diff("PFADD", "big", *elems)
        if batch % 5 == 4:
            diff("GET", "big")
            diff("PFCOUNT", "big")
    diff("PFADD", "big", *[f"x{i}" for i in range(3000)])
    diff("STRLEN", "big")
    diff("GET", "big")
    diff("PFCOUNT", "big")
    diff("PFADD", "big", "one-more")
    diff("GET", "big")
    diff("PFCOUNT", "big")


def test_pfmerge(diff):
    diff("PFADD", "a", *[f"a{i}" for i in range(200)])
    diff("PFADD", "b", *[f"b{i}" for i in range(100)] + [f"a{i}" for i in range(50)])
    diff("PFADD", "d", *[f"d{i}" for i in range(20000)])
    diff.run("""
    PFMERGE m a b
    GET m
    PFCOUNT m
    PFCOUNT a b
    PFMERGE m
    GET m
    PFMERGE m2 a nokey
    GET m2
    PFMERGE m3 nokey1 nokey2
    GET m3
    EXISTS m3
    PFMERGE a d
    STRLEN a
    GET a
    PFCOUNT a
    PFCOUNT a b d
    PFMERGE sp b
    EXPIRE sp 1000
    PFMERGE sp a
    TTL sp
    PFADD sp zzz
    TTL sp
    GET sp
    """)


def test_sparse_limit_config(diff):
    diff("CONFIG", "SET", "hll-sparse-max-bytes", "100")
    try:
        diff("PFADD", "h", *[f"k{i}" for i in range(30)])
        diff("STRLEN", "h")
        diff("PFADD", "h", *[f"j{i}" for i in range(30)])
        diff("STRLEN", "h")
        diff("GET", "h")
        diff("CONFIG", "GET", "hll-sparse-max-bytes")
    finally:
        diff("CONFIG", "SET", "hll-sparse-max-bytes", "3000")


def test_values_written_by_redis_are_used(diff):
    """An HLL copied from Redis with GET/SET is read and updated here, and the
    other way round."""
    ref = diff.ref
    ref.call("PFADD", "src", *[f"r{i}" for i in range(500)])
    value = ref.call("GET", "src")
    raw = value.split(b"\r\n", 1)[1][:-2]
    diff("SET", "copy", raw)
    diff("PFCOUNT", "copy")
    diff("PFADD", "copy", "new1", "new2")
    diff("GET", "copy")
    diff("PFMERGE", "copy2", "copy")
    diff("GET", "copy2")
    # A corrupt sparse value: a VAL opcode run beyond the registers.
    corrupt = raw[:16] + b"\xff" * 8
    diff("SET", "bad", corrupt)
    diff("PFCOUNT", "bad")
    diff("PFADD", "bad", "x")
    diff("SET", "bad2", b"HYLL\x00" + b"\x00" * 20)
    diff("PFCOUNT", "bad2")


def test_corrupt_sparse_values_as_redis_reads_them(diff):
    """Redis reads a sparse value without bounds checks where the format cannot
    go wrong, and a corrupted value (SETRANGE) shows how: an XZERO opcode that
    is the value's last byte reads its second byte as the terminator (0).
    Opcodes past the 16384th register make the value corrupt everywhere."""
    for n in range(3):
        # ZERO runs covering 535 registers, then a one-byte XZERO covering 13825 more.
        diff("DEL", "h")
        diff("PFADD", "h", f"seed{n}")
        diff("SETRANGE", "h", "6", "12345678901234567890")
        diff("APPEND", "h", "v")
        for e in ["", "m3", "a", "b", "c", "zz", "q9"]:
            diff("PFADD", "h", e)
            diff("GET", "h")
        diff("PFCOUNT", "h")
        diff("PFCOUNT", "h", "h")
    # A full-cover sparse value (XZERO 16384) followed by trailing opcodes.
    full = b"HYLL\x01\x00\x00\x00" + b"\x00" * 8 + b"\x7f\xff"
    for tail in [b"", b"\x00", b"\x80", b"\x40\x01", b"\x40"]:
        diff("SET", "t", full + tail)
        diff("PFCOUNT", "t")
        diff("PFCOUNT", "t", "t")
        diff("PFMERGE", "dst", "t")
        diff("GET", "dst")
        diff("DEL", "dst")
        diff("PFADD", "t", "x")
        diff("GET", "t")


def test_pfdebug(diff):
    """PFDEBUG's views of a value, and GETREG/TODENSE storing the dense form, as Redis."""
    diff("PFADD", "h", "a", "b", "c", "d")
    diff("PFDEBUG", "DECODE", "h")
    diff("PFDEBUG", "ENCODING", "h")
    diff("PFDEBUG", "GETREG", "h")
    diff("PFDEBUG", "ENCODING", "h")
    diff("GET", "h")
    diff("PFDEBUG", "DECODE", "h")
    diff("PFADD", "h2", *[f"e{i}" for i in range(300)])
    diff("PFDEBUG", "DECODE", "h2")
    diff("PFDEBUG", "TODENSE", "h2")
    diff("PFDEBUG", "TODENSE", "h2")
    diff("GET", "h2")
    diff("PFCOUNT", "h2")
    diff("PFDEBUG", "BOGUS", "h2")
    diff("PFDEBUG", "BOGUS", "nokey")
    diff("PFDEBUG", "GETREG", "nokey")
    diff("SET", "str", "not an hll")
    diff("PFDEBUG", "ENCODING", "str")
    diff("RPUSH", "list", "a")
    diff("PFDEBUG", "ENCODING", "list")
    diff("PFDEBUG", "ENCODING")
    diff("PFDEBUG", "ENCODING", "h", "extra")


def test_pfselftest(diff):
    diff("PFSELFTEST")
    diff("PFSELFTEST", "extra")


def test_reading_an_hll_unshares_it(diff):
    """Redis unshares an existing HyperLogLog before PFADD, PFCOUNT or PFDEBUG
    looks at it, even when they change nothing: a small HLL restored or SET as
    embstr reports raw from then on (no write for WATCH, no dirty count)."""
    diff("PFADD", "src", "a")
    payload = parse_bulk(diff.ref.call("GET", "src"))
    for client in (diff.kv, diff.ref):
        for key in ("h1", "h2", "h3", "h4"):
            client.call("SET", key, payload)
    diff.run("""
    OBJECT ENCODING h1
    PFADD h1 a
    OBJECT ENCODING h1
    PFCOUNT h2
    OBJECT ENCODING h2
    PFCOUNT h2
    OBJECT ENCODING h2
    PFDEBUG ENCODING h3
    OBJECT ENCODING h3
    PFADD h4 b
    OBJECT ENCODING h4
    SET s abc
    PFADD s a
    OBJECT ENCODING s
    """)


def test_unsharing_is_no_write_for_watch(diff):
    for client in (diff.kv, diff.ref):
        client.call("PFADD", "w", "a")
        payload = parse_bulk(client.call("GET", "w"))
        client.call("SET", "w", payload)
    diff.run("""
    WATCH w
    PFADD w a
    PFCOUNT w
    MULTI
    PING
    EXEC
    OBJECT ENCODING w
    """)


def parse_bulk(reply):
    header, _, rest = reply.partition(b"\r\n")
    return rest[:int(header[1:])]


def test_pfdebug_conversion_is_no_write_for_watch(diff):
    """PFDEBUG TODENSE and GETREG turn a sparse HyperLogLog dense without
    signalModifiedKey in Redis 7.0: a WATCH of it survives, its TTL stays."""
    diff.run("""
    PFADD h a b
    PFADD g a
    EXPIRE g 1000
    WATCH h g
    PFDEBUG TODENSE h
    PFDEBUG GETREG g
    MULTI
    PFDEBUG ENCODING h
    PFDEBUG ENCODING g
    EXEC
    OBJECT ENCODING h
    ~TTL g
    WATCH h
    PFADD h zz
    MULTI
    PFCOUNT h
    EXEC
    """)
