// A kvrocks replica writes its master's WAL batches as they are
// (TranslateReplicatedBatch): the copy must hold exactly the master's records
// but its per-instance state, and say which counters and keys moved.
#include "storage/replicated_batch.h"

#include <gtest/gtest.h>
#include <rocksdb/transaction_log.h>

#include <map>
#include <string>
#include <vector>

#include "temp_storage.h"
#include "types/redis_hash.h"

namespace kvrocks {
namespace {

class ReplicatedBatchTest : public TempStorageTest {
 protected:
  void SetUp() override {
    TempStorageTest::SetUp();
    replica_dir_ = dir_.string() + "-replica";
    replica_cfg_.dir = replica_dir_;
    replica_cfg_.rocksdb_block_cache_size = 8 << 20;
    replica_ = std::make_unique<Storage>(&replica_cfg_);
    ASSERT_TRUE(replica_->Open().ok());
  }
  void TearDown() override {
    replica_.reset();
    std::filesystem::remove_all(replica_dir_);
    TempStorageTest::TearDown();
  }
  // The master's batches after sequence number `after`.
  std::vector<std::pair<uint64_t, std::string>> BatchesAfter(uint64_t after) {
    std::vector<std::pair<uint64_t, std::string>> out;
    std::unique_ptr<rocksdb::TransactionLogIterator> it;
    EXPECT_TRUE(storage_->db()->GetUpdatesSince(after + 1, &it).ok());
    for (; it->Valid(); it->Next()) {
      rocksdb::BatchResult b = it->GetBatch();
      out.emplace_back(b.sequence, b.writeBatchPtr->Data());
    }
    return out;
  }
  // Every record of a storage but its own state records, family by family.
  static std::map<std::pair<int, std::string>, std::string> Records(Storage* st) {
    std::map<std::pair<int, std::string>, std::string> out;
    for (int c = 0; c < static_cast<int>(ColumnFamily::kCount); c++) {
      std::unique_ptr<rocksdb::Iterator> it(
          st->db()->NewIterator(rocksdb::ReadOptions(), st->cf(static_cast<ColumnFamily>(c))));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        if (c == static_cast<int>(ColumnFamily::kState) && Storage::IsLocalStateKey(it->key())) continue;
        // The version high-water mark is each instance's until it closes.
        if (c == static_cast<int>(ColumnFamily::kState) && it->key() == "version") continue;
        out[{c, it->key().ToString()}] = it->value().ToString();
      }
    }
    return out;
  }

  std::string replica_dir_;
  Config replica_cfg_;
  std::unique_ptr<Storage> replica_;
};

TEST_F(ReplicatedBatchTest, TheReplicaHoldsTheMastersRecordsAndCounts) {
  const uint64_t start = storage_->db()->GetLatestSequenceNumber();
  WithDb([](Database& db) {
    int64_t added;
    ASSERT_TRUE(RedisHash(&db).Set("h", {{"a", "1"}, {"b", "2"}}, false, &added).ok());
  });
  WithDb([](Database& db) {
    int64_t added;
    ASSERT_TRUE(RedisHash(&db).Set("h", {{"a", "3"}}, false, &added).ok());  // an element alone
    ASSERT_TRUE(RedisHash(&db).Set("g", {{"x", "y"}}, false, &added).ok());
  });
  std::map<uint8_t, CountDeltas> counts;
  std::vector<std::pair<uint8_t, std::string>> keys;
  for (const auto& [seq, data] : BatchesAfter(start)) {
    ReplicatedBatch rb;
    ASSERT_TRUE(TranslateReplicatedBatch(replica_.get(), data, &rb).ok());
    EXPECT_EQ(rb.master_count, rocksdb::WriteBatch(data).Count());
    EXPECT_GT(rb.max_version, 0u);
    ASSERT_TRUE(replica_->Write(&rb.batch).ok());
    for (const auto& [db, d] : rb.counts) counts[db].keys += d.keys;
    keys.insert(keys.end(), rb.keys.begin(), rb.keys.end());
  }
  EXPECT_EQ(Records(storage_.get()), Records(replica_.get()));
  EXPECT_EQ(counts[storage_->PhysicalDb(0)].keys, 2);
  ASSERT_TRUE(replica_->ReloadState().ok());
  EXPECT_EQ(replica_->KeyCount(replica_->PhysicalDb(0)), 2);
  // h's metadata was written by the first batch; g's by the second.
  EXPECT_NE(std::find(keys.begin(), keys.end(), std::make_pair(storage_->PhysicalDb(0), std::string("h"))), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), std::make_pair(storage_->PhysicalDb(0), std::string("g"))), keys.end());
}

TEST_F(ReplicatedBatchTest, TheMastersOwnStateStaysBehind) {
  rocksdb::WriteBatch batch;
  batch.Put(storage_->cf(ColumnFamily::kState), "wal-id", std::string(40, 'a'));
  batch.Put(storage_->cf(ColumnFamily::kState), "replication", "theirs");
  batch.Put(storage_->cf(ColumnFamily::kState), "native-replication", "theirs");
  batch.Put(storage_->cf(ColumnFamily::kMetadata), EncodeMetaKey(0, "k"), EncodeStringValue("v", 0));
  ReplicatedBatch rb;
  ASSERT_TRUE(TranslateReplicatedBatch(replica_.get(), batch.Data(), &rb).ok());
  EXPECT_EQ(rb.master_count, 4u);
  EXPECT_EQ(rb.batch.Count(), 1u);
  EXPECT_TRUE(rb.state_keys.empty());
  ASSERT_EQ(rb.keys.size(), 1u);
  EXPECT_EQ(rb.keys[0], std::make_pair(uint8_t{0}, std::string("k")));
}

TEST_F(ReplicatedBatchTest, AMergeOtherThanACountersIsRefused) {
  rocksdb::WriteBatch batch;
  batch.Merge(storage_->cf(ColumnFamily::kState), "something", "12345678");
  ReplicatedBatch rb;
  EXPECT_FALSE(TranslateReplicatedBatch(replica_.get(), batch.Data(), &rb).ok());
  EXPECT_FALSE(TranslateReplicatedBatch(replica_.get(), "short", &rb).ok());
}

TEST_F(ReplicatedBatchTest, WritesAroundTheWalStartANewHistory) {
  const std::string id = storage_->wal_id();
  const uint64_t generation = storage_->wal_generation();
  EXPECT_EQ(id.size(), 40u);
  WithDb([](Database& db) {
    int64_t added;
    ASSERT_TRUE(RedisHash(&db).Set("h", {{"a", "1"}}, false, &added).ok());
  });
  EXPECT_EQ(storage_->wal_id(), id);  // an ordinary write is in the log
  ASSERT_TRUE(storage_->IngestSorted(ColumnFamily::kMetadata, {{"\x05zz", "v"}}).ok());
  EXPECT_NE(storage_->wal_id(), id);
  EXPECT_GT(storage_->wal_generation(), generation);
  // The new id survives a restart.
  const std::string after = storage_->wal_id();
  storage_.reset();
  storage_ = std::make_unique<Storage>(&cfg_);
  ASSERT_TRUE(storage_->Open().ok());
  EXPECT_EQ(storage_->wal_id(), after);
}

}  // namespace
}  // namespace kvrocks
