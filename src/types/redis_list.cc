#include "types/redis_list.h"

#include <algorithm>

#include "common/encoding.h"
#include "types/encoding_limits.h"

namespace kvrocks {

static constexpr uint64_t kMiddle = 1ULL << 63;

// A new quicklist's options, clamped as quicklistSetOptions does.
static void ConfiguredOptions(int32_t* fill, int32_t* depth) {
  *fill = std::clamp(EncodingLimits::ListFill(), -5, (1 << 15) - 1);
  *depth = std::clamp(EncodingLimits::ListCompressDepth(), 0, (1 << 16) - 1);
}

RedisList::ListMeta RedisList::NewList() const {
  ListMeta lm;
  lm.meta.type = RedisType::kList;
  lm.meta.version = db_->ctx()->storage()->NewVersion();
  lm.head = lm.tail = kMiddle;
  ConfiguredOptions(&lm.fill, &lm.depth);
  return lm;
}

void RedisList::QuicklistOptions(const Metadata& meta, int* fill, int* depth) {
  if (meta.payload.size() >= 24) {
    *fill = static_cast<int32_t>(DecodeBE32(meta.payload.data() + 16));
    *depth = static_cast<int32_t>(DecodeBE32(meta.payload.data() + 20));
  } else {
    ConfiguredOptions(fill, depth);
  }
}

Status RedisList::LoadList(std::string_view key, LoadedKey* lk, ListMeta* lm, bool* exists) {
  Status s = db_->Load(key, lk);
  if (!s.ok()) return s;
  *exists = lk->live;
  if (!lk->live) return Status::OK();
  if (lk->type != RedisType::kList) return Status::RedisError(kWrongTypeError);
  s = lm->meta.Decode(lk->raw);
  if (!s.ok()) return s;
  if (lm->meta.payload.size() < 16) return Status::Corruption("list metadata too short");
  lm->head = DecodeBE64(lm->meta.payload.data());
  lm->tail = DecodeBE64(lm->meta.payload.data() + 8);
  QuicklistOptions(lm->meta, &lm->fill, &lm->depth);
  return Status::OK();
}

void RedisList::StoreMeta(std::string_view key, LoadedKey* lk, const ListMeta& lm) {
  if (lm.meta.size == 0) {
    db_->Remove(key, lk);  // an empty list does not exist
    return;
  }
  Metadata meta = lm.meta;
  meta.payload.clear();
  PutBE64(&meta.payload, lm.head);
  PutBE64(&meta.payload, lm.tail);
  PutBE32(&meta.payload, static_cast<uint32_t>(lm.fill));
  PutBE32(&meta.payload, static_cast<uint32_t>(lm.depth));
  db_->Store(key, lk, meta.Encode(), meta.expire_ms);
}

std::string RedisList::ElemKey(std::string_view key, const ListMeta& lm, uint64_t index) const {
  std::string k = SubkeyPrefix(db_->id(), key, lm.meta);
  PutBE64(&k, index);
  return k;
}

Status RedisList::Push(std::string_view key, const std::vector<std::string_view>& elems, bool left,
                       bool only_if_exists, int64_t* len) {
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok()) return s;
  if (!exists) {
    if (only_if_exists) {
      *len = 0;
      return Status::OK();
    }
    lm = NewList();
  }
  for (std::string_view e : elems) {
    if (left) {
      lm.head--;
      db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, lm, lm.head), e);
    } else {
      db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, lm, lm.tail), e);
      lm.tail++;
    }
    lm.meta.size++;
  }
  StoreMeta(key, &lk, lm);
  *len = static_cast<int64_t>(lm.meta.size);
  return Status::OK();
}

Status RedisList::Pop(std::string_view key, bool left, uint64_t count, std::vector<std::string>* elems) {
  elems->clear();
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok() || !exists) return s;
  // LPOP key 0 leaves the list unwritten, as Redis' fast exit does: no WATCH signal.
  if (count == 0) return Status::OK();
  std::string e;
  while (count-- > 0 && lm.meta.size > 0) {
    uint64_t index = left ? lm.head : lm.tail - 1;
    std::string k = ElemKey(key, lm, index);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, k, &e);
    if (!s.ok()) return s.IsNotFound() ? Status::Corruption("missing list element") : s;
    db_->ctx()->Delete(ColumnFamily::kSubkey, k);
    elems->push_back(std::move(e));
    if (left) {
      lm.head++;
    } else {
      lm.tail--;
    }
    lm.meta.size--;
  }
  StoreMeta(key, &lk, lm);
  return Status::OK();
}

