#include "replication/rdb_loader.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstdio>

#include "common/time_util.h"
#include "replication/rdb_object.h"
#include "storage/lock_manager.h"
#include "types/database.h"

namespace kvrocks {

namespace {

// Writes are committed in batches of about this many bytes.
constexpr size_t kBatchBytes = 8 << 20;

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

Status RdbLoader::MaybeCommit() {
  size_t before = bulk_.size();
  ctx_->MovePendingTo(&bulk_);
  for (size_t i = before; i < bulk_.size(); i++) bulk_bytes_ += bulk_[i].key.size() + bulk_[i].value.size() + 16;
  if (bulk_bytes_ < kBatchBytes) return Status::OK();
  return WriteBulk();
}

Status RdbLoader::WriteBulk() {
  std::sort(bulk_.begin(), bulk_.end(), [](const Context::PendingWrite& a, const Context::PendingWrite& b) {
    return a.cf != b.cf ? a.cf < b.cf : a.key < b.key;
  });
  rocksdb::WriteBatch batch;
  for (const auto& w : bulk_) {
    rocksdb::ColumnFamilyHandle* h = storage_->cf(static_cast<ColumnFamily>(w.cf));
    switch (w.type) {
      case rocksdb::kPutRecord: batch.Put(h, w.key, w.value); break;
      case rocksdb::kDeleteRecord: batch.Delete(h, w.key); break;
      case rocksdb::kMergeRecord: batch.Merge(h, w.key, w.value); break;
      default: break;
    }
  }
  bulk_.clear();
  bulk_bytes_ = 0;
  return batch.Count() > 0 ? storage_->Write(&batch, true) : Status::OK();
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

Status RdbLoader::Finish(const std::vector<std::pair<std::string, std::string>>& state_puts) {
  ctx_->MovePendingTo(&bulk_);
  Status s = WriteBulk();
  if (s.ok()) s = storage_->FlushMemTables();
  if (s.ok()) s = storage_->ReplaceDatabases(staging_, state_puts);
  return s;
}

void RdbLoader::Abort() {
  if (ctx_) ctx_->Rollback();
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
  if (s.ok()) {
    MultiLockGuard all(storage->locks());
    s = loader.Finish();
  }
  if (!s.ok()) {
    loader.Abort();
    return s;
  }
  *keys = loader.keys_loaded();
  return Status::OK();
}

}  // namespace kvrocks
