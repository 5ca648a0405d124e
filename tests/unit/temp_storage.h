// A RocksDB-backed Storage in a fresh temporary directory, for unit tests of
// the types layer.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/time_util.h"
#include "config/config.h"
#include "storage/context.h"
#include "storage/key_encoding.h"
#include "storage/storage.h"
#include "types/database.h"

class TempStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // ctest runs tests in parallel processes: the pid keeps their directories apart.
    dir_ = std::filesystem::temp_directory_path() /
           ("kvrocks-unit-" + std::to_string(getpid()) + "-" + std::to_string(kvrocks::NowUs()));
    cfg_.dir = dir_.string();
    cfg_.rocksdb_block_cache_size = 8 << 20;
    storage_ = std::make_unique<kvrocks::Storage>(&cfg_);
    ASSERT_TRUE(storage_->Open().ok());
  }
  // Runs fn(db) on db 0 of a fresh context, then commits its writes if commit.
  template <typename Fn>
  void WithDb(Fn fn, bool commit = true) {
    kvrocks::Context ctx(storage_.get());
    kvrocks::Database db(&ctx, 0);
    fn(db);
    if (commit) ASSERT_TRUE(ctx.Commit().ok());
  }
  // Entries of column family cf whose keys start with prefix ("": all).
  size_t CountEntries(kvrocks::ColumnFamily cf, const std::string& prefix = "") {
    size_t n = 0;
    std::unique_ptr<rocksdb::Iterator> it(storage_->db()->NewIterator(rocksdb::ReadOptions(), storage_->cf(cf)));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) n++;
    return n;
  }
  // The state family's moved records (Database::Rename).
  size_t MovedRecords() { return CountEntries(kvrocks::ColumnFamily::kState, kvrocks::kMovedKeyPrefix); }
  void TearDown() override {
    storage_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  kvrocks::Config cfg_;
  std::unique_ptr<kvrocks::Storage> storage_;
};
