#include "storage/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace kvrocks {

namespace {

constexpr uint32_t kPolyReflected = 0x82f63b78;

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPolyReflected : c >> 1;
    t[i] = c;
  }
  return t;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc, const char* data, size_t n) {
  uint64_t l = crc ^ 0xffffffffu;
  for (; n >= 8; n -= 8, data += 8) {
    uint64_t word;
    std::memcpy(&word, data, sizeof word);
    l = _mm_crc32_u64(l, word);
  }
  auto l32 = static_cast<uint32_t>(l);
  for (; n > 0; n--, data++) l32 = _mm_crc32_u8(l32, static_cast<uint8_t>(*data));
  return l32 ^ 0xffffffffu;
}

bool DetectSse42() {
  __builtin_cpu_init();  // this may run before libgcc's own initialization
  return __builtin_cpu_supports("sse4.2");
}

const bool kHasSse42 = DetectSse42();
#else
const bool kHasSse42 = false;
#endif

}  // namespace

uint32_t Crc32cExtendPortable(uint32_t crc, const char* data, size_t n) {
  uint32_t l = crc ^ 0xffffffffu;
  for (size_t i = 0; i < n; i++) l = kTable[(l ^ static_cast<uint8_t>(data[i])) & 0xff] ^ (l >> 8);
  return l ^ 0xffffffffu;
}

uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n) {
#if defined(__x86_64__)
  if (kHasSse42) return ExtendSse42(crc, data, n);
#endif
  return Crc32cExtendPortable(crc, data, n);
}

bool Crc32cIsHardware() { return kHasSse42; }

}  // namespace kvrocks

// Interposes librocksdb's exported function of the same signature (see the
// header). CMakeLists.txt keeps it in the binaries and in their dynamic symbol
// table.
namespace rocksdb::crc32c {
uint32_t Extend(uint32_t crc, const char* data, size_t n);
uint32_t Extend(uint32_t crc, const char* data, size_t n) { return kvrocks::Crc32cExtend(crc, data, n); }
}  // namespace rocksdb::crc32c
