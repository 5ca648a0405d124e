// The sum of expiry times behind INFO keyspace's avg_ttl follows every change of
// a key's expiry, survives a restart, and is rebuilt from the keys for data
// written before it was kept.
#include <gtest/gtest.h>

#include <string>

#include "common/time_util.h"
#include "storage/storage.h"
#include "temp_storage.h"
#include "types/redis_string.h"

namespace kvrocks {
namespace {

class ExpireSumTest : public TempStorageTest {
 protected:
  template <typename Fn>
  void Run(Fn fn) {
    Context ctx(storage_.get());
    Database db(&ctx, 0);
    fn(db, RedisString(&db));
    ASSERT_TRUE(ctx.Commit().ok());
  }
  // Expiry times count from base_ms_, a whole second, so that the averages are
  // exact whatever time the test takes.
  void SetWithTtl(const std::string& key, uint64_t ttl_ms) {
    Run([&](Database& db, RedisString s) {
      bool done;
      std::optional<std::string> old;
      ASSERT_TRUE(s.Set(key, "v", {}, &done, &old).ok());
      bool applied;
      if (ttl_ms) ASSERT_TRUE(db.SetExpire(key, base_ms_ + ttl_ms, 0, &applied).ok());
    });
  }
  void Reopen() {
    storage_.reset();
    storage_ = std::make_unique<Storage>(&cfg_);
    ASSERT_TRUE(storage_->Open().ok());
  }
  // The average TTL in seconds as of base_ms_.
  int64_t AvgTtlSeconds() { return storage_->AvgTtlMs(0, base_ms_) / 1000; }

  const uint64_t base_ms_ = (NowMs() / 1000 + 1) * 1000;
};

TEST_F(ExpireSumTest, FollowsEveryChange) {
  EXPECT_EQ(storage_->AvgTtlMs(0, base_ms_), 0);
  SetWithTtl("a", 100000);
  SetWithTtl("b", 300000);
  SetWithTtl("c", 0);
  EXPECT_EQ(storage_->ExpireCount(0), 2);
  EXPECT_EQ(AvgTtlSeconds(), 200);
  SetWithTtl("b", 500000);  // a new expiry replaces the old one
  EXPECT_EQ(AvgTtlSeconds(), 300);
  Run([](Database& db, RedisString) {
    bool deleted;
    ASSERT_TRUE(db.Delete("a", &deleted).ok());
  });
  EXPECT_EQ(AvgTtlSeconds(), 500);
  Run([](Database& db, RedisString) {
    bool applied;
    ASSERT_TRUE(db.SetExpire("b", 0, 0, &applied).ok());  // PERSIST
  });
  EXPECT_EQ(storage_->ExpireCount(0), 0);
  EXPECT_EQ(storage_->AvgTtlMs(0, NowMs()), 0);
}

TEST_F(ExpireSumTest, SurvivesRestartAndIsRebuiltWhenMissing) {
  SetWithTtl("a", 100000);
  SetWithTtl("b", 200000);
  Reopen();
  EXPECT_EQ(AvgTtlSeconds(), 150);
  // Data from a version that kept no sum: Open computes it from the keys.
  ASSERT_TRUE(storage_->db()->Delete(rocksdb::WriteOptions(), storage_->cf(ColumnFamily::kState), "expiresecs:" +
                                     std::to_string(storage_->PhysicalDb(0))).ok());
  Reopen();
  EXPECT_EQ(AvgTtlSeconds(), 150);
  SetWithTtl("c", 450000);
  EXPECT_EQ(AvgTtlSeconds(), 250);
}

TEST_F(ExpireSumTest, FlushDbEmptiesIt) {
  SetWithTtl("a", 100000);
  ASSERT_TRUE(storage_->FlushDb(storage_->PhysicalDb(0)).ok());
  EXPECT_EQ(storage_->AvgTtlMs(0, NowMs()), 0);
  SetWithTtl("b", 40000);
  EXPECT_EQ(AvgTtlSeconds(), 40);
}

}  // namespace
}  // namespace kvrocks
