// Compaction filter of the subkey column families: drops elements whose key
// no longer exists, was re-created (another version), or has been expired for
// kExpiredGraceMs. The key is the name the subkeys embed, or, for a collection
// renamed in O(1), the one its `moved` record names (Metadata::owner). This is
// what makes DEL of a huge collection O(1): only the metadata is deleted, and
// compaction reclaims the elements later.
//
// An expired key's elements are kept for a while, and on a replica until its
// master deletes the key, because they can still be seen: a transaction or a
// script judges expiry by the time it started (so a key expiring meanwhile is
// live to it), and a replica, like Redis', holds expired keys until the
// master's DEL, since the master may still change or PERSIST a key the
// replica's clock (or its lag behind the stream) already shows expired.
#pragma once

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>

#include <atomic>

#include "config/config.h"

namespace kvrocks {

class SubkeyFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  // How long a key must have been expired before its elements are dropped.
  static constexpr uint64_t kExpiredGraceMs = 60 * 1000;

  // Until Attach is called (the DB is open) nothing is dropped. state: the
  // family of the `moved` records (key_encoding.h, EncodeMovedKey).
  void Attach(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* metadata, rocksdb::ColumnFamilyHandle* state) {
    metadata_.store(metadata);
    state_.store(state);
    db_.store(db);
  }
  void Detach() {
    db_.store(nullptr);
    active_expire_.store(nullptr);
  }
  // Whether the elements of expired keys are kept whatever their age (a
  // replica: the master's DEL decides). Applies to compactions started after it.
  void set_keep_expired(bool keep) { keep_expired_.store(keep); }
  // The active-expire switch (Config::active_expire): while it is off, expired
  // keys are kept whole too, as Redis keeps them until a lookup deletes them
  // (DEBUG DIGEST sees their values). Applies to compactions started after it changes.
  void watch_active_expire(const Relaxed<bool>* on) { active_expire_.store(on); }
  // Some key's subkeys may live under another db or name than its metadata's
  // (a RENAME or MOVE is about to write a moved record, or one exists): from then
  // on a subkey whose own db and name hold no metadata of its version costs a
  // moved lookup.
  void note_moved() { moved_.store(true); }
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return "kvrocks.SubkeyFilterFactory"; }

 private:
  std::atomic<rocksdb::DB*> db_{nullptr};
  std::atomic<rocksdb::ColumnFamilyHandle*> metadata_{nullptr};
  std::atomic<bool> keep_expired_{false};
  std::atomic<const Relaxed<bool>*> active_expire_{nullptr};
  std::atomic<rocksdb::ColumnFamilyHandle*> state_{nullptr};
  std::atomic<bool> moved_{false};
};

}  // namespace kvrocks
