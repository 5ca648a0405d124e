// Database: the type-independent operations on one logical Redis database
// (existence, expiry, deletion, renaming, scanning). Type files build on its
// Load/Store/Remove, which keep the key counter and the expire index right.
//
// All methods run inside a Context; the caller holds the key locks of every
// key a method writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "storage/context.h"
#include "storage/key_encoding.h"

namespace kvrocks {

extern const char kWrongTypeError[];

// One key's metadata as read at the start of a write.
struct LoadedKey {
  std::string meta_key;
  bool on_disk = false;  // a metadata entry exists (possibly expired)
  bool live = false;     // on_disk and not expired
  uint64_t expire_ms = 0;
  RedisType type = RedisType::kNone;
  std::string raw;  // encoded metadata value when on_disk
  // Not read at all (Database::LoadForReplace): only meta_key is set.
  bool unread = false;
};

// ReadOptions bounded to the subkeys of one version of a key, so that seeks
// and scans never wander into other keys' data or this key's tombstones past
// its range. The bounds live in this object: keep it alive (and in place)
// while an iterator made with options() is used.
class SubkeyBounds {
 public:
  SubkeyBounds(uint8_t db, std::string_view key, uint64_t version)
      : prefix_(EncodeSubkeyPrefix(db, key, version)), upper_(EncodeSubkeyPrefix(db, key, version + 1)),
        lower_slice_(prefix_), upper_slice_(upper_) {
    options_.iterate_lower_bound = &lower_slice_;
    options_.iterate_upper_bound = &upper_slice_;
  }
  // The subkeys of key (of database db) with this metadata (SubkeyPrefix).
  SubkeyBounds(uint8_t db, std::string_view key, const Metadata& meta)
      : SubkeyBounds(meta.SubkeyDb(db), meta.SubkeyName(key), meta.version) {}
  SubkeyBounds(const SubkeyBounds&) = delete;
  SubkeyBounds& operator=(const SubkeyBounds&) = delete;

  // The common prefix of all the version's subkeys.
  const std::string& prefix() const { return prefix_; }
  const rocksdb::ReadOptions& options() const { return options_; }

 private:
  std::string prefix_, upper_;
  rocksdb::Slice lower_slice_, upper_slice_;
  rocksdb::ReadOptions options_;
};

class Database {
 public:
  Database(Context* ctx, uint8_t physical_db) : ctx_(ctx), db_(physical_db) {}

  Context* ctx() const { return ctx_; }
  uint8_t id() const { return db_; }

  // Redis' checkAlreadyExpired: a write that sets an absolute expiry at or before
  // now deletes its key at once, except where expiry is left to a master
  // (Context::set_expiry_left_to_master: the replica applying its stream): there
  // the key is written with that expiry, logically expired, until the master's
  // DEL arrives, as a Redis replica keeps it.
  bool AlreadyExpired(uint64_t expire_ms) const;

  // Reads key's metadata; lk->live tells whether it exists for clients. A key found
  // expired is noted in the context, which may delete it (Context::set_expired_counter).
  Status Load(std::string_view key, LoadedKey* lk);
  // Load without noting an expired key (Redis' keyIsExpired: WATCH, EXEC's checks).
  Status Peek(std::string_view key, LoadedKey* lk);
  // Loads a collection's metadata for an operation on type: *exists=false if the
  // key is absent, WRONGTYPE if it holds another type. An empty payload gets one
  // zero flags byte (the encoding flags of hashes, sets and sorted sets).
  Status LoadCollection(std::string_view key, RedisType type, LoadedKey* lk, Metadata* meta, bool* exists);
  // For a write that replaces key whatever it holds (a plain SET): prepares lk
  // for Store without reading the key when the context can settle the counters
  // at commit (Context::PutUnread), else loads it as Load does.
  Status LoadForReplace(std::string_view key, LoadedKey* lk);
  // Writes key's new encoded metadata with expiry new_expire_ms.
  void Store(std::string_view key, LoadedKey* lk, std::string_view encoded, uint64_t new_expire_ms);
  // Deletes key's metadata (its subkeys become garbage for compaction).
  void Remove(std::string_view key, LoadedKey* lk);
  // Deletes a command's destination for an empty result (the *STORE commands, BITOP):
  // as Redis' dbDelete, a key that has expired but is still stored is deleted as a
  // live one ("del", not counted as expired).
  void RemoveDestination(std::string_view key, LoadedKey* lk);
  // Rewrites a live key's record with a change no client sees as a write (an
  // encoding flag for OBJECT ENCODING): no keyspace event, WATCH or tracking
  // touch, and the same expiry.
  void Restamp(LoadedKey* lk, std::string_view encoded);
  // Writes a collection's metadata, or removes the key when the collection is
  // empty (an empty hash, set or sorted set does not exist, as in Redis).
  void StoreCollection(std::string_view key, LoadedKey* lk, const Metadata& meta);

