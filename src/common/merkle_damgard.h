// The message padding and hex output shared by SHA-1 and SHA-256: 64-byte
// blocks, a 0x80 byte, zeros, and the message length in bits (big-endian).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kvrocks {

// Calls block(pointer to 64 bytes) for every block of the padded message.
template <typename BlockFn>
void ForEachPaddedBlock(std::string_view data, BlockFn block) {
  size_t full = data.size() / 64 * 64;
  for (size_t i = 0; i < full; i += 64) block(reinterpret_cast<const unsigned char*>(data.data()) + i);
  unsigned char tail[128] = {0};
  size_t rest = data.size() - full;
  memcpy(tail, data.data() + full, rest);
  tail[rest] = 0x80;
  size_t len = rest + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; i++) tail[len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  for (size_t i = 0; i < len; i += 64) block(tail + i);
}

// The state words as lowercase hex, most significant nibble first.
inline std::string HexWords(const uint32_t* words, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 8);
  for (size_t w = 0; w < n; w++) {
    for (int s = 28; s >= 0; s -= 4) out.push_back(kHex[(words[w] >> s) & 0xf]);
  }
  return out;
}

}  // namespace kvrocks
