#include "replication/rdb_loader.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstdio>

#include "common/time_util.h"
#include "replication/rdb_object.h"
#include "scripting/functions.h"
#include "storage/lock_manager.h"
#include "types/database.h"

namespace kvrocks {

namespace {

// Writes are committed in batches of about this many bytes.
// Keys are gathered in chunks of about this many bytes, each ingested as sorted SST files.
constexpr size_t kBatchBytes = 64 << 20;

class FileSource : public rdb::Source {
 public:
  explicit FileSource(FILE* f) : f_(f) {}
  Status Read(char* buf, size_t n) override {
    if (n > 0 && fread(buf, 1, n, f_) != n) return Status::Corruption("RDB: unexpected end of file");
    return Status::OK();
  }

 private:
  FILE* f_;
};

}  // namespace

Status RdbLoader::Begin() {
  std::vector<uint8_t> free = storage_->FreePhysicalDbs(databases_);
  if (free.size() < static_cast<size_t>(databases_)) {
    return Status::InvalidArgument("not enough free physical databases to stage a load");
  }
  staging_.assign(free.begin(), free.begin() + databases_);
  for (uint8_t p : staging_) {
    Status s = storage_->FlushDb(p);  // leftovers of an aborted load
    if (!s.ok()) return s;
  }
  ctx_ = std::make_unique<Context>(storage_);
  storage_->PauseCompactions(true);
  compactions_paused_ = true;
  // The staging dbs start empty and each key is written whole within ctx_.
  ctx_->set_batch_only_reads(true);
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
  // Keys that arrive already expired are dropped, as Redis does on load.
  if (expire_ms != -1 && static_cast<uint64_t>(expire_ms) <= NowMs()) {
    expired_skipped_++;
    return Status::OK();
  }
  if (obj.Empty()) return Status::OK();  // Redis skips empty collections too
  Database db(ctx_.get(), staging_[static_cast<size_t>(db_)]);
  Status s = rdb::RestoreObject(&db, key, obj, expire_ms == -1 ? 0 : static_cast<uint64_t>(expire_ms));
  if (!s.ok()) return s;
  keys_loaded_++;
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

Status RdbLoader::MaybeCommit() {
  size_t before = bulk_.size();
  ctx_->MovePendingTo(&bulk_, &counts_);
  for (size_t i = before; i < bulk_.size(); i++) bulk_bytes_ += bulk_[i].key.size() + bulk_[i].value.size() + 16;
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
  bulk_.clear();
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
    g.lock();
    if (!s.ok() && writer_status_.ok()) writer_status_ = s;
    writing_ = false;
    cv_.notify_all();
  }
}

Status RdbLoader::WriteChunk(Chunk* chunk_ptr, Counts* counts) {
  Chunk& chunk = *chunk_ptr;
  // Sorted by (column family, key) through an index (moving the strings costs
  // more than comparing them), on a big-endian 8-byte key prefix first; for a
  // key written twice the last write wins.
  struct Slot {
    uint64_t prefix;
    uint32_t index;
  };
  std::vector<Slot> order(chunk.size());
  for (uint32_t i = 0; i < order.size(); i++) {
    const std::string& k = chunk[i].key;
    uint64_t p = static_cast<uint64_t>(chunk[i].cf) << 56;
    for (size_t b = 0; b < 7; b++) p |= static_cast<uint64_t>(b < k.size() ? static_cast<uint8_t>(k[b]) : 0) << (48 - 8 * b);
    order[i] = Slot{p, i};
  }
  std::sort(order.begin(), order.end(), [&chunk](const Slot& a, const Slot& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    int c = chunk[a.index].key.compare(chunk[b.index].key);
    return c != 0 ? c < 0 : a.index < b.index;
  });
  std::vector<std::pair<std::string, std::string>> kvs;
  Status s;
  for (size_t i = 0; i < order.size() && s.ok(); i++) {
    auto& w = chunk[order[i].index];
    const auto* next = i + 1 < order.size() ? &chunk[order[i + 1].index] : nullptr;
    bool last_of_key = next == nullptr || next->cf != w.cf || next->key != w.key;
    if (last_of_key && w.type == rocksdb::kPutRecord) {
      kvs.emplace_back(std::move(w.key), std::move(w.value));  // a delete has nothing to delete in a fresh db
    }
    if (next == nullptr || next->cf != w.cf) {
      s = storage_->IngestSorted(static_cast<ColumnFamily>(w.cf), kvs);
      kvs.clear();
    }
  }
  chunk.clear();
  if (s.ok() && !counts->empty()) {
    rocksdb::WriteBatch merges;
    for (auto& [db, d] : *counts) storage_->AddCountMerges(&merges, db, d.first, d.second);
    counts->clear();
    s = storage_->Write(&merges, true);
  }
  return s;
}

Status RdbLoader::OnAux(const std::string& key, const std::string& value) {
  VLOG(1) << "RDB aux " << key << "=" << value;
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
  ctx_->MovePendingTo(&bulk_, &counts_);
  Status s = WriteChunk(&bulk_, &counts_);
  if (s.ok()) s = Drain();
  if (s.ok()) s = storage_->FlushMemTables();
  flushed_ = s.ok();
  return s;
}

Status RdbLoader::Finish(const std::vector<std::pair<std::string, std::string>>& state_puts) {
  Status s = Flush();
  if (s.ok()) s = storage_->ReplaceDatabases(staging_, state_puts);
  ResumeCompactions();
  return s;
}

void RdbLoader::ResumeCompactions() {
  if (compactions_paused_) storage_->PauseCompactions(false);
  compactions_paused_ = false;
}

void RdbLoader::Abort() {
  if (ctx_) ctx_->Rollback();
  Drain();
  ResumeCompactions();
  counts_.clear();
  bulk_.clear();
  bulk_bytes_ = 0;
  for (uint8_t p : staging_) storage_->FlushDb(p);
}

Status LoadRdbFile(Storage* storage, int databases, const std::string& path, uint64_t* keys) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IOError("cannot open " + path);
  FileSource src(f);
  RdbLoader loader(storage, databases);
  Status s = loader.Begin();
  if (s.ok()) s = rdb::Reader(&src).ReadRdb(&loader);
  fclose(f);
  if (s.ok()) s = loader.Flush();
  std::vector<scripting::Library> functions;
  if (s.ok()) {
    functions = scripting::FunctionRegistry::BuildAll(loader.functions());
    MultiLockGuard all(storage->locks());
    s = loader.Finish({{scripting::FunctionRegistry::kStateKey,
                        scripting::FunctionRegistry::SerializeLibraries(functions)}});
  }
  if (!s.ok()) {
    loader.Abort();
    return s;
  }
  *keys = loader.keys_loaded();
  return Status::OK();
}

}  // namespace kvrocks
