#include "storage/storage.h"

#include <glog/logging.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/rate_limiter.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/utilities/table_properties_collectors.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <unordered_map>

#include "common/encoding.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "storage/compaction_filter.h"
#include "storage/key_encoding.h"
#include "storage/wal_archive_file_system.h"

namespace kvrocks {

namespace {

const char* const kCFNames[] = {"default", "metadata", "zset_score", "stream", "propagate", "state", "expire", "zset_rank"};

const char kDbMapKey[] = "dbmap";
const char kKeyCountPrefix[] = "keycount:";
const char kExpireCountPrefix[] = "expirecount:";
const char kExpireSecondsPrefix[] = "expiresecs:";
// ExpireSeconds counts from here (2020-09-13), so that the sums stay small.
constexpr int64_t kExpireEpoch = 1600000000;
const char kVersionKey[] = "version";
// Physical dbs whose data is garbage if found at start (one byte each): the
// staging dbs of a bulk load in progress, or the dbs a finished load replaced.
const char kDropKey[] = "dbs-to-drop";
const char kWalIdKey[] = "wal-id";
// Per-instance records of other modules (docs/encoding.md): the positions of a
// replica of a Redis master and of a kvrocks master.
const char* const kLocalStateKeys[] = {kWalIdKey, "replication", "native-replication"};

std::string RandomHexId() {
  static const char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ NowUs());
  std::string id(40, '0');
  for (auto& c : id) c = kHex[rng() & 15];
  return id;
}

// Adds signed 64-bit integers stored big-endian: the key counters.
class Int64AddOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger*) const override {
    int64_t base = 0;
    if (existing != nullptr && existing->size() == 8) base = static_cast<int64_t>(DecodeBE64(existing->data()));
    int64_t add = value.size() == 8 ? static_cast<int64_t>(DecodeBE64(value.data())) : 0;
    new_value->clear();
    PutBE64(new_value, static_cast<uint64_t>(base + add));
    return true;
  }
  const char* Name() const override { return "kvrocks.Int64Add"; }
};

rocksdb::CompressionType ParseCompression(const std::string& s) {
  std::string l = ToLower(s);
  if (l == "snappy") return rocksdb::kSnappyCompression;
  if (l == "lz4") return rocksdb::kLZ4Compression;
  if (l == "zstd") return rocksdb::kZSTD;
  return rocksdb::kNoCompression;
}

// The name SetOptions takes for a compression type ParseCompression returns.
const char* CompressionOptionName(rocksdb::CompressionType t) {
  switch (t) {
    case rocksdb::kSnappyCompression: return "kSnappyCompression";
    case rocksdb::kLZ4Compression: return "kLZ4Compression";
    case rocksdb::kZSTD: return "kZSTD";
    default: return "kNoCompression";
  }
}

constexpr int kLevels = 7;

// rocksdb.compression ("no:no:lz4:...", the last entry repeating) for each level.
std::vector<rocksdb::CompressionType> CompressionPerLevel(const std::string& spec) {
  std::vector<std::string> parts;
  std::string cur;
  for (char ch : spec + ":") {
    if (ch == ':') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(ch);
    }
  }
  std::vector<rocksdb::CompressionType> levels;
  for (size_t i = 0; i < kLevels; i++) levels.push_back(ParseCompression(parts[std::min(i, parts.size() - 1)]));
  return levels;
}

std::shared_ptr<SubkeyFilterFactory> g_subkey_filter = std::make_shared<SubkeyFilterFactory>();

}  // namespace

Storage::Storage(const Config* config) : config_(config) {
  for (int i = 0; i < kMaxDatabases; i++) {
    db_map_[i].store(static_cast<uint8_t>(i));
    key_counts_[i].store(0);
    expire_counts_[i].store(0);
    expire_seconds_[i].store(0);
    expire_floor_[i].store(0);
  }
}

Storage::~Storage() { Close(); }

