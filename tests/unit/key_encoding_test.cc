#include "storage/key_encoding.h"

#include <gtest/gtest.h>

#include "common/string_util.h"

using namespace kvrocks;

TEST(KeyEncoding, MetaKeyHasDbAndSlotPrefix) {
  std::string k = EncodeMetaKey(3, "foo");
  ASSERT_EQ(k.size(), 6u);
  EXPECT_EQ(static_cast<uint8_t>(k[0]), 3);
  EXPECT_EQ((static_cast<uint8_t>(k[1]) << 8) | static_cast<uint8_t>(k[2]), KeySlot("foo"));
  uint8_t db;
  std::string_view user;
  ASSERT_TRUE(DecodeMetaKey(k, &db, &user));
  EXPECT_EQ(db, 3);
  EXPECT_EQ(user, "foo");
}

TEST(KeyEncoding, DatabasesDoNotInterleave) {
  EXPECT_LT(EncodeMetaKey(1, "\xff\xff\xff"), EncodeMetaKey(2, ""));
  EXPECT_LT(MetaDbPrefix(1), EncodeMetaKey(1, ""));
}

TEST(KeyEncoding, SubkeyRoundTrip) {
  std::string k = EncodeSubkeyPrefix(7, std::string("a\0b", 3), 0x0102030405060708ULL) + "field";
  uint8_t db;
  std::string_view user;
  uint64_t version;
  ASSERT_TRUE(DecodeSubkeyPrefix(k, &db, &user, &version));
  EXPECT_EQ(db, 7);
  EXPECT_EQ(user, std::string_view("a\0b", 3));
  EXPECT_EQ(version, 0x0102030405060708ULL);
  EXPECT_FALSE(DecodeSubkeyPrefix(k.substr(0, 10), &db, &user, &version));
}

TEST(KeyEncoding, ExpireKeysSortByTime) {
  EXPECT_LT(EncodeExpireKey(0, 999, "zzz"), EncodeExpireKey(0, 1000, "aaa"));
  EXPECT_LT(EncodeExpireKey(0, UINT64_MAX, "a"), EncodeExpireKey(1, 0, "a"));
  uint8_t db;
  uint64_t e;
  std::string_view user;
  ASSERT_TRUE(DecodeExpireKey(EncodeExpireKey(5, 123456789, "key"), &db, &e, &user));
  EXPECT_EQ(db, 5);
  EXPECT_EQ(e, 123456789u);
  EXPECT_EQ(user, "key");
}

TEST(KeyEncoding, MetadataRoundTrip) {
  Metadata m;
  m.type = RedisType::kHash;
  m.expire_ms = 1700000000000ULL;
  m.version = 42;
  m.size = 10;
  m.payload = "extra";
  Metadata d;
  ASSERT_TRUE(d.Decode(m.Encode()).ok());
  EXPECT_EQ(d.type, RedisType::kHash);
  EXPECT_EQ(d.expire_ms, m.expire_ms);
  EXPECT_EQ(d.version, 42u);
  EXPECT_EQ(d.size, 10u);
  EXPECT_EQ(d.payload, "extra");
  EXPECT_TRUE(d.Expired(1700000000000ULL));
  EXPECT_FALSE(d.Expired(1699999999999ULL));
}

TEST(KeyEncoding, StringValue) {
  std::string raw = EncodeStringValue("hello", 77);
  RedisType t;
  uint64_t e;
  ASSERT_TRUE(PeekMetadata(raw, &t, &e).ok());
  EXPECT_EQ(t, RedisType::kString);
  EXPECT_EQ(e, 77u);
  Metadata m;
  ASSERT_TRUE(m.Decode(raw).ok());
  EXPECT_EQ(m.payload, "hello");
  EXPECT_FALSE(m.Decode("x").ok());
}

TEST(KeyEncoding, StringEncodingFlagsKeepTypeAndValue) {
  for (uint8_t flag : {kRawEncodingFlag, kNotIntEncodingFlag}) {
    std::string raw = EncodeStringValue("100", 5, flag);
    EXPECT_EQ(static_cast<uint8_t>(raw[0]) & flag, flag);
    RedisType t;
    uint64_t e;
    ASSERT_TRUE(PeekMetadata(raw, &t, &e).ok());
    EXPECT_EQ(t, RedisType::kString);
    EXPECT_EQ(e, 5u);
    Metadata m;
    ASSERT_TRUE(m.Decode(raw).ok());
    EXPECT_FALSE(m.out_of_line);
    EXPECT_EQ(m.payload, "100");
  }
}

TEST(KeyEncoding, OutOfLineStringsNameTheirSubkeysOwner) {
  for (bool fragmented : {false, true}) {
    std::string raw = EncodeStringRef(9, 5000, 123, fragmented, "old-name");
    Metadata m;
    ASSERT_TRUE(m.Decode(raw).ok());
    EXPECT_TRUE(m.out_of_line);
    EXPECT_EQ(m.fragmented, fragmented);
    EXPECT_EQ(m.version, 9u);
    EXPECT_EQ(m.size, 5000u);
    EXPECT_EQ(m.expire_ms, 123u);
    EXPECT_EQ(m.owner, "old-name");
    EXPECT_TRUE(m.payload.empty());
    EXPECT_EQ(m.SubkeyName("new-name"), "old-name");
    EXPECT_EQ(m.Encode(), raw);
    uint64_t version = 0;
    ASSERT_TRUE(HasMovedSubkeys(raw, &version));
    EXPECT_EQ(version, 9u);
    EXPECT_FALSE(HasMovedSubkeys(EncodeStringRef(9, 5000, 123, fragmented), &version));
  }
  // In an inline string the owner bit is kNotIntEncodingFlag: no subkeys, no owner.
  std::string raw = EncodeStringValue(std::string(40, '7'), 0, kNotIntEncodingFlag);
  uint64_t version;
  EXPECT_FALSE(HasMovedSubkeys(raw, &version));
  Metadata m;
  ASSERT_TRUE(m.Decode(raw).ok());
  EXPECT_TRUE(m.owner.empty());
  EXPECT_EQ(m.payload, std::string(40, '7'));
}

TEST(KeyEncoding, PrefixSuccessorBoundsEveryKeyWithThePrefix) {
  EXPECT_EQ(PrefixSuccessor("ab"), "ac");
  EXPECT_EQ(PrefixSuccessor(std::string("a\xff\xff", 3)), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("\xff\xff", 2)), "");
  std::string prefix = EncodeSubkeyPrefix(3, "k", 0x00000000000000ffULL);
  std::string end = PrefixSuccessor(prefix);
  EXPECT_LT(prefix + std::string(100, '\xff'), end);
  EXPECT_GT(end, prefix);
  EXPECT_LE(end, EncodeSubkeyPrefix(3, "k", 0x100));  // no key of the next version sorts below it
}
