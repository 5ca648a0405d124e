#include "storage/compaction_filter.h"

#include <memory>
#include <string>

#include "common/time_util.h"
#include "storage/key_encoding.h"

namespace kvrocks {

namespace {

// Looks up metadata records for keys that arrive mostly in ascending order, as
// the subkeys of a compaction do. One iterator walks forward with the lookups:
// a key a few records ahead costs a few Next() instead of a Get through every
// memtable and level (subkey compactions spent 15-35% less CPU per record in
// the steady 8 KiB SET runs of bench/RESULTS.md, session 16). The iterator sees
// the data as of its creation; that is safe for the filter: a subkey in a
// compaction's input was written in the same batch as its metadata, before the
// compaction began, and a version once dead never comes back, so an older view
// can only keep garbage a little longer. It is recreated after kRefreshLookups
// lookups so that it does not pin memtables and files for a whole long
// compaction.
class MetadataCursor {
 public:
  MetadataCursor(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* metadata) : db_(db), metadata_(metadata) {}

  // OK with *raw set, NotFound, or an error (the caller keeps the subkey).
  rocksdb::Status Find(const std::string& meta_key, std::string* raw) {
    if (it_ == nullptr || ++lookups_ > kRefreshLookups) {
      rocksdb::ReadOptions ro;
      ro.fill_cache = false;  // a compaction's sweep must not evict what clients read
      it_.reset(db_->NewIterator(ro, metadata_));
      lookups_ = 0;
      positioned_ = false;
    }
    const rocksdb::Slice target(meta_key);
    // The iterator stands at the first record >= the previous target; for a
    // bigger target step forward a little before paying for a Seek, unless the
    // last targets were all further away than that (then steps are wasted: a
    // sweep of 8 KiB strings among many small keys has gaps of dozens of
    // records). Every kProbeEvery-th lookup steps again to notice denser keys.
    if (positioned_ && target.compare(last_target_) >= 0) {
      bool step = far_in_row_ < kFarBeforeSeeking || lookups_ % kProbeEvery == 0;
      for (int i = 0; step && i < kMaxSteps && it_->Valid() && it_->key().compare(target) < 0; i++) it_->Next();
      if (it_->Valid() && it_->key().compare(target) < 0) {
        it_->Seek(target);
        if (step) far_in_row_++;
      } else if (step) {
        far_in_row_ = 0;
      }
    } else {
      it_->Seek(target);
    }
    last_target_ = meta_key;
    positioned_ = it_->status().ok();
    if (!positioned_) return it_->status();
    if (!it_->Valid() || it_->key() != target) return rocksdb::Status::NotFound();
    raw->assign(it_->value().data(), it_->value().size());
    return rocksdb::Status::OK();
  }

 private:
  // A Seek through the memtables and levels costs about as much as four or five
  // Next() (perf of the 8 KiB SET runs, bench/RESULTS.md session 22).
  static constexpr int kMaxSteps = 4;
  static constexpr int kFarBeforeSeeking = 2;
  static constexpr uint64_t kProbeEvery = 16;
  static constexpr uint64_t kRefreshLookups = 1 << 16;

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* metadata_;
  std::unique_ptr<rocksdb::Iterator> it_;
  std::string last_target_;
  bool positioned_ = false;
  uint64_t lookups_ = 0;
  int far_in_row_ = 0;  // consecutive stepping lookups that still needed a Seek
};

class SubkeyFilter : public rocksdb::CompactionFilter {
 public:
  // keep_expired: keep the elements of expired keys whatever their age.
  // state: the moved records' family; moved: whether any may exist (read when
  // needed: a RENAME or MOVE sets it before its write commits, so a metadata view
  // that shows the move is followed by a read that sees it set).
  SubkeyFilter(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* metadata, rocksdb::ColumnFamilyHandle* state,
               const std::atomic<bool>* moved, bool keep_expired)
      : db_(db),
        metadata_(metadata),
        state_(state),
        moved_(moved),
        cursor_(db, metadata),
        keep_expired_(keep_expired) {}

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
      rocksdb::Status s = cursor_.Find(meta_key, &raw);
      if (s.IsNotFound()) {
        cached_alive_ = false;
      } else if (!s.ok()) {
        cached_key_.clear();
        return false;  // unknown: keep
      } else {
        Metadata meta;
        cached_alive_ = meta.Decode(raw).ok() && meta.HasSubkeys() && meta.owner.empty() && meta.owner_db < 0 &&
                        !ExpiredLongAgo(meta);
        cached_version_ = meta.version;
      }
    }
    if (cached_alive_ && cached_version_ == version) return false;
    if (!moved_->load()) return true;
    if (version != moved_version_) {
      moved_version_ = version;
      moved_alive_ = MovedAlive(dbid, user_key, version);
    }
    return !moved_alive_;
  }

