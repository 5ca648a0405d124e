// Fixed-width integer encoding. Integers that appear in RocksDB keys are
// big-endian so that byte order equals numeric order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kvrocks {

inline void PutFixed8(std::string* dst, uint8_t v) { dst->push_back(static_cast<char>(v)); }

inline void PutBE16(std::string* dst, uint16_t v) {
  char b[2] = {static_cast<char>(v >> 8), static_cast<char>(v)};
  dst->append(b, 2);
}

inline void PutBE32(std::string* dst, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; i++) b[i] = static_cast<char>(v >> (24 - 8 * i));
  dst->append(b, 4);
}

inline void PutBE64(std::string* dst, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; i++) b[i] = static_cast<char>(v >> (56 - 8 * i));
  dst->append(b, 8);
}

inline uint16_t DecodeBE16(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  return static_cast<uint16_t>((u[0] << 8) | u[1]);
}

inline uint32_t DecodeBE32(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  return (uint32_t(u[0]) << 24) | (uint32_t(u[1]) << 16) | (uint32_t(u[2]) << 8) | uint32_t(u[3]);
}

inline uint64_t DecodeBE64(const char* p) {
  uint64_t v = 0;
  auto u = reinterpret_cast<const uint8_t*>(p);
  for (int i = 0; i < 8; i++) v = (v << 8) | u[i];
  return v;
}

// LEB128: 7 bits per byte, low bits first, the high bit set on all but the
// last byte; 1 byte below 128, at most 10.
inline void PutVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

// Reads fixed-width fields from the front of a byte range; each Get* fails
// (returns false) rather than reading past the end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool GetU8(uint8_t* v) {
    if (in_.size() < 1) return false;
    *v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool GetBE16(uint16_t* v) {
    if (in_.size() < 2) return false;
    *v = DecodeBE16(in_.data());
    in_.remove_prefix(2);
    return true;
  }
  bool GetBE32(uint32_t* v) {
    if (in_.size() < 4) return false;
    *v = DecodeBE32(in_.data());
    in_.remove_prefix(4);
    return true;
  }
  bool GetBE64(uint64_t* v) {
    if (in_.size() < 8) return false;
    *v = DecodeBE64(in_.data());
    in_.remove_prefix(8);
    return true;
  }
  bool GetVarint64(uint64_t* v) {
    uint64_t r = 0;
    for (size_t i = 0; i < in_.size() && i < 10; i++) {
      auto b = static_cast<uint8_t>(in_[i]);
      r |= uint64_t(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) {
        *v = r;
        in_.remove_prefix(i + 1);
        return true;
      }
    }
    return false;
  }
  bool GetBytes(size_t n, std::string_view* v) {
    if (in_.size() < n) return false;
    *v = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

}  // namespace kvrocks
