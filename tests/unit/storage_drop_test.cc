// Physical databases marked as garbage are emptied when the storage opens, so
// that a bulk load (or the switch after it) cut short by a crash leaves nothing.
#include <gtest/gtest.h>

#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <string>
#include <vector>

#include "storage/key_encoding.h"
#include "storage/storage.h"
#include "temp_storage.h"

namespace kvrocks {
namespace {

class StorageDropTest : public TempStorageTest {
 protected:
  void PutKey(uint8_t physical, const std::string& key) {
    ASSERT_TRUE(storage_->db()
                    ->Put(rocksdb::WriteOptions(), storage_->cf(ColumnFamily::kMetadata),
                          EncodeMetaKey(physical, key), "v")
                    .ok());
  }
  bool HasKey(uint8_t physical, const std::string& key) {
    std::string v;
    return storage_->db()
        ->Get(rocksdb::ReadOptions(), storage_->cf(ColumnFamily::kMetadata), EncodeMetaKey(physical, key), &v)
        .ok();
  }
  void Reopen() {
    storage_.reset();
    storage_ = std::make_unique<Storage>(&cfg_);
    ASSERT_TRUE(storage_->Open().ok());
  }
};

TEST_F(StorageDropTest, MarkedDbsAreEmptiedAtOpen) {
  PutKey(5, "staged");
  PutKey(0, "visible");
  ASSERT_TRUE(storage_->MarkToDrop({5}).ok());
  Reopen();
  EXPECT_FALSE(HasKey(5, "staged"));
  EXPECT_TRUE(HasKey(0, "visible"));
  PutKey(5, "later");  // the mark is gone: a second start keeps new data
  Reopen();
  EXPECT_TRUE(HasKey(5, "later"));
}

TEST_F(StorageDropTest, ReplaceDatabasesLeavesNoMark) {
  const uint8_t staged = storage_->FreePhysicalDbs(1)[0];
  PutKey(storage_->PhysicalDb(0), "old");
  PutKey(staged, "new");
  ASSERT_TRUE(storage_->MarkToDrop({staged}).ok());
  ASSERT_TRUE(storage_->ReplaceDatabases({staged}, {}).ok());
  Reopen();
  EXPECT_EQ(storage_->PhysicalDb(0), staged);
  EXPECT_TRUE(HasKey(staged, "new"));
  std::string v;
  EXPECT_TRUE(storage_->db()->Get(rocksdb::ReadOptions(), storage_->cf(ColumnFamily::kState), "dbs-to-drop", &v)
                  .IsNotFound());
}

// After FLUSHDB the memtables must not keep a range tombstone: RocksDB turns the
// memtable bloom filter off for MultiGet while one is there, and every write's
// key lookup would search the skiplist.
TEST_F(StorageDropTest, FlushDbLeavesMemtableBloomOn) {
  rocksdb::ColumnFamilyHandle* meta = storage_->cf(ColumnFamily::kMetadata);
  auto wait_flushed = [&] {
    for (int i = 0; i < 500; i++) {
      uint64_t imm = 1, pending = 1;
      storage_->db()->GetIntProperty(meta, "rocksdb.num-immutable-mem-table", &imm);
      storage_->db()->GetIntProperty(meta, "rocksdb.mem-table-flush-pending", &pending);
      if (imm == 0 && pending == 0) return;
      usleep(10000);
    }
    FAIL() << "memtable flush did not finish";
  };
  // Lookups of absent keys in a non-empty active memtable, as SettleUnread does.
  auto memtable_bloom_misses = [&] {
    PutKey(0, "present");
    std::vector<std::string> names = {EncodeMetaKey(0, "absent1"), EncodeMetaKey(0, "absent2")};
    std::vector<rocksdb::Slice> keys(names.begin(), names.end());
    std::vector<rocksdb::PinnableSlice> values(keys.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
    storage_->db()->MultiGet(rocksdb::ReadOptions(), meta, keys.size(), keys.data(), values.data(), statuses.data());
    uint64_t misses = rocksdb::get_perf_context()->bloom_memtable_miss_count;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    return misses;
  };
  PutKey(0, "a");
  ASSERT_TRUE(storage_->FlushDb(0).ok());
  EXPECT_FALSE(HasKey(0, "a"));
  wait_flushed();
  EXPECT_EQ(memtable_bloom_misses(), 2u);
  // An empty database gets no range tombstone (nor a flush) at all.
  uint64_t entries_before = 0, entries_after = 0;
  storage_->db()->GetIntProperty(meta, "rocksdb.num-entries-active-mem-table", &entries_before);
  ASSERT_TRUE(storage_->FlushDb(7).ok());
  storage_->db()->GetIntProperty(meta, "rocksdb.num-entries-active-mem-table", &entries_after);
  EXPECT_GT(entries_before, 0u);
  EXPECT_EQ(entries_after, entries_before);
}

}  // namespace
}  // namespace kvrocks
