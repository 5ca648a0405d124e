#include "types/redis_hash.h"

#include <algorithm>

#include <cmath>
#include <unordered_set>

#include "common/encoding.h"
#include "common/string_util.h"
#include "common/time_util.h"

namespace kvrocks {

static constexpr uint8_t kHashtableFlag = 1;  // payload[0]: reported as hashtable
// payload[0]: some field has (or had) a TTL; every value then starts with its
// absolute expiry, expire_ms(8, BE, 0 = none).
static constexpr uint8_t kFieldTtlFlag = 2;
// payload[0]: a listpack hash keeping Redis' insertion order. Every value then
// carries its field's insertion number, varint (after the expiry, if any), and
// the payload goes on with the next number to give, next_seq(8, BE).
static constexpr uint8_t kOrderedFlag = 4;

static uint8_t Flags(const Metadata& meta) {
  return meta.payload.empty() ? 0 : static_cast<uint8_t>(meta.payload[0]);
}
static bool HasFieldTtls(const Metadata& meta) { return Flags(meta) & kFieldTtlFlag; }
static bool IsHashtable(const Metadata& meta) { return Flags(meta) & kHashtableFlag; }
static bool IsOrdered(const Metadata& meta) { return (Flags(meta) & kOrderedFlag) && meta.payload.size() >= 9; }

// The insertion number for a new field of an ordered hash.
static uint64_t TakeSeq(Metadata* meta) {
  uint64_t seq = DecodeBE64(meta->payload.data() + 1);
  meta->payload.resize(1);
  PutBE64(&meta->payload, seq + 1);
  return seq;
}

// Strips the expiry and insertion number of a stored value; false if the
// field has expired (or the value is malformed).
static bool Unwrap(const Metadata& meta, std::string* v, uint64_t now, uint64_t* expire = nullptr,
                   uint64_t* seq = nullptr) {
  Reader r(*v);
  uint64_t e = 0, n = 0;
  if (HasFieldTtls(meta) && !r.GetBE64(&e)) return false;
  if (IsOrdered(meta) && !r.GetVarint64(&n)) return false;
  v->erase(0, v->size() - r.rest().size());
  if (expire != nullptr) *expire = e;
  if (seq != nullptr) *seq = n;
  return e == 0 || e > now;
}

static std::string Wrap(const Metadata& meta, std::string_view value, uint64_t expire, uint64_t seq) {
  if (!HasFieldTtls(meta) && !IsOrdered(meta)) return std::string(value);
  std::string out;
  out.reserve(value.size() + 18);
  if (HasFieldTtls(meta)) PutBE64(&out, expire);
  if (IsOrdered(meta)) PutVarint64(&out, seq);
  out.append(value);
  return out;
}

// Whether a new hash holding these fields is a listpack in Redis: no field or
// value over hash-max-listpack-value, at most hash-max-listpack-entries distinct fields.
static bool FitsListpack(const std::vector<std::pair<std::string_view, std::string_view>>& fvs) {
  for (const auto& [field, value] : fvs) {
    if (std::max(field.size(), value.size()) > EncodingLimits::HashValue()) return false;
  }
  if (fvs.size() <= EncodingLimits::HashEntries()) return true;
  std::unordered_set<std::string_view> distinct;
  for (const auto& fv : fvs) {
    if (distinct.insert(fv.first).second && distinct.size() > EncodingLimits::HashEntries()) return false;
  }
  return true;
}

const char* RedisHash::Encoding(const Metadata& meta) { return IsHashtable(meta) ? "hashtable" : "listpack"; }

Metadata RedisHash::NewHash(bool listpack) const {
  Metadata meta;
  meta.type = RedisType::kHash;
  meta.version = db_->ctx()->storage()->NewVersion();
  meta.size = 0;
  meta.payload.assign(1, static_cast<char>(listpack ? kOrderedFlag : kHashtableFlag));
  if (listpack) PutBE64(&meta.payload, 0);
  return meta;
}

Status RedisHash::KeepOrderIfListpack(std::string_view key, Metadata* meta) {
  if (IsHashtable(*meta) && IsOrdered(*meta)) return Recode(key, meta, Flags(*meta) & ~kOrderedFlag);
  if (!IsHashtable(*meta) && !IsOrdered(*meta)) return Recode(key, meta, Flags(*meta) | kOrderedFlag);
  return Status::OK();
}

Status RedisHash::Recode(std::string_view key, Metadata* meta, uint8_t flags) {
  SubkeyBounds bounds(db_->id(), key, meta->version);
  std::vector<std::pair<std::string, std::string>> stored;  // subkey, value as stored
  {
    auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, bounds.options());
    for (it->SeekToFirst(); it->Valid(); it->Next()) stored.emplace_back(it->key().ToString(), it->value().ToString());
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
  }
  const bool numbered = IsOrdered(*meta);
  Metadata next = *meta;
  next.payload.assign(1, static_cast<char>(flags));
  if (flags & kOrderedFlag) PutBE64(&next.payload, numbered ? DecodeBE64(meta->payload.data() + 1) : stored.size());
  for (size_t i = 0; i < stored.size(); i++) {
    auto& [sub, value] = stored[i];
    uint64_t expire = 0, seq = i;  // a hash numbered now is numbered in field order
    Unwrap(*meta, &value, 0, &expire, numbered ? &seq : nullptr);
    db_->ctx()->Put(ColumnFamily::kSubkey, sub, Wrap(next, value, expire, seq));
  }
  *meta = std::move(next);
  return Status::OK();
}