rocksdb::ColumnFamilyOptions Storage::CFOptions(ColumnFamily c) {
  rocksdb::ColumnFamilyOptions o;
  o.write_buffer_size = static_cast<size_t>(config_->rocksdb_write_buffer_size);
  o.max_write_buffer_number = config_->rocksdb_max_write_buffer_number;
  o.target_file_size_base = static_cast<uint64_t>(config_->rocksdb_target_file_size_base);
  o.max_bytes_for_level_base = o.target_file_size_base * 4;
  o.level0_slowdown_writes_trigger = config_->rocksdb_level0_slowdown_writes_trigger;
  o.level0_stop_writes_trigger = config_->rocksdb_level0_stop_writes_trigger;
  o.level_compaction_dynamic_level_bytes = true;

  o.num_levels = kLevels;
  o.compression_per_level = CompressionPerLevel(config_->rocksdb_compression);

  rocksdb::BlockBasedTableOptions t;
  t.block_cache = block_cache_;
  // Point lookups dominate: small blocks with a hash index inside each block.
  t.block_size = 16 * 1024;
  t.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  t.format_version = 5;
  // Debian's librocksdb is built portable, without the SSE4.2 CRC32C (about
  // 1.4 GB/s here): XXH3 block checksums cost far less on every flush,
  // compaction and block read (bench/RESULTS.md).
  t.checksum = rocksdb::kXXH3;
  if (config_->rocksdb_bloom_filter_bits > 0) {
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(config_->rocksdb_bloom_filter_bits, false));
    t.whole_key_filtering = true;
  }
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  // Most writes first look their key up (to keep key counts exact); a memtable
  // bloom filter answers "not in this memtable" without a skiplist search. It is
  // sized as a share of the write buffer (bytes of filter per byte of memtable):
  // 2% gives ~25 bits per 150-byte metadata entry, 4% ~12 per 50-byte element.
  // Families only iterated (scores, streams, expiry index, state) get none: each
  // filter is allocated and zeroed with every memtable, used or not.
  switch (c) {
    case ColumnFamily::kMetadata:
      o.memtable_whole_key_filtering = true;
      o.memtable_prefix_bloom_size_ratio = 0.02;
      break;
    case ColumnFamily::kSubkey:
      o.memtable_whole_key_filtering = true;
      o.memtable_prefix_bloom_size_ratio = 0.04;
      break;
    default:
      break;
  }

  switch (c) {
    case ColumnFamily::kSubkey:
      // Big string values and collection elements: large values go to blob files.
      o.enable_blob_files = config_->rocksdb_enable_blob_files;
      o.min_blob_size = static_cast<uint64_t>(config_->rocksdb_min_blob_size);
      o.blob_compression_type = ParseCompression(config_->rocksdb_blob_compression);
      // Off until AdjustBlobGc finds enough garbage, unless GC is to run regardless of it.
      o.enable_blob_garbage_collection = BlobGcUnconditional();
      o.blob_garbage_collection_age_cutoff = config_->rocksdb_blob_gc_age_cutoff / 100.0;
      // Hot big values are served from the shared block cache, not by a file read each.
      o.blob_cache = block_cache_;
      o.compaction_filter_factory = g_subkey_filter;
      // With big values in blob files a flush writes a small SST (keys and blob
      // references: ~8000 of them for a 64 MB memtable of 8 KiB values), and each
      // L0 compaction rewrites the whole base level, the subkey filter looking up
      // every record's metadata. Waiting for twice the files halves that work
      // (compaction CPU per 8 KiB SET 7.0-7.4 -> 4.0-4.3 us, bench/RESULTS.md
      // session 31). Files of small values still compact at RocksDB's other L0
      // trigger, their total size against max_bytes_for_level_base.
      if (o.enable_blob_files) o.level0_file_num_compaction_trigger = 8;
      break;
    case ColumnFamily::kZSetRank:
      o.compaction_filter_factory = g_subkey_filter;
      // A few counts per sorted set, each overwritten by every write to its
      // set. A memtable keeps every version and rank walks step over them
      // (ZRANK on a 1M-member set right after 100k ZADDs: 2.8k/s with 64 MB
      // buffers, 8.5-13k with 256 KB, 25k with no versions), so this family's
      // buffers are small. Updating the counts in place (RocksDB's
      // inplace_update_support, 20-24k/s in session 40) is not an option: a
      // single family with it makes GetSnapshot() return null for the whole DB
      // (MemTable::IsSnapshotSupported), and every snapshot read (MGET beside a
      // concurrent MSET, multi-key reads, the RDB snapshot served by SYNC) would
      // then see writes that committed after it began (bench/RESULTS.md, session
      // 46). Storage::Open refuses options that disable snapshots. A walk that
      // still meets many versions gets the set's records compacted (rank_index.cc).
      o.write_buffer_size = 256 << 10;
      o.max_write_buffer_number = 4;
      o.level0_file_num_compaction_trigger = 2;
      break;
    case ColumnFamily::kZSetScore:
    case ColumnFamily::kStream:
      o.compaction_filter_factory = g_subkey_filter;
      break;
    case ColumnFamily::kState:
      o.merge_operator = std::make_shared<Int64AddOperator>();
      break;
    case ColumnFamily::kExpire:
      // The active-expire cycle deletes from the front of this CF; compact files
      // full of tombstones early so that its seeks stay cheap.
      o.table_properties_collector_factories.push_back(
          rocksdb::NewCompactOnDeletionCollectorFactory(10000, 5000, 0.5));
      break;
    default:
      break;
  }
  return o;
}

