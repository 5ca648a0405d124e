#include "storage/context.h"

#include <glog/logging.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "common/time_util.h"
#include "common/trim.h"
#include "storage/key_encoding.h"

namespace kvrocks {

// The bytes a batch keeps between uses (ClearAndTrim's kTrimKeepEntries for its containers).
static constexpr size_t kKeepBatchBytes = 4 << 20;
// A batch whose writes average this many bytes is committed unsorted (Commit).
static constexpr size_t kUnsortedBytesPerWrite = 2048;

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

namespace {

uint64_t KeyHash(ColumnFamily cf, const rocksdb::Slice& key) {
  uint64_t h = std::hash<std::string_view>()(std::string_view(key.data(), key.size()));
  h ^= (static_cast<uint64_t>(cf) + 1) * 0x9e3779b97f4a7c15ull;
  return h == 0 ? 1 : h;
}

// Calls on(cf, type, key, value) for each write of a batch, in order.
template <typename On>
class WriteVisitor : public rocksdb::WriteBatch::Handler {
 public:
  WriteVisitor(Storage* storage, On on) : storage_(storage), on_(std::move(on)) {}
  rocksdb::Status PutCF(uint32_t id, const rocksdb::Slice& key, const rocksdb::Slice& value) override {
    return Visit(id, rocksdb::kPutRecord, key, value);
  }
  rocksdb::Status DeleteCF(uint32_t id, const rocksdb::Slice& key) override {
    return Visit(id, rocksdb::kDeleteRecord, key, rocksdb::Slice());
  }
  rocksdb::Status SingleDeleteCF(uint32_t id, const rocksdb::Slice& key) override {
    return Visit(id, rocksdb::kSingleDeleteRecord, key, rocksdb::Slice());
  }
  rocksdb::Status MergeCF(uint32_t id, const rocksdb::Slice& key, const rocksdb::Slice& value) override {
    return Visit(id, rocksdb::kMergeRecord, key, value);
  }

 private:
  rocksdb::Status Visit(uint32_t id, rocksdb::WriteType type, const rocksdb::Slice& key, const rocksdb::Slice& value) {
    for (int c = 0; c < static_cast<int>(ColumnFamily::kCount); c++) {
      if (storage_->cf(static_cast<ColumnFamily>(c))->GetID() == id) {
        on_(c, type, key, value);
        return rocksdb::Status::OK();
      }
    }
    return rocksdb::Status::Corruption("write to an unknown column family");
  }
  Storage* storage_;
  On on_;
};

template <typename On>
rocksdb::Status VisitWrites(Storage* storage, const rocksdb::WriteBatch& batch, On on) {
  WriteVisitor<On> visitor(storage, std::move(on));
  return batch.Iterate(&visitor);
}

}  // namespace

void HashSet::Insert(uint64_t h) {
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (slots_[i] == h) return;
    if (slots_[i] == 0) {
      slots_[i] = h;
      size_++;
      return;
    }
  }
}

bool HashSet::Contains(uint64_t h) const {
  if (size_ == 0) return false;
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    if (slots_[i] == h) return true;
    if (slots_[i] == 0) return false;
  }
}

void HashSet::Clear() {
  if (size_ == 0) return;
  size_ = 0;
  // One huge batch must not make every later clear expensive.
  if (slots_.size() > (1u << 16)) {
    slots_ = std::vector<uint64_t>();
  } else {
    std::fill(slots_.begin(), slots_.end(), 0);
  }
}

void HashSet::Grow() {
  std::vector<uint64_t> old;
  old.swap(slots_);
  slots_.assign(std::max<size_t>(64, old.size() * 2), 0);
  size_ = 0;
  for (uint64_t h : old) {
    if (h != 0) Insert(h);
  }
}

rocksdb::WriteBatchWithIndex* Context::Indexed() {
  if (indexed_) return index_.get();
  if (!index_) index_ = std::make_unique<rocksdb::WriteBatchWithIndex>(rocksdb::BytewiseComparator(), 0, true);
  // Replay the writes, re-creating each savepoint where it was set.
  size_t n = 0, sp = 0;
  auto savepoints_up_to_here = [&] {
    for (; sp < savepoints_.size() && savepoints_[sp].writes == n; sp++) index_->SetSavePoint();
  };
  rocksdb::Status s = VisitWrites(
      storage_, plain_, [&](int c, rocksdb::WriteType type, const rocksdb::Slice& key, const rocksdb::Slice& value) {
        savepoints_up_to_here();
        rocksdb::ColumnFamilyHandle* h = storage_->cf(static_cast<ColumnFamily>(c));
        switch (type) {
          case rocksdb::kPutRecord: index_->Put(h, key, value); break;
          case rocksdb::kDeleteRecord: index_->Delete(h, key); break;
          case rocksdb::kSingleDeleteRecord: index_->SingleDelete(h, key); break;
          case rocksdb::kMergeRecord: index_->Merge(h, key, value); break;
          default: break;
        }
        n++;
      });
  CHECK(s.ok()) << "replaying a context's own batch: " << s.ToString();
  savepoints_up_to_here();
  plain_.Clear();
  indexed_ = true;
  return index_.get();
}

