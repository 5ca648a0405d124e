#include "types/redis_string.h"

#include <cmath>

#include "common/string_util.h"
#include "common/time_util.h"

namespace kvrocks {

static constexpr size_t kHeader = 9;  // type(1) + expire(8)

Status RedisString::LoadString(std::string_view key, LoadedKey* lk, std::string_view* value) {
  Status s = db_->Load(key, lk);
  if (!s.ok()) return s;
  if (lk->live && lk->type != RedisType::kString) return Status::RedisError(kWrongTypeError);
  if (lk->live) *value = std::string_view(lk->raw).substr(kHeader);
  return Status::OK();
}

Status RedisString::Get(std::string_view key, std::string* value) {
  std::string raw;
  Status s = db_->ctx()->Get(ColumnFamily::kMetadata, EncodeMetaKey(db_->id(), key), &raw);
  if (!s.ok()) return s;
  RedisType type;
  uint64_t expire;
  s = PeekMetadata(raw, &type, &expire);
  if (!s.ok()) return s;
  if (expire != 0 && expire <= NowMs()) return Status::NotFound();
  if (type != RedisType::kString) return Status::RedisError(kWrongTypeError);
  value->assign(raw, kHeader, std::string::npos);
  return Status::OK();
}

Status RedisString::Set(std::string_view key, std::string_view value, const SetOptions& opts, bool* done,
                        std::optional<std::string>* old) {
  *done = false;
  LoadedKey lk;
  Status s = db_->Load(key, &lk);
  if (!s.ok()) return s;
  if (opts.get && lk.live) {
    if (lk.type != RedisType::kString) return Status::RedisError(kWrongTypeError);
    *old = lk.raw.substr(kHeader);
  }
  if (opts.cond == SetOptions::kNX && lk.live) return Status::OK();
  if (opts.cond == SetOptions::kXX && !lk.live) return Status::OK();
  uint64_t expire = opts.keep_ttl && lk.live ? lk.expire_ms : opts.expire_ms;
  db_->Store(key, &lk, EncodeStringValue(value, expire), expire);
  *done = true;
  return Status::OK();
}

Status RedisString::GetEx(std::string_view key, ExpireChange change, uint64_t expire_ms, std::string* value) {
  LoadedKey lk;
  std::string_view v;
  Status s = LoadString(key, &lk, &v);
  if (!s.ok()) return s;
  if (!lk.live) return Status::NotFound();
  value->assign(v);
  if (change == ExpireChange::kPersist && lk.expire_ms != 0) {
    db_->Store(key, &lk, EncodeStringValue(*value, 0), 0);
  } else if (change == ExpireChange::kSet) {
    if (expire_ms <= NowMs()) {
      db_->Remove(key, &lk);
    } else {
      db_->Store(key, &lk, EncodeStringValue(*value, expire_ms), expire_ms);
    }
  }
  return Status::OK();
}

Status RedisString::GetDel(std::string_view key, std::string* value) {
  LoadedKey lk;
  std::string_view v;
  Status s = LoadString(key, &lk, &v);
  if (!s.ok()) return s;
  if (!lk.live) return Status::NotFound();
  value->assign(v);
  db_->Remove(key, &lk);
  return Status::OK();
}

static Status TooBig() { return Status::RedisError("ERR string exceeds maximum allowed size (proto-max-bulk-len)"); }

Status RedisString::Append(std::string_view key, std::string_view value, int64_t max_len, size_t* new_len) {
  LoadedKey lk;
  std::string_view cur;
  Status s = LoadString(key, &lk, &cur);
  if (!s.ok()) return s;
  if (lk.live && static_cast<int64_t>(cur.size() + value.size()) > max_len) return TooBig();
  std::string nv;
  uint64_t expire = lk.live ? lk.expire_ms : 0;
  nv.reserve(kHeader + cur.size() + value.size());
  nv.append(EncodeStringValue(cur, expire));
  nv.append(value);
  *new_len = nv.size() - kHeader;
  db_->Store(key, &lk, nv, expire);
  return Status::OK();
}

Status RedisString::SetRange(std::string_view key, int64_t offset, std::string_view value, int64_t max_len,
                             size_t* new_len) {
  LoadedKey lk;
  std::string_view cur;
  Status s = LoadString(key, &lk, &cur);
  if (!s.ok()) return s;
  if (!lk.live) cur = std::string_view();
  if (value.empty()) {
    *new_len = cur.size();
    return Status::OK();
  }
  if (offset + static_cast<int64_t>(value.size()) > max_len) return TooBig();
  std::string nv(cur);
  size_t end = static_cast<size_t>(offset) + value.size();
  if (nv.size() < end) nv.resize(end, '\0');
  nv.replace(static_cast<size_t>(offset), value.size(), value);
  uint64_t expire = lk.live ? lk.expire_ms : 0;
  *new_len = nv.size();
  db_->Store(key, &lk, EncodeStringValue(nv, expire), expire);
  return Status::OK();
}

Status RedisString::IncrBy(std::string_view key, int64_t delta, int64_t* result) {
  LoadedKey lk;
  std::string_view cur;
  Status s = LoadString(key, &lk, &cur);
  if (!s.ok()) return s;
  int64_t v = 0;
  if (lk.live && !ParseInt64(cur, &v)) return Status::RedisError("ERR value is not an integer or out of range");
  if ((delta < 0 && v < 0 && delta < INT64_MIN - v) || (delta > 0 && v > 0 && delta > INT64_MAX - v)) {
    return Status::RedisError("ERR increment or decrement would overflow");
  }
  *result = v + delta;
  uint64_t expire = lk.live ? lk.expire_ms : 0;
  db_->Store(key, &lk, EncodeStringValue(std::to_string(*result), expire), expire);
  return Status::OK();
}

Status RedisString::IncrByFloat(std::string_view key, long double delta, std::string* result) {
  LoadedKey lk;
  std::string_view cur;
  Status s = LoadString(key, &lk, &cur);
  if (!s.ok()) return s;
  long double v = 0;
  if (lk.live && !ParseLongDouble(cur, &v)) return Status::RedisError("ERR value is not a valid float");
  long double r = v + delta;
  if (std::isnan(r) || std::isinf(r)) return Status::RedisError("ERR increment would produce NaN or Infinity");
  *result = FormatLongDoubleHuman(r);
  uint64_t expire = lk.live ? lk.expire_ms : 0;
  db_->Store(key, &lk, EncodeStringValue(*result, expire), expire);
  return Status::OK();
}

Status RedisString::MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs, bool nx,
                         bool* done) {
  *done = false;
  std::vector<LoadedKey> lks(pairs.size());
  for (size_t i = 0; i < pairs.size(); i++) {
    Status s = db_->Load(pairs[i].first, &lks[i]);
    if (!s.ok()) return s;
    if (nx && lks[i].live) return Status::OK();
  }
  for (size_t i = 0; i < pairs.size(); i++) {
    // A key given twice: the later Load must see the earlier Store.
    for (size_t j = 0; j < i; j++) {
      if (pairs[j].first == pairs[i].first) lks[i] = lks[j];
    }
    db_->Store(pairs[i].first, &lks[i], EncodeStringValue(pairs[i].second, 0), 0);
    for (size_t j = i + 1; j < pairs.size(); j++) {
      if (pairs[j].first == pairs[i].first) lks[j] = lks[i];
    }
  }
  *done = true;
  return Status::OK();
}

}  // namespace kvrocks