Status Storage::Open() {
  std::string path = config_->dir + "/db";
  ::mkdir(config_->dir.c_str(), 0755);
  // SST files a bulk load was writing when the process died (IngestSorted).
  std::error_code ec;
  std::filesystem::remove_all(config_->dir + "/ingest", ec);
  // One cache for blocks and big values (blobs). RocksDB inserts index and
  // filter blocks at high priority, data blocks at low and blobs at bottom
  // priority: blobs use whatever the blocks leave free and are evicted first, so
  // a stream of big values cannot push out the blocks of the keys, and no part
  // of the budget sits idle when there are no big values.
  rocksdb::LRUCacheOptions cache_options;
  cache_options.capacity = static_cast<size_t>(config_->rocksdb_block_cache_size);
  cache_options.num_shard_bits = 6;
  cache_options.high_pri_pool_ratio = 0.1;
  cache_options.low_pri_pool_ratio = 0.6;
  block_cache_ = rocksdb::NewLRUCache(cache_options);

  rocksdb::DBOptions dbo;
  if (config_->rocksdb_wal_ttl_seconds > 0 || config_->rocksdb_wal_size_limit_mb > 0) {
    env_ = rocksdb::NewCompositeEnv(std::make_shared<WalArchiveFileSystem>(rocksdb::FileSystem::Default()));
    dbo.env = env_.get();
  }
  if (config_->rocksdb_low_priority_compaction) {
    rocksdb::Status s = dbo.env->LowerThreadPoolCPUPriority(rocksdb::Env::LOW, rocksdb::CpuPriority::kLow);
    if (!s.ok()) LOG(WARNING) << "Compaction threads keep their CPU priority: " << s.ToString();
  }
  dbo.create_if_missing = true;
  dbo.create_missing_column_families = true;
  dbo.max_background_jobs = config_->rocksdb_max_background_jobs;
  dbo.max_open_files = config_->rocksdb_max_open_files;
  dbo.use_direct_reads = config_->rocksdb_use_direct_reads;
  dbo.use_direct_io_for_flush_and_compaction = config_->rocksdb_use_direct_io_for_flush_and_compaction;
  dbo.bytes_per_sync = 1024 * 1024;
  dbo.wal_bytes_per_sync = 512 * 1024;
  // Pipelined writes: an 8 KiB SET's WAL write overlaps the memtable insert of
  // the one before (set_8k 0.33-0.35 of Redis without, 0.47-0.53 with:
  // bench/RESULTS.md, session 80). They publish sequence numbers inside WAL
  // records, which the WAL's readers must not see (wal_read_gate.h).
  dbo.enable_pipelined_write = true;
  // Every write goes through the WAL; compressing it halves the bytes written for
  // big values on a disk-bandwidth-bound machine (bench/RESULTS.md).
  dbo.wal_compression = ParseCompression(config_->rocksdb_wal_compression);
  // Batches are written in key order (Context::Commit); single-threaded memtable
  // inserts reuse the skiplist position of the previous key, concurrent ones cannot.
  dbo.allow_concurrent_memtable_write = false;
  dbo.keep_log_file_num = 5;
  // Rarely written column families (state, expire) would otherwise pin old WAL files.
  dbo.max_total_wal_size = 4 * static_cast<uint64_t>(config_->rocksdb_write_buffer_size);
  // Write-ahead logs no longer needed for recovery are archived for a while: they
  // are the backlog kvrocks replicas resume from (docs/replication.md).
  dbo.WAL_ttl_seconds = static_cast<uint64_t>(config_->rocksdb_wal_ttl_seconds);
  dbo.WAL_size_limit_MB = static_cast<uint64_t>(config_->rocksdb_wal_size_limit_mb);
  rate_limiter_ = std::make_shared<SwitchableRateLimiter>(config_->rocksdb_rate_limiter_bytes_per_sec);
  dbo.rate_limiter = rate_limiter_;

  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (int i = 0; i < static_cast<int>(ColumnFamily::kCount); i++) {
    cfs.emplace_back(kCFNames[i], CFOptions(static_cast<ColumnFamily>(i)));
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(dbo, path, cfs, &handles_, &raw);
  if (!s.ok()) return Status::IOError("open rocksdb at " + path + ": " + s.ToString());
  db_.reset(raw);
  // Multi-key reads and RDB snapshots rely on RocksDB snapshots; an option that
  // disables them (inplace_update_support on any family) must not slip in.
  const rocksdb::Snapshot* probe = db_->GetSnapshot();
  if (probe == nullptr) return Status::InvalidArgument("rocksdb options disable snapshots");
  db_->ReleaseSnapshot(probe);
  sync_writes_ = config_->rocksdb_sync_writes;
  blob_gc_on_ = config_->rocksdb_enable_blob_files && BlobGcUnconditional();
  blob_gc_ratio_applied_ = 0;  // RocksDB's default force threshold (1.0) is what ratio 0 sets
  blob_compression_ = ParseCompression(config_->rocksdb_blob_compression);
  blob_compression_on_ = config_->rocksdb_enable_blob_files && blob_compression_ != rocksdb::kNoCompression;
  if (blob_compression_on_) blob_sample_min_size_ = static_cast<size_t>(config_->rocksdb_min_blob_size);
  blob_sampling_ = blob_compression_on_ && config_->rocksdb_blob_compression_min_saving > 0;
  // A server that starts as a replica keeps expired keys' elements from its first compaction on.
  g_subkey_filter->set_keep_expired(!config_->replicaof.empty());
  g_subkey_filter->watch_active_expire(&config_->active_expire);
  g_subkey_filter->Attach(db_.get(), cf(ColumnFamily::kMetadata), cf(ColumnFamily::kState));
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kState)));
    it->Seek(kMovedKeyPrefix);
    if (it->Valid() && it->key().starts_with(kMovedKeyPrefix)) g_subkey_filter->note_moved();
  }
  tombstone_compactor_ = std::make_unique<TombstoneCompactor>(db_.get());
  std::string id;
  s = db_->Get(rocksdb::ReadOptions(), cf(ColumnFamily::kState), kWalIdKey, &id);
  if (s.ok() && id.size() == 40) {
    std::lock_guard<std::mutex> g(wal_id_mu_);
    wal_id_ = id;
  } else {
    NoteWalGap();
  }
  return LoadState();
}

bool Storage::IsLocalStateKey(const rocksdb::Slice& key) {
  for (const char* k : kLocalStateKeys) {
    if (key == k) return true;
  }
  return false;
}

std::string Storage::wal_id() {
  std::lock_guard<std::mutex> g(wal_id_mu_);
  return wal_id_;
}

void Storage::NoteWalGap() {
  std::lock_guard<std::mutex> g(wal_id_mu_);
  wal_id_ = RandomHexId();
  rocksdb::WriteOptions wo;
  wo.sync = sync_writes_.load(std::memory_order_relaxed);
  rocksdb::Status s = db_->Put(wo, cf(ColumnFamily::kState), kWalIdKey, wal_id_);
  if (!s.ok()) LOG(WARNING) << "Persisting the WAL id: " << s.ToString();
  wal_generation_.fetch_add(1, std::memory_order_acq_rel);
}

void Storage::WaitForWrites(uint64_t seq, int timeout_ms) {
  std::unique_lock<std::mutex> g(writes_mu_);
  write_waiters_.fetch_add(1);
  const uint64_t wakes = write_wakes_;
  writes_cv_.wait_for(g, std::chrono::milliseconds(timeout_ms),
                      [&] { return db_->GetLatestSequenceNumber() > seq || write_wakes_ != wakes; });
  write_waiters_.fetch_sub(1);
}

void Storage::WakeWriteWaiters() {
  std::lock_guard<std::mutex> g(writes_mu_);
  write_wakes_++;
  writes_cv_.notify_all();
}

Status Storage::ReloadState() { return LoadMapAndCounters(); }

void Storage::ObserveVersion(uint64_t v) {
  uint64_t last = last_version_.load(std::memory_order_relaxed);
  while (last < v && !last_version_.compare_exchange_weak(last, v, std::memory_order_relaxed)) {
  }
}