Status RedisHash::LoadHash(std::string_view key, LoadedKey* lk, Metadata* meta, bool* exists) {
  return db_->LoadCollection(key, RedisType::kHash, lk, meta, exists);
}

Status RedisHash::Set(std::string_view key, const std::vector<std::pair<std::string_view, std::string_view>>& fvs,
                      bool nx, int64_t* added) {
  *added = 0;
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) {
    meta = NewHash(FitsListpack(fvs));
  } else if (!(s = KeepOrderIfListpack(key, &meta)).ok()) {
    return s;
  }
  std::string prefix = EncodeSubkeyPrefix(db_->id(), key, meta.version);
  bool changed = false;
  std::string sub, old;
  const uint64_t now = ExpiryNowMs();
  for (const auto& [field, value] : fvs) {
    sub.assign(prefix).append(field);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &old);
    if (!s.ok() && !s.IsNotFound()) return s;
    bool stored = s.ok();  // an expired field is still stored (and counted in size)
    uint64_t seq = 0;
    bool live = stored && Unwrap(meta, &old, now, nullptr, &seq);
    if (live && nx) continue;
    if (!stored) meta.size++;
    if (!live) (*added)++;
    if (!live && IsOrdered(meta)) seq = TakeSeq(&meta);  // a new field goes last
    // Setting a field clears its TTL, as in Redis.
    db_->ctx()->Put(ColumnFamily::kSubkey, sub, Wrap(meta, value, 0, seq));
    if (std::max(field.size(), value.size()) > EncodingLimits::HashValue()) meta.payload[0] |= kHashtableFlag;
    changed = true;
  }
  if (meta.size > EncodingLimits::HashEntries()) meta.payload[0] |= kHashtableFlag;
  if (changed) {
    if (!(s = KeepOrderIfListpack(key, &meta)).ok()) return s;  // a hash that became a hashtable
    db_->StoreCollection(key, &lk, meta);
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
  s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, value);
  if (s.ok() && !Unwrap(meta, value, ExpiryNowMs())) return Status::NotFound();
  return s;
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
      if (Unwrap(meta, &value, ExpiryNowMs())) (*values)[i] = value;
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
  int64_t removed = 0;
  for (std::string_view field : fields) {
    sub.assign(prefix).append(field);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &value);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    if (Unwrap(meta, &value, ExpiryNowMs())) (*deleted)++;  // an expired field goes too, uncounted
    db_->ctx()->Delete(ColumnFamily::kSubkey, sub);
    meta.size--;
    removed++;
  }
  if (removed > 0) db_->StoreCollection(key, &lk, meta);
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
  SubkeyBounds bounds(db_->id(), key, meta.version);
  const std::string& prefix = bounds.prefix();
  auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, bounds.options());
  if (after.empty()) {
    it->Seek(prefix);
  } else {
    std::string start = prefix + after;
    it->Seek(start);
    if (it->Valid() && it->key() == rocksdb::Slice(start)) it->Next();
  }
  size_t examined = 0;
  const uint64_t now = ExpiryNowMs();
  const size_t first = fvs->size();
  std::vector<uint64_t> seqs;  // of an ordered hash read whole, to sort it by
  const bool whole = after.empty() && IsOrdered(meta);
  for (; it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (examined == count) return Status::OK();  // *next is the last field examined
    examined++;
    std::string field(it->key().data() + prefix.size(), it->key().size() - prefix.size());
    *next = field;
    if (pattern != "*" && !StringMatch(pattern, field)) continue;
    std::string value = it->value().ToString();
    uint64_t seq;
    if (!Unwrap(meta, &value, now, nullptr, &seq)) continue;
    fvs->emplace_back(std::move(field), std::move(value));
    if (whole) seqs.push_back(seq);
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  next->clear();
  if (whole && seqs.size() > 1) {
    // Redis' listpack order: insertion order.
    std::vector<size_t> order(seqs.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seqs[a] < seqs[b]; });
    std::vector<std::pair<std::string, std::string>> sorted;
    sorted.reserve(order.size());
    for (size_t i : order) sorted.push_back(std::move((*fvs)[first + i]));
    std::move(sorted.begin(), sorted.end(), fvs->begin() + static_cast<std::ptrdiff_t>(first));
  }
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
  if (!exists) {
    meta = NewHash(true);
  } else if (!(s = KeepOrderIfListpack(key, &meta)).ok()) {
    return s;
  }
  std::string sub = EncodeSubkeyPrefix(db_->id(), key, meta.version);
  sub.append(field);
  std::string old, value;
  s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &old);
  if (!s.ok() && !s.IsNotFound()) return s;
  bool stored = s.ok();
  uint64_t expire = 0, seq = 0;
  bool live = stored && Unwrap(meta, &old, ExpiryNowMs(), &expire, &seq);
  if (!live) expire = 0;
  s = fn(live ? &old : nullptr, &value);
  if (!s.ok()) return s;
  if (!live && IsOrdered(meta)) seq = TakeSeq(&meta);
  // HINCRBY keeps a field's TTL.
  db_->ctx()->Put(ColumnFamily::kSubkey, sub, Wrap(meta, value, expire, seq));
  if (!stored) meta.size++;
  if (std::max(field.size(), value.size()) > EncodingLimits::HashValue() || meta.size > EncodingLimits::HashEntries()) {
    meta.payload[0] |= kHashtableFlag;
    if (!(s = KeepOrderIfListpack(key, &meta)).ok()) return s;
  }
  db_->StoreCollection(key, &lk, meta);
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

