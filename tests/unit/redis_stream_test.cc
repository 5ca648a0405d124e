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
#include "types/stream_rax.h"

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

namespace {

// Metadata written before kvrocks kept the rax node count (payload 8 bytes
// shorter): XINFO counts the nodes from their records, and the first write that
// adds or removes a node counts them once and keeps the count from then on.
TEST_F(RedisStreamTest, RaxNodeCountOfOlderMetadata) {
  const StreamNodeLimits one_per_node{4096, 1};
  const uint64_t ids[] = {1, 2, 3, 256, 1ull << 40};
  for (uint64_t ms : ids) {
    WithDb([&](Database& db) {
      StreamID id;
      ASSERT_TRUE(RedisStream(&db, one_per_node).Add("s", AddAt(ms), {"f", "v"}, &id).ok());
    });
  }
  uint64_t kept = 0;
  auto count_now = [&](bool* from_meta) {
    uint64_t nodes = 0;
    WithDb([&](Database& db) {
      RedisStream stream(&db);
      LoadedKey lk;
      StreamMeta meta;
      bool exists;
      ASSERT_TRUE(stream.Load("s", &lk, &meta, &exists).ok() && exists);
      *from_meta = meta.rax_nodes != 0;
      ASSERT_TRUE(stream.RaxNodes("s", meta, &nodes).ok());
    });
    return nodes;
  };
  bool from_meta = false;
  kept = count_now(&from_meta);
  ASSERT_TRUE(from_meta);
  std::vector<StreamID> node_ids;
  for (uint64_t ms : ids) node_ids.push_back(StreamID{ms, 0});
  EXPECT_EQ(kept, stream::RaxNodes(node_ids));

  const std::string meta_key = EncodeMetaKey(0, "s");
  std::string raw;
  ASSERT_TRUE(storage_->db()->Get(rocksdb::ReadOptions(), storage_->cf(ColumnFamily::kMetadata), meta_key, &raw).ok());
  raw.resize(raw.size() - 8);
  ASSERT_TRUE(storage_->db()->Put(rocksdb::WriteOptions(), storage_->cf(ColumnFamily::kMetadata), meta_key, raw).ok());
  EXPECT_EQ(count_now(&from_meta), kept);
  EXPECT_FALSE(from_meta);

  WithDb([&](Database& db) {
    StreamID id;
    ASSERT_TRUE(RedisStream(&db, one_per_node).Add("s", AddAt((1ull << 40) + 1), {"f", "v"}, &id).ok());
  });
  node_ids.push_back(StreamID{(1ull << 40) + 1, 0});
  EXPECT_EQ(count_now(&from_meta), stream::RaxNodes(node_ids));
  EXPECT_TRUE(from_meta);
}

}  // namespace
