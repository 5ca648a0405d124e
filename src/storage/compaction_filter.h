// Compaction filter of the subkey column families: drops elements whose key
// no longer exists, was re-created (another version), or has expired. This is
// what makes DEL of a huge collection O(1): only the metadata is deleted, and
// compaction reclaims the elements later.
#pragma once

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>

#include <atomic>

namespace kvrocks {

class SubkeyFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  // Until Attach is called (the DB is open) nothing is dropped.
  void Attach(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* metadata) {
    metadata_.store(metadata);
    db_.store(db);
  }
  void Detach() { db_.store(nullptr); }
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return "kvrocks.SubkeyFilterFactory"; }

 private:
  std::atomic<rocksdb::DB*> db_{nullptr};
  std::atomic<rocksdb::ColumnFamilyHandle*> metadata_{nullptr};
};

}  // namespace kvrocks
