// The RocksDB instance behind kvrocks: column families, options from
// kvrocks.conf, per-database key counters, the logical->physical database
// map, and the lock table. It knows bytes and column families, not Redis
// types (those are in src/types).
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/rate_limiter.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "storage/compression_sampler.h"
#include "storage/lock_manager.h"
#include "storage/switchable_rate_limiter.h"
#include "storage/tombstone_compactor.h"
#include "storage/wal_read_gate.h"

namespace kvrocks {

enum class ColumnFamily : int {
  kSubkey = 0,  // RocksDB's "default": collection elements
  kMetadata,
  kZSetScore,
  kStream,
  kPropagate,
  kState,   // replication state, counters, the database map
  kExpire,  // expiry index for the active-expire cycle
  kZSetRank,  // big sorted sets' counts for ranks (types/rank_index.h)
  kCount,
};

// Changes to a physical database's counters (keys, keys with an expiry, the
// sum of their Storage::ExpireSeconds).
struct CountDeltas {
  int64_t keys = 0;
  int64_t expires = 0;
  int64_t expire_seconds = 0;
};

class Storage {
 public:
  static constexpr int kMaxDatabases = 256;

  explicit Storage(const Config* config);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Opens (creating if needed) the database under config->dir/db.
  Status Open();
  // Flushes memtables and closes RocksDB. Idempotent.
  void Close();

  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* cf(ColumnFamily c) { return handles_[static_cast<int>(c)]; }

  // Commits a batch through the WAL (fsync'd when rocksdb.sync-writes is yes).
  // without_wal: bulk loading, made durable by FlushMemTables() before it counts.
  Status Write(rocksdb::WriteBatch* batch, bool without_wal = false);
  // Flushes every memtable to SST files (makes writes done without WAL durable).
  Status FlushMemTables();
  // Whether compactions keep the elements of expired keys however long expired
  // (a replica, until its master's DEL), or drop them after a grace period
  // (compaction_filter.h). Starts as the config's replicaof says. They are kept
  // too while the config's active-expire is off.
  void KeepExpiredSubkeys(bool keep);
  // Pauses (or resumes) automatic compactions while a bulk load ingests files;
  // the files are compacted after the load instead of competing with it.
  Status PauseCompactions(bool pause);
  // Writes sorted, unique (key, value) pairs of one column family to an SST
  // file and ingests it (bulk loading: no memtable, no WAL).
  Status IngestSorted(ColumnFamily cf, const std::vector<std::pair<rocksdb::Slice, rocksdb::Slice>>& kvs);

  LockManager* locks() { return &locks_; }
  // Compacts ranges where reads step over many tombstones (null before Open).
  TombstoneCompactor* tombstone_compactor() { return tombstone_compactor_.get(); }
  // String values of at least this size are stored out of line (see key_encoding.h).
  size_t string_inline_limit() const {
    return config_->rocksdb_min_blob_size > 0 ? static_cast<size_t>(config_->rocksdb_min_blob_size) : 4096;
  }

  // A new, strictly increasing version for a new incarnation of a collection.
  uint64_t NewVersion();
  // Called by a RENAME that writes a moved record (key_encoding.h), before it
  // commits: the subkey compaction filter follows such records from then on.
  void NoteMovedSubkeys();

  // Physical database id of a logical one (SELECT index).
  uint8_t PhysicalDb(int logical) const { return db_map_[logical].load(std::memory_order_acquire); }
  // The logical db mapped to a physical one, or -1 (a bulk load's staging db).
  int LogicalDb(uint8_t physical) const;
  // Swaps two logical databases: O(1), persisted. Caller holds all key stripes.
  // state_puts go to the state CF in the same write as the swap.
  Status SwapDb(int a, int b, const std::vector<std::pair<std::string, std::string>>& state_puts = {});

  // Number of keys (including expired ones not yet reclaimed) in a physical db.
  int64_t KeyCount(uint8_t physical_db) const { return key_counts_[physical_db].load(std::memory_order_relaxed); }
  // Number of keys with an expiry in a physical db.
  int64_t ExpireCount(uint8_t physical_db) const { return expire_counts_[physical_db].load(std::memory_order_relaxed); }
  // The average time to live, in ms, of the keys of a physical db that have an
  // expiry (INFO keyspace avg_ttl; 0 without any): kept exact to the second
  // from the sum of their expiry times, which the counters below carry.
  int64_t AvgTtlMs(uint8_t physical_db, uint64_t now_ms) const;
  // A key's share of that sum: its expiry in seconds from kExpireEpoch (clamped
  // to +-2^31), 0 for no expiry.
  static int64_t ExpireSeconds(uint64_t expire_ms);
  // Adds persistent counter updates for db to batch; apply them with
  // ApplyCountDeltas after the write succeeds.
  void AddCountMerges(rocksdb::WriteBatchBase* batch, uint8_t physical_db, const CountDeltas& d);
  // Whether key/value is a merge operand AddCountMerges writes; if so, adds it to
  // (*d)[its physical db].
  static bool DecodeCountMerge(const rocksdb::Slice& key, const rocksdb::Slice& value,
                               std::map<uint8_t, CountDeltas>* d);
  // Computes a db's sum of ExpireSeconds from its keys (data written before the
  // sum was kept).
  Status RebuildExpireSeconds(uint8_t physical_db);
  void ApplyCountDeltas(uint8_t physical_db, const CountDeltas& d) {
    key_counts_[physical_db].fetch_add(d.keys, std::memory_order_relaxed);
    expire_counts_[physical_db].fetch_add(d.expires, std::memory_order_relaxed);
    expire_seconds_[physical_db].fetch_add(d.expire_seconds, std::memory_order_relaxed);
  }

