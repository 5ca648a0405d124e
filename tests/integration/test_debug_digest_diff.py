"""DEBUG DIGEST and DEBUG DIGEST-VALUE against Debian's redis-server 7.0: the same
data set gives the same digests, in every logical database, with and without TTLs."""
from conftest import Differ

DATA = """
SET s1 v
SET s2 12345
SET s3 3.5 EX 1000
RPUSH l a b c 1 2
SADD set1 a b c
SADD set2 1 2 3
HSET h f v g 17
ZADD z 0.1 a 1.5 b -3 c 0.8444218515250481 d inf e
ZADD zbig 1 a 2 b 3 c 4 d 5 e 6 f 7 g 8 h 9 i 10 j 11 k 12 l 13 m 14 n 15 o 16 p 17 q 18 r 19 s 20 t 21 u 22 v 23 w 24 x 25 y 26 z 27 aa 28 ab 29 ac 30 ad 31 ae 32 af 33 ag 34 ah 35 ai 36 aj 37 ak 38 al 39 am 40 an 41 ao 42 ap 43 aq 44 ar 45 as 46 at 47 au 48 av 49 aw 50 ax 51 ay 52 az 53 ba 54 bb 55 bc 56 bd 57 be 58 bf 59 bg 60 bh 61 bi 62 bj 63 bk 64 bl 65 bm 66 bn 67 bo 68 bp 69 bq 70 br 71 bs 72 bt 73 bu 74 bv 75 bw 76 bx 77 by 78 bz 79 ca 80 cb 81 cc 82 cd 83 ce 84 cf 85 cg 86 ch 87 ci 88 cj 89 ck 90 cl 91 cm 92 cn 93 co 94 cp 95 cq 96 cr 97 cs 98 ct 99 cu 100 cv 101 cw 102 cx 103 cy 104 cz 105 da 106 db 107 dc 108 dd 109 de 110 df 111 dg 112 dh 113 di 114 dj 115 dk 116 dl 117 dm 118 dn 119 do 120 dp 121 dq 122 dr 123 ds 124 dt 125 du 126 dv 127 dw 128 dx 129 dy 130 dz
PFADD hll a b c
"""


def test_digests_match_redis(diff):
    diff("DEBUG", "DIGEST")  # empty: forty zeros
    for line in DATA.strip().splitlines():
        diff(*line.split())
        diff("DEBUG", "DIGEST")
    diff("DEBUG", "DIGEST-VALUE", "s1", "s3", "l", "set1", "set2", "h", "z", "zbig", "hll", "nosuch")
    diff("SELECT", "5")
    diff("SET", "other-db", "v")
    diff("DEBUG", "DIGEST")
    diff("SELECT", "0")
    diff("PERSIST", "s3")
    diff("DEBUG", "DIGEST")
    diff("DEBUG", "DIGEST", "x")
    diff("FLUSHALL")
    diff("DEBUG", "DIGEST")


STREAMS = """
XADD x1 1-0 f0 ""
XADD x1 1-1 f0 v a b
XADD x1 2-0 f0 w a c
XADD x2 5-5 only one
XGROUP CREATE x2 g 0
XREADGROUP GROUP g c1 STREAMS x2 >
XADD x3 MAXLEN 2 1-0 a 1
XADD x3 MAXLEN 2 2-0 a 2
XADD x3 MAXLEN 2 3-0 a 3
XADD x4 1-0 a 1
XADD x4 2-0 b 2
XDEL x4 1-0
XADD x5 1-0 a 1
XDEL x5 1-0
XADD x6 18446744073709551615-18446744073709551614 big id
"""


def test_stream_digests_match_redis(diff):
    """Redis digests a stream's entries in order (ids as <ms>.<seq>, then fields and
    values); groups, deleted entries and the last id do not count."""
    for line in STREAMS.strip().splitlines():
        diff(*[a.strip('"') for a in line.split()])
        diff("DEBUG", "DIGEST")
    diff("DEBUG", "DIGEST-VALUE", "x1", "x2", "x3", "x4", "x5", "x6")
    diff("EXPIRE", "x1", "100")
    diff("DEBUG", "DIGEST-VALUE", "x1")
