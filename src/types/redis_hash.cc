#include "types/redis_hash.h"

#include <algorithm>

#include <cmath>
#include <random>
#include <set>
#include <unordered_set>

#include "common/encoding.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "types/rank_index.h"

namespace kvrocks {

// payload[0]: some field has (or had) a TTL; every value then starts with its
// absolute expiry, expire_ms(8, BE, 0 = none).
static constexpr uint8_t kFieldTtlFlag = 2;
// payload[0]: a listpack hash keeping Redis' insertion order. Every value then
// carries its field's insertion number, varint (after the expiry, if any), and
// the payload goes on with the next number to give, next_seq(8, BE).
static constexpr uint8_t kOrderedFlag = 4;
// payload[0] bits 4-7: the levels of the hash's rank index over its fields
// (RankIndex::LevelsOf), built when HRANDFIELD picks from a hash of
// RankIndex::kBuildAt fields; writes keep it from then on.

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
  SubkeyBounds bounds(db_->id(), key, *meta);
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
  std::string prefix = SubkeyPrefix(db_->id(), key, meta);
  auto rank = RankIndex::ForWrite(db_->ctx(), db_->id(), key, meta, fvs.size(), ColumnFamily::kSubkey);
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
    if (!stored && rank != nullptr && !(s = rank->Insert(field)).ok()) return s;
    if (std::max(field.size(), value.size()) > EncodingLimits::HashValue()) meta.payload[0] |= kHashtableFlag;
    changed = true;
  }
  if (meta.size > EncodingLimits::HashEntries()) meta.payload[0] |= kHashtableFlag;
  if (changed) {
    if (!(s = KeepOrderIfListpack(key, &meta)).ok()) return s;  // a hash that became a hashtable
    return Store(key, &lk, &meta, rank.get());
  }
  return Status::OK();
}

Status RedisHash::Store(std::string_view key, LoadedKey* lk, Metadata* meta, RankIndex* rank) {
  Status s = RankIndex::Finish(db_->ctx(), db_->id(), key, meta, rank, ColumnFamily::kSubkey);
  if (s.ok()) db_->StoreCollection(key, lk, *meta);
  return s;
}

Status RedisHash::Get(std::string_view key, std::string_view field, std::string* value) {
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::NotFound();
  std::string sub = SubkeyPrefix(db_->id(), key, meta);
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
  std::string prefix = SubkeyPrefix(db_->id(), key, meta);
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
  std::string prefix = SubkeyPrefix(db_->id(), key, meta);
  auto rank = RankIndex::ForWrite(db_->ctx(), db_->id(), key, meta, fields.size(), ColumnFamily::kSubkey);
  std::string sub, value;
  int64_t removed = 0;
  for (std::string_view field : fields) {
    sub.assign(prefix).append(field);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &value);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    if (Unwrap(meta, &value, ExpiryNowMs())) (*deleted)++;  // an expired field goes too, uncounted
    db_->ctx()->Delete(ColumnFamily::kSubkey, sub);
    if (rank != nullptr && !(s = rank->Remove(field)).ok()) return s;
    meta.size--;
    removed++;
  }
  return removed > 0 ? Store(key, &lk, &meta, rank.get()) : Status::OK();
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
  SubkeyBounds bounds(db_->id(), key, meta);
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

static std::mt19937_64& Rng() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return rng;
}

Status RedisHash::RandomFields(std::string_view key, uint64_t count, bool repeat, FieldValues* out,
                               const std::function<bool(const FieldValues& sample)>& fits) {
  out->clear();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadHash(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || meta.size == 0 || count == 0) return s;
  if (meta.size >= RankIndex::kBuildAt && (repeat || count <= meta.size / 3)) {
    bool whole = false;
    s = RandomFieldsByRank(key, lk, &meta, count, repeat, out, fits, &whole);
    if (!s.ok() || !whole) return s;
    out->clear();
  }
  return RandomFieldsOfAll(key, meta, count, repeat, out, fits);
}