  // Deletes every key of a physical db: a range delete in each column family
  // that holds any of its keys, then a flush of the memtables (see the .cc), at
  // once or, within 20 ms of the last one, from FlushDeferredMemtables.
  // The caller keeps writers of the db out (global lock, or a db no one maps).
  Status FlushDb(uint8_t physical_db);
  // The flush FlushDb put off, if any. Called by the server's cron.
  void FlushDeferredMemtables();

  // Physical dbs that no logical db in [0, databases) maps to (a bulk load
  // fills them before they replace the visible ones).
  std::vector<uint8_t> FreePhysicalDbs(int databases) const;
  // One bulk load at a time stages into the free dbs (a replica's full sync,
  // DEBUG RELOAD): held by the load from its start to its switch or abort.
  std::mutex& staging_mutex() { return staging_mu_; }
  // Records (persistently) physical dbs whose data is garbage if the process
  // dies now: they are emptied when the storage opens next. A bulk load marks
  // its staging dbs; ReplaceDatabases marks the dbs it replaced until they are
  // emptied, then clears the record. An empty list clears it.
  Status MarkToDrop(const std::vector<uint8_t>& dbs);
  // Makes logical db i read physical db fresh[i] (for i < fresh.size()) in one
  // persisted step, then deletes the data the logical dbs had before. Caller
  // holds all key stripes. state_puts are written to the state CF in the same batch.
  Status ReplaceDatabases(const std::vector<uint8_t>& fresh,
                          const std::vector<std::pair<std::string, std::string>>& state_puts = {});

  // Flushes memtables and compacts every column family fully (COMPACT), which
  // runs the compaction filters over all data.
  Status CompactAll();
  // Cancels running manual compactions (CompactAll's) and refuses later ones, for a
  // shutdown.
  void CancelManualCompactions();

  // The history of this database's write-ahead log, as kvrocks replicas
  // (KSLAVEOF) follow it: a random id (40 hex digits, persisted) naming the
  // sequence-number space they resume in. Data that reaches storage without the
  // WAL (IngestSorted, Write without_wal) is a gap a replica streaming the WAL
  // would miss, so each such write gives the database a new id first (a replica
  // with the old one needs a full sync) and bumps wal_generation(), which a
  // running stream checks to end itself.
  std::string wal_id();
  uint64_t wal_generation() const { return wal_generation_.load(std::memory_order_acquire); }
  // Held by readers of the WAL (GetUpdatesSince and its iterator), who check
  // wal_generation() under it: no write is in flight meanwhile, and a write
  // that leaves a gap in the WAL has moved wal_generation() on (wal_read_gate.h).
  WalReadGate* wal_gate() { return &wal_gate_; }
  // State column family records that belong to this instance and never travel
  // to a kvrocks replica (its own replication positions, the WAL id).
  static bool IsLocalStateKey(const rocksdb::Slice& key);
  // Waits up to timeout_ms for a write past sequence number seq, or for a
  // WakeWriteWaiters call.
  void WaitForWrites(uint64_t seq, int timeout_ms);
  void WakeWriteWaiters();
  // The sequence number of the last write.
  uint64_t LatestSequence() { return db_->GetLatestSequenceNumber(); }
  // Re-reads what the server keeps in memory of the state column family (the
  // database map, the counters, the version high-water mark) after writes that
  // bypassed this class's bookkeeping: a kvrocks replica applying its master's
  // batches. Does not drop anything (see MarkToDrop).
  Status ReloadState();
  // Versions below v are taken (a kvrocks replica saw its master use v).
  void ObserveVersion(uint64_t v);

  // Writes a consistent RocksDB checkpoint to dir (which must not exist).
  Status Checkpoint(const std::string& dir);

  // Lowest expiry that may still sit in the expire index of db; the active-expire
  // cycle starts its scan there.
  uint64_t ExpireFloor(uint8_t db) const { return expire_floor_[db].load(std::memory_order_relaxed); }
  void LowerExpireFloor(uint8_t db, uint64_t expire_ms);
  // Raises the floor from `seen` to expire_ms unless a writer lowered it meanwhile.
  void RaiseExpireFloor(uint8_t db, uint64_t seen, uint64_t expire_ms) {
    expire_floor_[db].compare_exchange_strong(seen, expire_ms);
  }

