#include "common/string_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace kvrocks;

TEST(StringUtil, ParseInt64LikeRedis) {
  int64_t v;
  EXPECT_TRUE(ParseInt64("0", &v) && v == 0);
  EXPECT_TRUE(ParseInt64("-42", &v) && v == -42);
  EXPECT_TRUE(ParseInt64("9223372036854775807", &v) && v == INT64_MAX);
  EXPECT_TRUE(ParseInt64("-9223372036854775808", &v) && v == INT64_MIN);
  for (const char* bad : {"", "-", "+5", " 5", "5 ", "007", "-0", "1e3", "9223372036854775808", "abc", "1.0"}) {
    EXPECT_FALSE(ParseInt64(bad, &v)) << bad;
  }
}

TEST(StringUtil, TokensAreReadAsCStringsNamesAreNot) {
  using namespace std::string_literals;
  EXPECT_TRUE(TokenEquals("nx", "NX"));
  EXPECT_TRUE(TokenEquals("Nx\0junk"s, "nx"));  // Redis' strcasecmp stops at the NUL
  EXPECT_TRUE(TokenEquals("\0junk"s, ""));
  EXPECT_FALSE(TokenEquals("n\0x"s, "nx"));
  EXPECT_FALSE(TokenEquals("nxx", "nx"));
  EXPECT_FALSE(TokenEquals("n", "nx"));
  EXPECT_TRUE(TokenEquals("ab\0c"s, "AB\0d"s));
  EXPECT_FALSE(EqualsIgnoreCase("Nx\0junk"s, "nx"));  // dict lookups are binary-safe
  EXPECT_TRUE(EqualsIgnoreCase("Nx", "nX"));
  EXPECT_EQ(CString("a\0b"s), "a");
  EXPECT_EQ(CString("ab"), "ab");
  EXPECT_EQ(CString(""), "");
}

TEST(StringUtil, ParseDouble) {
  double d;
  EXPECT_TRUE(ParseDouble("1.5", &d) && d == 1.5);
  EXPECT_TRUE(ParseDouble("inf", &d) && std::isinf(d));
  EXPECT_TRUE(ParseDouble("-1e10", &d) && d == -1e10);
  EXPECT_FALSE(ParseDouble("nan", &d));
  EXPECT_FALSE(ParseDouble(" 1", &d));
  EXPECT_FALSE(ParseDouble("1x", &d));
  EXPECT_FALSE(ParseDouble("", &d));
}

TEST(StringUtil, FormatLongDoubleHuman) {
  EXPECT_EQ(FormatLongDoubleHuman(10.5L), "10.5");
  EXPECT_EQ(FormatLongDoubleHuman(3.0L), "3");
  EXPECT_EQ(FormatLongDoubleHuman(-0.0L), "0");
  EXPECT_EQ(FormatLongDoubleHuman(5.0e3L), "5000");
}

TEST(StringUtil, StringMatchGivesUpOnNestedStarsInLinearTime) {
  // Redis' CVE-2022-36021 regression: without the early stop this takes
  // exponential time (the test would not finish).
  std::string pattern;
  for (int i = 0; i < 100; i++) pattern += "a*";
  pattern += "b";
  EXPECT_FALSE(StringMatch(pattern, std::string(200, 'a')));
  EXPECT_TRUE(StringMatch(pattern, std::string(200, 'a') + "b"));
  EXPECT_TRUE(StringMatch("*a*b*c", "xxaxxbxxbxxc"));
  EXPECT_FALSE(StringMatch("*a*b*c", "xxaxxbxxbxxd"));
}

TEST(StringUtil, StringMatch) {
  EXPECT_TRUE(StringMatch("*", "anything"));
  EXPECT_TRUE(StringMatch("h?llo", "hello"));
  EXPECT_TRUE(StringMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(StringMatch("h[ae]llo", "hillo"));
  EXPECT_TRUE(StringMatch("h[^e]llo", "hallo"));
  EXPECT_TRUE(StringMatch("h[a-c]llo", "hbllo"));
  EXPECT_TRUE(StringMatch("h\\*llo", "h*llo"));
  EXPECT_FALSE(StringMatch("h\\*llo", "hello"));
  EXPECT_TRUE(StringMatch("user:*:name", "user:42:name"));
  EXPECT_TRUE(StringMatch("ABC", "abc", true));
  EXPECT_FALSE(StringMatch("a*b", "acd"));
}

TEST(StringUtil, KeySlotMatchesRedisCluster) {
  // Values from Redis Cluster's CLUSTER KEYSLOT.
  EXPECT_EQ(KeySlot("foo"), 12182);
  EXPECT_EQ(KeySlot("bar"), 5061);
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
  EXPECT_EQ(KeySlot("foo{}{bar}"), KeySlot("foo{}{bar}"));
  EXPECT_EQ(KeySlot("{}foo"), KeySlot("{}foo"));
}

TEST(StringUtil, SplitArgs) {
  std::vector<std::string> out;
  ASSERT_TRUE(SplitArgs("set a 'b c' \"d\\ne\"", &out));
  EXPECT_EQ(out, (std::vector<std::string>{"set", "a", "b c", "d\ne"}));
  EXPECT_FALSE(SplitArgs("set \"a", &out));
  EXPECT_FALSE(SplitArgs("set \"a\"b", &out));
}
