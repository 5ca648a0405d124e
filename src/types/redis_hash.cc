#include "types/redis_hash.h"

#include <cmath>

#include "common/string_util.h"

namespace kvrocks {

static constexpr uint8_t kHashtableFlag = 1;  // payload[0]: reported as hashtable

const char* RedisHash::Encoding(const Metadata& meta) {
  bool hashtable = !meta.payload.empty() && (static_cast<uint8_t>(meta.payload[0]) & kHashtableFlag);
  return hashtable ? "hashtable" : "listpack";
}

Metadata RedisHash::NewHash() const {
  Metadata meta;
  meta.type = RedisType::kHash;
  meta.version = db_->ctx()->storage()->NewVersion();
  meta.size = 0;
  meta.payload.assign(1, '\0');
  return meta;
}

Status RedisHash::LoadHash(std::string_view key, LoadedKey* lk, Metadata* meta, bool* exists) {
  return db_->LoadCollection(key, RedisType::kHash, lk, meta, exists);
}

void RedisHash::StoreMeta(std::string_view key, LoadedKey* lk, const Metadata& meta) {
  if (meta.size == 0) {
    db_->Remove(key, lk);  // an empty hash does not exist
    return;
  }
  db_->Store(key, lk, meta.Encode(), meta.expire_ms);
}

Status RedisHash::Set(std::string_view key, const std::vector<std::pair<std::string_view, std::string_view>>& fvs,
                      bool nx, int64_t* added) {
  *added = 0;
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) meta = NewHash();
  std::string prefix = EncodeSubkeyPrefix(db_->id(), key, meta.version);
  bool changed = false;
  std::string sub, old;
  for (const auto& [field, value] : fvs) {
    sub.assign(prefix).append(field);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &old);
    if (!s.ok() && !s.IsNotFound()) return s;
    bool present = s.ok();
    if (present && nx) continue;
    if (!present) {
      meta.size++;
      (*added)++;
    }
    db_->ctx()->Put(ColumnFamily::kSubkey, sub, value);
    if (field.size() > kListpackMaxValue || value.size() > kListpackMaxValue) meta.payload[0] |= kHashtableFlag;
    changed = true;
  }
  if (meta.size > kListpackMaxEntries) meta.payload[0] |= kHashtableFlag;
  if (changed) {
    StoreMeta(key, &lk, meta);
  }
  return Status::OK();
}

Status RedisHash::Get(std::string_view key, std::string_view field, std::string* value) {
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::NotFound();
  std::string sub = EncodeSubkeyPrefix(db_->id(), key, meta.version);
  sub.append(field);
  return db_->ctx()->Get(ColumnFamily::kSubkey, sub, value);
}

Status RedisHash::MGet(std::string_view key, const std::vector<std::string_view>& fields,
                       std::vector<std::optional<std::string>>* values) {
  values->assign(fields.size(), std::nullopt);
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  std::string prefix = EncodeSubkeyPrefix(db_->id(), key, meta.version);
  std::string sub, value;
  for (size_t i = 0; i < fields.size(); i++) {
    sub.assign(prefix).append(fields[i]);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &value);
    if (s.ok()) {
      (*values)[i] = value;
    } else if (!s.IsNotFound()) {
      return s;
    }
  }
  return Status::OK();
}

Status RedisHash::Delete(std::string_view key, const std::vector<std::string_view>& fields, int64_t* deleted) {
  *deleted = 0;
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  std::string prefix = EncodeSubkeyPrefix(db_->id(), key, meta.version);
  std::string sub, value;
  for (std::string_view field : fields) {
    sub.assign(prefix).append(field);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &value);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    db_->ctx()->Delete(ColumnFamily::kSubkey, sub);
    meta.size--;
    (*deleted)++;
  }
  if (*deleted > 0) StoreMeta(key, &lk, meta);
  return Status::OK();
}

Status RedisHash::Size(std::string_view key, uint64_t* size) {
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  *size = exists ? meta.size : 0;
  return s;
}

Status RedisHash::Scan(std::string_view key, const std::string& after, size_t count, std::string_view pattern,
                       std::vector<std::pair<std::string, std::string>>* fvs, std::string* next) {
  next->clear();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  std::string prefix = EncodeSubkeyPrefix(db_->id(), key, meta.version);
  std::string upper = prefix;
  // prefix ends with the 8-byte version; incrementing it bounds the iteration.
  for (size_t i = upper.size(); i-- > 0;) {
    if (static_cast<uint8_t>(upper[i]) != 0xff) {
      upper[i] = static_cast<char>(static_cast<uint8_t>(upper[i]) + 1);
      upper.resize(i + 1);
      break;
    }
  }
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
  if (after.empty()) {
    it->Seek(prefix);
  } else {
    std::string start = prefix + after;
    it->Seek(start);
    if (it->Valid() && it->key() == rocksdb::Slice(start)) it->Next();
  }
  size_t examined = 0;
  for (; it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (examined == count) return Status::OK();  // *next is the last field examined
    examined++;
    std::string field(it->key().data() + prefix.size(), it->key().size() - prefix.size());
    *next = field;
    if (pattern != "*" && !StringMatch(pattern, field)) continue;
    fvs->emplace_back(std::move(field), it->value().ToString());
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  next->clear();
  return Status::OK();
}

Status RedisHash::GetAll(std::string_view key, std::vector<std::pair<std::string, std::string>>* fvs) {
  std::string next;
  return Scan(key, "", SIZE_MAX, "*", fvs, &next);
}

Status RedisHash::UpdateField(std::string_view key, std::string_view field,
                              const std::function<Status(const std::string* old, std::string* value)>& fn) {
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) meta = NewHash();
  std::string sub = EncodeSubkeyPrefix(db_->id(), key, meta.version);
  sub.append(field);
  std::string old, value;
  s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &old);
  if (!s.ok() && !s.IsNotFound()) return s;
  bool present = s.ok();
  s = fn(present ? &old : nullptr, &value);
  if (!s.ok()) return s;
  db_->ctx()->Put(ColumnFamily::kSubkey, sub, value);
  if (!present) meta.size++;
  if (field.size() > kListpackMaxValue || value.size() > kListpackMaxValue || meta.size > kListpackMaxEntries) {
    meta.payload[0] |= kHashtableFlag;
  }
  StoreMeta(key, &lk, meta);
  return Status::OK();
}

Status RedisHash::IncrBy(std::string_view key, std::string_view field, int64_t delta, int64_t* result) {
  return UpdateField(key, field, [&](const std::string* old, std::string* value) {
    int64_t v = 0;
    if (old != nullptr && !ParseInt64(*old, &v)) return Status::RedisError("ERR hash value is not an integer");
    if ((delta < 0 && v < 0 && delta < INT64_MIN - v) || (delta > 0 && v > 0 && delta > INT64_MAX - v)) {
      return Status::RedisError("ERR increment or decrement would overflow");
    }
    *result = v + delta;
    *value = std::to_string(*result);
    return Status::OK();
  });
}

Status RedisHash::IncrByFloat(std::string_view key, std::string_view field, long double delta, std::string* result) {
  return UpdateField(key, field, [&](const std::string* old, std::string* value) {
    long double v = 0;
    if (old != nullptr && !ParseLongDouble(*old, &v)) return Status::RedisError("ERR hash value is not a float");
    long double r = v + delta;
    if (std::isnan(r) || std::isinf(r)) return Status::RedisError("ERR increment would produce NaN or Infinity");
    *result = FormatLongDoubleHuman(r);
    *value = *result;
    return Status::OK();
  });
}

}  // namespace kvrocks