  // Whether the key of `version`, whose subkeys are named user_key in dbid, lives:
  // under that db and name, or under another one that its moved record names,
  // whose metadata has that version and owner. All is read in one snapshot: the
  // cursor's older view (or its cached verdict) may show the key away while it
  // has come home since, its moved record deleted, and a RENAME or MOVE between
  // separate reads would look like a deletion. A version dead in a snapshot never
  // lives again, as only a RENAME or MOVE of a live key names it anew.
  bool MovedAlive(uint8_t dbid, std::string_view user_key, uint64_t version) const {
    const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot;
    ro.fill_cache = false;
    std::string where, raw;
    bool alive = true;  // unknown (a read error): keep
    rocksdb::Status s = db_->Get(ro, metadata_, EncodeMetaKey(dbid, user_key), &raw);
    if (s.ok()) {
      Metadata home;
      if (home.Decode(raw).ok() && home.HasSubkeys() && home.version == version && home.owner.empty() &&
          home.owner_db < 0) {
        db_->ReleaseSnapshot(snapshot);
        return !ExpiredLongAgo(home);
      }
    } else if (!s.IsNotFound()) {
      db_->ReleaseSnapshot(snapshot);
      return true;
    }
    s = db_->Get(ro, state_, EncodeMovedKey(version), &where);
    if (s.IsNotFound()) {
      alive = false;
    } else if (s.ok() && !where.empty()) {
      const auto where_db = static_cast<uint8_t>(where[0]);
      const std::string_view name = std::string_view(where).substr(1);
      s = db_->Get(ro, metadata_, EncodeMetaKey(where_db, name), &raw);
      Metadata meta;
      if (s.IsNotFound()) {
        alive = false;
      } else if (s.ok()) {
        alive = meta.Decode(raw).ok() && meta.version == version && meta.SubkeyName(name) == user_key &&
                meta.SubkeyDb(where_db) == dbid && !ExpiredLongAgo(meta);
      }
    } else if (s.ok()) {
      alive = false;  // malformed
    }
    db_->ReleaseSnapshot(snapshot);
    return alive;
  }

  bool ExpiredLongAgo(const Metadata& meta) const {
    if (keep_expired_ || meta.expire_ms == 0) return false;
    const uint64_t now = NowMs();
    return now > SubkeyFilterFactory::kExpiredGraceMs && meta.Expired(now - SubkeyFilterFactory::kExpiredGraceMs);
  }

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* metadata_;
  rocksdb::ColumnFamilyHandle* state_;
  const std::atomic<bool>* moved_;
  // Filter() is const in RocksDB's interface; one filter serves one thread.
  mutable MetadataCursor cursor_;
  const bool keep_expired_;
  mutable std::string cached_key_;
  mutable bool cached_alive_ = false;
  mutable uint64_t cached_version_ = 0;
  mutable uint64_t moved_version_ = 0;  // versions start at 1
  mutable bool moved_alive_ = false;
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
  const Relaxed<bool>* active_expire = active_expire_.load();
  const bool keep_expired = keep_expired_.load() || (active_expire != nullptr && !active_expire->get());
  return std::make_unique<SubkeyFilter>(db, metadata_.load(), state_.load(), &moved_, keep_expired);
}

}  // namespace kvrocks
