#include "storage/context.h"

namespace kvrocks {

Context::~Context() {
  if (snapshot_ != nullptr) storage_->db()->ReleaseSnapshot(snapshot_);
}

Context::SnapshotScope::SnapshotScope(Context* ctx) : ctx_(ctx), owner_(ctx->snapshot_ == nullptr) {
  if (owner_) ctx_->snapshot_ = ctx_->storage_->db()->GetSnapshot();
}

Context::SnapshotScope::~SnapshotScope() {
  if (!owner_) return;
  ctx_->storage_->db()->ReleaseSnapshot(ctx_->snapshot_);
  ctx_->snapshot_ = nullptr;
}

rocksdb::ReadOptions Context::ReadOpts() const {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot_;
  return ro;
}

rocksdb::WriteBatchWithIndex* Context::batch() {
  if (!batch_) batch_ = std::make_unique<rocksdb::WriteBatchWithIndex>(rocksdb::BytewiseComparator(), 0, true);
  return batch_.get();
}

Status Context::Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value) {
  rocksdb::Status s;
  if (batch_only_) {
    if (batch_ == nullptr) return Status::NotFound();
    s = batch_->GetFromBatch(storage_->cf(cf), rocksdb::DBOptions(), key, value);
  } else if (batch_ != nullptr && batch_->GetWriteBatch()->Count() > 0) {
    s = batch_->GetFromBatchAndDB(storage_->db(), ReadOpts(), storage_->cf(cf), key, value);
  } else {
    s = storage_->db()->Get(ReadOpts(), storage_->cf(cf), key, value);
  }
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound();
  return Status::IOError(s.ToString());
}

namespace {

// Keeps an iterator over the pending batch and the DB within ReadOptions'
// bounds: the batch side of WBWI's iterator does not honour them, so its
// SeekToFirst/SeekToLast could land on any key the batch holds (another key's
// subkeys, when a batch spans many keys as the replica's do).
class BoundedIterator : public rocksdb::Iterator {
 public:
  BoundedIterator(rocksdb::Iterator* it, const rocksdb::ReadOptions& ro) : it_(it) {
    if (ro.iterate_lower_bound) lower_ = ro.iterate_lower_bound->ToString(), has_lower_ = true;
    if (ro.iterate_upper_bound) upper_ = ro.iterate_upper_bound->ToString(), has_upper_ = true;
  }
  bool Valid() const override {
    if (!it_->Valid()) return false;
    rocksdb::Slice k = it_->key();
    return (!has_lower_ || k.compare(lower_) >= 0) && (!has_upper_ || k.compare(upper_) < 0);
  }
  void SeekToFirst() override { has_lower_ ? it_->Seek(lower_) : it_->SeekToFirst(); }
  void SeekToLast() override {
    if (!has_upper_) return it_->SeekToLast();
    it_->SeekForPrev(upper_);
    if (it_->Valid() && it_->key().compare(upper_) >= 0) it_->Prev();
  }
  void Seek(const rocksdb::Slice& target) override {
    it_->Seek(has_lower_ && target.compare(lower_) < 0 ? rocksdb::Slice(lower_) : target);
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    if (has_upper_ && target.compare(upper_) >= 0) return SeekToLast();
    it_->SeekForPrev(target);
  }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  rocksdb::Slice key() const override { return it_->key(); }
  rocksdb::Slice value() const override { return it_->value(); }
  rocksdb::Status status() const override { return it_->status(); }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
  std::string lower_, upper_;
  bool has_lower_ = false, has_upper_ = false;
};

}  // namespace

std::unique_ptr<rocksdb::Iterator> Context::NewIterator(ColumnFamily cf, rocksdb::ReadOptions ro) {
  ro.snapshot = snapshot_;
  rocksdb::Iterator* base = storage_->db()->NewIterator(ro, storage_->cf(cf));
  if (batch_ != nullptr && batch_->GetWriteBatch()->Count() > 0) {
    return std::make_unique<BoundedIterator>(batch_->NewIteratorWithBase(storage_->cf(cf), base, &ro), ro);
  }
  return std::unique_ptr<rocksdb::Iterator>(base);
}

void Context::Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  used_cfs_ |= 1u << static_cast<int>(cf);
  batch()->Put(storage_->cf(cf), key, value);
}