bool Context::MayHaveWritten(ColumnFamily cf, const rocksdb::Slice& key) const {
  return (used_cfs_ & (1u << static_cast<int>(cf))) && written_.Contains(KeyHash(cf, key));
}

void Context::Prefetch(ColumnFamily cf, std::vector<std::string> keys) {
  prefetched_.clear();
  prefetch_cf_ = cf;
  keys.erase(std::remove_if(keys.begin(), keys.end(), [&](const std::string& k) { return MayHaveWritten(cf, k); }),
             keys.end());
  prefetch_keys_ = std::move(keys);
  // The map's keys point into prefetch_keys_, which no longer changes.
  std::vector<rocksdb::Slice> slices(prefetch_keys_.begin(), prefetch_keys_.end());
  prefetch_values_.clear();
  prefetch_values_.resize(slices.size());
  prefetch_status_.assign(slices.size(), rocksdb::Status());
  storage_->db()->MultiGet(ReadOpts(), storage_->cf(cf), slices.size(), slices.data(), prefetch_values_.data(),
                           prefetch_status_.data(), false);
  for (size_t i = 0; i < prefetch_keys_.size(); i++) {
    if (prefetch_status_[i].ok() || prefetch_status_[i].IsNotFound()) prefetched_.emplace(prefetch_keys_[i], i);
  }
}

void Context::DropPrefetched() {
  if (prefetch_values_.empty()) return;
  prefetched_.clear();
  ClearAndTrim(&prefetch_values_, kTrimKeepEntries);  // unpins their blocks
  ClearAndTrim(&prefetch_keys_, kTrimKeepEntries);
}

Status Context::Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value) {
  if (!prefetched_.empty() && cf == prefetch_cf_) {
    auto it = prefetched_.find(std::string_view(key.data(), key.size()));
    if (it != prefetched_.end()) {
      const size_t i = it->second;
      prefetched_.erase(it);
      if (!MayHaveWritten(cf, key)) {
        if (prefetch_status_[i].IsNotFound()) return Status::NotFound();
        value->assign(prefetch_values_[i].data(), prefetch_values_[i].size());
        return Status::OK();
      }
    }
  }
  rocksdb::Status s;
  const bool written = MayHaveWritten(cf, key);
  if (batch_only_) {
    if (!written) return Status::NotFound();
    s = Indexed()->GetFromBatch(storage_->cf(cf), rocksdb::DBOptions(), key, value);
  } else if (written) {
    s = Indexed()->GetFromBatchAndDB(storage_->db(), ReadOpts(), storage_->cf(cf), key, value);
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
  std::unique_ptr<rocksdb::Iterator> it;
  if (HasWrites() && (used_cfs_ & (1u << static_cast<int>(cf)))) {
    it = std::make_unique<BoundedIterator>(Indexed()->NewIteratorWithBase(storage_->cf(cf), base, &ro), ro);
  } else {
    it.reset(base);
  }
  WatchTombstones(storage_->tombstone_compactor(), storage_->cf(cf), ro, it.get());
  return it;
}

void Context::Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  used_cfs_ |= 1u << static_cast<int>(cf);
  if (cf == ColumnFamily::kSubkey) storage_->NoteSubkeyValue(value);
  written_.Insert(KeyHash(cf, key));
  if (indexed_) {
    index_->Put(storage_->cf(cf), key, value);
  } else {
    plain_.Put(storage_->cf(cf), key, value);
  }
}

void Context::Delete(ColumnFamily cf, const rocksdb::Slice& key) {
  used_cfs_ |= 1u << static_cast<int>(cf);
  written_.Insert(KeyHash(cf, key));
  if (indexed_) {
    index_->Delete(storage_->cf(cf), key);
  } else {
    plain_.Delete(storage_->cf(cf), key);
  }
}

bool Context::FindPending(ColumnFamily cf, const rocksdb::Slice& key, rocksdb::WriteType* type) {
  if (!MayHaveWritten(cf, key)) return false;
  std::unique_ptr<rocksdb::WBWIIterator> it(Indexed()->NewIterator(storage_->cf(cf)));
  it->Seek(key);
  if (!it->Valid() || it->Entry().key != key) return false;
  *type = it->Entry().type;
  return true;
}

