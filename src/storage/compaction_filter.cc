#include "storage/compaction_filter.h"

#include "common/time_util.h"
#include "storage/key_encoding.h"

namespace kvrocks {

namespace {

class SubkeyFilter : public rocksdb::CompactionFilter {
 public:
  SubkeyFilter(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* metadata) : db_(db), metadata_(metadata) {}

  bool Filter(int, const rocksdb::Slice& key, const rocksdb::Slice&, std::string*, bool*) const override {
    return Stale(key);
  }

  // Decides on values kept in blob files from the key alone, without reading the blob.
  Decision FilterBlobByKey(int, const rocksdb::Slice& key, std::string*, std::string*) const override {
    return Stale(key) ? Decision::kRemove : Decision::kKeep;
  }

  const char* Name() const override { return "kvrocks.SubkeyFilter"; }

 private:
  bool Stale(const rocksdb::Slice& key) const {
    uint8_t dbid;
    std::string_view user_key;
    uint64_t version;
    if (!DecodeSubkeyPrefix(std::string_view(key.data(), key.size()), &dbid, &user_key, &version)) return false;
    std::string meta_key = EncodeMetaKey(dbid, user_key);
    // Consecutive subkeys usually belong to the same key: cache its verdict.
    if (meta_key != cached_key_) {
      cached_key_ = meta_key;
      std::string raw;
      rocksdb::ReadOptions ro;
      rocksdb::Status s = db_->Get(ro, metadata_, meta_key, &raw);
      if (s.IsNotFound()) {
        cached_alive_ = false;
      } else if (!s.ok()) {
        cached_key_.clear();
        return false;  // unknown: keep
      } else {
        Metadata meta;
        cached_alive_ = meta.Decode(raw).ok() && meta.HasSubkeys() && !meta.Expired(NowMs());
        cached_version_ = meta.version;
      }
    }
    return !cached_alive_ || cached_version_ != version;
  }

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* metadata_;
  mutable std::string cached_key_;
  mutable bool cached_alive_ = false;
  mutable uint64_t cached_version_ = 0;
};

class KeepAll : public rocksdb::CompactionFilter {
 public:
  bool Filter(int, const rocksdb::Slice&, const rocksdb::Slice&, std::string*, bool*) const override { return false; }
  const char* Name() const override { return "kvrocks.KeepAll"; }
};

}  // namespace

std::unique_ptr<rocksdb::CompactionFilter> SubkeyFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context&) {
  rocksdb::DB* db = db_.load();
  if (db == nullptr) return std::make_unique<KeepAll>();
  return std::make_unique<SubkeyFilter>(db, metadata_.load());
}

}  // namespace kvrocks