Status RedisHash::EnableFieldTtls(std::string_view key, Metadata* meta) {
  return HasFieldTtls(*meta) ? Status::OK() : Recode(key, meta, Flags(*meta) | kFieldTtlFlag);
}

Status RedisHash::ForLiveFields(std::string_view key, const Metadata& meta,
                                const std::vector<std::string_view>& fields, const FieldFn& fn) {
  const uint64_t now = ExpiryNowMs();
  std::string prefix = EncodeSubkeyPrefix(db_->id(), key, meta.version), sub, value;
  for (size_t i = 0; i < fields.size(); i++) {
    sub.assign(prefix).append(fields[i]);
    Status s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &value);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    uint64_t expire, seq;
    if (Unwrap(meta, &value, now, &expire, &seq)) fn(i, sub, value, expire, seq);
  }
  return Status::OK();
}

Status RedisHash::ExpireFields(std::string_view key, const std::vector<std::string_view>& fields, uint64_t expire_ms,
                               ExpireCond cond, std::vector<int64_t>* results) {
  results->assign(fields.size(), -2);
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  if (!(s = EnableFieldTtls(key, &meta)).ok()) return s;
  const uint64_t now = ExpiryNowMs();
  bool changed = false, indexed = false;
  auto set_ttl = [&](size_t i, const std::string& sub, std::string& value, uint64_t cur, uint64_t seq) {
    // A field without a TTL counts as never expiring for GT/LT.
    bool ok = cond == ExpireCond::kAlways || (cond == ExpireCond::kNX && cur == 0) ||
              (cond == ExpireCond::kXX && cur != 0) || (cond == ExpireCond::kGT && cur != 0 && expire_ms > cur) ||
              (cond == ExpireCond::kLT && (cur == 0 || expire_ms < cur));
    if (!ok) {
      (*results)[i] = 0;
      return;
    }
    changed = true;
    if (expire_ms <= now) {
      db_->ctx()->Delete(ColumnFamily::kSubkey, sub);
      meta.size--;
      (*results)[i] = 2;
      return;
    }
    db_->ctx()->Put(ColumnFamily::kSubkey, sub, Wrap(meta, value, expire_ms, seq));
    (*results)[i] = 1;
    indexed = true;
  };
  if (!(s = ForLiveFields(key, meta, fields, set_ttl)).ok()) return s;
  if (indexed) {
    // The active-expire cycle visits the key then (see Server::ExpireCycle).
    db_->ctx()->Put(ColumnFamily::kExpire, EncodeExpireKey(db_->id(), expire_ms, key), "");
    db_->ctx()->NoteExpire(db_->id(), expire_ms);
  }
  if (changed) db_->StoreCollection(key, &lk, meta);
  return Status::OK();
}