Status RedisHash::RandomFieldsOfAll(std::string_view key, const Metadata& meta, uint64_t count, bool repeat,
                                    FieldValues* out, const std::function<bool(const FieldValues& sample)>& fits) {
  FieldValues all;
  Status s = GetAll(key, &all);
  if (!s.ok() || all.empty()) return s;
  auto& rng = Rng();
  if (repeat) {
    if (fits && !fits(all)) return Status::Aborted();
    out->reserve(count);
    for (uint64_t i = 0; i < count; i++) out->push_back(all[rng() % all.size()]);
    return Status::OK();
  }
  if (count >= all.size()) {
    *out = std::move(all);
    return Status::OK();
  }
  std::vector<size_t> picked(all.size());
  for (size_t i = 0; i < picked.size(); i++) picked[i] = i;
  std::shuffle(picked.begin(), picked.end(), rng);
  picked.resize(count);
  if (!IsHashtable(meta) && count * 3 <= all.size()) std::sort(picked.begin(), picked.end());
  out->reserve(count);
  for (size_t i : picked) out->push_back(std::move(all[i]));
  return Status::OK();
}

Status RedisHash::RandomFieldsByRank(std::string_view key, const LoadedKey& lk, Metadata* meta, uint64_t count,
                                     bool repeat, FieldValues* out,
                                     const std::function<bool(const FieldValues& sample)>& fits, bool* whole) {
  std::string prefix = SubkeyPrefix(db_->id(), key, *meta);
  if (RankIndex::LevelsOf(*meta) == 0) {
    Status s = RankIndex::Ensure(db_->ctx(), db_->id(), key, meta, ColumnFamily::kSubkey);
    if (!s.ok()) return s;
    // Not a modification of the hash: no WATCH, keyspace event or dirty count.
    db_->ctx()->Put(ColumnFamily::kMetadata, lk.meta_key, meta->Encode());
  }
  RankIndex index(db_->ctx(), prefix, RankIndex::LevelsOf(*meta), ColumnFamily::kSubkey);
  // Ranks count stored fields, expired ones too (until expiry deletes them):
  // a pick of one is drawn again, which keeps the picks uniform over the live
  // fields; past this many such draws the hash is read whole instead.
  uint64_t redraws = 64 + count;
  const uint64_t now = ExpiryNowMs();
  std::vector<uint64_t> seqs;  // of an ordered (listpack) hash's picks
  std::string field, value;
  auto pick = [&](uint64_t rank) -> Status {
    Status st = index.Select(rank, &field, &value);
    if (!st.ok()) return st;
    uint64_t seq;
    if (!Unwrap(*meta, &value, now, nullptr, &seq)) {
      *whole = redraws-- == 0;
      return Status::OK();
    }
    out->emplace_back(field, value);
    seqs.push_back(seq);
    return Status::OK();
  };
  auto& rng = Rng();
  Status s;
  if (repeat) {
    // The reply's size is judged from the first picks.
    const uint64_t sample = std::min<uint64_t>(count, 16);
    bool judged = !fits;
    while (s.ok() && !*whole && out->size() < count) {
      if (!judged && out->size() == sample) {
        if (!fits(*out)) return Status::Aborted();
        judged = true;
      }
      s = pick(rng() % meta->size);
    }
    if (s.ok() && !*whole && !judged && !fits(*out)) return Status::Aborted();
    return s;
  }
  std::set<uint64_t> ranks;  // distinct picks of at most a third: few draws repeat one
  while (s.ok() && !*whole && out->size() < count) {
    uint64_t rank = rng() % meta->size;
    if (ranks.insert(rank).second) s = pick(rank);
  }
  if (s.ok() && !*whole && IsOrdered(*meta)) {
    std::vector<size_t> order(out->size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seqs[a] < seqs[b]; });
    FieldValues sorted;
    sorted.reserve(order.size());
    for (size_t i : order) sorted.push_back(std::move((*out)[i]));
    *out = std::move(sorted);
  }
  return s;
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
  std::string sub = SubkeyPrefix(db_->id(), key, meta);
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
  auto rank = RankIndex::ForWrite(db_->ctx(), db_->id(), key, meta, 1, ColumnFamily::kSubkey);
  if (!stored) {
    meta.size++;
    if (rank != nullptr && !(s = rank->Insert(field)).ok()) return s;
  }
  if (std::max(field.size(), value.size()) > EncodingLimits::HashValue() || meta.size > EncodingLimits::HashEntries()) {
    meta.payload[0] |= kHashtableFlag;
    if (!(s = KeepOrderIfListpack(key, &meta)).ok()) return s;
  }
  return Store(key, &lk, &meta, rank.get());
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
  std::string prefix = SubkeyPrefix(db_->id(), key, meta), sub, value;
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
  auto rank = RankIndex::ForWrite(db_->ctx(), db_->id(), key, meta, fields.size(), ColumnFamily::kSubkey);
  Status removal;  // the first failure to uncount a deleted field
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
      if (rank != nullptr && removal.ok()) removal = rank->Remove(fields[i]);
      meta.size--;
      (*results)[i] = 2;
      return;
    }
    db_->ctx()->Put(ColumnFamily::kSubkey, sub, Wrap(meta, value, expire_ms, seq));
    (*results)[i] = 1;
    indexed = true;
  };
  if (!(s = ForLiveFields(key, meta, fields, set_ttl)).ok() || !(s = removal).ok()) return s;
  if (indexed) ScheduleExpiry(key, expire_ms);
  return changed ? Store(key, &lk, &meta, rank.get()) : Status::OK();
}

