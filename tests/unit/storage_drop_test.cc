// Physical databases marked as garbage are emptied when the storage opens, so
// that a bulk load (or the switch after it) cut short by a crash leaves nothing.
#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace kvrocks
