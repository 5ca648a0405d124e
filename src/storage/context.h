// Context: one command's (or one MULTI/EXEC's) view of the storage.
//
// Writes become visible to the context's own reads at once (read-your-writes
// inside EXEC); Commit() writes them to RocksDB as a single atomic batch
// through the WAL. Pending writes are kept in a plain WriteBatch plus a set of
// the hashes of their keys; only when a read needs a key the batch may hold
// (or an iterator a column family it wrote) are they indexed, in a
// WriteBatchWithIndex, for the rest of the batch. Most batches (runs of SETs,
// a replica's stream, a bulk load) never need the index, which costs more than
// the write itself. Reads of keys the batch did not write go straight to
// RocksDB (optionally from a snapshot, for commands that read several keys).
// A context does no locking: the command layer holds the key locks around it.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/trim.h"
#include "storage/storage.h"

namespace kvrocks {

// A set of 64-bit hashes with open addressing, cleared in time proportional to
// its size: a batch's written keys, without an allocation per key.
class HashSet {
 public:
  void Insert(uint64_t h);
  bool Contains(uint64_t h) const;
  void Clear();
  size_t size() const { return size_; }

 private:
  void Grow();
  std::vector<uint64_t> slots_;  // 0 = empty (hashes are never 0)
  size_t size_ = 0;
};

class Context {
 public:
  explicit Context(Storage* storage) : storage_(storage) {}
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Storage* storage() const { return storage_; }

  // While alive, the context reads from one consistent snapshot (for
  // commands that read several keys).
  class SnapshotScope {
   public:
    explicit SnapshotScope(Context* ctx);
    ~SnapshotScope();
    SnapshotScope(const SnapshotScope&) = delete;
    SnapshotScope& operator=(const SnapshotScope&) = delete;

   private:
    Context* ctx_;
    bool owner_;
  };

  // value of key in cf, seeing this context's pending writes. NotFound if absent.
  Status Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value);
  // Reads keys of cf with one MultiGet for the Get calls that follow (a
  // pipeline of GETs): a prefetched value serves the next Get of its key, once,
  // unless this batch has written the key by then. Replaces what an earlier
  // call prefetched; DropPrefetched and the end of the batch drop it.
  void Prefetch(ColumnFamily cf, std::vector<std::string> keys);
  void DropPrefetched();
  // An iterator over cf that sees pending writes. ro's bounds must outlive it.
  // Its key() and value() may point into the pending writes, which the next
  // Put or Delete may move: copy them before writing (Next() is safe after).
  std::unique_ptr<rocksdb::Iterator> NewIterator(ColumnFamily cf, rocksdb::ReadOptions ro);

