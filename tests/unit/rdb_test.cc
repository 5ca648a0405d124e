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

TEST(Rdb, LzfCompressMatchesRedis) {
  // Redis 7.0's DUMP of SET k <100 x's>: 0xC3, lengths 9 and 100, then these bytes.
  std::string out;
  ASSERT_EQ(rdb::LzfCompress(std::string(100, 'x'), 96, &out), 9u);
  EXPECT_EQ(out, std::string("\x01xx\xe0W\x00\x01xx", 9));
  // Incompressible input does not fit in fewer bytes than it has.
  std::string noise;
  uint64_t x = 88172645463325252ULL;  // xorshift64
  for (int i = 0; i < 300; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    noise.push_back(static_cast<char>(x >> 56));
  }
  std::string none;
  EXPECT_EQ(rdb::LzfCompress(noise, noise.size() - 4, &none), 0u);
  EXPECT_TRUE(none.empty());
}

TEST(Rdb, LzfCompressRoundTrips) {
  uint64_t seed = 42;
  auto next = [&seed]() { return (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  for (int round = 0; round < 300; round++) {
    size_t len = 1 + next() % 20000;
    size_t alphabet = 1 + next() % 256;
    std::string in;
    while (in.size() < len) {
      if (!in.empty() && next() % 4 == 0) {  // repeat an earlier stretch
        size_t from = next() % in.size(), n = 1 + next() % 300;
        for (size_t i = 0; i < n && in.size() < len; i++) in.push_back(in[from + i]);
      } else {
        in.push_back(static_cast<char>(next() % alphabet));
      }
    }
    for (size_t cap : {in.size() + 64, in.size(), in.size() / 2 + 1}) {
      std::string out, back;
      size_t n = rdb::LzfCompress(in, cap, &out);
      if (n == 0) continue;
      ASSERT_LE(n, cap);
      ASSERT_EQ(out.size(), n);
      ASSERT_TRUE(rdb::LzfDecompress(out, in.size(), &back));
      ASSERT_EQ(back, in);
    }
  }
}

TEST(Rdb, RawStringEncodings) {
  auto raw = [](const std::string& s) {
    std::string out;
    rdb::PutRawString(&out, s);
    return out;
  };
  EXPECT_EQ(raw("-5"), std::string("\xc0\xfb", 2));
  EXPECT_EQ(raw("12345"), std::string("\xc1\x39\x30", 3));
  EXPECT_EQ(raw("-2147483648"), std::string("\xc2\x00\x00\x00\x80", 5));
  EXPECT_EQ(raw("2147483648"), std::string("\x0a") + "2147483648");  // past 32 bits: verbatim
  EXPECT_EQ(raw("01"), std::string("\x02") + "01");                  // not canonical
  EXPECT_EQ(raw(std::string(20, 'a')), std::string("\x14") + std::string(20, 'a'));  // too short to compress
  EXPECT_EQ(static_cast<uint8_t>(raw(std::string(21, 'a'))[0]), 0xC3);
  rdb::SetCompression(false);
  EXPECT_EQ(raw(std::string(21, 'a')), std::string("\x15") + std::string(21, 'a'));
  rdb::SetCompression(true);
}

TEST(Rdb, IntsetBlobKeepsItsWidth) {
  EXPECT_EQ(rdb::IntsetBlob({3, -7, 1}, 2), std::string("\x02\0\0\0\x03\0\0\0\xf9\xff\x01\0\x03\0", 14));
  EXPECT_EQ(rdb::IntsetBlob({1}, 4), std::string("\x04\0\0\0\x01\0\0\0\x01\0\0\0", 12));
  EXPECT_EQ(rdb::IntsetBlob({1, 70000}, 2).substr(0, 4), std::string("\x04\0\0\0", 4));
}

TEST(Rdb, QuicklistSplitsNodesAsRedis) {
  std::vector<std::string> elems;
  for (int i = 0; i < 7; i++) elems.push_back("e" + std::to_string(i));
  std::string body(1, rdb::kTypeListQuicklist2);
  rdb::PutQuicklist(&body, elems, 3, 0);  // at most 3 elements a node
  EXPECT_EQ(body[1], 3);                  // nodes
  rdb::Object obj;
  ASSERT_TRUE(rdb::Reader::ParseDump(rdb::FinishDump(body), &obj).ok());
  EXPECT_EQ(obj.elements, elems);
  // Size-bound nodes (-1: 4 KiB) with inner nodes compressed at depth 1.
  elems.assign(2000, "element");
  body.assign(1, rdb::kTypeListQuicklist2);
  rdb::PutQuicklist(&body, elems, -1, 1);
  rdb::Object big;
  ASSERT_TRUE(rdb::Reader::ParseDump(rdb::FinishDump(body), &big).ok());
  EXPECT_EQ(big.elements, elems);
  EXPECT_LT(body.size(), 2000u);
}
