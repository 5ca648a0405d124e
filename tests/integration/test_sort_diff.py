"""SORT and SORT_RO against Debian's redis-server 7.0."""


def test_sort(diff):
    diff.run("""
    RPUSH l 3 1 2 10 -5 2.5
    SORT l
    SORT l DESC
    SORT l LIMIT 1 2
    SORT l LIMIT -1 2
    SORT l LIMIT 2 -1
    SORT l LIMIT 10 5
    SORT l LIMIT 1 9223372036854775807
    SORT l LIMIT 9223372036854775807 9223372036854775807
    SORT l LIMIT -9223372036854775808 2
    SORT l ALPHA
    SORT l ALPHA DESC LIMIT 0 3
    RPUSH words b a c
    SORT words
    SORT words ALPHA
    SORT_RO words ALPHA
    MSET w_a 3 w_b 1 w_c 2 name_a A name_b B
    SORT words BY w_*
    SORT words BY w_* DESC GET # GET name_*
    SORT words BY nosort
    SORT words BY nosort GET name_*
    SORT words BY nosort DESC
    SORT words BY nosort DESC LIMIT 1 1
    SORT_RO words BY nosort DESC GET # GET name_*
    SORT words BY nosort DESC STORE dst
    LRANGE dst 0 -1
    HSET h_a f 30
    HSET h_b f 10
    HSET h_c f 20
    SORT words BY h_*->f GET h_*->f GET #
    SORT words BY w_* STORE dst
    LRANGE dst 0 -1
    SORT words ALPHA STORE dst
    LRANGE dst 0 -1
    SORT nokey
    SORT nokey STORE dst
    EXISTS dst
    SADD s 5 3 9
    SORT s
    SORT s DESC LIMIT 0 2
    ZADD z 1 c 2 a 3 b
    SORT z ALPHA
    SORT z BY nosort
    SORT z BY nosort DESC
    SET str v
    SORT str
    SORT l FOO
    SORT_RO l STORE x
    SORT l LIMIT 1
    SADD myset c b a z aa
    SORT myset BY nosort STORE sorted
    LRANGE sorted 0 -1
    SORT myset BY nosort DESC GET # STORE sorted
    LRANGE sorted 0 -1
    EVAL "return redis.call('sort', KEYS[1], 'by', 'nosort')" 1 myset
    """)


def test_sort_converts_a_sorted_set_to_skiplist(diff):
    diff.run("""
    ZADD z 1 a 2 b
    OBJECT ENCODING z
    SORT z
    OBJECT ENCODING z
    ZADD r 3 c
    SORT_RO r DESC
    OBJECT ENCODING r
    ZRANGE r 0 -1 WITHSCORES
    """)