Status Storage::LoadState() {
  Status ls = LoadMapAndCounters();
  if (!ls.ok()) return ls;
  rocksdb::ReadOptions ro;
  std::string v;
  rocksdb::Status s = db_->Get(ro, cf(ColumnFamily::kState), kDropKey, &v);
  if (s.ok() && !v.empty()) {
    LOG(WARNING) << "Dropping the data of a bulk load that did not finish, or of the databases it replaced ("
                 << v.size() << " physical dbs)";
    for (char p : v) {
      Status st = FlushDb(static_cast<uint8_t>(p));
      if (!st.ok()) return st;
    }
    return MarkToDrop({});
  }
  return Status::OK();
}

Status Storage::LoadMapAndCounters() {
  rocksdb::ReadOptions ro;
  std::string v;
  rocksdb::Status s = db_->Get(ro, cf(ColumnFamily::kState), kDbMapKey, &v);
  const bool mapped = s.ok() && v.size() == kMaxDatabases;
  for (int i = 0; i < kMaxDatabases; i++) db_map_[i].store(static_cast<uint8_t>(mapped ? v[i] : i));
  // A counter without a record is 0 (after a replica's full sync, too).
  auto counter = [&](const std::string& key) {
    s = db_->Get(ro, cf(ColumnFamily::kState), key, &v);
    return s.ok() && v.size() == 8 ? static_cast<int64_t>(DecodeBE64(v.data())) : 0;
  };
  for (int i = 0; i < kMaxDatabases; i++) {
    key_counts_[i].store(counter(kKeyCountPrefix + std::to_string(i)));
    expire_counts_[i].store(counter(kExpireCountPrefix + std::to_string(i)));
    int64_t sum = counter(kExpireSecondsPrefix + std::to_string(i));
    if (s.ok() && v.size() == 8) {
      expire_seconds_[i].store(sum);
    } else if (s.IsNotFound() && expire_counts_[i].load() != 0) {
      // Data from before the sum was kept: computed once from the keys' metadata.
      Status rs = RebuildExpireSeconds(static_cast<uint8_t>(i));
      if (!rs.ok()) return rs;
    } else {
      expire_seconds_[i].store(0);
    }
  }
  s = db_->Get(ro, cf(ColumnFamily::kState), kVersionKey, &v);
  uint64_t persisted = (s.ok() && v.size() == 8) ? DecodeBE64(v.data()) : 0;
  ObserveVersion(std::max(persisted, NowUs() << 10));
  return Status::OK();
}

Status Storage::MarkToDrop(const std::vector<uint8_t>& dbs) {
  rocksdb::WriteBatch batch;
  if (dbs.empty()) {
    batch.Delete(cf(ColumnFamily::kState), kDropKey);
  } else {
    batch.Put(cf(ColumnFamily::kState), kDropKey, std::string(dbs.begin(), dbs.end()));
  }
  return Write(&batch);
}

void Storage::Close() {
  std::lock_guard<std::mutex> g(close_mu_);
  if (!db_) return;
  if (tombstone_compactor_) tombstone_compactor_->Stop();
  g_subkey_filter->Detach();
  // Persist the version high-water mark so that versions never repeat even if the clock steps back.
  std::string v;
  PutBE64(&v, last_version_.load());
  rocksdb::WriteOptions wo;
  wo.sync = sync_writes_;
  db_->Put(wo, cf(ColumnFamily::kState), kVersionKey, v);
  rocksdb::FlushOptions fo;
  fo.wait = true;
  db_->Flush(fo, handles_);
  db_->SyncWAL();
  // A running compaction's filter holds the metadata handle (SubkeyFilter): let
  // background work stop before the handles go away.
  rocksdb::CancelAllBackgroundWork(db_.get(), true);
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  handles_.clear();
  db_->Close();
  tombstone_compactor_.reset();
  db_.reset();
}

Status Storage::Write(rocksdb::WriteBatch* batch, bool without_wal) {
  rocksdb::WriteOptions wo;
  if (without_wal) {
    wo.disableWAL = true;
  } else {
    wo.sync = sync_writes_.load(std::memory_order_relaxed);
  }
  {
    WalReadGate::Writing writing(&wal_gate_);
    rocksdb::Status s = db_->Write(wo, batch);
    if (!s.ok()) return Status::IOError(s.ToString());
    if (without_wal) NoteWalGap();
  }
  if (write_waiters_.load(std::memory_order_relaxed) > 0) {
    std::lock_guard<std::mutex> g(writes_mu_);
    writes_cv_.notify_all();
  }
  return Status::OK();
}

void Storage::KeepExpiredSubkeys(bool keep) { g_subkey_filter->set_keep_expired(keep); }

void Storage::NoteMovedSubkeys() { g_subkey_filter->note_moved(); }

Status Storage::FlushMemTables() {
  rocksdb::FlushOptions fo;
  fo.wait = true;
  rocksdb::Status s = db_->Flush(fo, handles_);
  return s.ok() ? Status::OK() : Status::IOError(s.ToString());
}

Status Storage::PauseCompactions(bool pause) {
  for (auto* h : handles_) {
    rocksdb::Status s = db_->SetOptions(h, {{"disable_auto_compactions", pause ? "true" : "false"}});
    if (!s.ok()) return Status::IOError(s.ToString());
  }
  return Status::OK();
}