Status RedisList::Rotate(std::string_view key, bool from_left, bool to_left, std::string* elem) {
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::NotFound();
  std::string from = ElemKey(key, lm, from_left ? lm.head : lm.tail - 1);
  s = db_->ctx()->Get(ColumnFamily::kSubkey, from, elem);
  if (!s.ok()) return s.IsNotFound() ? Status::Corruption("missing list element") : s;
  if (from_left != to_left) {
    db_->ctx()->Delete(ColumnFamily::kSubkey, from);
    if (from_left) {
      lm.head++;
      db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, lm, lm.tail++), *elem);
    } else {
      lm.tail--;
      db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, lm, --lm.head), *elem);
    }
  }
  StoreMeta(key, &lk, lm);  // the same end: the list is as it was, but written (WATCH, events)
  return Status::OK();
}

Status RedisList::Size(std::string_view key, uint64_t* size) {
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  *size = exists ? lm.meta.size : 0;
  return s;
}

// Clamps a Redis start/stop pair to [0, size); false if the range is empty.
static bool ClampRange(int64_t size, int64_t* start, int64_t* stop) {
  if (*start < 0) *start += size;
  if (*stop < 0) *stop += size;
  if (*start < 0) *start = 0;
  if (*start >= size || *start > *stop) return false;
  if (*stop >= size) *stop = size - 1;
  return true;
}

Status RedisList::Range(std::string_view key, int64_t start, int64_t stop, std::vector<std::string>* elems) {
  elems->clear();
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok() || !exists) return s;
  if (!ClampRange(static_cast<int64_t>(lm.meta.size), &start, &stop)) return Status::OK();
  std::string first = ElemKey(key, lm, lm.head + static_cast<uint64_t>(start));
  std::string upper = ElemKey(key, lm, lm.head + static_cast<uint64_t>(stop) + 1);
  rocksdb::Slice lower_slice(first), upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  ro.iterate_upper_bound = &upper_slice;
  auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
  elems->reserve(static_cast<size_t>(stop - start + 1));  // the range is clamped to the list
  for (it->Seek(first); it->Valid(); it->Next()) elems->push_back(it->value().ToString());
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return Status::OK();
}

Status RedisList::Find(std::string_view key, std::string_view elem, bool from_tail, int64_t maxlen,
                       const std::function<bool(int64_t)>& on_match) {
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok() || !exists) return s;
  std::string lower = ElemKey(key, lm, lm.head);
  std::string upper = ElemKey(key, lm, lm.tail);
  rocksdb::Slice lower_slice(lower), upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  ro.iterate_upper_bound = &upper_slice;
  auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
  auto size = static_cast<int64_t>(lm.meta.size);
  int64_t walked = 0;
  for (from_tail ? it->SeekToLast() : it->SeekToFirst(); it->Valid() && (maxlen == 0 || walked < maxlen);
       from_tail ? it->Prev() : it->Next()) {
    if (it->value() == rocksdb::Slice(elem.data(), elem.size()) &&
        !on_match(from_tail ? size - 1 - walked : walked)) {
      break;
    }
    walked++;
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return Status::OK();
}

Status RedisList::Index(std::string_view key, int64_t index, std::string* elem) {
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::NotFound();
  auto size = static_cast<int64_t>(lm.meta.size);
  if (index < 0) index += size;
  if (index < 0 || index >= size) return Status::NotFound();
  return db_->ctx()->Get(ColumnFamily::kSubkey, ElemKey(key, lm, lm.head + static_cast<uint64_t>(index)), elem);
}

Status RedisList::Set(std::string_view key, int64_t index, std::string_view elem) {
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::RedisError("ERR no such key");
  auto size = static_cast<int64_t>(lm.meta.size);
  if (index < 0) index += size;
  if (index < 0 || index >= size) return Status::RedisError("ERR index out of range");
  db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, lm, lm.head + static_cast<uint64_t>(index)), elem);
  db_->ctx()->Touch(db_->id(), key);
  return Status::OK();
}

void RedisList::Rewrite(std::string_view key, LoadedKey* lk, ListMeta* lm, const std::vector<std::string>& elems) {
  uint64_t expire = lm->meta.expire_ms;
  int32_t fill = lm->fill, depth = lm->depth;
  *lm = NewList();
  lm->meta.expire_ms = expire;
  lm->fill = fill;
  lm->depth = depth;
  for (const auto& e : elems) {
    db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, *lm, lm->tail), e);
    lm->tail++;
    lm->meta.size++;
  }
  StoreMeta(key, lk, *lm);
}

