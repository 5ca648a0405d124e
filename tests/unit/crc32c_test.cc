#include "storage/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace rocksdb::crc32c {
std::string IsFastCrc32Supported();
uint32_t Extend(uint32_t crc, const char* data, size_t n);
uint32_t Crc32cCombine(uint32_t crc1, uint32_t crc2, size_t crc2len);
}  // namespace rocksdb::crc32c

namespace kvrocks {
namespace {

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(Crc32cExtend(0, "123456789", 9), 0xe3069283u);
  EXPECT_EQ(Crc32cExtend(0, "", 0), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc32cExtend(0, zeros.data(), zeros.size()), 0x8a9136aau);
  // Extending equals checksumming the concatenation.
  EXPECT_EQ(Crc32cExtend(Crc32cExtend(0, "12345", 5), "6789", 4), 0xe3069283u);
}

TEST(Crc32c, HardwareMatchesPortableAtEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::string buf(70000, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t start = 0; start < 9; start++) {
    for (size_t n = 0; n < 300; n++) {
      ASSERT_EQ(Crc32cExtend(0x1234567u, buf.data() + start, n), Crc32cExtendPortable(0x1234567u, buf.data() + start, n));
    }
  }
  EXPECT_EQ(Crc32cExtend(0, buf.data() + 3, buf.size() - 3), Crc32cExtendPortable(0, buf.data() + 3, buf.size() - 3));
  // Around the sizes of the three-lane blocks (3 x 256 and 3 x 2048 bytes) and their sums.
  for (size_t base : {768, 6144, 6912, 13824}) {
    for (size_t n = base - 9; n < base + 9; n++) {
      ASSERT_EQ(Crc32cExtend(0xfeedu, buf.data() + 5, n), Crc32cExtendPortable(0xfeedu, buf.data() + 5, n)) << n;
    }
  }
}

TEST(Crc32c, CombineEqualsTheChecksumOfTheConcatenation) {
  std::mt19937 rng(11);
  std::string buf(9000, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t split : {0, 1, 7, 8, 100, 4096, 8999, 9000}) {
    uint32_t a = Crc32cExtend(0, buf.data(), split);
    uint32_t b = Crc32cExtend(0, buf.data() + split, buf.size() - split);
    EXPECT_EQ(Crc32cCombine(a, b, buf.size() - split), Crc32cExtend(0, buf.data(), buf.size())) << split;
  }
}

TEST(Crc32c, ReplacesRocksdbsOwn) {
  // RocksDB's own util/crc32c.o would answer "Not supported on x86": it is not in the binary.
  EXPECT_NE(rocksdb::crc32c::IsFastCrc32Supported().find("kvrocks"), std::string::npos);
  EXPECT_EQ(rocksdb::crc32c::Extend(0, "123456789", 9), 0xe3069283u);
  EXPECT_EQ(rocksdb::crc32c::Crc32cCombine(Crc32cExtend(0, "12345", 5), Crc32cExtend(0, "6789", 4), 4), 0xe3069283u);
#if defined(__x86_64__)
  EXPECT_EQ(Crc32cIsHardware(), __builtin_cpu_supports("sse4.2") != 0);
#endif
}

}  // namespace
}  // namespace kvrocks
