#include "storage/crc32c.h"

#include <array>
#include <cstring>
#include <string>

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

// Product of two polynomials modulo the CRC polynomial, in the reflected bit
// order (bit 31 is x^0), as zlib's crc32_combine computes it.
constexpr uint32_t MultiplyModPoly(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPolyReflected : b >> 1;
  }
  return product;
}

// kByteShifts[k] = x^(8 * 2^k) modulo the polynomial: appending 2^k zero bytes.
constexpr std::array<uint32_t, 64> MakeByteShifts() {
  std::array<uint32_t, 64> t{};
  t[0] = 1u << 23;  // x^8
  for (size_t k = 1; k < t.size(); k++) t[k] = MultiplyModPoly(t[k - 1], t[k - 1]);
  return t;
}

constexpr std::array<uint32_t, 64> kByteShifts = MakeByteShifts();

// Appending n zero bytes to a CRC state multiplies it by x^(8n), a linear map
// of its 32 bits: four tables of 256 entries, one per byte of the state.
using ShiftTable = std::array<std::array<uint32_t, 256>, 4>;

constexpr ShiftTable MakeShiftTable(uint32_t x_pow) {
  ShiftTable t{};
  for (uint32_t k = 0; k < 4; k++) {
    for (uint32_t v = 0; v < 256; v++) t[k][v] = MultiplyModPoly(x_pow, v << (8 * k));
  }
  return t;
}

inline uint32_t Shift(const ShiftTable& t, uint32_t crc) {
  return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

// The crc32 instruction takes 3 cycles but can start every cycle: three
// independent streams over adjacent lanes run three times as fast as one, and
// are joined by shifting each partial CRC past the lanes after it.
constexpr size_t kLongLane = 2048, kShortLane = 256;
constexpr ShiftTable kLongShift = MakeShiftTable(kByteShifts[11]);   // x^(8 * 2048)
constexpr ShiftTable kShortShift = MakeShiftTable(kByteShifts[8]);   // x^(8 * 256)
static_assert(kLongLane == size_t{1} << 11 && kShortLane == size_t{1} << 8);

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) inline uint64_t Crc32Word(uint64_t l, const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return _mm_crc32_u64(l, word);
}

// Runs blocks of three lanes of `lane` bytes while n holds one.
__attribute__((target("sse4.2"))) uint64_t ThreeLanes(uint64_t l, const char** data, size_t* n, size_t lane,
                                                      const ShiftTable& shift) {
  for (; *n >= 3 * lane; *n -= 3 * lane, *data += 3 * lane) {
    const char* p = *data;
    uint64_t l1 = 0, l2 = 0;
    for (size_t i = 0; i < lane; i += 8) {
      l = Crc32Word(l, p + i);
      l1 = Crc32Word(l1, p + lane + i);
      l2 = Crc32Word(l2, p + 2 * lane + i);
    }
    l = Shift(shift, Shift(shift, static_cast<uint32_t>(l)) ^ static_cast<uint32_t>(l1)) ^ static_cast<uint32_t>(l2);
  }
  return l;
}

__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc, const char* data, size_t n) {
  uint64_t l = crc ^ 0xffffffffu;
  l = ThreeLanes(l, &data, &n, kLongLane, kLongShift);
  l = ThreeLanes(l, &data, &n, kShortLane, kShortShift);
  for (; n >= 8; n -= 8, data += 8) l = Crc32Word(l, data);
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

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, size_t len_b) {
  // The pre- and post-inversions cancel out: CRC(A B) = CRC(A) * x^(8|B|) + CRC(B).
  uint32_t shifted = crc_a;
  for (size_t k = 0; len_b != 0; len_b >>= 1, k++) {
    if (len_b & 1) shifted = MultiplyModPoly(kByteShifts[k], shifted);
  }
  return shifted ^ crc_b;
}

}  // namespace kvrocks

// These three are all that librocksdb's util/crc32c.o defines. With them in the
// binary, the linker never takes that object out of librocksdb.a, and every
// RocksDB checksum is computed here (see the header).
namespace rocksdb::crc32c {
std::string IsFastCrc32Supported();
uint32_t Extend(uint32_t crc, const char* data, size_t n);
uint32_t Crc32cCombine(uint32_t crc1, uint32_t crc2, size_t crc2len);

std::string IsFastCrc32Supported() {
  return kvrocks::Crc32cIsHardware() ? "Supported on x86 (kvrocks' crc32 instruction)"
                                     : "Not supported (kvrocks' table-driven CRC32C)";
}
uint32_t Extend(uint32_t crc, const char* data, size_t n) { return kvrocks::Crc32cExtend(crc, data, n); }
uint32_t Crc32cCombine(uint32_t crc1, uint32_t crc2, size_t crc2len) {
  return kvrocks::Crc32cCombine(crc1, crc2, crc2len);
}
}  // namespace rocksdb::crc32c
