#include "config/config.h"

#include <gtest/gtest.h>

using namespace kvrocks;

TEST(Config, FormatMemoryAsRedisRewritesIt) {
  EXPECT_EQ(FormatMemory(0), "0");
  EXPECT_EQ(FormatMemory(1000), "1000");
  EXPECT_EQ(FormatMemory(1024), "1kb");
  EXPECT_EQ(FormatMemory(1536), "1536");
  EXPECT_EQ(FormatMemory(3 * 1024 * 512), "1536kb");
  EXPECT_EQ(FormatMemory(512LL << 20), "512mb");
  EXPECT_EQ(FormatMemory(1LL << 30), "1gb");
  EXPECT_EQ(FormatMemory(3LL << 29), "1536mb");
}

TEST(Config, FormattedMemoryParsesBack) {
  for (int64_t n : {0LL, 1LL, 1000LL, 1024LL, 4096LL, 12345LL, 64LL << 20, 5LL << 30, (1LL << 40) + 1024}) {
    int64_t back = -1;
    ASSERT_TRUE(ParseMemory(FormatMemory(n), &back)) << n;
    EXPECT_EQ(back, n);
  }
}