Status Storage::IngestSorted(ColumnFamily c, const std::vector<std::pair<rocksdb::Slice, rocksdb::Slice>>& kvs) {
  if (kvs.empty()) return Status::OK();
  static std::atomic<uint64_t> seq{0};
  std::string dir = config_->dir + "/ingest";
  ::mkdir(dir.c_str(), 0755);
  std::string path = dir + "/" + std::to_string(NowUs()) + "-" + std::to_string(seq.fetch_add(1)) + ".sst";
  rocksdb::Options options(db_->GetDBOptions(), db_->GetOptions(cf(c)));
  // SstFileWriter would use the bottommost level's compression (zstd), the
  // costliest part of building the file; bulk-loaded chunks overlap and are
  // mostly rewritten by compactions anyway, so they get cheap LZ4.
  options.compression_per_level.clear();
  options.bottommost_compression = rocksdb::kDisableCompressionOption;
  options.compression = rocksdb::kLZ4Compression;
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options, cf(c));
  rocksdb::Status s = writer.Open(path);
  for (size_t i = 0; s.ok() && i < kvs.size(); i++) s = writer.Put(kvs[i].first, kvs[i].second);
  if (s.ok()) s = writer.Finish();
  if (s.ok()) {
    rocksdb::IngestExternalFileOptions io;
    io.move_files = true;
    io.allow_global_seqno = true;
    io.allow_blocking_flush = true;
    WalReadGate::Writing writing(&wal_gate_);
    s = db_->IngestExternalFile(cf(c), {path}, io);
    if (s.ok()) NoteWalGap();
  }
  ::unlink(path.c_str());
  return s.ok() ? Status::OK() : Status::IOError(s.ToString());
}

std::vector<uint8_t> Storage::FreePhysicalDbs(int databases) const {
  std::array<bool, kMaxDatabases> used{};
  for (int i = 0; i < databases; i++) used[db_map_[i].load()] = true;
  std::vector<uint8_t> free;
  for (int p = 0; p < kMaxDatabases; p++) {
    if (!used[p]) free.push_back(static_cast<uint8_t>(p));
  }
  return free;
}

Status Storage::ReplaceDatabases(const std::vector<uint8_t>& fresh,
                                 const std::vector<std::pair<std::string, std::string>>& state_puts) {
  std::array<uint8_t, kMaxDatabases> map;
  for (int i = 0; i < kMaxDatabases; i++) map[i] = db_map_[i].load();
  for (size_t i = 0; i < fresh.size(); i++) {
    // Keep the map a permutation: the fresh id's current slot (an unused logical db) takes the old id.
    for (int j = 0; j < kMaxDatabases; j++) {
      if (map[j] == fresh[i]) {
        std::swap(map[i], map[j]);
        break;
      }
    }
  }
  std::vector<uint8_t> old;
  for (size_t i = 0; i < fresh.size(); i++) old.push_back(db_map_[i].load());
  std::string v(kMaxDatabases, '\0');
  for (int i = 0; i < kMaxDatabases; i++) v[i] = static_cast<char>(map[i]);
  rocksdb::WriteBatch batch;
  batch.Put(cf(ColumnFamily::kState), kDbMapKey, v);
  // The replaced dbs are garbage from this write on, and a crash before they
  // are deleted below must not leave them behind.
  batch.Put(cf(ColumnFamily::kState), kDropKey, std::string(old.begin(), old.end()));
  for (const auto& [k, val] : state_puts) batch.Put(cf(ColumnFamily::kState), k, val);
  Status s = Write(&batch);
  if (!s.ok()) return s;
  for (int i = 0; i < kMaxDatabases; i++) db_map_[i].store(map[i]);
  for (uint8_t p : old) {
    s = FlushDb(p);
    if (!s.ok()) return s;
  }
  return MarkToDrop({});
}

uint64_t Storage::NewVersion() {
  uint64_t candidate = NowUs() << 10;
  uint64_t last = last_version_.load(std::memory_order_relaxed);
  while (true) {
    uint64_t next = std::max(candidate, last + 1);
    if (last_version_.compare_exchange_weak(last, next, std::memory_order_relaxed)) return next;
  }
}

void Storage::AddCountMerges(rocksdb::WriteBatchBase* batch, uint8_t physical_db, const CountDeltas& d) {
  std::string v;
  if (d.keys != 0) {
    PutBE64(&v, static_cast<uint64_t>(d.keys));
    batch->Merge(cf(ColumnFamily::kState), kKeyCountPrefix + std::to_string(physical_db), v);
  }
  if (d.expires != 0) {
    v.clear();
    PutBE64(&v, static_cast<uint64_t>(d.expires));
    batch->Merge(cf(ColumnFamily::kState), kExpireCountPrefix + std::to_string(physical_db), v);
  }
  if (d.expire_seconds != 0) {
    v.clear();
    PutBE64(&v, static_cast<uint64_t>(d.expire_seconds));
    batch->Merge(cf(ColumnFamily::kState), kExpireSecondsPrefix + std::to_string(physical_db), v);
  }
}

bool Storage::DecodeCountMerge(const rocksdb::Slice& key, const rocksdb::Slice& value,
                               std::map<uint8_t, CountDeltas>* d) {
  int64_t CountDeltas::*field = nullptr;
  size_t skip = 0;
  for (auto [prefix, f] :
       {std::pair{kKeyCountPrefix, &CountDeltas::keys}, std::pair{kExpireCountPrefix, &CountDeltas::expires},
        std::pair{kExpireSecondsPrefix, &CountDeltas::expire_seconds}}) {
    if (key.starts_with(prefix)) {
      field = f;
      skip = std::strlen(prefix);
      break;
    }
  }
  int64_t db;
  if (field == nullptr || value.size() != 8 ||
      !ParseInt64(std::string_view(key.data() + skip, key.size() - skip), &db) || db < 0 || db >= kMaxDatabases) {
    return false;
  }
  // Wrapping, as the merge operator's sum does in effect (bytes from a replica's link may be anything).
  int64_t& sum = (*d)[static_cast<uint8_t>(db)].*field;
  sum = static_cast<int64_t>(static_cast<uint64_t>(sum) + DecodeBE64(value.data()));
  return true;
}

int64_t Storage::ExpireSeconds(uint64_t expire_ms) {
  if (expire_ms == 0) return 0;
  int64_t s = static_cast<int64_t>((expire_ms + 500) / 1000) - kExpireEpoch;  // to the nearest second
  return std::clamp<int64_t>(s, -(int64_t{1} << 31), int64_t{1} << 31);
}

