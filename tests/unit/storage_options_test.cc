// CONFIG SET of the rocksdb.* options that change on a running database: each
// reaches RocksDB's live options (what GetOptions / GetDBOptions report).
#include <rocksdb/rate_limiter.h>

#include "temp_storage.h"

using kvrocks::ColumnFamily;

namespace {

class StorageOptionsTest : public TempStorageTest {
 protected:
  rocksdb::Options Live(ColumnFamily c) { return storage_->db()->GetOptions(storage_->cf(c)); }
  void Apply(const std::string& name, const std::string& value) {
    ASSERT_TRUE(cfg_.SetAtRuntime({{name, value}}, [](const std::string&) { return true; }).ok()) << name;
    ASSERT_TRUE(storage_->ApplyOption(name).ok()) << name;
  }
};

TEST_F(StorageOptionsTest, EveryRuntimeOptionIsMutableInTheConfig) {
  for (const std::string& name : kvrocks::Storage::RuntimeOptions()) {
    std::string value = cfg_.Get(name).at(0).second;
    EXPECT_TRUE(cfg_.SetAtRuntime({{name, value}}, [](const std::string&) { return true; }).ok()) << name;
    EXPECT_TRUE(storage_->ApplyOption(name).ok()) << name;
  }
  EXPECT_FALSE(storage_->ApplyOption("rocksdb.bloom-filter-bits").ok());
}

TEST_F(StorageOptionsTest, WriteBuffersChangeButTheRankFamilyKeepsItsOwn) {
  const size_t rank_buffer = Live(ColumnFamily::kZSetRank).write_buffer_size;
  Apply("rocksdb.write-buffer-size", "3mb");
  Apply("rocksdb.max-write-buffer-number", "5");
  for (ColumnFamily c : {ColumnFamily::kMetadata, ColumnFamily::kSubkey, ColumnFamily::kExpire}) {
    EXPECT_EQ(Live(c).write_buffer_size, 3u << 20);
    EXPECT_EQ(Live(c).max_write_buffer_number, 5);
  }
  EXPECT_EQ(Live(ColumnFamily::kZSetRank).write_buffer_size, rank_buffer);
  EXPECT_EQ(storage_->db()->GetDBOptions().max_total_wal_size, 12u << 20);
}

TEST_F(StorageOptionsTest, LevelShapeAndCompression) {
  Apply("rocksdb.target-file-size-base", "8mb");
  Apply("rocksdb.level0-slowdown-writes-trigger", "30");
  Apply("rocksdb.level0-stop-writes-trigger", "50");
  Apply("rocksdb.compression", "no:zstd:snappy");
  for (int i = 0; i < static_cast<int>(ColumnFamily::kCount); i++) {
    rocksdb::Options o = Live(static_cast<ColumnFamily>(i));
    EXPECT_EQ(o.target_file_size_base, 8u << 20);
    EXPECT_EQ(o.max_bytes_for_level_base, 32u << 20);
    EXPECT_EQ(o.level0_slowdown_writes_trigger, 30);
    EXPECT_EQ(o.level0_stop_writes_trigger, 50);
    ASSERT_EQ(o.compression_per_level.size(), 7u);
    EXPECT_EQ(o.compression_per_level[0], rocksdb::kNoCompression);
    EXPECT_EQ(o.compression_per_level[1], rocksdb::kZSTD);
    for (int level = 2; level < 7; level++) EXPECT_EQ(o.compression_per_level[level], rocksdb::kSnappyCompression);
  }
}

// As RocksDB sanitizes them at open: writes slow down no earlier than a family's
// L0 compaction starts (8 files for big values' subkey family) and stop no
// earlier than they slow down.
TEST_F(StorageOptionsTest, L0TriggersAreRaisedAsAtOpen) {
  Apply("rocksdb.level0-slowdown-writes-trigger", "5");
  Apply("rocksdb.level0-stop-writes-trigger", "3");
  EXPECT_EQ(Live(ColumnFamily::kMetadata).level0_slowdown_writes_trigger, 5);
  EXPECT_EQ(Live(ColumnFamily::kMetadata).level0_stop_writes_trigger, 5);
  EXPECT_EQ(Live(ColumnFamily::kSubkey).level0_slowdown_writes_trigger, 8);
  EXPECT_EQ(Live(ColumnFamily::kSubkey).level0_stop_writes_trigger, 8);
  Apply("rocksdb.level0-stop-writes-trigger", "9");
  EXPECT_EQ(Live(ColumnFamily::kMetadata).level0_stop_writes_trigger, 9);
  EXPECT_EQ(Live(ColumnFamily::kSubkey).level0_stop_writes_trigger, 9);
}

TEST_F(StorageOptionsTest, CompressionListsAreChecked) {
  auto set = [&](const std::string& v) {
    return cfg_.SetAtRuntime({{"rocksdb.compression", v}}, [](const std::string&) { return true; });
  };
  EXPECT_TRUE(set("ZSTD").ok());
  EXPECT_TRUE(set("no:no:lz4:lz4:lz4:zstd:zstd").ok());
  for (const char* bad : {"", "lz5", "no:", ":no", "no::lz4", "no:no:no:no:no:no:no:no"}) {
    kvrocks::Status s = set(bad);
    EXPECT_FALSE(s.ok()) << bad;
  }
  EXPECT_EQ(cfg_.rocksdb_compression, "no:no:lz4:lz4:lz4:zstd:zstd");  // refused values leave it
}

TEST_F(StorageOptionsTest, JobsBlobsRateAndSync) {
  Apply("rocksdb.max-background-jobs", "7");
  EXPECT_EQ(storage_->db()->GetDBOptions().max_background_jobs, 7);
  Apply("rocksdb.min-blob-size", "1000");
  EXPECT_EQ(Live(ColumnFamily::kSubkey).min_blob_size, 1000u);
  Apply("rocksdb.blob-gc-age-cutoff", "40");
  EXPECT_DOUBLE_EQ(Live(ColumnFamily::kSubkey).blob_garbage_collection_age_cutoff, 0.4);
  auto limiter = storage_->db()->GetDBOptions().rate_limiter;
  ASSERT_NE(limiter, nullptr);
  EXPECT_EQ(limiter->GetBytesPerSecond(), INT64_MAX);  // 0: no limit
  Apply("rocksdb.rate-limiter-bytes-per-sec", "10mb");
  EXPECT_EQ(limiter->GetBytesPerSecond(), 10 << 20);
  Apply("rocksdb.rate-limiter-bytes-per-sec", "0");
  EXPECT_EQ(limiter->GetBytesPerSecond(), INT64_MAX);
  EXPECT_FALSE(storage_->sync_writes());
  Apply("rocksdb.sync-writes", "yes");
  EXPECT_TRUE(storage_->sync_writes());
}

}  // namespace
