"""A small RDB writer for tests: produces files with the RDB 11/12 object types,
opcodes and module values that the Redis 7.0 fixtures do not contain."""
import struct


def crc64(data):
    poly = 0x95AC9329AC4BC9B5
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    crc = 0
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def length(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n <= 0xFFFFFFFF:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def string(s):
    s = s if isinstance(s, bytes) else str(s).encode()
    return length(len(s)) + s


def millis(ms):
    return struct.pack("<Q", ms)


def _backlen(n):
    if n <= 127:
        return bytes([n])
    if n < 16383:
        return bytes([n >> 7, (n & 127) | 128])
    return bytes([n >> 14, ((n >> 7) & 127) | 128, (n & 127) | 128])


def listpack(items):
    body = b""
    for it in items:
        if isinstance(it, int) and 0 <= it <= 127:
            e = bytes([it])
        elif isinstance(it, int):
            e = b"\xf4" + struct.pack("<q", it)
        else:
            s = it if isinstance(it, bytes) else it.encode()
            assert len(s) < 64
            e = bytes([0x80 | len(s)]) + s
        body += e + _backlen(len(e))
    return struct.pack("<IH", 6 + len(body) + 1, len(items)) + body + b"\xff"


def module_id(name, encver=1):
    charset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    mid = 0
    for ch in name:
        mid = (mid << 6) | charset.index(ch)
    return (mid << 10) | encver


def rdb(version, body):
    data = b"REDIS%04d" % version + body + b"\xff"
    return data + struct.pack("<Q", crc64(data))


def key(type_byte, name, value):
    return bytes([type_byte]) + string(name) + value