bool Context::HasPendingWrite(ColumnFamily cf, const rocksdb::Slice& key) {
  rocksdb::WriteType type;
  return FindPending(cf, key, &type);
}

void Context::NoteExpiring(uint8_t db, std::string_view key) {
  if (!note_expiring_) return;
  // The caller holds the key's lock, so no SWAPDB moves db meanwhile. A db no logical
  // one maps to (a bulk load's staging db) is no client's to note.
  int logical = storage_->LogicalDb(db);
  if (logical >= 0) expiring_.emplace_back(static_cast<uint8_t>(logical), std::string(key));
}

void Context::PutUnread(uint8_t db, std::string_view key, const std::string& meta_key, const rocksdb::Slice& meta_value,
                        uint64_t expire_ms) {
  Put(ColumnFamily::kMetadata, meta_key, meta_value);
  if (expire_ms != 0) {
    Put(ColumnFamily::kExpire, EncodeExpireKey(db, expire_ms, key), "");
    NoteExpire(db, expire_ms);
    NoteExpiring(db, key);
  }
  unread_.push_back(UnreadWrite{unread_keys_.size(), meta_key.size(), expire_ms});
  unread_keys_.append(meta_key);
}

Status Context::SettleUnread() {
  if (unread_.empty()) return Status::OK();
  auto meta_key = [&](const UnreadWrite& u) { return rocksdb::Slice(unread_keys_.data() + u.offset, u.size); };
  std::sort(unread_.begin(), unread_.end(),
            [&](const UnreadWrite& a, const UnreadWrite& b) { return meta_key(a).compare(meta_key(b)) < 0; });
  std::vector<rocksdb::Slice> keys;
  keys.reserve(unread_.size());
  for (const UnreadWrite& u : unread_) keys.push_back(meta_key(u));
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  const uint64_t now = NowMs();
  // The batch is not applied yet: the database shows each key as it was before its write.
  storage_->db()->MultiGet(rocksdb::ReadOptions(), storage_->cf(ColumnFamily::kMetadata), keys.size(), keys.data(),
                           values.data(), statuses.data(), true);
  for (size_t j = 0; j < unread_.size(); j++) {
    uint8_t db;
    std::string_view key;
    if (!DecodeMetaKey(std::string_view(keys[j].data(), keys[j].size()), &db, &key)) {
      return Status::Corruption("bad metadata key");
    }
    uint64_t old_expire = 0;
    if (statuses[j].IsNotFound()) {
      AddKeyCount(db, 1);
    } else if (!statuses[j].ok()) {
      return Status::IOError(statuses[j].ToString());
    } else {
      RedisType type;
      std::string_view old_raw(values[j].data(), values[j].size());
      Status s = PeekMetadata(old_raw, &type, &old_expire);
      if (!s.ok()) return s;
      uint64_t moved;
      // A renamed key replaced: its subkeys' moved record goes with it (Database::Store).
      if (HasMovedSubkeys(old_raw, &moved)) Delete(ColumnFamily::kState, EncodeMovedKey(moved));
      // The write replaced a key that had expired (the moment of the commit stands for the write's).
      if (expired_counter_ != nullptr && old_expire != 0 && old_expire <= now) expired_pending_++;
    }
    const uint64_t new_expire = unread_[j].expire_ms;
    if (old_expire == new_expire) continue;
    ChangeExpire(db, old_expire, new_expire);
    if (old_expire == 0) continue;
    // A later command of the batch may have given the key that same expiry again.
    std::string old_entry = EncodeExpireKey(db, old_expire, key);
    rocksdb::WriteType pending;
    if (!FindPending(ColumnFamily::kExpire, old_entry, &pending) || pending != rocksdb::kPutRecord) {
      Delete(ColumnFamily::kExpire, old_entry);
    }
  }
  ClearAndTrim(&unread_, kTrimKeepEntries);
  ClearAndTrim(&unread_keys_, kTrimKeepEntries * 16);
  return Status::OK();
}

void Context::AddCounts(uint8_t db, const CountDeltas& d) {
  for (auto& x : deltas_) {
    if (x.db == db) {
      x.d.keys += d.keys;
      x.d.expires += d.expires;
      x.d.expire_seconds += d.expire_seconds;
      return;
    }
  }
  deltas_.push_back({db, d});
}

