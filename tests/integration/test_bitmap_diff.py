"""Bitmap commands (SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO)
against Debian's redis-server 7.0, including bitmaps big enough to be stored in
fragments (more than 1 KiB) and the order in which Redis checks arguments."""
import random


def test_setbit_getbit(diff):
    diff.run("""
    SETBIT b 7 1
    SETBIT b 7 1
    SETBIT b 7 0
    GETBIT b 7
    GETBIT b 100
    GETBIT nokey 0
    SETBIT b 100 1
    GET b
    STRLEN b
    OBJECT ENCODING b
    SETBIT b -1 1
    SETBIT b x 1
    SETBIT b 4294967296 1
    SETBIT b 1 2
    SETBIT b 1 -1
    SETBIT b 1 x
    GETBIT b -1
    GETBIT b x
    SETBIT b 0
    SET s 1
    SETBIT s 6 1
    GET s
    HSET h a 1
    SETBIT h 1 1
    GETBIT h 1
    SETBIT big 70000 1
    GETBIT big 70000
    GETBIT big 69999
    STRLEN big
    GET big
    SETBIT big 70000 0
    GET big
    OBJECT ENCODING big
    TYPE big
    """)


def test_setbit_on_big_existing_strings(diff):
    diff("SET v", "x" * 5000)
    diff("SETBIT", "v", "3", "0")
    diff("SETBIT", "v", "39999", "1")
    diff("SETBIT", "v", "80000", "1")
    diff("GET", "v")
    diff("APPEND", "v", "tail")
    diff("GET", "v")
    diff("SETRANGE", "v", "9000", "hello")
    diff("GETRANGE", "v", "8990", "9010")
    diff("GETRANGE", "v", "-20", "-1")
    diff("BITCOUNT", "v")
    diff("SETBIT", "v", "7", "1")
    diff("EXPIRE", "v", "1000")
    diff("SETBIT", "v", "200000", "1")
    diff.approx("TTL", "v")
    diff("COPY", "v", "v2")
    diff("GET", "v2")
    diff("RENAME", "v", "v3")
    diff("GET", "v3")
    diff("SETBIT", "v3", "1", "1")
    diff("GET", "v2")
    diff("INCR", "v3")


def test_bit_writes_that_change_nothing_are_no_writes(diff):
    """SETBIT and BITFIELD that leave every bit as it was (and do not grow the
    string) touch nothing, as in Redis 7.0: a WATCH survives them, though the
    value was unshared (OBJECT ENCODING raw from then on)."""
    diff.run("""
    SET k hello
    WATCH k
    SETBIT k 23 0
    BITFIELD k SET u8 0 104 INCRBY u4 4 0
    BITFIELD k SET i8 0 1000 OVERFLOW FAIL SET u8 8 1000
    MULTI
    GET k
    EXEC
    OBJECT ENCODING k
    SET n 1
    WATCH n
    SETBIT n 7 1
    MULTI
    GET n
    EXEC
    OBJECT ENCODING n
    OBJECT REFCOUNT n
    WATCH k
    SETBIT k 23 1
    MULTI
    GET k
    EXEC
    WATCH k
    SETBIT k 100 0
    MULTI
    STRLEN k
    EXEC
    """)
    # a string big enough to be stored in fragments once a bit write looks at it
    diff("SET", "big", "x" * 3000)
    diff("EXPIRE", "big", "1000")
    diff("WATCH", "big")
    diff("SETBIT", "big", "1", "1")
    diff("BITFIELD", "big", "SET", "u8", "8", "120")
    diff("MULTI")
    diff("STRLEN", "big")
    diff("EXEC")
    diff.approx("TTL", "big")
    diff("OBJECT", "ENCODING", "big")
    diff("WATCH", "big")
    diff("SETBIT", "big", "1", "0")
    diff("MULTI")
    diff("GETBIT", "big", "1")
    diff("EXEC")
    diff("GET", "big")


def test_bitcount(diff):
    diff("SET", "s", "foobar")
    diff.run("""
    BITCOUNT s
    BITCOUNT s 0 0
    BITCOUNT s 1 1
    BITCOUNT s 1 -2
    BITCOUNT s -2 -1
    BITCOUNT s -1 -2
    BITCOUNT s -100 -200
    BITCOUNT s -200 -100
    BITCOUNT s 0 100
    BITCOUNT s 5 30 BIT
    BITCOUNT s 5 30 byte
    BITCOUNT s -3 -1 bit
    BITCOUNT s 0 -1 BIT
    BITCOUNT s 7 7 bit
    BITCOUNT s 1 2 foo
    BITCOUNT s -2 -5 foo
    BITCOUNT s -2 -5 x1
    BITCOUNT s 1
    BITCOUNT s 1 2 bit extra
    BITCOUNT s a b
    BITCOUNT nokey a b
    BITCOUNT nokey 1
    BITCOUNT nokey 0 1 bad
    SET e ""
    BITCOUNT e
    BITCOUNT e 0 -1
    BITCOUNT e 0 -1 bit
    HSET h a 1
    BITCOUNT h
    SET n 12345
    BITCOUNT n
    BITCOUNT n 1 2 bit
    """)


