#include "replication/rdb_loader.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/string_util.h"
#include "common/time_util.h"
#include "replication/rdb_object.h"
#include "scripting/functions.h"
#include "storage/lock_manager.h"
#include "types/database.h"

namespace kvrocks {

namespace {

// Keys are gathered in chunks of about this many bytes, each ingested as sorted SST files.
constexpr size_t kBatchBytes = 64 << 20;

}  // namespace

Status RdbLoader::Begin() {
  staging_lock_ = std::unique_lock<std::mutex>(storage_->staging_mutex(), std::try_to_lock);
  if (!staging_lock_.owns_lock()) return Status::Aborted("another load is staging into the free databases");
  std::vector<uint8_t> free = storage_->FreePhysicalDbs(databases_);
  if (free.size() < static_cast<size_t>(databases_)) {
    return Status::InvalidArgument("not enough free physical databases to stage a load");
  }
  staging_.assign(free.begin(), free.begin() + databases_);
  for (uint8_t p : staging_) {
    Status s = storage_->FlushDb(p);  // leftovers of an aborted load
    if (!s.ok()) return s;
  }
  if (access_clock_ != nullptr) access_clock_->Reset();
  Status s = storage_->MarkToDrop(staging_);
  if (!s.ok()) return s;
  ctx_ = std::make_unique<Context>(storage_);
  storage_->PauseCompactions(true);
  compactions_paused_ = true;
  // The staging dbs start empty and each key is written whole within ctx_.
  ctx_->set_batch_only_reads(true);
  // A replica's load keeps the keys already expired (Database::AlreadyExpired).
  ctx_->set_expiry_left_to_master(keep_expired_);
  db_ = 0;
  return Status::OK();
}

Status RdbLoader::OnSelectDb(uint64_t db) {
  if (db >= static_cast<uint64_t>(databases_)) {
    return Status::Corruption("FATAL: Data file was created with a Redis server configured to handle more than " +
                              std::to_string(databases_) + " databases. Exiting\n");
  }
  db_ = static_cast<int>(db);
  return Status::OK();
}

Status RdbLoader::OnKey(std::string key, rdb::Object obj, int64_t expire_ms) {
  if (!obj.module_name.empty()) {
    LOG(WARNING) << "RDB: skipping key '" << key << "' holding a value of module type " << obj.module_name;
    modules_skipped_++;
    return Status::OK();
  }
  // Keys that arrive already expired are dropped, as a Redis master does on load.
  if (!keep_expired_ && expire_ms != -1 && static_cast<uint64_t>(expire_ms) <= NowMs()) {
    expired_skipped_++;
    return Status::OK();
  }
  if (obj.Empty()) return Status::OK();  // Redis skips empty collections too
  Database db(ctx_.get(), staging_[static_cast<size_t>(db_)]);
  Status s = rdb::RestoreObject(&db, key, obj, expire_ms == -1 ? 0 : static_cast<uint64_t>(expire_ms));
  if (!s.ok()) return s;
  keys_loaded_++;
  if (access_clock_ != nullptr && obj.lru_idle_s >= 0) {
    access_clock_->Set(key, AccessClock::LruForIdle(static_cast<uint64_t>(obj.lru_idle_s), AccessClock::Now()));
    idle_times_set_++;
  }
  return MaybeCommit();
}

RdbLoader::~RdbLoader() {
  ResumeCompactions();
  {
    std::lock_guard<std::mutex> g(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void RdbLoader::TakePending() {
  auto& writes = bulk_.writes;
  if (writes.size() == 0) writes.reserve(kBatchBytes / 64, kBatchBytes + (kBatchBytes >> 3));
  size_t i = writes.size(), before = writes.bytes();
  ctx_->MovePendingTo(&writes, &counts_);
  bulk_bytes_ += writes.bytes() - before + 16 * (writes.size() - i);
  while (i < writes.size()) {
    size_t start = i;
    while (i < writes.size() && writes[i].cf == writes[start].cf) i++;
    bulk_.runs.push_back(Run{static_cast<uint32_t>(start), static_cast<uint32_t>(i - start)});
  }
}

Status RdbLoader::MaybeCommit() {
  TakePending();
  if (bulk_bytes_ < kBatchBytes) return Status::OK();
  return HandOff();
}

Status RdbLoader::HandOff() {
  if (!writer_.joinable()) writer_ = std::thread([this] { WriterLoop(); });
  std::unique_lock<std::mutex> g(mu_);
  cv_.wait(g, [this] { return !has_chunk_; });
  if (!writer_status_.ok()) return writer_status_;
  handed_ = std::move(bulk_);
  handed_counts_ = std::move(counts_);
  bulk_ = std::move(spare_);  // the writer's previous chunk: emptied, its buffers kept
  spare_.clear();
  counts_.clear();
  bulk_bytes_ = 0;
  has_chunk_ = true;
  cv_.notify_all();
  return Status::OK();
}

Status RdbLoader::Drain() {
  std::unique_lock<std::mutex> g(mu_);
  cv_.wait(g, [this] { return !has_chunk_ && !writing_; });
  return writer_status_;
}

void RdbLoader::WriterLoop() {
  std::unique_lock<std::mutex> g(mu_);
  while (true) {
    cv_.wait(g, [this] { return has_chunk_ || quit_; });
    if (!has_chunk_) return;
    Chunk chunk = std::move(handed_);
    Counts counts = std::move(handed_counts_);
    has_chunk_ = false;
    writing_ = true;
    cv_.notify_all();
    g.unlock();
    Status s = writer_status_.ok() ? WriteChunk(&chunk, &counts) : Status::OK();
    chunk.clear();
    g.lock();
    spare_ = std::move(chunk);
    if (!s.ok() && writer_status_.ok()) writer_status_ = s;
    writing_ = false;
    cv_.notify_all();
  }
}

namespace {

// The first 15 bytes of a key after its column family, big-endian in two words:
// most comparisons of a sort are decided by them without touching the strings.
void KeyPrefix(int cf, const rocksdb::Slice& k, uint64_t* hi, uint64_t* lo) {
  auto byte = [&k](size_t i) -> uint64_t { return i < k.size() ? static_cast<uint8_t>(k[i]) : 0; };
  *hi = static_cast<uint64_t>(cf) << 56;
  for (size_t b = 0; b < 7; b++) *hi |= byte(b) << (48 - 8 * b);
  *lo = 0;
  for (size_t b = 0; b < 8; b++) *lo |= byte(7 + b) << (56 - 8 * b);
}

}  // namespace

Status RdbLoader::WriteChunk(Chunk* chunk_ptr, Counts* counts) {
  const auto& chunk = chunk_ptr->writes;
  // Runs sorted by (column family, first key), equal first keys in the order written.
  struct Slot {
    uint64_t hi, lo;
    Run run;
  };
  std::vector<Slot> slots;
  slots.reserve(chunk_ptr->runs.size());
  for (const Run& r : chunk_ptr->runs) {
    Slot slot{0, 0, r};
    KeyPrefix(chunk[r.start].cf, chunk.key(chunk[r.start]), &slot.hi, &slot.lo);
    slots.push_back(slot);
  }
  std::sort(slots.begin(), slots.end(), [&chunk](const Slot& a, const Slot& b) {
    if (a.hi != b.hi) return a.hi < b.hi;
    if (a.lo != b.lo) return a.lo < b.lo;
    int c = chunk.key(chunk[a.run.start]).compare(chunk.key(chunk[b.run.start]));
    return c != 0 ? c < 0 : a.run.start < b.run.start;
  });
  std::vector<std::pair<rocksdb::Slice, rocksdb::Slice>> kvs;
  kvs.reserve(chunk.size());
  Status s;
  for (size_t i = 0; i < slots.size() && s.ok(); i++) {
    const Slot& slot = slots[i];
    const Slot* next = i + 1 < slots.size() ? &slots[i + 1] : nullptr;
    // Keys are unique within a run, and runs of versioned column families
    // never share a key; a key the RDB holds twice repeats only its one-entry
    // runs (metadata, expire), and the later one wins.
    bool superseded = slot.run.len == 1 && next != nullptr && next->hi == slot.hi && next->lo == slot.lo &&
                      chunk.key(chunk[next->run.start]) == chunk.key(chunk[slot.run.start]);
    for (uint32_t j = 0; j < slot.run.len && !superseded; j++) {
      const auto& w = chunk[slot.run.start + j];
      if (w.type == rocksdb::kPutRecord) {
        kvs.emplace_back(chunk.key(w), chunk.value(w));  // a delete has nothing to delete in a fresh db
      }
    }
    if (next == nullptr || next->hi >> 56 != slot.hi >> 56) {  // the last run of a column family
      s = storage_->IngestSorted(static_cast<ColumnFamily>(chunk[slot.run.start].cf), kvs);
      kvs.clear();
    }
  }
  chunk_ptr->clear();
  if (s.ok() && !counts->empty()) {
    rocksdb::WriteBatch merges;
    for (auto& [db, d] : *counts) storage_->AddCountMerges(&merges, db, d);
    counts->clear();
    s = storage_->Write(&merges, true);
  }
  return s;
}

Status RdbLoader::OnAux(const std::string& key, const std::string& value) {
  VLOG(1) << "RDB aux " << key << "=" << value;
  int64_t n;
  if (key == "used-mem" && used_mem_sink_ != nullptr && ParseInt64(value, &n) && n >= 0) {
    used_mem_sink_->store(static_cast<uint64_t>(n));
  }
  if (key == "repl-stream-db") stream_db_ = ParseInt64(value, &n) && n >= 0 && n < databases_ ? static_cast<int>(n) : 0;
  return Status::OK();
}

Status RdbLoader::OnFunction(const std::string& code) {
  functions_.push_back(code);
  return Status::OK();
}

Status RdbLoader::OnModuleAux(const std::string& module) {
  LOG(WARNING) << "RDB: skipping auxiliary data of module " << module;
  return Status::OK();
}

Status RdbLoader::Flush() {
  if (flushed_) return Status::OK();
  TakePending();
  Status s = WriteChunk(&bulk_, &counts_);
  if (s.ok()) s = Drain();
  if (s.ok()) s = storage_->FlushMemTables();
  flushed_ = s.ok();
  return s;
}

Status RdbLoader::Finish(const std::vector<std::pair<std::string, std::string>>& state_puts) {
  Status s = Flush();
  if (s.ok()) s = storage_->ReplaceDatabases(staging_, state_puts);
  if (s.ok() && access_clock_ != nullptr) access_clock_->MarkLoaded();
  ResumeCompactions();
  if (s.ok()) staging_lock_ = {};  // on failure the caller Abort()s, which cleans up first
  return s;
}

void RdbLoader::ResumeCompactions() {
  if (compactions_paused_) storage_->PauseCompactions(false);
  compactions_paused_ = false;
}

void RdbLoader::Abort() {
  if (!staging_lock_.owns_lock()) return;  // Begin failed: the staging dbs may be another load's
  if (ctx_) ctx_->Rollback();
  Drain();
  ResumeCompactions();
  counts_.clear();
  bulk_.clear();
  bulk_bytes_ = 0;
  for (uint8_t p : staging_) storage_->FlushDb(p);
  storage_->MarkToDrop({});
  staging_lock_ = {};
}

}  // namespace kvrocks
