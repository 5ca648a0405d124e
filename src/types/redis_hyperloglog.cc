#include "types/redis_hyperloglog.h"

#include "types/hll_format.h"
#include "types/redis_string.h"

namespace kvrocks {

const char kInvalidHllError[] = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const char kCorruptHllError[] = "INVALIDOBJ Corrupted HLL object detected";

Status RedisHyperLogLog::Load(std::string_view key, LoadedKey* lk, std::string* value, bool* exists) {
  Status s = RedisString(db_).LoadString(key, lk, value);
  if (!s.ok()) return s;
  *exists = lk->live;
  if (*exists && !hll::IsValid(*value)) return Status::RedisError(kInvalidHllError);
  return Status::OK();
}

Status RedisHyperLogLog::Add(std::string_view key, const std::vector<std::string_view>& elements, bool* updated) {
  LoadedKey lk;
  std::string value;
  bool exists;
  Status s = Load(key, &lk, &value, &exists);
  if (!s.ok()) return s;
  *updated = !exists;
  int64_t changes = exists ? 0 : 1;  // Redis' dirty count: the creation and each element that set a register
  if (!exists) value = hll::NewSparse();
  for (auto e : elements) {
    int r = hll::Add(&value, e, sparse_max_bytes_);
    if (r < 0) return Status::RedisError(kCorruptHllError);
    if (r == 1) {
      *updated = true;
      changes++;
    }
  }
  if (!*updated) {
    RedisString(db_).MarkRaw(&lk);
    return Status::OK();
  }
  db_->ctx()->AddDirty(changes);
  hll::InvalidateCache(&value);
  RedisString(db_).WriteValue(key, &lk, value, exists ? lk.expire_ms : 0, kRawEncodingFlag);
  return Status::OK();
}

Status RedisHyperLogLog::DebugValue(std::string_view key, bool to_dense, std::string* value, bool* converted) {
  LoadedKey lk;
  bool exists;
  Status s = Load(key, &lk, value, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::RedisError("ERR The specified key does not exist");
  *converted = false;
  if (!to_dense || (*value)[4] == static_cast<char>(hll::kDense)) {
    RedisString(db_).MarkRaw(&lk);
    return Status::OK();
  }
  if (!hll::ToDense(value)) return Status::RedisError(kCorruptHllError);
  *converted = true;
  // Redis counts the conversion as a change (for propagation) but signals nothing.
  db_->ctx()->AddDirty(1);
  RedisString(db_).WriteValue(key, &lk, *value, lk.expire_ms, kRawEncodingFlag, true);
  return Status::OK();
}

Status RedisHyperLogLog::MergeKey(std::string_view key, uint8_t* regs, bool* dense) {
  std::string value;
  Status s = RedisString(db_).Get(key, &value);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  if (!hll::IsValid(value)) return Status::RedisError(kInvalidHllError);
  if (!hll::MergeInto(value, regs)) return Status::RedisError(kCorruptHllError);
  if (value[4] == static_cast<char>(hll::kDense)) *dense = true;
  return Status::OK();
}

Status RedisHyperLogLog::Count(const std::vector<std::string_view>& keys, uint64_t* card) {
  *card = 0;
  if (keys.size() == 1) {
    LoadedKey lk;
    std::string value;
    bool exists;
    Status s = Load(keys[0], &lk, &value, &exists);
    if (!s.ok() || !exists) return s;
    if (hll::CacheValid(value)) {
      *card = hll::CachedCount(value);
      RedisString(db_).MarkRaw(&lk);
      return Status::OK();
    }
    if (!hll::Count(value, card)) return Status::RedisError(kCorruptHllError);
    hll::SetCachedCount(&value, *card);
    RedisString(db_).WriteValue(keys[0], &lk, value, lk.expire_ms, kRawEncodingFlag);
    return Status::OK();
  }
  std::vector<uint8_t> regs(hll::kRegisters, 0);
  Context::SnapshotScope snapshot(db_->ctx());
  bool dense = false;
  for (auto key : keys) {
    Status s = MergeKey(key, regs.data(), &dense);
    if (!s.ok()) return s;
  }
  *card = hll::CountRegisters(regs.data());
  return Status::OK();
}

Status RedisHyperLogLog::Merge(std::string_view dest, const std::vector<std::string_view>& sources) {
  std::vector<uint8_t> regs(hll::kRegisters, 0);
  bool use_dense = false;
  Status s = MergeKey(dest, regs.data(), &use_dense);
  for (size_t i = 0; s.ok() && i < sources.size(); i++) s = MergeKey(sources[i], regs.data(), &use_dense);
  if (!s.ok()) return s;
  LoadedKey lk;
  std::string value;
  bool exists;
  s = Load(dest, &lk, &value, &exists);
  if (!s.ok()) return s;
  if (!exists) value = hll::NewSparse();
  // As Redis: the result is dense as soon as one input is.
  if (use_dense && !hll::ToDense(&value)) return Status::RedisError(kCorruptHllError);
  for (int i = 0; i < hll::kRegisters; i++) {
    if (regs[i] != 0 && hll::SetRegister(&value, i, regs[i], sparse_max_bytes_) < 0) {
      return Status::RedisError(kCorruptHllError);
    }
  }
  hll::InvalidateCache(&value);
  RedisString(db_).WriteValue(dest, &lk, value, exists ? lk.expire_ms : 0, kRawEncodingFlag);
  return Status::OK();
}

}  // namespace kvrocks