  void Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value);
  void Delete(ColumnFamily cf, const rocksdb::Slice& key);
  // Whether this context's pending writes hold an entry (put or delete) for key.
  bool HasPendingWrite(ColumnFamily cf, const rocksdb::Slice& key);

  // Writes that replace a key without reading what it held (a plain SET):
  // puts meta_value under meta_key (the metadata key of key in db) and the
  // expire-index entry of expire_ms (0: none). What depends on the previous
  // state, the key and expire counters and the removal of the old expire
  // entry, is settled at Commit by one batched lookup of all such keys: much
  // cheaper than a lookup per write. The caller holds the key's lock until
  // the commit and has checked that the batch holds no write of meta_key
  // (HasPendingWrite), so the database still shows the key's previous state.
  bool unread_replace_ok() const { return unread_replace_ok_; }
  // Allows PutUnread; off when the caller must know whether a write created its
  // key (keyspace "new" events). Off by default.
  void set_unread_replace_ok(bool v) { unread_replace_ok_ = v; }
  void PutUnread(uint8_t db, std::string_view key, const std::string& meta_key, const rocksdb::Slice& meta_value,
                 uint64_t expire_ms);

  // Records that a key was created (+1) or removed (-1) in a physical database,
  // and that a key's expiry changed from old_ms to new_ms (0: none).
  void AddKeyCount(uint8_t db, int64_t delta) { AddCounts(db, CountDeltas{delta, 0, 0}); }
  void ChangeExpire(uint8_t db, uint64_t old_ms, uint64_t new_ms) {
    AddCounts(db, CountDeltas{0, (new_ms != 0) - (old_ms != 0),
                              Storage::ExpireSeconds(new_ms) - Storage::ExpireSeconds(old_ms)});
  }
  // Records that the expire index of db received an entry at expire_ms.
  void NoteExpire(uint8_t db, uint64_t expire_ms) { expires_.emplace_back(db, expire_ms); }
  // Records that a key's value changed (WATCH, keyspace notifications), and how.
  // kExpired: removed because it had expired (the expiry cycle, or a command that
  // found it expired); Redis announces that as "expired", never as the command's.
  enum class TouchKind : uint8_t { kModified, kCreated, kRemoved, kExpired };
  // ready: a change Redis signals to clients blocked on the key (signalKeyAsReady:
  // a list, sorted set or stream created, a stream deleted or overwritten); the
  // first such touch of a key orders its wake among the others (Server::TouchKeys).
  void Touch(uint8_t db, std::string_view key, TouchKind kind = TouchKind::kModified, bool ready = false) {
    touched_.emplace_back(db, std::string(key));
    touch_kinds_.push_back(kind);
    touch_marks_.push_back(touch_mark_);
    touch_ready_.push_back(ready);
  }
  const std::vector<std::pair<uint8_t, std::string>>& touched() const { return touched_; }
  // A signal to clients blocked on a key that is no touch of it (kept even by a
  // command whose touches are forgotten, XGROUP): Redis' signalKeyAsReady.
  struct ReadySignal {
    size_t at;  // touched().size() when noted: the key's place among the touches
    std::pair<uint8_t, std::string> key;
    bool all;      // every client blocked on key wakes, not only the first in line
    bool removed;  // the key is gone from here on (until touched again)
  };
  // Every client blocked on key is to wake: a new stream entry is for all its
  // readers, a destroyed group ends all their waits.
  void WakeAllWaiters(uint8_t db, std::string_view key) {
    ready_signals_.push_back(ReadySignal{touched_.size(), {db, std::string(key)}, true, false});
  }
  // The first client blocked on key is to wake, as if the key had been touched
  // here: a whole database changed under it (SWAPDB, FLUSHDB, FLUSHALL), removed
  // tells whether the key went away with it.
  void SignalReady(uint8_t db, std::string_view key, bool removed) {
    ready_signals_.push_back(ReadySignal{touched_.size(), {db, std::string(key)}, false, removed});
  }
  const std::vector<ReadySignal>& ready_signals() const { return ready_signals_; }
  // SWAPDB exchanged logical databases a and b after the first touch_at touches and
  // signal_at ready signals. Touches and signals name physical databases; one noted
  // before a swap belongs to the logical database that held its physical one then,
  // which is what WATCH and blocked clients go by (Redis' signalKeyAsReady and
  // touchWatchedKey take the client's db at that moment). Server::LogicalDbAt.
  struct DbSwap {
    size_t touch_at;
    size_t signal_at;
    int a, b;
  };
  void NoteDbSwap(int a, int b) { db_swaps_.push_back(DbSwap{touched_.size(), ready_signals_.size(), a, b}); }
  const std::vector<DbSwap>& db_swaps() const { return db_swaps_; }
  // A stamp, opaque here, that the keys touched from now on carry: the command
  // layer stamps each command's writes with when they happened, for client-side
  // caching to tell the reads that came after them (UINT64_MAX until set).
  void set_touch_mark(uint64_t mark) { touch_mark_ = mark; }
  // touch_marks()[i] is the stamp touched()[i] got.
  const std::vector<uint64_t>& touch_marks() const { return touch_marks_; }

  // Deletion of expired keys on access, as Redis' expireIfNeeded on a master. While
  // a counter is set, Database::Load notes the keys it finds expired (for the command
  // layer to delete: TakeExpiredFound), a write that replaces or removes an expired key
  // records it as kExpired, and every expired key a batch removes is added to *counter
  // when the batch commits (plain SETs that replaced an expired key unread included).
  // Off (null) by default: a replica's stream, loaders.
  void set_expired_counter(std::atomic<uint64_t>* counter) { expired_counter_ = counter; }
  // Redis' dirty counter (commands/dirty.h): changes the running commands made,
  // added to *counter when the batch commits (rolled back with savepoints).
  void set_dirty_counter(std::atomic<uint64_t>* counter) { dirty_counter_ = counter; }
  void AddDirty(int64_t n) { dirty_pending_ += static_cast<uint64_t>(n); }
  bool expires_on_access() const { return expired_counter_ != nullptr; }
  // The writes apply a master's stream, or are a writable replica's clients': expiry
  // is the master's to do (or the replica's own cycle's), so a past absolute expiry
  // does not delete the key (Database::AlreadyExpired).
  void set_expiry_left_to_master(bool v) { expiry_left_to_master_ = v; }
  bool expiry_left_to_master() const { return expiry_left_to_master_; }
  // The keys this context's writes gave an expiry (a new one, not one kept), while
  // noting is on: a writable replica expires the keys its own clients gave a TTL, as
  // Redis' rememberSlaveKeyWithExpire. They are noted as (logical db, key), the
  // logical database that holds the physical one db at the write, as Redis notes a
  // db id: a later SWAPDB leaves the note on that id. Not cleared by Commit: the
  // command layer takes them (TakeExpiringKeys) once its commands ran; savepoints
  // roll them back, while DiscardWrites keeps them (they may be of an earlier commit).
  void set_note_expiring(bool v) { note_expiring_ = v; }
  void NoteExpiring(uint8_t db, std::string_view key);
  bool HasExpiringKeys() const { return !expiring_.empty(); }
  std::vector<std::pair<uint8_t, std::string>> TakeExpiringKeys() { return std::exchange(expiring_, {}); }
  void NoteExpiredFound(uint8_t db, std::string_view key) {
    if (expired_counter_ != nullptr) expired_found_.emplace_back(db, std::string(key));
  }
  bool HasExpiredFound() const { return !expired_found_.empty(); }
  // The command has since written key: its expired value is accounted for by the
  // write (Database::Store), and what it wrote, possibly already expired itself
  // (SET ... PXAT in the past), is not to be deleted in its place.
  void ForgetExpiredFound(uint8_t db, std::string_view key) {
    if (expired_found_.empty()) return;
    expired_found_.erase(std::remove_if(expired_found_.begin(), expired_found_.end(),
                                        [&](const auto& f) { return f.first == db && f.second == key; }),
                         expired_found_.end());
  }
  // The keys noted since the last call, without duplicates (and forgets them).
  std::vector<std::pair<uint8_t, std::string>> TakeExpiredFound();
  // The key lookups of the running command (Database::Load, string reads)
  // while recording is on (client commands): keyspace hits and misses, and
  // "keymiss" events, come from them. found: the key exists for clients.
  struct Lookup {
    uint8_t db;
    std::string key;
    bool found;
  };
  void set_record_lookups(bool v) { record_lookups_ = v; }
  bool record_lookups() const { return record_lookups_; }
  void RecordLookup(uint8_t db, std::string_view key, bool found) {
    if (record_lookups_) lookups_.push_back(Lookup{db, std::string(key), found});
  }
  const std::vector<Lookup>& lookups() const { return lookups_; }
  void ClearLookups() { lookups_.clear(); }
  // A last-access time a command sets explicitly (RESTORE ... IDLETIME), applied
  // after the command's accesses are recorded (server/access_clock.h).
  void SetAccessTime(std::string_view key, uint32_t lru) { access_times_.emplace_back(std::string(key), lru); }
  std::vector<std::pair<std::string, uint32_t>>& access_times() { return access_times_; }
  // Records that key was removed because it had expired.
  void TouchExpired(uint8_t db, std::string_view key) {
    Touch(db, key, TouchKind::kExpired);
    expired_pending_++;
  }
  // An event a command reports beyond what its changed keys tell (keyspace
  // notifications: "xtrim" of XADD, "xgroup-createconsumer" of XREADGROUP).
  struct NotedEvent {
    uint8_t db;
    std::string key;
    const char* event;
  };
  void NoteEvent(uint8_t db, std::string_view key, const char* event) {
    noted_events_.push_back(NotedEvent{db, std::string(key), event});
  }
  // The events noted since the last call (and forgets them).
  std::vector<NotedEvent> TakeNotedEvents() {
    std::vector<NotedEvent> out;
    out.swap(noted_events_);
    return out;
  }
  // touch_kinds()[i] is how touched()[i] changed.
  const std::vector<TouchKind>& touch_kinds() const { return touch_kinds_; }
  // touch_ready()[i]: whether touched()[i] was a `ready` touch.
  const std::vector<uint8_t>& touch_ready() const { return touch_ready_; }
  // Moves the touched keys to the end of *out and their stamps to the end of
  // *marks (and forgets them, their kinds and noted events, keeping the buffers
  // for the next command).
  void MoveTouchedTo(std::vector<std::pair<uint8_t, std::string>>* out, std::vector<uint64_t>* marks) {
    for (auto& k : touched_) out->push_back(std::move(k));
    marks->insert(marks->end(), touch_marks_.begin(), touch_marks_.end());
    ClearTouched();
  }
  // Forgets the touches from index `from` on, but creations.
  void ForgetTouchesFrom(size_t from) {
    auto kept_before = [&](size_t at) {  // where touch `at` lands once the others are gone
      if (at <= from) return at;
      size_t kept = from;
      for (size_t i = from; i < at; i++) kept += touch_kinds_[i] == TouchKind::kCreated;
      return kept;
    };
    for (ReadySignal& w : ready_signals_) w.at = kept_before(w.at);
    for (DbSwap& w : db_swaps_) w.touch_at = kept_before(w.touch_at);
    size_t kept = from;
    for (size_t i = from; i < touched_.size(); i++) {
      if (touch_kinds_[i] != TouchKind::kCreated) continue;
      if (kept != i) {
        touched_[kept] = std::move(touched_[i]);
        touch_kinds_[kept] = touch_kinds_[i];
        touch_marks_[kept] = touch_marks_[i];
        touch_ready_[kept] = touch_ready_[i];
      }
      kept++;
    }
    touched_.resize(kept);
    touch_kinds_.resize(kept);
    touch_marks_.resize(kept);
    touch_ready_.resize(kept);
  }
  void ClearTouched() {
    ClearAndTrim(&touched_, kTrimKeepEntries);
    ClearAndTrim(&touch_kinds_, kTrimKeepEntries);
    ClearAndTrim(&touch_marks_, kTrimKeepEntries);
    ClearAndTrim(&touch_ready_, kTrimKeepEntries);
    ready_signals_.clear();
    db_swaps_.clear();
    noted_events_.clear();
  }

  // A state CF record for the next write a command makes to storage directly,
  // outside this context's batch (SWAPDB): a replica's stream position past that
  // command, made durable in the same write as what the command did.
  void set_direct_write_state(std::string key, std::string value) {
    direct_write_state_.assign(1, {std::move(key), std::move(value)});
  }
  // Takes that record (none: empty), for the command that writes storage directly.
  std::vector<std::pair<std::string, std::string>> TakeDirectWriteState() {
    std::vector<std::pair<std::string, std::string>> taken;
    taken.swap(direct_write_state_);
    return taken;
  }
  // Whether a record was set and not taken.
  bool direct_write_state_pending() const { return !direct_write_state_.empty(); }
  void clear_direct_write_state() { direct_write_state_.clear(); }

  // Commits without the WAL (bulk loading; the loader flushes memtables at the end).
  void set_without_wal(bool v) { without_wal_ = v; }
  // Writes that are never to be kept (a SCRIPT DEBUG YES session, which Redis
  // runs in a forked child): Commit() keeps them pending instead and the owner
  // drops them with Rollback(). Callers that act on storage directly must not
  // run on such a context.
  void set_discard_writes(bool v) { discard_writes_ = v; }
  bool discard_writes() const { return discard_writes_; }
  // Point reads see only this context's pending writes, never the DB: for a
  // bulk load into empty databases where each key is written whole within one
  // batch (the RDB loader), which saves a RocksDB lookup per element.
  void set_batch_only_reads(bool v) { batch_only_ = v; }
  // Bytes of pending writes.
  size_t PendingBytes() const { return pending()->GetDataSize(); }

  bool HasWrites() const { return pending()->Count() > 0; }
  // Writes everything pending as one batch, then applies counter deltas. The
  // context can be reused afterwards.
  Status Commit();
  // Drops pending writes, and the keys touched so far.
  void Rollback();
  // Marks the pending writes (and counter deltas) of this moment;
  // RollbackToSavePoint drops everything recorded after the latest mark,
  // PopSavePoint forgets the mark and keeps the writes. Marks nest.
  void SetSavePoint();
  void RollbackToSavePoint();
  void PopSavePoint();
  // Writes taken out of a context (MovePendingTo): their bytes in one buffer
  // and fixed-size entries pointing into it, so that gathering millions of
  // small writes costs no allocation per write.
  class PendingWrites {
   public:
    struct Entry {
      uint64_t offset;  // of the key in the buffer; the value follows it
      uint32_t key_len, value_len;
      uint8_t cf;
      rocksdb::WriteType type;
    };
    void Add(int cf, rocksdb::WriteType type, const rocksdb::Slice& key, const rocksdb::Slice& value) {
      entries_.push_back(Entry{data_.size(), static_cast<uint32_t>(key.size()), static_cast<uint32_t>(value.size()),
                               static_cast<uint8_t>(cf), type});
      data_.append(key.data(), key.size());
      data_.append(value.data(), value.size());
    }
    size_t size() const { return entries_.size(); }
    const Entry& operator[](size_t i) const { return entries_[i]; }
    rocksdb::Slice key(const Entry& e) const { return rocksdb::Slice(data_.data() + e.offset, e.key_len); }
    rocksdb::Slice value(const Entry& e) const {
      return rocksdb::Slice(data_.data() + e.offset + e.key_len, e.value_len);
    }
    // Bytes of keys and values held.
    size_t bytes() const { return data_.size(); }
    void reserve(size_t entries, size_t bytes) {
      entries_.reserve(entries);
      data_.reserve(bytes);
    }
    void clear() {
      entries_.clear();
      data_.clear();
    }

   private:
    std::vector<Entry> entries_;
    std::string data_;
  };
  // Moves the pending writes to out instead of committing them, for a bulk
  // loader that writes big sorted batches. The key/expire counter deltas are
  // added to counts[physical db] (for the caller to persist) and applied to the
  // in-memory counters at once.
  void MovePendingTo(PendingWrites* out, std::map<uint8_t, CountDeltas>* counts);

 private:
  // The pending writes in order, whichever form holds them.
  const rocksdb::WriteBatch* pending() const { return indexed_ ? index_->GetWriteBatch() : &plain_; }
  // Moves the pending writes into the index (once per batch), savepoints included.
  rocksdb::WriteBatchWithIndex* Indexed();
  // Whether the batch may hold a write of key in cf (false: it surely does not).
  bool MayHaveWritten(ColumnFamily cf, const rocksdb::Slice& key) const;
  // One pending write, pointing into the batch's buffer.
  struct Write {
    int cf;  // ColumnFamily
    rocksdb::WriteType type;
    rocksdb::Slice key, value;
  };
  // Fills ordered_ with the last write of each key, in (cf, key) order. Returns
  // true when the pending batch already holds exactly that, in that order.
  bool OrderWrites();
  // Forgets the pending writes (not the counters and savepoints).
  void ClearWrites();
  // Forgets the pending writes with their counters, savepoints and lookups,
  // but not the touched keys.
  void DiscardWrites();
  void AddCounts(uint8_t db, const CountDeltas& d);
  rocksdb::ReadOptions ReadOpts() const;
  // Looks up the previous state of the PutUnread keys and records their
  // counter deltas and old expire-entry deletions in the batch.
  Status SettleUnread();
  // Whether the pending writes hold an entry for key, and its type.
  bool FindPending(ColumnFamily cf, const rocksdb::Slice& key, rocksdb::WriteType* type);

  Storage* storage_;
  rocksdb::WriteBatch plain_;
  std::unique_ptr<rocksdb::WriteBatchWithIndex> index_;
  bool indexed_ = false;  // the pending writes are in index_, not plain_
  uint32_t used_cfs_ = 0;  // bit per ColumnFamily written in this batch
  bool without_wal_ = false;
  std::vector<std::pair<std::string, std::string>> direct_write_state_;
  bool discard_writes_ = false;
  bool batch_only_ = false;
  bool unread_replace_ok_ = false;
  // PutUnread's writes: their metadata keys, one after another in unread_keys_.
  struct UnreadWrite {
    size_t offset, size;
    uint64_t expire_ms;
  };
  std::vector<UnreadWrite> unread_;
  std::string unread_keys_;
  // Hashes of the (cf, key) pairs this batch wrote: a key whose hash is not
  // there was surely not written, and its read needs neither index nor batch.
  HashSet written_;
  std::vector<Write> ordered_;  // OrderWrites' result, reused between batches
  // Prefetch's results: key -> index into prefetch_values_/prefetch_status_.
  ColumnFamily prefetch_cf_ = ColumnFamily::kMetadata;
  std::vector<std::string> prefetch_keys_;
  std::vector<rocksdb::PinnableSlice> prefetch_values_;
  std::vector<rocksdb::Status> prefetch_status_;
  std::unordered_map<std::string_view, size_t> prefetched_;
  const rocksdb::Snapshot* snapshot_ = nullptr;
  struct CountDelta {
    uint8_t db;
    CountDeltas d;
  };
  std::vector<CountDelta> deltas_;
  std::vector<std::pair<uint8_t, uint64_t>> expires_;
  std::vector<std::pair<uint8_t, std::string>> touched_;
  std::vector<TouchKind> touch_kinds_;
  std::vector<uint8_t> touch_ready_;
  std::vector<ReadySignal> ready_signals_;
  std::vector<DbSwap> db_swaps_;
  std::vector<uint64_t> touch_marks_;
  uint64_t touch_mark_ = UINT64_MAX;
  std::vector<NotedEvent> noted_events_;
  std::atomic<uint64_t>* expired_counter_ = nullptr;
  std::vector<std::pair<uint8_t, std::string>> expired_found_;
  uint64_t expired_pending_ = 0;  // expired keys the pending writes remove
  std::atomic<uint64_t>* dirty_counter_ = nullptr;
  uint64_t dirty_pending_ = 0;
  bool record_lookups_ = false;
  bool expiry_left_to_master_ = false;
  bool note_expiring_ = false;
  std::vector<std::pair<uint8_t, std::string>> expiring_;
  std::vector<Lookup> lookups_;
  std::vector<std::pair<std::string, uint32_t>> access_times_;
  struct SavePoint {
    std::vector<CountDelta> deltas;
    size_t expires, touched, noted, unread, writes, expiring;
    uint64_t expired, dirty;
  };
  std::vector<SavePoint> savepoints_;
};

}  // namespace kvrocks