def test_bitpos(diff):
    diff("SET", "s", b"\xff\xf0\x00")
    diff("SET", "ones", b"\xff\xff\xff")
    diff("SET", "zeros", b"\x00\x00\x00")
    diff.run("""
    BITPOS s 0
    BITPOS s 1
    BITPOS s 1 2
    BITPOS s 0 1
    BITPOS s 0 1 1
    BITPOS s 1 -1
    BITPOS s 1 -1 -1
    BITPOS s 0 3 bit
    BITPOS s 0 3 20 bit
    BITPOS s 1 5 23 bit
    BITPOS s 0 0 11 bit
    BITPOS s 0 0 12 bit
    BITPOS s 0 -3 -1 bit
    BITPOS ones 0
    BITPOS ones 0 1
    BITPOS ones 0 1 2
    BITPOS ones 0 0 -1
    BITPOS ones 0 3 bit
    BITPOS ones 0 3 23 bit
    BITPOS ones 1 100
    BITPOS zeros 1
    BITPOS zeros 0
    BITPOS zeros 1 0 -1 bit
    BITPOS s 2
    BITPOS s x
    BITPOS s 1 a
    BITPOS s 1 0 a
    BITPOS s 1 0 1 foo
    BITPOS s 1 0 x foo
    BITPOS s 1 0 1 bit extra
    BITPOS nokey 1
    BITPOS nokey 0
    BITPOS nokey 1 a
    BITPOS nokey 2
    HSET h a 1
    BITPOS h 1
    SET e ""
    BITPOS e 0
    BITPOS e 1
    BITPOS e 0 0 -1
    """)


def test_bitop(diff):
    diff("SET", "a", b"\x0f\xf0\xaa")
    diff("SET", "b", b"\xff\x00")
    diff.run("""
    BITOP AND d a b
    GET d
    BITOP OR d a b
    GET d
    BITOP XOR d a b nokey
    GET d
    BITOP NOT d a
    GET d
    BITOP and d a nokey
    GET d
    BITOP NOT d a b
    BITOP NOT d
    BITOP foo d a
    BITOP AND d
    OBJECT ENCODING d
    EXPIRE d 100
    BITOP OR d a
    TTL d
    BITOP AND d nokey1 nokey2
    EXISTS d
    HSET h a 1
    BITOP OR d a h
    BITOP OR h a
    TYPE h
    BITOP OR d d
    """)
    diff("SETBIT", "big1", "100000", "1")
    diff("SETBIT", "big2", "9", "1")
    diff("SETBIT", "big2", "50000", "1")
    for op in ("AND", "OR", "XOR"):
        diff("BITOP", op, "res", "big1", "big2", "a")
        diff("GET", "res")
        diff("BITCOUNT", "res")
    diff("BITOP", "NOT", "res", "big1")
    diff("GET", "res")
    diff("STRLEN", "res")


