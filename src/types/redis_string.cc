#include "types/redis_string.h"

#include <algorithm>
#include <cmath>

#include "common/encoding.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "types/string_editor.h"

namespace kvrocks {

static constexpr size_t kHeader = 9;  // type(1) + expire(8)

static bool IsOutOfLine(const std::string& raw) {
  return !raw.empty() && (static_cast<uint8_t>(raw[0]) & kOutOfLineFlag);
}

Status RedisString::ReadValue(std::string_view key, const std::string& raw, std::string* value) {
  if (!IsOutOfLine(raw)) {
    value->assign(raw, kHeader, std::string::npos);
    return Status::OK();
  }
  Metadata meta;
  Status s = meta.Decode(raw);
  if (!s.ok()) return s;
  if (meta.fragmented) return ReadRange(key, raw, 0, meta.size, value);
  s = db_->ctx()->Get(ColumnFamily::kSubkey, SubkeyPrefix(db_->id(), key, meta), value);
  if (s.IsNotFound()) return Status::Corruption("missing value of string key");
  return s;
}

Status RedisString::ReadChunks(std::string_view key, const std::string& raw, uint64_t offset, uint64_t len,
                               const ChunkFn& fn) {
  if (!IsOutOfLine(raw)) {
    std::string_view v = std::string_view(raw).substr(kHeader);
    if (offset < v.size()) fn(offset, v.substr(offset, len));
    return Status::OK();
  }
  Metadata meta;
  Status s = meta.Decode(raw);
  if (!s.ok()) return s;
  if (offset >= meta.size) return Status::OK();
  uint64_t end = offset + std::min(len, meta.size - offset);
  if (!meta.fragmented) {
    std::string v;
    s = ReadValue(key, raw, &v);
    if (!s.ok()) return s;
    fn(offset, std::string_view(v).substr(offset, end - offset));
    return Status::OK();
  }
  const uint64_t first = offset / kStringFragmentBytes, last = (end - 1) / kStringFragmentBytes;
  const uint8_t db = meta.SubkeyDb(db_->id());
  std::string lower = EncodeFragmentKey(db, meta.SubkeyName(key), meta.version, static_cast<uint32_t>(first));
  std::string upper = EncodeFragmentKey(db, meta.SubkeyName(key), meta.version, static_cast<uint32_t>(last + 1));
  rocksdb::Slice lower_slice(lower), upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  ro.iterate_upper_bound = &upper_slice;
  auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
  const size_t index_at = upper.size() - 4;
  for (it->Seek(lower); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    if (k.size() != upper.size()) continue;
    uint64_t base = DecodeBE32(k.data() + index_at) * kStringFragmentBytes;
    std::string_view bytes(it->value().data(), it->value().size());
    uint64_t from = std::max(offset, base), to = std::min(end, base + bytes.size());
    if (from >= to) continue;
    if (!fn(from, bytes.substr(from - base, to - from))) break;
  }
  return it->status().ok() ? Status::OK() : Status::IOError(it->status().ToString());
}

Status RedisString::ReadRange(std::string_view key, const std::string& raw, uint64_t offset, uint64_t len,
                              std::string* out) {
  out->clear();
  uint64_t size;
  Status s = ValueSize(raw, &size);
  if (!s.ok()) return s;
  if (offset >= size) return Status::OK();
  out->assign(std::min(len, size - offset), '\0');
  return ReadChunks(key, raw, offset, len, [&](uint64_t at, std::string_view bytes) {
    out->replace(at - offset, bytes.size(), bytes);
    return true;
  });
}

Status RedisString::LoadForRead(std::string_view key, std::string* raw) {
  Context* ctx = db_->ctx();
  Status s = ctx->Get(ColumnFamily::kMetadata, EncodeMetaKey(db_->id(), key), raw);
  if (s.IsNotFound()) ctx->RecordLookup(db_->id(), key, false);
  if (!s.ok()) return s;
  RedisType type;
  uint64_t expire;
  s = PeekMetadata(*raw, &type, &expire);
  if (!s.ok()) return s;
  bool expired = expire != 0 && expire <= ExpiryNowMs();
  ctx->RecordLookup(db_->id(), key, !expired);
  if (expired) {
    ctx->NoteExpiredFound(db_->id(), key);
    return Status::NotFound();
  }
  if (type != RedisType::kString) return Status::RedisError(kWrongTypeError);
  return Status::OK();
}

Status RedisString::ValueSize(const std::string& raw, uint64_t* size) {
  if (!IsOutOfLine(raw)) {
    *size = raw.size() - kHeader;
    return Status::OK();
  }
  Metadata meta;
  Status s = meta.Decode(raw);
  *size = meta.size;
  return s;
}

Status RedisString::Strlen(std::string_view key, uint64_t* len) {
  *len = 0;
  std::string raw;
  Status s = LoadForRead(key, &raw);
  if (s.IsNotFound()) return Status::OK();
  return s.ok() ? ValueSize(raw, len) : s;
}

void RedisString::WriteValue(std::string_view key, LoadedKey* lk, std::string_view value, uint64_t expire_ms,
                             uint8_t encoding_flag, bool unsignaled) {
  std::string encoded;
  if (value.size() < db_->ctx()->storage()->string_inline_limit()) {
    encoded = EncodeStringValue(value, expire_ms, encoding_flag);
  } else {
    // A new version: the old value (if any) becomes garbage for the compaction filter.
    uint64_t version = db_->ctx()->storage()->NewVersion();
    db_->ctx()->Put(ColumnFamily::kSubkey, EncodeSubkeyPrefix(db_->id(), key, version), value);
    encoded = EncodeStringRef(version, value.size(), expire_ms);
  }
  if (unsignaled) {
    db_->Restamp(lk, encoded);
  } else {
    db_->Store(key, lk, encoded, expire_ms);
  }
}

uint64_t RedisString::WriteFragments(std::string_view key, LoadedKey* lk, std::string_view value, uint64_t expire_ms,
                                     bool relayout) {
  uint64_t version = db_->ctx()->storage()->NewVersion();
  for (uint64_t at = 0; at < value.size(); at += kStringFragmentBytes) {
    std::string_view frag = value.substr(at, kStringFragmentBytes);
    size_t used = frag.find_last_not_of('\0');
    if (used == std::string_view::npos) continue;
    db_->ctx()->Put(ColumnFamily::kSubkey,
                    EncodeFragmentKey(db_->id(), key, version, static_cast<uint32_t>(at / kStringFragmentBytes)),
                    frag.substr(0, used + 1));
  }
  std::string ref = EncodeStringRef(version, value.size(), expire_ms, true);
  if (relayout) {
    db_->Restamp(lk, ref);
  } else {
    db_->Store(key, lk, ref, expire_ms);
  }
  return version;
}

void RedisString::MarkRaw(LoadedKey* lk) {
  auto flags = static_cast<uint8_t>(lk->raw[0]);
  if (flags & (kOutOfLineFlag | kRawEncodingFlag)) return;
  std::string raw = lk->raw;
  raw[0] = static_cast<char>(flags | kRawEncodingFlag);
  db_->Restamp(lk, raw);
}

Status RedisString::LoadString(std::string_view key, LoadedKey* lk, std::string* value) {
  Status s = db_->Load(key, lk);
  if (!s.ok()) return s;
  value->clear();
  if (!lk->live) return Status::OK();
  if (lk->type != RedisType::kString) return Status::RedisError(kWrongTypeError);
  return ReadValue(key, lk->raw, value);
}

Status RedisString::Get(std::string_view key, std::string* value) {
  std::string raw;
  Status s = LoadForRead(key, &raw);
  if (!s.ok()) return s;
  return ReadValue(key, raw, value);
}

Status RedisString::Set(std::string_view key, std::string_view value, const SetOptions& opts, bool* done,
                        std::optional<std::string>* old) {
  *done = false;
  LoadedKey lk;
  // A plain SET replaces whatever the key holds: it need not read it.
  const uint64_t now = NowMs();
  bool replaces = !opts.get && opts.cond == SetOptions::kAlways && !opts.keep_ttl &&
                  (opts.expire_ms == 0 || opts.expire_ms > now);
  Status s = replaces ? db_->LoadForReplace(key, &lk) : db_->Load(key, &lk);
  if (!s.ok()) return s;
  if (opts.get && lk.live) {
    if (lk.type != RedisType::kString) return Status::RedisError(kWrongTypeError);
    std::string prev;
    s = ReadValue(key, lk.raw, &prev);
    if (!s.ok()) return s;
    *old = std::move(prev);
  }
  if (opts.cond == SetOptions::kNX && lk.live) return Status::OK();
  if (opts.cond == SetOptions::kXX && !lk.live) return Status::OK();
  uint64_t expire = opts.keep_ttl && lk.live ? lk.expire_ms : opts.expire_ms;
  *done = true;
  // An absolute time in the past (EXAT/PXAT) is stored as given: as in Redis 7.0,
  // whose SET does not delete such a key, it is counted (DBSIZE, INFO keyspace)
  // until a lookup or the active expiry cycle finds it expired.
  WriteValue(key, &lk, value, expire);
  return Status::OK();
}

Status RedisString::GetEx(std::string_view key, ExpireChange change, uint64_t expire_ms, std::string* value) {
  LoadedKey lk;
  Status s = LoadString(key, &lk, value);
  if (!s.ok()) return s;
  if (!lk.live) return Status::NotFound();
  if (change == ExpireChange::kPersist && lk.expire_ms != 0) {
    db_->Store(key, &lk, Database::WithExpire(lk.raw, 0), 0);
  } else if (change == ExpireChange::kSet) {
    if (db_->AlreadyExpired(expire_ms)) {
      db_->Remove(key, &lk);
    } else {
      db_->Store(key, &lk, Database::WithExpire(lk.raw, expire_ms), expire_ms);
    }
  }
  return Status::OK();
}

Status RedisString::GetDel(std::string_view key, std::string* value) {
  LoadedKey lk;
  Status s = LoadString(key, &lk, value);
  if (!s.ok()) return s;
  if (!lk.live) return Status::NotFound();
  db_->Remove(key, &lk);
  return Status::OK();
}

static Status TooBig() { return Status::RedisError("ERR string exceeds maximum allowed size (proto-max-bulk-len)"); }

Status RedisString::Append(std::string_view key, std::string_view value, int64_t max_len, size_t* new_len) {
  StringEditor e(db_, key, kEditInPlaceAt);
  Status s = e.Open();
  if (!s.ok()) return s;
  if (!e.exists()) {
    *new_len = value.size();
    // Redis keeps a new key's argument as given (int/embstr); an existing one is unshared (raw).
    WriteValue(key, e.loaded(), value, 0);
    return Status::OK();
  }
  if (static_cast<int64_t>(e.size() + value.size()) > max_len) return TooBig();
  const uint64_t at = e.size();
  e.Grow(at + value.size());
  s = e.Write(at, value.size(), reinterpret_cast<const uint8_t*>(value.data()));
  if (!s.ok()) return s;
  e.Touch();  // APPEND of nothing is a write too
  *new_len = at + value.size();
  e.Commit();
  return Status::OK();
}

Status RedisString::SetRange(std::string_view key, int64_t offset, std::string_view value, int64_t max_len,
                             size_t* new_len) {
  StringEditor e(db_, key, kEditInPlaceAt);
  Status s = e.Open();
  if (!s.ok()) return s;
  // As Redis: writing nothing answers the length before the size is checked.
  if (value.empty()) {
    *new_len = e.size();
    return Status::OK();
  }
  if (offset > max_len - static_cast<int64_t>(value.size())) return TooBig();
  e.Grow(static_cast<uint64_t>(offset) + value.size());
  s = e.Write(static_cast<uint64_t>(offset), value.size(), reinterpret_cast<const uint8_t*>(value.data()));
  if (!s.ok()) return s;
  *new_len = e.size();
  e.Commit();
  return Status::OK();
}

Status RedisString::IncrBy(std::string_view key, int64_t delta, int64_t* result) {
  LoadedKey lk;
  std::string cur;
  Status s = LoadString(key, &lk, &cur);
  if (!s.ok()) return s;
  int64_t v = 0;
  if (lk.live && !ParseInt64(cur, &v)) return Status::RedisError("ERR value is not an integer or out of range");
  if ((delta < 0 && v < 0 && delta < INT64_MIN - v) || (delta > 0 && v > 0 && delta > INT64_MAX - v)) {
    return Status::RedisError("ERR increment or decrement would overflow");
  }
  *result = v + delta;
  WriteValue(key, &lk, std::to_string(*result), lk.live ? lk.expire_ms : 0);
  return Status::OK();
}

Status RedisString::IncrByFloat(std::string_view key, long double delta, std::string* result) {
  LoadedKey lk;
  std::string cur;
  Status s = LoadString(key, &lk, &cur);
  if (!s.ok()) return s;
  long double v = 0;
  if (lk.live && !ParseLongDouble(cur, &v)) return Status::RedisError("ERR value is not a valid float");
  long double r = v + delta;
  if (std::isnan(r) || std::isinf(r)) return Status::RedisError("ERR increment would produce NaN or Infinity");
  *result = FormatLongDoubleHuman(r);
  WriteValue(key, &lk, *result, lk.live ? lk.expire_ms : 0, kNotIntEncodingFlag);
  return Status::OK();
}

Status RedisString::MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs, bool nx,
                         bool* done) {
  *done = false;
  if (nx) {
    for (const auto& [key, value] : pairs) {
      LoadedKey lk;
      Status s = db_->Load(key, &lk);
      if (!s.ok()) return s;
      if (lk.live) return Status::OK();
    }
  }
  // Each load sees the writes of the previous pairs, so a repeated key is counted once.
  for (const auto& [key, value] : pairs) {
    LoadedKey lk;
    Status s = db_->LoadForReplace(key, &lk);
    if (!s.ok()) return s;
    WriteValue(key, &lk, value, 0);
  }
  *done = true;
  return Status::OK();
}

}  // namespace kvrocks