int64_t Storage::AvgTtlMs(uint8_t physical_db, uint64_t now_ms) const {
  int64_t n = expire_counts_[physical_db].load(std::memory_order_relaxed);
  if (n <= 0) return 0;
  double avg_expire_s = static_cast<double>(expire_seconds_[physical_db].load(std::memory_order_relaxed)) /
                            static_cast<double>(n) + static_cast<double>(kExpireEpoch);
  double ttl = avg_expire_s * 1000 - static_cast<double>(now_ms);
  return ttl > 0 ? static_cast<int64_t>(ttl) : 0;
}

Status Storage::RebuildExpireSeconds(uint8_t physical_db) {
  const std::string prefix = MetaDbPrefix(physical_db);
  std::string end = prefix;
  end.back() = static_cast<char>(end.back() + 1);
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(ColumnFamily::kMetadata)));
  int64_t sum = 0;
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    RedisType type;
    uint64_t expire = 0;
    const rocksdb::Slice v = it->value();
    if (PeekMetadata(std::string_view(v.data(), v.size()), &type, &expire).ok()) sum += ExpireSeconds(expire);
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  std::string value;
  PutBE64(&value, static_cast<uint64_t>(sum));
  WalReadGate::Writing writing(&wal_gate_);
  rocksdb::Status s =
      db_->Put(rocksdb::WriteOptions(), cf(ColumnFamily::kState), kExpireSecondsPrefix + std::to_string(physical_db), value);
  if (!s.ok()) return Status::IOError(s.ToString());
  expire_seconds_[physical_db].store(sum);
  return Status::OK();
}

int Storage::LogicalDb(uint8_t physical) const {
  for (int i = 0; i < kMaxDatabases; i++) {
    if (db_map_[i].load(std::memory_order_acquire) == physical) return i;
  }
  return -1;
}

Status Storage::SwapDb(int a, int b, const std::vector<std::pair<std::string, std::string>>& state_puts) {
  uint8_t pa = db_map_[a].load(), pb = db_map_[b].load();
  std::string v(kMaxDatabases, '\0');
  for (int i = 0; i < kMaxDatabases; i++) v[i] = static_cast<char>(db_map_[i].load());
  v[a] = static_cast<char>(pb);
  v[b] = static_cast<char>(pa);
  rocksdb::WriteBatch batch;
  batch.Put(cf(ColumnFamily::kState), kDbMapKey, v);
  for (const auto& [key, value] : state_puts) batch.Put(cf(ColumnFamily::kState), key, value);
  Status s = Write(&batch);
  if (!s.ok()) return s;
  db_map_[a].store(pb);
  db_map_[b].store(pa);
  return Status::OK();
}

Status Storage::FlushDb(uint8_t physical_db) {
  std::string begin(1, static_cast<char>(physical_db));
  std::string end;
  if (physical_db == 255) {
    end = std::string(1, '\xff') + std::string(1024, '\xff');
  } else {
    end = std::string(1, static_cast<char>(physical_db + 1));
  }
  rocksdb::WriteBatch batch;
  bool range_deleted = false;
  for (auto c : {ColumnFamily::kMetadata, ColumnFamily::kSubkey, ColumnFamily::kZSetScore, ColumnFamily::kStream,
                 ColumnFamily::kExpire, ColumnFamily::kZSetRank}) {
    rocksdb::Slice upper(end);
    rocksdb::ReadOptions ro;
    ro.iterate_upper_bound = &upper;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(c)));
    it->Seek(begin);
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
    if (!it->Valid()) continue;  // nothing to delete: no range tombstone (below)
    batch.DeleteRange(cf(c), begin, end);
    range_deleted = true;
  }
  {
    // The moved records of the db's renamed collections (key_encoding.h).
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(ColumnFamily::kState)));
    for (it->Seek(kMovedKeyPrefix); it->Valid() && it->key().starts_with(kMovedKeyPrefix); it->Next()) {
      if (!it->value().empty() && static_cast<uint8_t>(it->value()[0]) == physical_db) {
        batch.Delete(cf(ColumnFamily::kState), it->key());
      }
    }
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
  }
  std::string zero;
  PutBE64(&zero, 0);
  batch.Put(cf(ColumnFamily::kState), kKeyCountPrefix + std::to_string(physical_db), zero);
  batch.Put(cf(ColumnFamily::kState), kExpireCountPrefix + std::to_string(physical_db), zero);
  batch.Put(cf(ColumnFamily::kState), kExpireSecondsPrefix + std::to_string(physical_db), zero);
  Status s = Write(&batch);
  if (!s.ok()) return s;
  key_counts_[physical_db].store(0);
  expire_counts_[physical_db].store(0);
  expire_seconds_[physical_db].store(0);
  if (range_deleted) {
    // A memtable holding a range tombstone has its bloom filter off for
    // MultiGet (RocksDB 7.8), and every write's key lookup (Context::SettleUnread)
    // would search its skiplist until it is flushed: a third of a replica's CPU
    // after a full sync. So the memtables are flushed, but at most every 20 ms:
    // each flush starts a new write-ahead log file, and a client's test suite
    // that runs FLUSHDB after every few writes spent 1 ms per FLUSHDB on them.
    if (MonotonicUs() - last_flushdb_flush_us_.load() >= 20000) {
      FlushMemtablesAfterFlushDb();
    } else {
      flushdb_flush_deferred_ = true;
    }
  }
  return Status::OK();
}

void Storage::FlushDeferredMemtables() {
  if (flushdb_flush_deferred_.load(std::memory_order_relaxed) && flushdb_flush_deferred_.exchange(false)) {
    FlushMemtablesAfterFlushDb();
  }
}