  // Blob garbage collection (compactions moving the live values out of the
  // oldest blob files so that those files can go) rewrites values that are
  // still live: it runs only while at least rocksdb.blob-gc-min-garbage-ratio
  // percent of the blob bytes are garbage, and stops below half of that.
  // Called about once a second; cheap when nothing changes.
  void AdjustBlobGc();
  bool blob_gc_on() const { return blob_gc_on_; }

  // Blob compression (rocksdb.blob-compression) runs only while it pays: the
  // context reports each value it writes to the subkey column family, one big
  // value (a future blob) in CompressionSampler::kSampleEvery is compressed, and
  // AdjustBlobCompression turns blob compression off while the samples shrink by
  // less than half of rocksdb.blob-compression-min-saving percent, on again once
  // they shrink by that much. Called about once a second.
  void NoteSubkeyValue(const rocksdb::Slice& value) {
    if (value.size() >= blob_sample_min_size_.load(std::memory_order_relaxed) &&
        blob_sampling_.load(std::memory_order_relaxed)) {
      blob_sampler_.Note(blob_compression_, value);
    }
  }
  void AdjustBlobCompression();
  bool blob_compression_on() const { return blob_compression_on_; }
  // Percent of their bytes the last round of samples saved; -1 before the first.
  int blob_compression_saving() const { return blob_compression_saving_; }

  // Approximate on-disk size of all SST and blob files.
  uint64_t DiskUsage();
  std::string GetProperty(const std::string& name, ColumnFamily c = ColumnFamily::kMetadata);
  uint64_t GetIntProperty(const std::string& name);
  std::shared_ptr<rocksdb::Cache> block_cache() { return block_cache_; }

  // The rocksdb.* options that CONFIG SET changes on the running database (they
  // are mutable in config.cc). ApplyOption hands the option's current value in
  // the config to RocksDB: SetOptions on the column families it shapes,
  // SetDBOptions, the block cache's capacity or the rate limiter's rate. On an
  // error some column families may have taken the value; CONFIG SET then puts
  // the old value back and applies that.
  static const std::vector<std::string>& RuntimeOptions();
  Status ApplyOption(const std::string& name);
  bool sync_writes() const { return sync_writes_.load(std::memory_order_relaxed); }

 private:
  Status LoadState();
  // The map and counters from the state column family.
  Status LoadMapAndCounters();
  // A new WAL id, persisted (see wal_id()).
  void NoteWalGap();
  rocksdb::ColumnFamilyOptions CFOptions(ColumnFamily c);
  // Blob GC runs from the start, whatever the share of garbage.
  bool BlobGcUnconditional() const;

  const Config* config_;
  // Declared before db_ so that it outlives it: archives logs (wal_archive_file_system.h).
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::shared_ptr<rocksdb::Cache> block_cache_;
  std::shared_ptr<SwitchableRateLimiter> rate_limiter_;  // always there: its rate can change at run time
  std::atomic<bool> sync_writes_{false};  // rocksdb.sync-writes: each WAL write fsync'd
  LockManager locks_;
  std::atomic<uint64_t> last_version_{0};
  std::atomic<bool> blob_gc_on_{false};  // what the subkey CF runs with (AdjustBlobGc)
  // FlushDb's memtable flushes: when the last ran (MonotonicUs), whether one waits.
  std::atomic<uint64_t> last_flushdb_flush_us_{0};
  std::atomic<bool> flushdb_flush_deferred_{false};
  // Starts a flush of every column family's memtable (not waiting for it).
  void FlushMemtablesAfterFlushDb();
  int blob_gc_ratio_applied_ = 0;        // the ratio its force threshold was set from (AdjustBlobGc only)
  rocksdb::CompressionType blob_compression_ = rocksdb::kNoCompression;  // rocksdb.blob-compression
  std::atomic<size_t> blob_sample_min_size_{SIZE_MAX};                     // values that become blobs
  std::atomic<bool> blob_sampling_{false};
  std::atomic<bool> blob_compression_on_{false};  // what the subkey CF runs with (AdjustBlobCompression)
  std::atomic<int> blob_compression_saving_{-1};
  CompressionSampler blob_sampler_;
  std::array<std::atomic<uint8_t>, kMaxDatabases> db_map_;
  std::array<std::atomic<int64_t>, kMaxDatabases> key_counts_;
  std::array<std::atomic<int64_t>, kMaxDatabases> expire_counts_;
  std::array<std::atomic<int64_t>, kMaxDatabases> expire_seconds_;  // sums of ExpireSeconds
  std::array<std::atomic<uint64_t>, kMaxDatabases> expire_floor_;
  std::mutex close_mu_;
  std::mutex staging_mu_;
  std::mutex wal_id_mu_;  // guards wal_id_
  std::string wal_id_;
  std::atomic<uint64_t> wal_generation_{0};
  WalReadGate wal_gate_;  // every write to db_ holds it (Writing)
  std::mutex writes_mu_;  // with writes_cv_: WaitForWrites
  std::condition_variable writes_cv_;
  uint64_t write_wakes_ = 0;  // WakeWriteWaiters calls, under writes_mu_
  std::atomic<int> write_waiters_{0};
  std::unique_ptr<TombstoneCompactor> tombstone_compactor_;
};

}  // namespace kvrocks
