"""Admin and data commands from six connections on both workers at once, and a
subscriber, for servers built with sanitizers (docs/design.md, "Sanitizer builds"):

    python3 tests/sanitizers/stress.py PORT SECONDS SEED

Prints the connections that failed (none expected), how often they were killed
(CLIENT KILL) and connected again, and the final PING."""
import random
import socket
import sys
import threading
import time

port, seconds, seed = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])


def enc(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.f = self.s.makefile("rb")

    def reply(self):
        line = self.f.readline()
        if not line:
            raise ConnectionError("closed")
        t = line[:1]
        if t in b"+-:_,#(":
            return line
        if t in b"$=!":
            n = int(line[1:-2])
            if n >= 0:
                self.f.read(n + 2)
            return line
        if t in b"*~%>|":
            n = int(line[1:-2])
            if n > 0:
                for _ in range(n * (2 if t in b"%|" else 1)):
                    self.reply()
            return line
        raise ValueError(line)

    def call(self, *args):
        self.s.sendall(enc(args))
        r = self.reply()
        while r.startswith(b">"):  # a push (tracking invalidation) before the reply
            r = self.reply()
        return r


def keys(rnd):
    return "k%d" % rnd.randint(0, 9)


def gen(rnd):
    k = keys(rnd)
    v = "v" * rnd.choice([1, 20, 300, 5000])
    return rnd.choice([
        ["SET", k, v], ["GET", k], ["DEL", k], ["LPUSH", "l" + k, v], ["RPOP", "l" + k],
        ["BLPOP", "l" + k, "0.01"], ["HSET", "h" + k, "f", v], ["ZADD", "z" + k, rnd.random(), v[:10]],
        ["BZPOPMIN", "z" + k, "0.01"], ["XADD", "s", "*", "f", v[:10]], ["XTRIM", "s", "MAXLEN", "5"],
        ["EXPIRE", k, "1"], ["PEXPIRE", k, "5"], ["RENAME", k, k + "x"], ["COPY", k, "c" + k, "REPLACE"],
        ["SWAPDB", "0", "1"], ["FLUSHDB"], ["SELECT", rnd.choice(["0", "1"])], ["SCAN", "0"], ["RANDOMKEY"],
        ["DBSIZE"], ["OBJECT", "FREQ", k], ["OBJECT", "IDLETIME", k], ["KEYS", "*"],
        ["CONFIG", "SET", "masterauth", v], ["CONFIG", "GET", "*"], ["CONFIG", "SET", "hz", rnd.randint(1, 100)],
        ["CONFIG", "SET", "maxclients", rnd.randint(100, 1000)],
        ["CONFIG", "SET", "slowlog-max-len", rnd.randint(0, 5)],
        ["CONFIG", "SET", "slowlog-log-slower-than", rnd.choice(["0", "10000"])],
        ["CONFIG", "SET", "latency-tracking-info-percentiles", "50 99"], ["CONFIG", "SET", "save", "100 1"],
        ["CONFIG", "SET", "notify-keyspace-events", rnd.choice(["KEA", ""])],
        ["CONFIG", "SET", "tracking-table-max-keys", rnd.randint(0, 10)], ["CONFIG", "RESETSTAT"],
        ["CONFIG", "SET", "acl-pubsub-default", rnd.choice(["allchannels", "resetchannels"])],
        ["CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 pubsub 1mb 100kb 60"],
        ["ACL", "SETUSER", "u", "on", ">p", rnd.choice(["+@all", "+get", "-@all", "+@read"]), "~k*", "&*"],
        ["ACL", "LIST"], ["ACL", "GETUSER", "u"], ["ACL", "LOG"], ["ACL", "LOG", "RESET"],
        ["AUTH", "u", "p"], ["AUTH", "default", "x"], ["ACL", "WHOAMI"],
        ["SCRIPT", "LOAD", "return redis.call('get', KEYS[1])"], ["SCRIPT", "FLUSH"],
        ["EVALSHA", "2b2a3a46fa8cd4e8b1a1ec1d3c1f8ff1b2e6b0a0", "1", k],
        ["EVAL", "return redis.call('incr', KEYS[1])", "1", "n" + k],
        ["FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function('f', function(k) return 1 end)"],
        ["FUNCTION", "FLUSH"], ["FCALL", "f", "0"], ["FUNCTION", "LIST"], ["FUNCTION", "STATS"],
        ["CLIENT", "LIST"], ["CLIENT", "SETNAME", "c%d" % rnd.randint(0, 9)], ["CLIENT", "INFO"],
        ["CLIENT", "KILL", "ID", rnd.randint(1, 40)], ["CLIENT", "UNBLOCK", rnd.randint(1, 40)],
        ["CLIENT", "PAUSE", "5", rnd.choice(["WRITE", "ALL"])], ["CLIENT", "UNPAUSE"],
        ["CLIENT", "TRACKING", rnd.choice(["on", "off"])], ["CLIENT", "NO-EVICT", "on"],
        ["SLOWLOG", "GET"], ["SLOWLOG", "RESET"], ["LATENCY", "LATEST"], ["LATENCY", "RESET"],
        ["INFO", "all"], ["MEMORY", "STATS"], ["MEMORY", "USAGE", k], ["PUBLISH", "ch", v[:10]],
        ["PUBSUB", "CHANNELS"], ["PUBSUB", "NUMSUB", "ch"], ["WAIT", "0", "0"], ["ROLE"],
        ["MULTI"], ["EXEC"], ["DISCARD"], ["WATCH", k], ["UNWATCH"],
        ["XREAD", "BLOCK", "5", "STREAMS", "s", "$"], ["OBJECT", "ENCODING", "h" + k], ["DEBUG", "OBJECT", k],
        ["DEBUG", "DIGEST"], ["DEBUG", "SLEEP", "0"], ["COMMAND", "COUNT"], ["LASTSAVE"], ["BGSAVE"],
    ])


errors = []
kills = {}


def worker(i):
    rnd = random.Random(seed * 100 + i)
    c = Conn()
    end = time.time() + seconds
    while time.time() < end:
        cmd = gen(rnd)
        try:
            c.call(*cmd)
        except (ConnectionError, OSError) as e:
            kills[i] = kills.get(i, 0) + 1  # CLIENT KILL (of any client, this one too): connect again
            c = Conn()
        except Exception as e:
            errors.append((i, cmd, repr(e)))
            return


def subscriber():
    c = Conn()
    c.s.sendall(enc(["SUBSCRIBE", "ch"]))
    c.s.settimeout(0.5)
    end = time.time() + seconds
    while time.time() < end:
        try:
            c.s.recv(65536)
        except socket.timeout:
            pass


threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)] + [threading.Thread(target=subscriber)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ok = Conn().call("PING")
print("errors", errors, "reconnects", sum(kills.values()), "ping", ok)