def test_bitfield(diff):
    diff.run("""
    BITFIELD f SET i8 0 100 GET i8 0 INCRBY i8 0 100 GET u8 0
    BITFIELD f OVERFLOW SAT INCRBY i8 0 200 INCRBY i8 0 -1000 GET i8 0
    BITFIELD f OVERFLOW FAIL INCRBY i8 0 1000 INCRBY u4 100 1 GET u4 100
    BITFIELD f OVERFLOW WRAP SET u8 #1 300 GET u8 #1 GET u8 8
    BITFIELD f SET u8 #2 -1 OVERFLOW SAT SET u8 #3 -1 OVERFLOW FAIL SET u8 #4 -1
    BITFIELD f GET u8 #2 GET u8 #3 GET u8 #4
    BITFIELD f SET i64 10 -9223372036854775808 INCRBY i64 10 -1 GET i64 10
    BITFIELD f OVERFLOW SAT INCRBY i64 10 -1 OVERFLOW SAT INCRBY i64 10 9223372036854775807 INCRBY i64 10 9223372036854775807
    BITFIELD f SET u63 3 9223372036854775807 INCRBY u63 3 1 GET u63 3
    BITFIELD f SET i1 0 1 GET i1 0 GET u1 0 SET i1 0 -1 GET i1 0
    BITFIELD f INCRBY i5 1 17 INCRBY i5 1 17 OVERFLOW SAT INCRBY i5 1 17
    GET f
    STRLEN f
    BITFIELD f
    BITFIELD f GET u64 0
    BITFIELD f GET i65 0
    BITFIELD f GET i0 0
    BITFIELD f GET x8 0
    BITFIELD f GET I8 0
    BITFIELD f GET u8 -1
    BITFIELD f GET u8 #-1
    BITFIELD f GET u8 4294967296
    BITFIELD f GET u8 #536870912
    BITFIELD f GET u8
    BITFIELD f SET u8 0
    BITFIELD f SET u8 0 x
    BITFIELD f OVERFLOW
    BITFIELD f OVERFLOW foo GET u8 0
    BITFIELD f FOO u8 0
    BITFIELD f GET u8 0 GET
    BITFIELD nokey GET u8 0 GET i16 100
    EXISTS nokey
    BITFIELD nokey OVERFLOW FAIL INCRBY u2 100 1000
    STRLEN nokey
    GET nokey
    BITFIELD_RO f GET i8 0 GET u8 #1
    BITFIELD_RO f SET u8 0 1
    BITFIELD_RO f OVERFLOW SAT GET u8 0
    BITFIELD_RO f INCRBY u8 0 1 GET u8 0
    BITFIELD_RO nokey2 GET u8 0
    EXISTS nokey2
    HSET h a 1
    BITFIELD h GET u8 0
    BITFIELD h SET u8 0 1
    BITFIELD_RO h GET u8 0
    BITFIELD big SET u16 #5000 65535 GET u32 79992 INCRBY i16 #5000 1
    STRLEN big
    BITFIELD big GET u16 #5000 GET i64 79990
    """)


def test_bitmaps_random_against_redis(diff):
    """Random bit writes over a range that spans several fragments; every read
    form is compared with Redis after each batch."""
    rng = random.Random(7)
    span = 8 * 5000
    for batch in range(12):
        for _ in range(40):
            kind = rng.random()
            if kind < 0.6:
                diff("SETBIT", "r", rng.randrange(span), rng.randrange(2))
            else:
                bits = rng.choice([1, 3, 8, 13, 32, 63])
                t = rng.choice("iu") + str(bits)
                diff("BITFIELD", "r", "OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL"]),
                     rng.choice(["SET", "INCRBY"]), t, rng.randrange(span), rng.randrange(-1000, 1000))
        diff("GET", "r")
        diff("BITCOUNT", "r")
        for _ in range(8):
            a, b = rng.randrange(-6000, 6000), rng.randrange(-6000, 6000)
            diff("BITCOUNT", "r", a, b)
            diff("BITCOUNT", "r", a * 8, b * 8 + rng.randrange(8), "BIT")
            diff("BITPOS", "r", rng.randrange(2), a, b)
            diff("BITPOS", "r", rng.randrange(2), a * 8 + rng.randrange(8), b * 8, "BIT")
            diff("BITPOS", "r", rng.randrange(2), a)
            diff("GETRANGE", "r", a, b)
            diff("GETBIT", "r", rng.randrange(span + 100))
            diff("BITFIELD_RO", "r", "GET", "u" + str(rng.randrange(1, 64)), rng.randrange(span + 100))


def test_sparse_bitmap_far_offsets(diff):
    """Offsets far apart (a 12 MB string in Redis, a few fragments in kvrocks)."""
    for off in (3, 100_000_000, 50_000_000, 99_999_999):
        diff("SETBIT", "sp", off, 1)
    diff("STRLEN", "sp")
    diff("BITCOUNT", "sp")
    diff("BITCOUNT", "sp", "1", "-1")
    diff("BITCOUNT", "sp", "50000000", "99999998", "BIT")
    diff("BITPOS", "sp", "1", "1")
    diff("BITPOS", "sp", "1", "6250001")
    diff("BITPOS", "sp", "0", "0", "0")
    diff("BITPOS", "sp", "0", "6249999")
    diff("BITPOS", "sp", "1", "-1")
    diff("GETRANGE", "sp", "12499990", "-1")
    diff("GETBIT", "sp", "99999999")
    diff("BITFIELD", "sp", "GET", "u8", "99999992", "INCRBY", "u8", "99999992", "2")
    diff("SETBIT", "sp", "100000000", "0")
    diff("STRLEN", "sp")
