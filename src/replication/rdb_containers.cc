#include "replication/rdb_containers.h"

#include <cstring>

namespace kvrocks::rdb {

namespace {

uint64_t LoadLE(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

int64_t SignExtend(uint64_t v, int bits) {
  if (bits < 64 && (v >> (bits - 1)) & 1) v |= ~0ULL << bits;
  return static_cast<int64_t>(v);
}

}  // namespace

bool DecodeZiplist(std::string_view blob, std::vector<std::string>* out) {
  // zlbytes(4) zltail(4) zllen(2) entries... 0xFF, checked as Redis' deep
  // ziplistValidateIntegrity: every entry's prevlen is the previous entry's
  // size, zltail points at the last entry, zllen counts the entries.
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t n = blob.size();
  if (n < 11 || LoadLE(p, 4) != n || p[n - 1] != 0xFF) return false;
  const uint64_t tail = LoadLE(p + 4, 4), header_count = LoadLE(p + 8, 2);
  if (tail > n - 1) return false;
  size_t pos = 10, prev_size = 0, last_start = 0;
  uint64_t count = 0;
  while (true) {
    if (pos >= n) return false;
    if (p[pos] == 0xFF) {
      if (pos != n - 1 || (count > 0 && last_start != tail)) return false;
      return header_count == 0xFFFF || count == header_count;
    }
    const size_t start = pos;
    size_t prevlen;
    if (p[pos] == 0xFE) {
      if (pos + 5 > n) return false;
      prevlen = LoadLE(p + pos + 1, 4);
      pos += 5;
    } else {
      prevlen = p[pos];
      pos += 1;
    }
    if (prevlen != prev_size || pos >= n) return false;
    unsigned char enc = p[pos];
    size_t len = 0;
    bool is_string = true;
    if ((enc & 0xC0) == 0x00) {
      len = enc & 0x3F;
      pos += 1;
    } else if ((enc & 0xC0) == 0x40) {
      if (pos + 2 > n) return false;
      len = ((enc & 0x3F) << 8) | p[pos + 1];
      pos += 2;
    } else if (enc == 0x80) {
      if (pos + 5 > n) return false;
      len = (static_cast<size_t>(p[pos + 1]) << 24) | (p[pos + 2] << 16) | (p[pos + 3] << 8) | p[pos + 4];
      pos += 5;
    } else {
      is_string = false;
      pos += 1;
      int bytes;
      switch (enc) {
        case 0xC0: bytes = 2; break;
        case 0xD0: bytes = 4; break;
        case 0xE0: bytes = 8; break;
        case 0xF0: bytes = 3; break;
        case 0xFE: bytes = 1; break;
        default:
          if (enc < 0xF1 || enc > 0xFD) return false;
          bytes = 0;  // a small integer in the encoding byte itself
      }
      if (pos + static_cast<size_t>(bytes) > n) return false;
      if (bytes == 0) {
        out->push_back(std::to_string((enc & 0x0F) - 1));
      } else {
        out->push_back(std::to_string(SignExtend(LoadLE(p + pos, bytes), bytes * 8)));
      }
      pos += static_cast<size_t>(bytes);
    }
    if (is_string) {
      if (len > n - pos) return false;
      out->emplace_back(blob.substr(pos, len));
      pos += len;
    }
    prev_size = pos - start;
    last_start = start;
    count++;
  }
}

bool DecodeListpack(std::string_view blob, std::vector<std::string>* out) {
  // total bytes(4) count(2) entries... 0xFF, each entry followed by its size
  // written backwards; checked as Redis' deep lpValidateIntegrity.
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t n = blob.size();
  if (n < 7 || LoadLE(p, 4) != n) return false;
  const uint64_t header_count = LoadLE(p + 4, 2);
  uint64_t count = 0;
  size_t pos = 6;
  while (true) {
    if (pos >= n) return false;
    unsigned char enc = p[pos];
    if (enc == 0xFF) return pos == n - 1 && (header_count == 0xFFFF || count == header_count);
    size_t entry;  // encoding + data
    if ((enc & 0x80) == 0) {
      out->push_back(std::to_string(enc & 0x7F));
      entry = 1;
    } else if ((enc & 0xC0) == 0x80) {
      size_t len = enc & 0x3F;
      if (pos + 1 + len > n) return false;
      out->emplace_back(blob.substr(pos + 1, len));
      entry = 1 + len;
    } else if ((enc & 0xE0) == 0xC0) {
      if (pos + 2 > n) return false;
      out->push_back(std::to_string(SignExtend(((enc & 0x1F) << 8) | p[pos + 1], 13)));
      entry = 2;
    } else if ((enc & 0xF0) == 0xE0) {
      if (pos + 2 > n) return false;
      size_t len = ((enc & 0x0F) << 8) | p[pos + 1];
      if (pos + 2 + len > n) return false;
      out->emplace_back(blob.substr(pos + 2, len));
      entry = 2 + len;
    } else if (enc == 0xF0) {
      if (pos + 5 > n) return false;
      size_t len = LoadLE(p + pos + 1, 4);
      if (len > n - pos - 5) return false;
      out->emplace_back(blob.substr(pos + 5, len));
      entry = 5 + len;
    } else {
      int bytes;
      switch (enc) {
        case 0xF1: bytes = 2; break;
        case 0xF2: bytes = 3; break;
        case 0xF3: bytes = 4; break;
        case 0xF4: bytes = 8; break;
        default: return false;
      }
      if (pos + 1 + bytes > n) return false;
      out->push_back(std::to_string(SignExtend(LoadLE(p + pos + 1, bytes), bytes * 8)));
      entry = 1 + bytes;
    }
    size_t backlen = entry <= 127 ? 1 : entry < 16383 ? 2 : entry < 2097151 ? 3 : entry < 268435455 ? 4 : 5;
    if (pos + entry + backlen > n) return false;
    // The back-length, read from its last byte backwards (7 bits per byte).
    uint64_t back = 0;
    for (size_t i = 0; i < backlen; i++) {
      const unsigned char b = p[pos + entry + backlen - 1 - i];
      back |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
      if (((b & 0x80) != 0) != (i + 1 < backlen)) return false;
    }
    if (back != entry) return false;
    pos += entry + backlen;
    count++;
  }
}

bool DecodeZipmap(std::string_view blob, std::vector<std::string>* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t n = blob.size();
  size_t pos = 1;  // zmlen
  auto read_len = [&](size_t* len) {
    if (pos >= n) return false;
    if (p[pos] < 254) {
      *len = p[pos];
      pos += 1;
      return true;
    }
    if (p[pos] == 254) {
      if (pos + 5 > n) return false;
      *len = LoadLE(p + pos + 1, 4);
      pos += 5;
      return true;
    }
    return false;
  };
  while (true) {
    if (pos >= n) return false;
    if (p[pos] == 255) return pos == n - 1;
    size_t klen, vlen;
    if (!read_len(&klen) || klen > n - pos) return false;
    out->emplace_back(blob.substr(pos, klen));
    pos += klen;
    if (!read_len(&vlen) || pos >= n) return false;
    size_t free = p[pos++];
    if (vlen > n - pos || free > n - pos - vlen) return false;
    out->emplace_back(blob.substr(pos, vlen));
    pos += vlen + free;
  }
}

bool DecodeIntset(std::string_view blob, std::vector<std::string>* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(blob.data());
  if (blob.size() < 8) return false;
  uint64_t width = LoadLE(p, 4), count = LoadLE(p + 4, 4);
  if (width != 2 && width != 4 && width != 8) return false;
  if (blob.size() != 8 + width * count) return false;
  for (uint64_t i = 0; i < count; i++) {
    out->push_back(std::to_string(SignExtend(LoadLE(p + 8 + i * width, static_cast<int>(width)),
                                             static_cast<int>(width * 8))));
  }
  return true;
}

bool LzfDecompress(std::string_view in, size_t out_len, std::string* out) {
  out->assign(out_len, '\0');
  const auto* ip = reinterpret_cast<const unsigned char*>(in.data());
  const unsigned char* in_end = ip + in.size();
  size_t op = 0;
  while (ip < in_end) {
    unsigned ctrl = *ip++;
    if (ctrl < 32) {  // a literal run of ctrl + 1 bytes
      size_t len = ctrl + 1;
      if (op + len > out_len || ip + len > in_end) return false;
      std::memcpy(out->data() + op, ip, len);
      op += len;
      ip += len;
    } else {  // a back reference
      size_t len = ctrl >> 5;
      if (len == 7) {
        if (ip >= in_end) return false;
        len += *ip++;
      }
      if (ip >= in_end) return false;
      size_t back = ((ctrl & 0x1F) << 8) + *ip++ + 1;
      len += 2;
      if (back > op || op + len > out_len) return false;
      for (size_t i = 0; i < len; i++, op++) (*out)[op] = (*out)[op - back];
    }
  }
  return op == out_len;
}

}  // namespace kvrocks::rdb
