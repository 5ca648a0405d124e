// RDB building blocks: CRC64, listpack writing and reading, DUMP payloads.
#include <gtest/gtest.h>

#include "replication/rdb_containers.h"
#include "replication/rdb_reader.h"
#include "replication/rdb_writer.h"

using namespace kvrocks;

TEST(Rdb, Crc64MatchesRedis) {
  // Redis' crc64 test vector.
  EXPECT_EQ(rdb::Crc64(0, "123456789", 9), 0xe9c6d914c4b8d9caULL);
}

TEST(Rdb, ListpackRoundTrip) {
  rdb::ListpackBuilder lp;
  std::vector<std::string> want = {"0", "127", "128", "-1", "-4096", "4095", "32767", "-8388608", "2147483647",
                                   "9223372036854775807", "-9223372036854775808", "", "abc", std::string(63, 'x'),
                                   std::string(64, 'y'), std::string(4095, 'z'), std::string(5000, 'w'), "007", "-0"};
  for (const auto& s : want) lp.AddString(s);
  std::vector<std::string> got;
  ASSERT_TRUE(rdb::DecodeListpack(lp.Finish(), &got));
  EXPECT_EQ(got, want);
}

TEST(Rdb, DumpPayloadChecks) {
  std::string body(1, kvrocks::rdb::kTypeString);
  rdb::PutString(&body, "hello");
  std::string payload = rdb::FinishDump(body);
  rdb::Object obj;
  ASSERT_TRUE(rdb::Reader::ParseDump(payload, &obj).ok());
  EXPECT_EQ(obj.str, "hello");
  payload[3] ^= 1;  // breaks the checksum
  EXPECT_FALSE(rdb::Reader::ParseDump(payload, &obj).ok());
}

TEST(Rdb, LzfRejectsBadBackReferences) {
  std::string out;
  // A back reference before the start of the output.
  EXPECT_FALSE(rdb::LzfDecompress(std::string("\x20\x05", 2), 3, &out));
  // A literal run of 3 bytes.
  EXPECT_TRUE(rdb::LzfDecompress(std::string("\x02" "abc", 4), 3, &out));
  EXPECT_EQ(out, "abc");
}