void Context::Delete(ColumnFamily cf, const rocksdb::Slice& key) {
  used_cfs_ |= 1u << static_cast<int>(cf);
  batch()->Delete(storage_->cf(cf), key);
}

void Context::AddCounts(uint8_t db, int64_t keys, int64_t expires) {
  for (auto& d : deltas_) {
    if (d.db == db) {
      d.keys += keys;
      d.expires += expires;
      return;
    }
  }
  deltas_.push_back({db, keys, expires});
}

Status Context::Commit() {
  if (!HasWrites()) {
    Rollback();
    return Status::OK();
  }
  // Write the batch in key order: memtable inserts of sorted keys reuse their
  // skiplist search position (see Storage::Open: no concurrent memtable writes).
  rocksdb::WriteBatch sorted;
  for (int c = 0; c < static_cast<int>(ColumnFamily::kCount); c++) {
    if (!(used_cfs_ & (1u << c))) continue;
    rocksdb::ColumnFamilyHandle* h = storage_->cf(static_cast<ColumnFamily>(c));
    std::unique_ptr<rocksdb::WBWIIterator> it(batch_->NewIterator(h));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      rocksdb::WriteEntry e = it->Entry();
      switch (e.type) {
        case rocksdb::kPutRecord: sorted.Put(h, e.key, e.value); break;
        case rocksdb::kDeleteRecord: sorted.Delete(h, e.key); break;
        case rocksdb::kSingleDeleteRecord: sorted.SingleDelete(h, e.key); break;
        case rocksdb::kMergeRecord: sorted.Merge(h, e.key, e.value); break;
        default: break;
      }
    }
  }
  for (auto& d : deltas_) storage_->AddCountMerges(&sorted, d.db, d.keys, d.expires);
  Status s = storage_->Write(&sorted, without_wal_);
  if (s.ok()) {
    for (auto& d : deltas_) storage_->ApplyCountDeltas(d.db, d.keys, d.expires);
    for (auto& [db, e] : expires_) storage_->LowerExpireFloor(db, e);
  }
  batch_->Clear();
  used_cfs_ = 0;
  deltas_.clear();
  expires_.clear();
  return s;
}

void Context::MovePendingTo(PendingWrites* out,
                            std::map<uint8_t, std::pair<int64_t, int64_t>>* counts) {
  if (!HasWrites()) return Rollback();
  for (int c = 0; c < static_cast<int>(ColumnFamily::kCount); c++) {
    if (!(used_cfs_ & (1u << c))) continue;
    std::unique_ptr<rocksdb::WBWIIterator> it(batch_->NewIterator(storage_->cf(static_cast<ColumnFamily>(c))));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      rocksdb::WriteEntry e = it->Entry();
      out->Add(c, e.type, e.key, e.value);
    }
  }
  for (auto& d : deltas_) {
    auto& acc = (*counts)[d.db];
    acc.first += d.keys;
    acc.second += d.expires;
    storage_->ApplyCountDeltas(d.db, d.keys, d.expires);
  }
  for (auto& [db, e] : expires_) storage_->LowerExpireFloor(db, e);
  Rollback();
}

void Context::SetSavePoint() {
  batch()->SetSavePoint();
  savepoints_.push_back(SavePoint{deltas_, expires_.size(), touched_.size(), noted_events_.size()});
}

void Context::RollbackToSavePoint() {
  if (savepoints_.empty()) return;
  batch_->RollbackToSavePoint();
  SavePoint& sp = savepoints_.back();
  deltas_ = std::move(sp.deltas);
  expires_.resize(sp.expires);
  touched_.resize(sp.touched);
  touch_kinds_.resize(sp.touched);
  if (noted_events_.size() > sp.noted) noted_events_.resize(sp.noted, NotedEvent{0, "", ""});
  savepoints_.pop_back();
}

void Context::PopSavePoint() {
  if (savepoints_.empty()) return;
  batch_->PopSavePoint();
  savepoints_.pop_back();
}

void Context::Rollback() {
  savepoints_.clear();
  touch_kinds_.clear();
  noted_events_.clear();
  if (batch_) batch_->Clear();
  used_cfs_ = 0;
  deltas_.clear();
  expires_.clear();
  touched_.clear();
}

}  // namespace kvrocks