void Storage::FlushMemtablesAfterFlushDb() {
  last_flushdb_flush_us_ = MonotonicUs();
  flushdb_flush_deferred_ = false;
  // Every column family, not only those range-deleted: one whose memtable is not
  // empty (FlushDb's counters went to kState) would keep every write-ahead log
  // file from here on (25000 files after 20000 FLUSHDBs, each replayed at the
  // next start). RocksDB skips the empty ones.
  rocksdb::FlushOptions fo;
  fo.wait = false;
  fo.allow_write_stall = true;
  rocksdb::Status fs = db_->Flush(fo, handles_);
  // TryAgain: writes are stopped for now (a stall); the memtables flush when
  // full, as any. Not worth a warning per FLUSHDB.
  if (!fs.ok() && !fs.IsTryAgain()) LOG(WARNING) << "Flush after FLUSHDB: " << fs.ToString();
}

Status Storage::CompactAll() {
  rocksdb::FlushOptions fo;
  fo.wait = true;
  rocksdb::Status s = db_->Flush(fo, handles_);
  if (!s.ok()) return Status::IOError(s.ToString());
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (auto* h : handles_) {
    s = db_->CompactRange(co, h, nullptr, nullptr);
    if (!s.ok()) return Status::IOError(s.ToString());
  }
  return Status::OK();
}

void Storage::CancelManualCompactions() { db_->DisableManualCompaction(); }

Status Storage::Checkpoint(const std::string& dir) {
  rocksdb::Checkpoint* cp = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(db_.get(), &cp);
  if (!s.ok()) return Status::IOError(s.ToString());
  std::unique_ptr<rocksdb::Checkpoint> owner(cp);
  s = cp->CreateCheckpoint(dir);
  return s.ok() ? Status::OK() : Status::IOError(s.ToString());
}

void Storage::LowerExpireFloor(uint8_t db, uint64_t expire_ms) {
  uint64_t cur = expire_floor_[db].load(std::memory_order_relaxed);
  while (expire_ms < cur && !expire_floor_[db].compare_exchange_weak(cur, expire_ms)) {
  }
}

bool Storage::BlobGcUnconditional() const {
  return config_->rocksdb_blob_gc_age_cutoff > 0 && config_->rocksdb_blob_gc_min_garbage_ratio == 0;
}

void Storage::AdjustBlobGc() {
  if (!config_->rocksdb_enable_blob_files) return;
  rocksdb::ColumnFamilyHandle* h = cf(ColumnFamily::kSubkey);
  uint64_t total = 0, garbage = 0;
  if (!db_->GetIntProperty(h, "rocksdb.live-blob-file-size", &total) ||
      !db_->GetIntProperty(h, "rocksdb.live-blob-file-garbage-size", &garbage)) {
    return;
  }
  // On at the configured share of garbage, off below half of it: the share falls in
  // steps, as whole blob files go, and each switch rewrites RocksDB's OPTIONS file.
  const double percent = total == 0 ? 0 : 100.0 * static_cast<double>(garbage) / static_cast<double>(total);
  const int min = config_->rocksdb_blob_gc_min_garbage_ratio;
  bool want = blob_gc_on_;
  if (config_->rocksdb_blob_gc_age_cutoff == 0) {
    want = false;  // no file is old enough to collect
  } else if (percent >= min) {
    want = true;
  } else if (percent < min / 2.0) {
    want = false;
  }
  // A ratio changed by CONFIG SET while GC stays on still moves the force threshold.
  if (want == blob_gc_on_ && (!want || min == blob_gc_ratio_applied_)) return;
  // While on, old blob files holding that share of garbage also get compactions of
  // their own, so that space comes back without writes to trigger compactions.
  std::string force = min > 0 ? std::to_string(min / 100.0) : "1.0";
  rocksdb::Status s = db_->SetOptions(h, {{"enable_blob_garbage_collection", want ? "true" : "false"},
                                          {"blob_garbage_collection_force_threshold", force}});
  if (!s.ok()) {
    LOG(WARNING) << "Cannot switch blob garbage collection: " << s.ToString();
    return;
  }
  blob_gc_ratio_applied_ = min;
  if (want == blob_gc_on_) return;
  blob_gc_on_ = want;
  LOG(INFO) << "Blob garbage collection " << (want ? "on" : "off") << ": " << garbage << " of " << total
            << " blob bytes are garbage";
}

void Storage::AdjustBlobCompression() {
  if (blob_sample_min_size_ == SIZE_MAX) return;  // no blob files, or blob compression "no"
  const int min = config_->rocksdb_blob_compression_min_saving;
  blob_sampling_ = min > 0;
  bool want = blob_compression_on_;
  double saving = 0;
  if (min == 0) {
    want = true;
    blob_sampler_.TakeEstimate(0, &saving);  // drops samples a later non-zero setting must not count
  } else if (blob_sampler_.TakeEstimate(16, &saving)) {
    blob_compression_saving_ = static_cast<int>(saving);
    // On at the configured saving, off below half of it: values near the line
    // do not switch it back and forth, and each switch rewrites RocksDB's OPTIONS file.
    if (saving >= min) {
      want = true;
    } else if (saving < min / 2.0) {
      want = false;
    }
  }
  if (want == blob_compression_on_) return;
  const char* type = want ? CompressionOptionName(blob_compression_) : "kNoCompression";
  rocksdb::Status s = db_->SetOptions(cf(ColumnFamily::kSubkey), {{"blob_compression_type", type}});
  if (!s.ok()) {
    LOG(WARNING) << "Cannot switch blob compression: " << s.ToString();
    return;
  }
  blob_compression_on_ = want;
  LOG(INFO) << "Blob compression " << (want ? "on" : "off") << ": sampled big values shrink by "
            << blob_compression_saving_ << "%";
}

uint64_t Storage::DiskUsage() {
  uint64_t total = 0, v = 0;
  for (auto* h : handles_) {
    if (db_->GetIntProperty(h, "rocksdb.total-sst-files-size", &v)) total += v;
    if (db_->GetIntProperty(h, "rocksdb.total-blob-file-size", &v)) total += v;
  }
  return total;
}