Status Context::Commit() {
  if (discard_writes_) return Status::OK();
  if (dirty_counter_ != nullptr && dirty_pending_ != 0) {
    // Counted whether or not storage takes the batch: Redis counts a change once made.
    dirty_counter_->fetch_add(dirty_pending_, std::memory_order_relaxed);
  }
  dirty_pending_ = 0;
  if (!HasWrites()) {
    // Keys touched by an earlier commit of this context (a transaction that
    // flushed a database midway) still await the caller.
    DiscardWrites();
    return Status::OK();
  }
  Status settled = SettleUnread();
  if (!settled.ok()) {
    Rollback();
    return settled;
  }
  // Write the batch in key order: memtable inserts of sorted keys reuse their
  // skiplist search position (see Storage::Open: no concurrent memtable writes).
  // A batch of big values, each to its own key, goes as it is: copying it costs
  // more than the sort saves (8 KiB SETs: 1-2 us less worker CPU per SET,
  // bench/RESULTS.md session 40). Sorting also keeps only the last write of a
  // key, which matters more when one key is written over and over.
  std::optional<rocksdb::WriteBatch> sorted;
  rocksdb::WriteBatch* out = &plain_;
  const bool as_it_is = !indexed_ && plain_.GetDataSize() >= kUnsortedBytesPerWrite * plain_.Count() &&
                        written_.size() == plain_.Count();
  if (!as_it_is && !OrderWrites()) {
    const rocksdb::WriteBatch& pending = indexed_ ? *index_->GetWriteBatch() : plain_;
    // Reserved, with room for the count merges added below: no regrowth copies.
    out = &sorted.emplace(pending.GetDataSize() + 256 * deltas_.size());
    for (const Write& w : ordered_) {
      rocksdb::ColumnFamilyHandle* h = storage_->cf(static_cast<ColumnFamily>(w.cf));
      switch (w.type) {
        case rocksdb::kPutRecord: out->Put(h, w.key, w.value); break;
        case rocksdb::kDeleteRecord: out->Delete(h, w.key); break;
        case rocksdb::kSingleDeleteRecord: out->SingleDelete(h, w.key); break;
        case rocksdb::kMergeRecord: out->Merge(h, w.key, w.value); break;
        default: break;
      }
    }
  }
  for (auto& x : deltas_) storage_->AddCountMerges(out, x.db, x.d);
  // The counters move before the batch is visible, and back if it fails: a reader
  // that sees its effect (say, a key the expire cycle removed) and then asks DBSIZE,
  // INFO keyspace or INFO stats sees them moved. The other order let a DBSIZE that
  // followed an EXISTS still count the key.
  for (auto& x : deltas_) storage_->ApplyCountDeltas(x.db, x.d);
  for (auto& [db, e] : expires_) storage_->LowerExpireFloor(db, e);
  const bool expired = expired_counter_ != nullptr && expired_pending_ != 0;
  if (expired) expired_counter_->fetch_add(expired_pending_, std::memory_order_relaxed);
  Status s = storage_->Write(out, without_wal_);
  if (!s.ok()) {
    for (auto& x : deltas_) storage_->ApplyCountDeltas(x.db, CountDeltas{-x.d.keys, -x.d.expires, -x.d.expire_seconds});
    if (expired) expired_counter_->fetch_sub(expired_pending_, std::memory_order_relaxed);
  }
  ClearWrites();
  deltas_.clear();
  expires_.clear();
  savepoints_.clear();
  expired_pending_ = 0;
  return s;
}

bool Context::OrderWrites() {
  ordered_.clear();
  if (indexed_) {
    // The index holds the last write of each key, in order.
    for (int c = 0; c < static_cast<int>(ColumnFamily::kCount); c++) {
      if (!(used_cfs_ & (1u << c))) continue;
      std::unique_ptr<rocksdb::WBWIIterator> it(index_->NewIterator(storage_->cf(static_cast<ColumnFamily>(c))));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        rocksdb::WriteEntry e = it->Entry();
        ordered_.push_back(Write{c, e.type, e.key, e.value});
      }
    }
    return false;
  }
  rocksdb::Status s = VisitWrites(
      storage_, plain_, [&](int c, rocksdb::WriteType type, const rocksdb::Slice& key, const rocksdb::Slice& value) {
        ordered_.push_back(Write{c, type, key, value});
      });
  CHECK(s.ok()) << "reading a context's own batch: " << s.ToString();
  auto before = [](const Write& a, const Write& b) { return a.cf != b.cf ? a.cf < b.cf : a.key.compare(b.key) < 0; };
  bool in_order = true;
  for (size_t i = 1; i < ordered_.size() && in_order; i++) in_order = before(ordered_[i - 1], ordered_[i]);
  if (in_order) return true;
  // Stable: of several writes of one key, the last stays last, and is kept.
  std::stable_sort(ordered_.begin(), ordered_.end(), before);
  size_t kept = 0;
  for (size_t i = 0; i < ordered_.size(); i++) {
    if (i + 1 < ordered_.size() && !before(ordered_[i], ordered_[i + 1])) continue;
    ordered_[kept++] = ordered_[i];
  }
  ordered_.resize(kept);
  return false;
}

