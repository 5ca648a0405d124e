#include "replication/rdb_writer.h"

#include <cstring>

#include "common/encoding.h"
#include "common/string_util.h"
#include "replication/rdb_reader.h"

namespace kvrocks::rdb {

namespace {

void PutLE(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// listpack's back-length: the entry size written so that it reads backwards.
void PutBacklen(std::string* out, uint64_t l) {
  if (l <= 127) {
    out->push_back(static_cast<char>(l));
  } else if (l < 16383) {
    out->push_back(static_cast<char>(l >> 7));
    out->push_back(static_cast<char>((l & 127) | 128));
  } else if (l < 2097151) {
    out->push_back(static_cast<char>(l >> 14));
    out->push_back(static_cast<char>(((l >> 7) & 127) | 128));
    out->push_back(static_cast<char>((l & 127) | 128));
  } else if (l < 268435455) {
    out->push_back(static_cast<char>(l >> 21));
    out->push_back(static_cast<char>(((l >> 14) & 127) | 128));
    out->push_back(static_cast<char>(((l >> 7) & 127) | 128));
    out->push_back(static_cast<char>((l & 127) | 128));
  } else {
    out->push_back(static_cast<char>(l >> 28));
    out->push_back(static_cast<char>(((l >> 21) & 127) | 128));
    out->push_back(static_cast<char>(((l >> 14) & 127) | 128));
    out->push_back(static_cast<char>(((l >> 7) & 127) | 128));
    out->push_back(static_cast<char>((l & 127) | 128));
  }
}

}  // namespace

void PutLen(std::string* out, uint64_t len) {
  if (len < (1 << 6)) {
    out->push_back(static_cast<char>(len));
  } else if (len < (1 << 14)) {
    out->push_back(static_cast<char>(((len >> 8) & 0x3F) | 0x40));
    out->push_back(static_cast<char>(len & 0xFF));
  } else if (len <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    PutBE32(out, static_cast<uint32_t>(len));
  } else {
    out->push_back(static_cast<char>(0x81));
    PutBE64(out, len);
  }
}

void PutString(std::string* out, std::string_view s) {
  PutLen(out, s.size());
  out->append(s);
}

void PutBinaryDouble(std::string* out, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutLE(out, bits, 8);
}

void PutMillis(std::string* out, uint64_t ms) { PutLE(out, ms, 8); }

void PutCrc64(std::string* out, uint64_t crc) { PutLE(out, crc, 8); }

void ListpackBuilder::AddEntry(const std::string& entry) {
  body_.append(entry);
  PutBacklen(&body_, entry.size());
  count_++;
}

void ListpackBuilder::AddInt(int64_t v) {
  std::string e;
  if (v >= 0 && v <= 127) {
    e.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    uint64_t u = static_cast<uint64_t>(v) & 0x1FFF;
    e.push_back(static_cast<char>(0xC0 | (u >> 8)));
    e.push_back(static_cast<char>(u & 0xFF));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    e.push_back(static_cast<char>(0xF1));
    PutLE(&e, static_cast<uint64_t>(v), 2);
  } else if (v >= -8388608 && v <= 8388607) {
    e.push_back(static_cast<char>(0xF2));
    PutLE(&e, static_cast<uint64_t>(v), 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    e.push_back(static_cast<char>(0xF3));
    PutLE(&e, static_cast<uint64_t>(v), 4);
  } else {
    e.push_back(static_cast<char>(0xF4));
    PutLE(&e, static_cast<uint64_t>(v), 8);
  }
  AddEntry(e);
}

void ListpackBuilder::AddString(std::string_view s) {
  int64_t v;
  if (s.size() <= 20 && ParseInt64(s, &v)) return AddInt(v);
  std::string e;
  if (s.size() < 64) {
    e.push_back(static_cast<char>(0x80 | s.size()));
  } else if (s.size() < 4096) {
    e.push_back(static_cast<char>(0xE0 | (s.size() >> 8)));
    e.push_back(static_cast<char>(s.size() & 0xFF));
  } else {
    e.push_back(static_cast<char>(0xF0));
    PutLE(&e, s.size(), 4);
  }
  e.append(s);
  AddEntry(e);
}

std::string ListpackBuilder::Finish() const {
  std::string out;
  PutLE(&out, 6 + body_.size() + 1, 4);
  PutLE(&out, count_ < 65535 ? count_ : 65535, 2);
  out.append(body_);
  out.push_back(static_cast<char>(0xFF));
  return out;
}

std::string FinishDump(std::string body, int version) {
  PutLE(&body, static_cast<uint64_t>(version), 2);
  PutCrc64(&body, Crc64(0, body.data(), body.size()));
  return body;
}

}  // namespace kvrocks::rdb