  // Live type of key (kNone if absent).
  Status Type(std::string_view key, RedisType* type);
  // Deletes key; *deleted tells if it was live.
  Status Delete(std::string_view key, bool* deleted);
  Status Exists(std::string_view key, bool* exists);

  // Expiry in absolute ms; NotFound if absent; 0 = persistent.
  Status GetExpire(std::string_view key, uint64_t* expire_ms);
  // Conditions of EXPIRE (XX combines with GT or LT).
  enum ExpireFlags : int { kExpireNX = 1, kExpireXX = 2, kExpireGT = 4, kExpireLT = 8 };
  // Sets an absolute expiry. *applied=false if the key is absent or a condition fails.
  // An expiry at or before now deletes the key (as Redis does on a master).
  Status SetExpire(std::string_view key, uint64_t expire_ms, int flags, bool* applied);
  Status Persist(std::string_view key, bool* removed);
  // An encoded metadata value with its expiry replaced.
  static std::string WithExpire(const std::string& raw, uint64_t expire_ms);

  // COPY: copies src (of this db) to dst in dst_db, a new object (OBJECT
  // REFCOUNT). *copied=false if src is absent or, without replace, dst exists.
  Status Copy(std::string_view src, Database* dst_db, std::string_view dst, bool replace, bool* copied);
  // RENAME / RENAMENX. NotFound if src is absent. *renamed=false if nx and dst exists.
  // O(1): the metadata moves, subkeys stay under their owner name (Metadata::owner).
  Status Rename(std::string_view src, std::string_view dst, bool nx, bool* renamed);
  // MOVE of key to dst_db. *moved=false if key is absent or exists in dst_db.
  // O(1): the metadata moves, subkeys stay in their owner db (Metadata::owner_db).
  Status Move(std::string_view key, Database* dst_db, bool* moved);
  // Before FLUSHDB of physical database db: keys of other databases whose
  // subkeys a MOVE left in db get a copy of them under their own db (O(their
  // size)), so that the flush does not take them.
  static Status CopyOutMovedSubkeys(Context* ctx, uint8_t db);

  // Keys matching pattern (KEYS).
  Status Keys(std::string_view pattern, std::vector<std::string>* keys);
  // One step of SCAN: keys after `after` (a raw metadata key, "" = start),
  // examining about count entries. *next is the raw key to continue from, or
  // "" when the scan is complete.
  Status Scan(const std::string& after, size_t count, std::string_view pattern, RedisType type,
              std::vector<std::string>* keys, std::string* next);
  Status RandomKey(std::string* key);

 private:
  // Remove; as_live: a key found expired is removed as a live one (RemoveDestination).
  void RemoveKey(std::string_view key, LoadedKey* lk, bool as_live);
  // Deletes the moved record of a renamed collection's version (it is removed or replaced).
  void ForgetMoved(uint64_t version);
  // ForgetMoved of the version old_raw's subkeys moved from, unless encoded keeps it.
  void ForgetReplacedMoved(std::string_view old_raw, std::string_view encoded);
  // Moves src's record (loaded as from) to dst of dst_db (loaded as to), which
  // must differ: the metadata goes, the subkeys stay where they are.
  void Transfer(std::string_view src, LoadedKey* from, Database* dst_db, std::string_view dst, LoadedKey* to);
  // Copies every subkey of src's current version to dst (in dst_db) under new_version.
  Status CopySubkeys(std::string_view src, const LoadedKey& from, Database* dst_db, std::string_view dst,
                     uint64_t new_version);

  Context* ctx_;
  uint8_t db_;
};

}  // namespace kvrocks
