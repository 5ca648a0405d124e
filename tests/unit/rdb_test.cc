// RDB building blocks: CRC64, listpack writing and reading, DUMP payloads.
#include <gtest/gtest.h>

#include <map>

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

TEST(Rdb, ListpackChecksCountAndBackLengths) {
  rdb::ListpackBuilder lp;
  lp.AddString("a");
  lp.AddString(std::string(200, 'b'));  // a two-byte back-length
  const std::string good = lp.Finish();
  std::vector<std::string> got;
  ASSERT_TRUE(rdb::DecodeListpack(good, &got));
  std::string bad_count = good;
  bad_count[4] = 3;  // says three entries
  EXPECT_FALSE(rdb::DecodeListpack(bad_count, &got));
  std::string unknown_count = good;
  unknown_count[4] = unknown_count[5] = '\xff';  // 65535: count not kept, as Redis allows
  EXPECT_TRUE(rdb::DecodeListpack(unknown_count, &got));
  std::string bad_backlen = good;
  bad_backlen[6 + 2] ^= 1;  // the first entry ("a": encoding byte, "a", back-length)
  EXPECT_FALSE(rdb::DecodeListpack(bad_backlen, &got));
}

TEST(Rdb, ZiplistChecksPrevlenTailAndCount) {
  // The ziplist of Redis' corrupt-dump tests, intact: "a\0", "b\0"; zlbytes 19, zltail 14, zllen 2.
  const std::string good("\x13\x00\x00\x00\x0e\x00\x00\x00\x02\x00"
                         "\x00\x02" "a\x00" "\x04\x02" "b\x00" "\xff", 19);
  std::vector<std::string> got;
  ASSERT_TRUE(rdb::DecodeZiplist(good, &got));
  EXPECT_EQ(got, (std::vector<std::string>{std::string("a\0", 2), std::string("b\0", 2)}));
  std::string bad_prevlen = good;
  bad_prevlen[14] = 0x0e;  // the second entry's prevlen (the first entry is 4 bytes)
  EXPECT_FALSE(rdb::DecodeZiplist(bad_prevlen, &got));
  std::string bad_count = good;
  bad_count[8] = 3;
  EXPECT_FALSE(rdb::DecodeZiplist(bad_count, &got));
  std::string bad_tail = good;
  bad_tail[4] = 10;  // zltail at the first entry
  EXPECT_FALSE(rdb::DecodeZiplist(bad_tail, &got));
}

TEST(Rdb, CollectionsWithAMemberTwiceAreCorrupt) {
  std::string body(1, kvrocks::rdb::kTypeSet);
  rdb::PutLen(&body, 2);
  rdb::PutString(&body, "m");
  rdb::PutString(&body, "m");
  rdb::Object obj;
  EXPECT_FALSE(rdb::Reader::ParseDump(rdb::FinishDump(body), &obj).ok());
}

TEST(Rdb, Crc64EightBytesAtATimeMatchesByteWise) {
  // The same CRC whatever the length and alignment, and split anywhere.
  std::string data;
  for (int i = 0; i < 1000; i++) data.push_back(static_cast<char>(i * 131 + 7));
  uint64_t bytewise = 0;
  for (char c : data) bytewise = rdb::Crc64(bytewise, &c, 1);
  EXPECT_EQ(rdb::Crc64(0, data.data(), data.size()), bytewise);
  for (size_t split : {1, 7, 8, 9, 500, 999}) {
    uint64_t c = rdb::Crc64(0, data.data(), split);
    EXPECT_EQ(rdb::Crc64(c, data.data() + split, data.size() - split), bytewise) << split;
  }
  EXPECT_EQ(rdb::Crc64(0, data.data() + 3, 997), rdb::Crc64(0, data.substr(3).data(), 997));
}

TEST(Rdb, IdleOpcodeReachesTheNextKeyOnly) {
  std::string rdb = "REDIS0010";
  rdb.push_back(static_cast<char>(rdb::kOpIdle));
  rdb::PutLen(&rdb, 1234);
  rdb.push_back(static_cast<char>(rdb::kTypeString));
  rdb::PutString(&rdb, "a");
  rdb::PutString(&rdb, "v");
  rdb.push_back(static_cast<char>(rdb::kTypeString));
  rdb::PutString(&rdb, "b");
  rdb::PutString(&rdb, "w");
  rdb.push_back(static_cast<char>(rdb::kOpEof));
  rdb.append(8, '\0');  // no checksum
  struct Idles : rdb::Handler {
    std::map<std::string, int64_t> idle;
    Status OnSelectDb(uint64_t) override { return Status::OK(); }
    Status OnKey(std::string key, rdb::Object obj, int64_t) override {
      idle[key] = obj.lru_idle_s;
      return Status::OK();
    }
  } h;
  rdb::StringSource src(rdb);
  ASSERT_TRUE(rdb::Reader(&src).ReadRdb(&h).ok());
  EXPECT_EQ(h.idle["a"], 1234);
  EXPECT_EQ(h.idle["b"], -1);
}
