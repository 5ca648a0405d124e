// Streams under steady churn: exact trimming and the group's PEL walks start
// at the first live entry (pending id), so the tombstones that earlier trims
// and acknowledgements leave (an LSM keeps them until compaction) are stepped
// over a bounded number of times, however many came before. RocksDB's perf
// context counts the tombstones each command skips.
#include <gtest/gtest.h>

#include "temp_storage.h"

#include <rocksdb/perf_context.h>

#include <algorithm>
#include <string>
#include <vector>

#include "types/redis_stream.h"

using namespace kvrocks;

namespace {

class RedisStreamTest : public TempStorageTest {
 protected:
  // Runs fn on a stream of a fresh context, commits, and returns the tombstones it skipped.
  template <typename Fn>
  uint64_t Skipped(Fn fn) {
    rocksdb::get_perf_context()->Reset();
    WithDb([&](Database& db) {
      RedisStream stream(&db);
      fn(stream);
    });
    return rocksdb::get_perf_context()->internal_delete_skipped_count;
  }
  void SetUp() override {
    TempStorageTest::SetUp();
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  }
  void TearDown() override {
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    TempStorageTest::TearDown();
  }
  static RedisStream::AddArgs AddAt(uint64_t ms, StreamTrim trim = {}) {
    RedisStream::AddArgs args;
    args.id_given = true;
    args.id = StreamID{ms, 0};
    args.trim = trim;
    return args;
  }
};

// XADD MAXLEN 100 (exact) 3000 times: each trim deletes the oldest entry of the
// head node, whose earlier entries are already tombstones.
TEST_F(RedisStreamTest, ExactTrimmingSkipsNoEarlierTrims) {
  StreamTrim trim;
  trim.strategy = StreamTrim::kMaxLen;
  trim.maxlen = 100;
  uint64_t worst = 0;
  for (uint64_t i = 1; i <= 3000; i++) {
    worst = std::max(worst, Skipped([&](RedisStream& s) {
                       StreamID id;
                       ASSERT_TRUE(s.Add("s", AddAt(i, trim), {"f", "v"}, &id).ok());
                     }));
  }
  EXPECT_LE(worst, 4u);
  Skipped([&](RedisStream& s) {
    std::vector<StreamEntry> out;
    ASSERT_TRUE(s.Range("s", StreamID::Min(), StreamID::Max(), 0, false, &out).ok());
    ASSERT_EQ(out.size(), 100u);
    EXPECT_EQ(out.front().id.ms, 2901u);
  });
}

// A consumer that reads and acknowledges 3000 entries in order while XPENDING
// pages from the start: each walk begins near the oldest pending id.
TEST_F(RedisStreamTest, PendingWalksSkipNoEarlierAcks) {
  Skipped([&](RedisStream& s) {
    for (uint64_t i = 1; i <= 3100; i++) {
      StreamID id;
      ASSERT_TRUE(s.Add("s", AddAt(i), {"f", "v"}, &id).ok());
    }
    ASSERT_TRUE(s.CreateGroup("s", "g", StreamID{0, 0}, false, -1).ok());
  });
  uint64_t worst = 0;
  for (uint64_t round = 0; round < 300; round++) {
    worst = std::max(worst, Skipped([&](RedisStream& s) {
                       bool served;
                       std::vector<StreamEntry> out;
                       ASSERT_TRUE(s.ReadGroup("s", "g", "c", std::nullopt, 10, false, &served, &out).ok());
                       std::vector<StreamID> ids;
                       for (const auto& e : out) ids.push_back(e.id);
                       int64_t acked;
                       ASSERT_TRUE(s.Ack("s", "g", ids, &acked).ok());
                       ASSERT_EQ(acked, 10);
                     }));
    // One entry read and left pending, then pages of the PEL from its start.
    worst = std::max(worst, Skipped([&](RedisStream& s) {
                       LoadedKey lk;
                       StreamMeta meta;
                       bool exists;
                       ASSERT_TRUE(s.Load("s", &lk, &meta, &exists).ok() && exists);
                       StreamGroupInfo group;
                       ASSERT_TRUE(s.GetGroup("s", meta, "g", &group).ok());
                       std::vector<StreamPending> pel;
                       ASSERT_TRUE(s.PendingRange("s", group, StreamID::Min(), StreamID::Max(), 5, std::nullopt, 0,
                                                  &pel).ok());
                       EXPECT_TRUE(pel.empty());
                     }));
  }
  EXPECT_LE(worst, 40u);  // the acks since the floor was last found (at most 32 and a batch)
}

}  // namespace