std::string Storage::GetProperty(const std::string& name, ColumnFamily c) {
  std::string v;
  db_->GetProperty(cf(c), name, &v);
  return v;
}

uint64_t Storage::GetIntProperty(const std::string& name) {
  uint64_t total = 0, v = 0;
  for (auto* h : handles_) {
    if (db_->GetIntProperty(h, name, &v)) total += v;
  }
  return total;
}

const std::vector<std::string>& Storage::RuntimeOptions() {
  static const std::vector<std::string> kNames = {
      "rocksdb.block-cache-size",
      "rocksdb.write-buffer-size",
      "rocksdb.max-write-buffer-number",
      "rocksdb.max-background-jobs",
      "rocksdb.compression",
      "rocksdb.min-blob-size",
      "rocksdb.blob-gc-age-cutoff",
      "rocksdb.target-file-size-base",
      "rocksdb.level0-slowdown-writes-trigger",
      "rocksdb.level0-stop-writes-trigger",
      "rocksdb.rate-limiter-bytes-per-sec",
      "rocksdb.sync-writes",
  };
  return kNames;
}

Status Storage::ApplyOption(const std::string& name) {
  using Options = std::unordered_map<std::string, std::string>;
  // The column families that take options from the config: all, or all but the
  // rank family, whose write buffers are its own (CFOptions).
  auto set_cfs = [this](const Options& opts, bool with_rank) -> Status {
    for (int i = 0; i < static_cast<int>(ColumnFamily::kCount); i++) {
      if (!with_rank && static_cast<ColumnFamily>(i) == ColumnFamily::kZSetRank) continue;
      rocksdb::Status s = db_->SetOptions(handles_[i], opts);
      if (!s.ok()) return Status::InvalidArgument(s.ToString());
    }
    return Status::OK();
  };
  auto set_subkey = [this](const Options& opts) -> Status {
    rocksdb::Status s = db_->SetOptions(cf(ColumnFamily::kSubkey), opts);
    return s.ok() ? Status::OK() : Status::InvalidArgument(s.ToString());
  };
  auto set_db = [this](const Options& opts) -> Status {
    rocksdb::Status s = db_->SetDBOptions(opts);
    return s.ok() ? Status::OK() : Status::InvalidArgument(s.ToString());
  };
  const Config& c = *config_;
  if (name == "rocksdb.block-cache-size") {
    block_cache_->SetCapacity(static_cast<size_t>(c.rocksdb_block_cache_size));
    return Status::OK();
  }
  if (name == "rocksdb.write-buffer-size") {
    Status s = set_cfs({{"write_buffer_size", std::to_string(c.rocksdb_write_buffer_size)}}, false);
    if (!s.ok()) return s;
    return set_db({{"max_total_wal_size", std::to_string(4 * c.rocksdb_write_buffer_size)}});  // as Open sets it
  }
  if (name == "rocksdb.max-write-buffer-number") {
    return set_cfs({{"max_write_buffer_number", std::to_string(c.rocksdb_max_write_buffer_number)}}, false);
  }
  if (name == "rocksdb.max-background-jobs") {
    return set_db({{"max_background_jobs", std::to_string(c.rocksdb_max_background_jobs)}});
  }
  if (name == "rocksdb.compression") {
    std::string levels;
    for (rocksdb::CompressionType t : CompressionPerLevel(c.rocksdb_compression)) {
      levels += (levels.empty() ? "" : ":") + std::string(CompressionOptionName(t));
    }
    return set_cfs({{"compression_per_level", levels}}, true);
  }
  if (name == "rocksdb.min-blob-size") {
    Status s = set_subkey({{"min_blob_size", std::to_string(c.rocksdb_min_blob_size)}});
    if (!s.ok()) return s;
    // Blob compression samples the values that become blobs (none without blob compression).
    if (blob_sample_min_size_.load() != SIZE_MAX) blob_sample_min_size_ = static_cast<size_t>(c.rocksdb_min_blob_size);
    return Status::OK();
  }
  if (name == "rocksdb.blob-gc-age-cutoff") {
    // AdjustBlobGc turns collection off within a second when the cutoff is 0.
    return set_subkey({{"blob_garbage_collection_age_cutoff", std::to_string(c.rocksdb_blob_gc_age_cutoff / 100.0)}});
  }
  if (name == "rocksdb.target-file-size-base") {
    return set_cfs({{"target_file_size_base", std::to_string(c.rocksdb_target_file_size_base)},
                    {"max_bytes_for_level_base", std::to_string(4 * c.rocksdb_target_file_size_base)}},
                   true);
  }
  if (name == "rocksdb.level0-slowdown-writes-trigger" || name == "rocksdb.level0-stop-writes-trigger") {
    // Both, raised as RocksDB raises them at open: writes slow down no earlier than
    // the family's L0 compaction starts, and stop no earlier than they slow down.
    for (auto* h : handles_) {
      const int compaction = db_->GetOptions(h).level0_file_num_compaction_trigger;
      const int slowdown = std::max(c.rocksdb_level0_slowdown_writes_trigger.get(), compaction);
      const int stop = std::max(c.rocksdb_level0_stop_writes_trigger.get(), slowdown);
      rocksdb::Status s = db_->SetOptions(h, {{"level0_slowdown_writes_trigger", std::to_string(slowdown)},
                                              {"level0_stop_writes_trigger", std::to_string(stop)}});
      if (!s.ok()) return Status::InvalidArgument(s.ToString());
    }
    return Status::OK();
  }
  if (name == "rocksdb.sync-writes") {
    sync_writes_ = c.rocksdb_sync_writes;
    return Status::OK();
  }
  if (name == "rocksdb.rate-limiter-bytes-per-sec") {
    rate_limiter_->SetBytesPerSecond(c.rocksdb_rate_limiter_bytes_per_sec);
    return Status::OK();
  }
  return Status::InvalidArgument("not a run-time RocksDB option: " + name);
}

}  // namespace kvrocks