Status RedisList::Insert(std::string_view key, bool before, std::string_view pivot, std::string_view elem,
                         int64_t* len) {
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok()) return s;
  if (!exists) {
    *len = 0;
    return Status::OK();
  }
  // The pivot's position, read from the head up to it, as Redis searches.
  int64_t pos = -1;
  s = Find(key, pivot, false, 0, [&pos](int64_t at) {
    pos = at;
    return false;
  });
  if (!s.ok()) return s;
  if (pos < 0) {
    *len = -1;
    return Status::OK();
  }
  // The elements on the shorter side of the new one move one index outwards.
  const auto size = static_cast<int64_t>(lm.meta.size);
  const int64_t at = before ? pos : pos + 1;  // the new element's position
  const bool shift_head = at < size - at;
  std::vector<std::string> moved;
  if (shift_head ? at > 0 : at < size) {  // (Range reads -1 as the last element)
    s = shift_head ? Range(key, 0, at - 1, &moved) : Range(key, at, size - 1, &moved);
    if (!s.ok()) return s;
  }
  if (shift_head) {
    for (size_t i = 0; i < moved.size(); i++) {
      db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, lm, lm.head - 1 + i), moved[i]);
    }
    lm.head--;
  } else {
    for (size_t i = moved.size(); i-- > 0;) {
      db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, lm, lm.head + static_cast<uint64_t>(at) + 1 + i), moved[i]);
    }
    lm.tail++;
  }
  db_->ctx()->Put(ColumnFamily::kSubkey, ElemKey(key, lm, lm.head + static_cast<uint64_t>(at)), elem);
  lm.meta.size++;
  StoreMeta(key, &lk, lm);
  *len = static_cast<int64_t>(lm.meta.size);
  return Status::OK();
}

Status RedisList::Rem(std::string_view key, int64_t count, std::string_view elem, int64_t* removed) {
  *removed = 0;
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok() || !exists) return s;
  std::vector<std::string> all;
  s = Range(key, 0, -1, &all);
  if (!s.ok()) return s;
  std::vector<bool> drop(all.size(), false);
  uint64_t limit = count == 0 ? UINT64_MAX : static_cast<uint64_t>(count < 0 ? -count : count);
  for (size_t n = 0; n < all.size() && static_cast<uint64_t>(*removed) < limit; n++) {
    size_t i = count < 0 ? all.size() - 1 - n : n;
    if (all[i] == elem) {
      drop[i] = true;
      (*removed)++;
    }
  }
  if (*removed == 0) return Status::OK();
  std::vector<std::string> kept;
  for (size_t i = 0; i < all.size(); i++) {
    if (!drop[i]) kept.push_back(std::move(all[i]));
  }
  Rewrite(key, &lk, &lm, kept);
  return Status::OK();
}

Status RedisList::Trim(std::string_view key, int64_t start, int64_t stop) {
  LoadedKey lk;
  ListMeta lm;
  bool exists;
  Status s = LoadList(key, &lk, &lm, &exists);
  if (!s.ok() || !exists) return s;
  auto size = static_cast<int64_t>(lm.meta.size);
  int64_t first = 0, last = -1;  // kept range; empty by default
  if (ClampRange(size, &start, &stop)) {
    first = start;
    last = stop;
  }
  // Delete only the trimmed elements, from both ends.
  for (int64_t i = 0; i < (last >= first ? first : size); i++) {
    db_->ctx()->Delete(ColumnFamily::kSubkey, ElemKey(key, lm, lm.head + static_cast<uint64_t>(i)));
  }
  if (last >= first) {
    for (int64_t i = last + 1; i < size; i++) {
      db_->ctx()->Delete(ColumnFamily::kSubkey, ElemKey(key, lm, lm.head + static_cast<uint64_t>(i)));
    }
    lm.tail = lm.head + static_cast<uint64_t>(last) + 1;
    lm.head += static_cast<uint64_t>(first);
    lm.meta.size = static_cast<uint64_t>(last - first + 1);
  } else {
    lm.meta.size = 0;
  }
  db_->ctx()->AddDirty(size - static_cast<int64_t>(lm.meta.size));  // Redis counts each removed element
  StoreMeta(key, &lk, lm);
  return Status::OK();
}

}  // namespace kvrocks
