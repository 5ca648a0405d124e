#include "storage/crc32c.h"

#include <dlfcn.h>
#include <link.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace rocksdb::crc32c {
uint32_t Extend(uint32_t crc, const char* data, size_t n);
}

namespace kvrocks {
namespace {

using ExtendFn = uint32_t (*)(uint32_t, const char*, size_t);
constexpr const char* kExtendSymbol = "_ZN7rocksdb6crc32c6ExtendEjPKcm";

int FindRocksdb(dl_phdr_info* info, size_t, void* out) {
  if (std::string(info->dlpi_name).find("librocksdb") == std::string::npos) return 0;
  *static_cast<std::string*>(out) = info->dlpi_name;
  return 1;
}

// librocksdb's own definition, looked up in the loaded library itself.
ExtendFn LibraryExtend() {
  std::string path;
  dl_iterate_phdr(FindRocksdb, &path);
  void* lib = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return nullptr;
  return reinterpret_cast<ExtendFn>(dlsym(lib, kExtendSymbol));
}

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
}

TEST(Crc32c, MatchesLibrocksdbAndReplacesIt) {
  ExtendFn library = LibraryExtend();
  ASSERT_NE(library, nullptr) << "librocksdb is not loaded or has no " << kExtendSymbol;
  std::mt19937 rng(11);
  std::string buf(9000, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t n : {0, 1, 7, 8, 9, 100, 4096, 8192, 9000}) {
    EXPECT_EQ(Crc32cExtend(0, buf.data(), n), library(0, buf.data(), n)) << n;
    EXPECT_EQ(Crc32cExtend(0xdeadbeef, buf.data(), n), library(0xdeadbeef, buf.data(), n)) << n;
  }
  // The global lookup, which binds librocksdb's calls, finds this binary's definition.
  auto global = reinterpret_cast<ExtendFn>(dlsym(RTLD_DEFAULT, kExtendSymbol));
  EXPECT_EQ(global, &rocksdb::crc32c::Extend);
  EXPECT_NE(global, library);
#if defined(__x86_64__)
  EXPECT_EQ(Crc32cIsHardware(), __builtin_cpu_supports("sse4.2") != 0);
#endif
}

}  // namespace
}  // namespace kvrocks
