// A read that steps over many tombstones gets its range compacted: the next
// read of that range steps over none (the memtable that held them is flushed
// and the bottom level drops them), and the live elements stay.
#include <gtest/gtest.h>

#include "temp_storage.h"

#include <rocksdb/perf_context.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "storage/context.h"
#include "types/database.h"
#include "types/redis_set.h"

using namespace kvrocks;

namespace {

class TombstoneCompactorTest : public TempStorageTest {
 protected:
  // SADD of members m0..m(total-1), then SREM of the first `removed`.
  void FillAndDrain(int total, int removed) {
    std::vector<std::string> names;
    for (int i = 0; i < total; i++) names.push_back("m" + std::to_string(i));
    std::vector<std::string_view> add(names.begin(), names.end()), rem(names.begin(), names.begin() + removed);
    int64_t n;
    WithDb([&](Database& db) { ASSERT_TRUE(RedisSet(&db).Add("k", add, &n).ok()); });
    WithDb([&](Database& db) { ASSERT_TRUE(RedisSet(&db).Remove("k", rem, &n).ok()); });
  }
  // SMEMBERS: {members seen, tombstones skipped}.
  std::pair<size_t, uint64_t> Members() {
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);  // for this test's own count
    uint64_t before = rocksdb::get_perf_context()->internal_delete_skipped_count;
    std::vector<std::string> members;
    WithDb([&](Database& db) { EXPECT_TRUE(RedisSet(&db).Members("k", &members).ok()); }, false);
    uint64_t skipped = rocksdb::get_perf_context()->internal_delete_skipped_count - before;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    return {members.size(), skipped};
  }
  uint64_t WaitForCompactions(uint64_t n) {
    for (int i = 0; i < 200 && storage_->tombstone_compactor()->done() < n; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return storage_->tombstone_compactor()->done();
  }
};

TEST_F(TombstoneCompactorTest, ManyTombstonesGetCompactedAway) {
  FillAndDrain(30000, 29990);
  auto [live, skipped] = Members();
  EXPECT_EQ(live, 10u);
  EXPECT_GE(skipped, 29990u);
  // The walk asked for a compaction of its bounds; it runs on the compactor's thread.
  ASSERT_EQ(WaitForCompactions(1), 1u);
  std::tie(live, skipped) = Members();
  EXPECT_EQ(live, 10u);
  EXPECT_EQ(skipped, 0u);
}

TEST_F(TombstoneCompactorTest, FewTombstonesAskForNothing) {
  FillAndDrain(3000, 2000);
  EXPECT_EQ(Members().first, 1000u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(storage_->tombstone_compactor()->done(), 0u);
}

}  // namespace