void RedisHash::ScheduleExpiry(std::string_view key, uint64_t expire_ms) {
  // The active-expire cycle visits the key then (see Server::ExpireCycle).
  db_->ctx()->Put(ColumnFamily::kExpire, EncodeExpireKey(db_->id(), expire_ms, key), "");
  db_->ctx()->NoteExpire(db_->id(), expire_ms);
}

Status RedisHash::ScheduleFieldExpiry(std::string_view key) {
  LoadedKey lk;
  Metadata meta;
  Status s = db_->Peek(key, &lk);
  if (!s.ok() || !lk.live || lk.type != RedisType::kHash || !meta.Decode(lk.raw).ok()) return s;
  if (HasFieldTtls(meta)) ScheduleExpiry(key, ExpiryNowMs());
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
  SubkeyBounds bounds(db_->id(), key, meta);
  const rocksdb::ReadOptions& ro = bounds.options();
  const uint64_t now = ExpiryNowMs();
  std::vector<std::string> doomed;
  uint64_t soonest = 0;  // of the TTLs left
  {
    auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string v = it->value().ToString();
      uint64_t expire;
      if (!Unwrap(meta, &v, now, &expire)) {
        doomed.push_back(it->key().ToString());
      } else if (expire != 0 && (soonest == 0 || expire < soonest)) {
        soonest = expire;
      }
    }
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
  }
  if (soonest != 0) ScheduleExpiry(key, soonest);
  auto rank = RankIndex::ForWrite(db_->ctx(), db_->id(), key, meta, doomed.size(), ColumnFamily::kSubkey);
  for (const auto& k : doomed) {
    db_->ctx()->Delete(ColumnFamily::kSubkey, k);
    if (rank != nullptr && !(s = rank->Remove(std::string_view(k).substr(bounds.prefix().size()))).ok()) return s;
  }
  meta.size -= doomed.size();
  *deleted = static_cast<int64_t>(doomed.size());
  return doomed.empty() ? Status::OK() : Store(key, &lk, &meta, rank.get());
}

}  // namespace kvrocks