Status RedisHash::FieldExpireTimes(std::string_view key, const std::vector<std::string_view>& fields,
                                   std::vector<int64_t>* results) {
  results->assign(fields.size(), -2);
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  return ForLiveFields(key, meta, fields, [&](size_t i, const std::string&, std::string&, uint64_t e, uint64_t) {
    (*results)[i] = e == 0 ? -1 : static_cast<int64_t>(e);
  });
}

Status RedisHash::PersistFields(std::string_view key, const std::vector<std::string_view>& fields,
                                std::vector<int64_t>* results) {
  results->assign(fields.size(), -2);
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  bool changed = false;
  auto persist = [&](size_t i, const std::string& sub, std::string& value, uint64_t e, uint64_t seq) {
    if (e == 0) {
      (*results)[i] = -1;
      return;
    }
    db_->ctx()->Put(ColumnFamily::kSubkey, sub, Wrap(meta, value, 0, seq));
    (*results)[i] = 1;
    changed = true;
  };
  s = ForLiveFields(key, meta, fields, persist);
  if (s.ok() && changed) db_->StoreCollection(key, &lk, meta);
  return s;
}

Status RedisHash::DeleteExpiredFields(std::string_view key, int64_t* deleted) {
  *deleted = 0;
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || !HasFieldTtls(meta)) return s;
  SubkeyBounds bounds(db_->id(), key, meta.version);
  const rocksdb::ReadOptions& ro = bounds.options();
  const uint64_t now = ExpiryNowMs();
  std::vector<std::string> doomed;
  {
    auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string v = it->value().ToString();
      if (!Unwrap(meta, &v, now)) doomed.push_back(it->key().ToString());
    }
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
  }
  for (const auto& k : doomed) db_->ctx()->Delete(ColumnFamily::kSubkey, k);
  meta.size -= doomed.size();
  *deleted = static_cast<int64_t>(doomed.size());
  if (!doomed.empty()) db_->StoreCollection(key, &lk, meta);
  return Status::OK();
}

}  // namespace kvrocks