void Context::ClearWrites() {
  DropPrefetched();
  // A batch that carried a big value gives its memory back rather than keep it
  // for the next, usually small, batches (the worker's batch lives as long as it).
  if (plain_.Data().capacity() > kKeepBatchBytes) {
    plain_ = rocksdb::WriteBatch();
  } else {
    plain_.Clear();
  }
  if (index_ && index_->GetWriteBatch()->Data().capacity() > kKeepBatchBytes) index_.reset();
  if (index_) index_->Clear();
  indexed_ = false;
  used_cfs_ = 0;
  written_.Clear();
  ClearAndTrim(&ordered_, kTrimKeepEntries);
}

void Context::MovePendingTo(PendingWrites* out, std::map<uint8_t, CountDeltas>* counts) {
  if (!HasWrites()) return Rollback();
  Status settled = SettleUnread();
  if (!settled.ok()) LOG(ERROR) << "Bulk write: " << settled.message();
  OrderWrites();
  for (const Write& w : ordered_) out->Add(w.cf, w.type, w.key, w.value);
  for (auto& x : deltas_) {
    CountDeltas& acc = (*counts)[x.db];
    acc.keys += x.d.keys;
    acc.expires += x.d.expires;
    acc.expire_seconds += x.d.expire_seconds;
    storage_->ApplyCountDeltas(x.db, x.d);
  }
  for (auto& [db, e] : expires_) storage_->LowerExpireFloor(db, e);
  Rollback();
}

void Context::SetSavePoint() {
  if (indexed_) {
    index_->SetSavePoint();
  } else {
    plain_.SetSavePoint();
  }
  savepoints_.push_back(SavePoint{deltas_, expires_.size(), touched_.size(), noted_events_.size(), unread_.size(),
                                  static_cast<size_t>(pending()->Count()), expiring_.size(), expired_pending_,
                                  dirty_pending_});
}

void Context::RollbackToSavePoint() {
  if (savepoints_.empty()) return;
  rocksdb::Status s = indexed_ ? index_->RollbackToSavePoint() : plain_.RollbackToSavePoint();
  CHECK(s.ok()) << "rollback to a savepoint: " << s.ToString();
  SavePoint& sp = savepoints_.back();
  deltas_ = std::move(sp.deltas);
  expires_.resize(sp.expires);
  if (expiring_.size() > sp.expiring) expiring_.resize(sp.expiring, {0, ""});
  if (unread_.size() > sp.unread) {
    unread_keys_.resize(unread_[sp.unread].offset);
    unread_.resize(sp.unread);
  }
  touched_.resize(sp.touched);
  touch_kinds_.resize(sp.touched);
  touch_marks_.resize(sp.touched);
  touch_ready_.resize(sp.touched);
  // A swap is no write to roll back: touches from here on still come after it.
  for (DbSwap& w : db_swaps_) w.touch_at = std::min(w.touch_at, sp.touched);
  expired_pending_ = sp.expired;
  dirty_pending_ = sp.dirty;
  if (noted_events_.size() > sp.noted) noted_events_.resize(sp.noted, NotedEvent{0, "", ""});
  savepoints_.pop_back();
}

void Context::PopSavePoint() {
  if (savepoints_.empty()) return;
  rocksdb::Status s = indexed_ ? index_->PopSavePoint() : plain_.PopSavePoint();
  CHECK(s.ok()) << "pop a savepoint: " << s.ToString();
  savepoints_.pop_back();
}

void Context::DiscardWrites() {
  savepoints_.clear();
  ClearWrites();
  deltas_.clear();
  expires_.clear();
  // expiring_ stays: it also lists what earlier commits of this context wrote (a
  // transaction's DBSIZE commits midway, and a later commit without writes lands here).
  ClearAndTrim(&unread_, kTrimKeepEntries);
  ClearAndTrim(&unread_keys_, kTrimKeepEntries * 16);
  expired_pending_ = 0;
  dirty_pending_ = 0;
}

void Context::Rollback() {
  DiscardWrites();
  ClearTouched();
}

std::vector<std::pair<uint8_t, std::string>> Context::TakeExpiredFound() {
  std::vector<std::pair<uint8_t, std::string>> out;
  out.swap(expired_found_);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace kvrocks
