#include "types/database.h"

#include <random>

#include "common/string_util.h"
#include "common/time_util.h"

namespace kvrocks {

const char kWrongTypeError[] = "WRONGTYPE Operation against a key holding the wrong kind of value";

Status Database::Load(std::string_view key, LoadedKey* lk) {
  Status s = Peek(key, lk);
  if (!s.ok()) return s;
  ctx_->RecordLookup(db_, key, lk->live);
  if (lk->on_disk && !lk->live) ctx_->NoteExpiredFound(db_, key);
  return s;
}

Status Database::Peek(std::string_view key, LoadedKey* lk) {
  lk->meta_key = EncodeMetaKey(db_, key);
  Status s = ctx_->Get(ColumnFamily::kMetadata, lk->meta_key, &lk->raw);
  if (s.IsNotFound()) {
    lk->on_disk = lk->live = false;
    lk->expire_ms = 0;
    lk->type = RedisType::kNone;
    lk->raw.clear();
    return Status::OK();
  }
  if (!s.ok()) return s;
  s = PeekMetadata(lk->raw, &lk->type, &lk->expire_ms);
  if (!s.ok()) return s;
  lk->on_disk = true;
  lk->live = lk->expire_ms == 0 || lk->expire_ms > ExpiryNowMs();
  return Status::OK();
}

Status Database::LoadForReplace(std::string_view key, LoadedKey* lk) {
  if (!ctx_->unread_replace_ok()) return Load(key, lk);
  lk->meta_key = EncodeMetaKey(db_, key);
  // A write of this batch to the key hides its previous state from the database.
  if (ctx_->HasPendingWrite(ColumnFamily::kMetadata, lk->meta_key)) return Load(key, lk);
  lk->unread = true;
  return Status::OK();
}

Status Database::LoadCollection(std::string_view key, RedisType type, LoadedKey* lk, Metadata* meta,
                                bool* exists) {
  Status s = Load(key, lk);
  if (!s.ok()) return s;
  *exists = lk->live;
  if (!lk->live) return Status::OK();
  if (lk->type != type) return Status::RedisError(kWrongTypeError);
  s = meta->Decode(lk->raw);
  if (s.ok() && meta->payload.empty()) meta->payload.assign(1, '\0');
  return s;
}

void Database::Store(std::string_view key, LoadedKey* lk, std::string_view encoded, uint64_t new_expire_ms) {
  bool created = !lk->on_disk || !lk->live;
  if (lk->on_disk) ForgetReplacedMoved(lk->raw, encoded);
  // As Redis, which deletes an expired key when a write looks it up, then creates it anew.
  if (lk->on_disk && !lk->live && ctx_->expires_on_access()) ctx_->TouchExpired(db_, key);
  ctx_->ForgetExpiredFound(db_, key);
  if (lk->unread) {
    // The previous state is settled at commit; for the events the key is modified.
    ctx_->PutUnread(db_, key, lk->meta_key, encoded, new_expire_ms);
    lk->unread = false;
    created = false;
  } else {
    ctx_->Put(ColumnFamily::kMetadata, lk->meta_key, encoded);
    if (!lk->on_disk) ctx_->AddKeyCount(db_, 1);
    uint64_t old_expire = lk->on_disk ? lk->expire_ms : 0;
    if (old_expire != new_expire_ms) {
      ctx_->ChangeExpire(db_, old_expire, new_expire_ms);
      if (old_expire != 0) ctx_->Delete(ColumnFamily::kExpire, EncodeExpireKey(db_, old_expire, key));
      if (new_expire_ms != 0) {
        ctx_->Put(ColumnFamily::kExpire, EncodeExpireKey(db_, new_expire_ms, key), "");
        ctx_->NoteExpire(db_, new_expire_ms);
        ctx_->NoteExpiring(db_, key);
      }
    }
  }
  const RedisType type = static_cast<RedisType>(static_cast<uint8_t>(encoded[0]) & 0x0f);
  // Where Redis signals blocked clients: dbAdd of a type one can wait on, dbOverwrite of a stream.
  const bool ready = created ? (type == RedisType::kList || type == RedisType::kZSet || type == RedisType::kStream)
                             : (lk->type == RedisType::kStream && type != RedisType::kStream);
  ctx_->Touch(db_, key, created ? Context::TouchKind::kCreated : Context::TouchKind::kModified, ready);
  lk->on_disk = true;
  lk->live = new_expire_ms == 0 || new_expire_ms > ExpiryNowMs();
  lk->expire_ms = new_expire_ms;
  lk->type = type;
  lk->raw.assign(encoded);
}

void Database::StoreCollection(std::string_view key, LoadedKey* lk, const Metadata& meta) {
  // Only a destination gets an empty collection over a key that has expired: a command
  // that empties a collection finds it live.
  if (meta.size == 0) return RemoveDestination(key, lk);
  Store(key, lk, meta.Encode(), meta.expire_ms);
}

void Database::Restamp(LoadedKey* lk, std::string_view encoded) {
  ForgetReplacedMoved(lk->raw, encoded);
  ctx_->Put(ColumnFamily::kMetadata, lk->meta_key, encoded);
  lk->raw.assign(encoded);
}

void Database::ForgetMoved(uint64_t version) { ctx_->Delete(ColumnFamily::kState, EncodeMovedKey(version)); }

void Database::ForgetReplacedMoved(std::string_view old_raw, std::string_view encoded) {
  uint64_t moved, kept;
  if (HasMovedSubkeys(old_raw, &moved) && !(HasMovedSubkeys(encoded, &kept) && kept == moved)) {
    ForgetMoved(moved);  // the renamed key's subkeys are no longer its
  }
}

void Database::Remove(std::string_view key, LoadedKey* lk) { RemoveKey(key, lk, false); }

void Database::RemoveDestination(std::string_view key, LoadedKey* lk) {
  ctx_->ForgetExpiredFound(db_, key);
  RemoveKey(key, lk, true);
}

void Database::RemoveKey(std::string_view key, LoadedKey* lk, bool as_live) {
  if (!lk->on_disk) return;
  ctx_->Delete(ColumnFamily::kMetadata, lk->meta_key);
  uint64_t moved;
  if (HasMovedSubkeys(lk->raw, &moved)) ForgetMoved(moved);
  if (lk->expire_ms != 0) {
    ctx_->Delete(ColumnFamily::kExpire, EncodeExpireKey(db_, lk->expire_ms, key));
    ctx_->ChangeExpire(db_, lk->expire_ms, 0);
  }
  ctx_->AddKeyCount(db_, -1);
  if (!lk->live && !as_live && ctx_->expires_on_access()) {
    ctx_->TouchExpired(db_, key);
  } else {
    ctx_->Touch(db_, key, Context::TouchKind::kRemoved, lk->type == RedisType::kStream);
  }
  lk->on_disk = lk->live = false;
  lk->expire_ms = 0;
  lk->type = RedisType::kNone;
  lk->raw.clear();
}

Status Database::Type(std::string_view key, RedisType* type) {
  LoadedKey lk;
  Status s = Load(key, &lk);
  if (!s.ok()) return s;
  *type = lk.live ? lk.type : RedisType::kNone;
  return Status::OK();
}

Status Database::Delete(std::string_view key, bool* deleted) {
  LoadedKey lk;
  Status s = Load(key, &lk);
  if (!s.ok()) return s;
  *deleted = lk.live;
  Remove(key, &lk);
  return Status::OK();
}

Status Database::Exists(std::string_view key, bool* exists) {
  LoadedKey lk;
  Status s = Load(key, &lk);
  *exists = s.ok() && lk.live;
  return s;
}

Status Database::GetExpire(std::string_view key, uint64_t* expire_ms) {
  LoadedKey lk;
  Status s = Load(key, &lk);
  if (!s.ok()) return s;
  if (!lk.live) return Status::NotFound();
  *expire_ms = lk.expire_ms;
  return Status::OK();
}

std::string Database::WithExpire(const std::string& raw, uint64_t expire_ms) {
  std::string out = raw;
  for (int i = 0; i < 8; i++) out[1 + i] = static_cast<char>(expire_ms >> (56 - 8 * i));
  return out;
}

bool Database::AlreadyExpired(uint64_t expire_ms) const {
  return expire_ms <= NowMs() && !ctx_->expiry_left_to_master();
}

Status Database::SetExpire(std::string_view key, uint64_t expire_ms, int flags, bool* applied) {
  *applied = false;
  LoadedKey lk;
  Status s = Load(key, &lk);
  if (!s.ok() || !lk.live) return s;
  // A persistent key counts as an infinite TTL for GT/LT, as in Redis.
  bool persistent = lk.expire_ms == 0;
  if ((flags & kExpireNX) && !persistent) return Status::OK();
  if ((flags & kExpireXX) && persistent) return Status::OK();
  if ((flags & kExpireGT) && (persistent || expire_ms <= lk.expire_ms)) return Status::OK();
  if ((flags & kExpireLT) && !persistent && expire_ms >= lk.expire_ms) return Status::OK();
  *applied = true;
  if (AlreadyExpired(expire_ms)) {
    Remove(key, &lk);
    return Status::OK();
  }
  Store(key, &lk, WithExpire(lk.raw, expire_ms), expire_ms);
  return Status::OK();
}

Status Database::Persist(std::string_view key, bool* removed) {
  *removed = false;
  LoadedKey lk;
  Status s = Load(key, &lk);
  if (!s.ok() || !lk.live || lk.expire_ms == 0) return s;
  Store(key, &lk, WithExpire(lk.raw, 0), 0);
  *removed = true;
  return Status::OK();
}

// The metadata of a copy of lk's key: same value, a new version for keys with subkeys.
static std::string CopiedMetadata(const LoadedKey& lk, uint64_t new_version) {
  Metadata meta;
  if (!meta.Decode(lk.raw).ok() || !meta.HasSubkeys()) return lk.raw;
  meta.version = new_version;
  meta.owner.clear();  // the copy's subkeys are written under its own db and name
  meta.owner_db = -1;
  return meta.Encode();
}

Status Database::CopySubkeys(std::string_view src, const LoadedKey& from, Database* dst_db, std::string_view dst,
                             uint64_t new_version) {
  Metadata meta;
  Status s = meta.Decode(from.raw);
  if (!s.ok() || !meta.HasSubkeys()) return s;
  std::string prefix = SubkeyPrefix(db_, src, meta);
  std::string dst_prefix = EncodeSubkeyPrefix(dst_db->db_, dst, new_version);
  for (auto cf : {ColumnFamily::kSubkey, ColumnFamily::kZSetScore, ColumnFamily::kStream, ColumnFamily::kZSetRank}) {
    rocksdb::ReadOptions ro;
    auto it = ctx_->NewIterator(cf, ro);
    std::string k, v;
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      k.assign(dst_prefix);
      k.append(it->key().data() + prefix.size(), it->key().size() - prefix.size());
      // A copy: the value may sit in the pending writes, which this Put may move.
      v.assign(it->value().data(), it->value().size());
      dst_db->ctx_->Put(cf, k, v);
    }
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
  }
  return Status::OK();
}

Status Database::Copy(std::string_view src, Database* dst_db, std::string_view dst, bool replace, bool* copied) {
  *copied = false;
  LoadedKey from, to;
  Status s = Load(src, &from);
  if (!s.ok() || !from.live) return s;
  s = dst_db->Load(dst, &to);
  if (!s.ok()) return s;
  if (to.live && !replace) return Status::OK();
  uint64_t version = ctx_->storage()->NewVersion();
  s = CopySubkeys(src, from, dst_db, dst, version);
  if (!s.ok()) return s;
  std::string raw = CopiedMetadata(from, version);
  auto flags = static_cast<uint8_t>(raw[0]);
  if (from.type == RedisType::kString && !(flags & kOutOfLineFlag)) {
    raw[0] = static_cast<char>(flags | kUnsharedFlag);
  }
  dst_db->Store(dst, &to, raw, from.expire_ms);
  *copied = true;
  return Status::OK();
}

Status Database::Rename(std::string_view src, std::string_view dst, bool nx, bool* renamed) {
  *renamed = false;
  LoadedKey from, to;
  Status s = Load(src, &from);
  if (!s.ok()) return s;
  if (!from.live) return Status::NotFound();
  if (src == dst) {
    *renamed = !nx;
    return Status::OK();
  }
  s = Load(dst, &to);
  if (!s.ok()) return s;
  if (nx && to.live) return Status::OK();
  Transfer(src, &from, this, dst, &to);
  *renamed = true;
  return Status::OK();
}

Status Database::Move(std::string_view key, Database* dst_db, bool* moved) {
  *moved = false;
  LoadedKey from, to;
  Status s = Load(key, &from);
  if (!s.ok() || !from.live) return s;
  s = dst_db->Load(key, &to);
  if (!s.ok() || to.live) return s;
  Transfer(key, &from, dst_db, key, &to);
  *moved = true;
  return Status::OK();
}

void Database::Transfer(std::string_view src, LoadedKey* from, Database* dst_db, std::string_view dst,
                        LoadedKey* to) {
  const uint64_t expire = from->expire_ms;
  Metadata meta;
  if (!meta.Decode(from->raw).ok() || !meta.HasSubkeys()) {
    // An inline string: the value is in the metadata.
    std::string raw = from->raw;
    Remove(src, from);
    dst_db->Store(dst, to, raw, expire);
    return;
  }
  // O(1), as in Redis: the metadata moves and names the subkeys' owner (the db
  // and name they embed); a `moved` record lets the compaction filter find the
  // metadata from the subkeys. Back under the owner's db and name, neither is needed.
  std::string owner(meta.SubkeyName(src));
  const uint8_t owner_db = meta.SubkeyDb(db_);
  meta.owner = owner == dst ? std::string() : owner;
  meta.owner_db = owner_db == dst_db->db_ ? -1 : owner_db;
  Remove(src, from);  // forgets the moved record of a key renamed or moved before
  if (!meta.owner.empty() || meta.owner_db >= 0) {
    std::string where(1, static_cast<char>(dst_db->db_));
    where.append(dst);
    ctx_->Put(ColumnFamily::kState, EncodeMovedKey(meta.version), where);
    ctx_->storage()->NoteMovedSubkeys();
  }
  dst_db->Store(dst, to, meta.Encode(), expire);
}

Status Database::CopyOutMovedSubkeys(Context* ctx, uint8_t db) {
  Storage* st = ctx->storage();
  std::vector<std::pair<uint8_t, std::string>> keys;  // (db, name) of each moved record
  {
    std::unique_ptr<rocksdb::Iterator> it(
        st->db()->NewIterator(rocksdb::ReadOptions(), st->cf(ColumnFamily::kState)));
    for (it->Seek(kMovedKeyPrefix); it->Valid() && it->key().starts_with(kMovedKeyPrefix); it->Next()) {
      rocksdb::Slice v = it->value();
      if (v.empty() || static_cast<uint8_t>(v[0]) == db) continue;  // flushed with its key
      keys.emplace_back(v[0], std::string(v.data() + 1, v.size() - 1));
    }
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
  }
  for (const auto& [where, name] : keys) {
    Database other(ctx, where);
    LoadedKey lk;
    // Peek, not Load: an expired key stays stored, as Redis' FLUSHDB leaves other
    // databases' keys alone, and its elements are copied out with the rest.
    Status s = other.Peek(name, &lk);
    if (!s.ok()) return s;
    Metadata meta;
    if (!lk.on_disk || !meta.Decode(lk.raw).ok() || !meta.HasSubkeys() || meta.SubkeyDb(where) != db) continue;
    uint64_t version = st->NewVersion();
    s = other.CopySubkeys(name, lk, &other, name, version);
    if (!s.ok()) return s;
    other.Restamp(&lk, CopiedMetadata(lk, version));  // no client sees a change
  }
  return Status::OK();
}

Status Database::Keys(std::string_view pattern, std::vector<std::string>* keys) {
  std::string prefix = MetaDbPrefix(db_);
  std::string upper = MetaDbPrefix(db_ + 1);
  rocksdb::Slice lower_slice(prefix), upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  if (db_ != 255) ro.iterate_upper_bound = &upper_slice;
  auto it = ctx_->NewIterator(ColumnFamily::kMetadata, ro);
  uint64_t now = ExpiryNowMs();
  bool all = pattern == "*";
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    auto k = it->key();
    if (k.size() < 3 || static_cast<uint8_t>(k[0]) != db_) break;
    std::string_view user_key(k.data() + 3, k.size() - 3);
    if (!all && !StringMatch(pattern, user_key)) continue;
    RedisType t;
    uint64_t expire;
    auto v = it->value();
    if (!PeekMetadata(std::string_view(v.data(), v.size()), &t, &expire).ok()) continue;
    if (expire != 0 && expire <= now) continue;
    keys->emplace_back(user_key);
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return Status::OK();
}

Status Database::Scan(const std::string& after, size_t count, std::string_view pattern, RedisType type,
                      std::vector<std::string>* keys, std::string* next) {
  std::string prefix = MetaDbPrefix(db_);
  std::string upper = MetaDbPrefix(db_ + 1);
  rocksdb::Slice lower_slice(prefix), upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  if (db_ != 255) ro.iterate_upper_bound = &upper_slice;
  auto it = ctx_->NewIterator(ColumnFamily::kMetadata, ro);
  uint64_t now = ExpiryNowMs();
  next->clear();
  if (after.empty()) {
    it->Seek(prefix);
  } else {
    it->Seek(after);
    if (it->Valid() && it->key() == rocksdb::Slice(after)) it->Next();
  }
  size_t examined = 0;
  for (; it->Valid(); it->Next()) {
    auto k = it->key();
    if (k.size() < 3 || static_cast<uint8_t>(k[0]) != db_) break;
    if (examined == count) {
      // More keys remain: continue after the last one examined.
      break;
    }
    examined++;
    *next = k.ToString();
    std::string_view user_key(k.data() + 3, k.size() - 3);
    if (pattern != "*" && !StringMatch(pattern, user_key)) continue;
    RedisType t;
    uint64_t expire;
    auto v = it->value();
    if (!PeekMetadata(std::string_view(v.data(), v.size()), &t, &expire).ok()) continue;
    if (expire != 0 && expire <= now) {
      ctx_->NoteExpiredFound(db_, user_key);  // SCAN deletes what it finds expired, as Redis
      continue;
    }
    if (type != RedisType::kNone && t != type) continue;
    keys->emplace_back(user_key);
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  bool more = it->Valid() && it->key().size() >= 3 && static_cast<uint8_t>(it->key()[0]) == db_;
  if (!more) next->clear();
  return Status::OK();
}

Status Database::RandomKey(std::string* key) {
  // Keys are ordered by (slot, name): seek to a random slot and take the first
  // live key from there, wrapping around once.
  static thread_local std::mt19937_64 rng(std::random_device{}());
  std::string prefix = MetaDbPrefix(db_);
  std::string upper = MetaDbPrefix(db_ + 1);
  rocksdb::Slice lower_slice(prefix), upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  if (db_ != 255) ro.iterate_upper_bound = &upper_slice;
  auto it = ctx_->NewIterator(ColumnFamily::kMetadata, ro);
  uint64_t now = ExpiryNowMs();
  std::string start = prefix;
  uint16_t slot = static_cast<uint16_t>(rng() % 16384);
  start.push_back(static_cast<char>(slot >> 8));
  start.push_back(static_cast<char>(slot & 0xff));
  for (int pass = 0; pass < 2; pass++) {
    for (it->Seek(pass == 0 ? start : prefix); it->Valid(); it->Next()) {
      auto k = it->key();
      if (k.size() < 3 || static_cast<uint8_t>(k[0]) != db_) break;
      RedisType t;
      uint64_t expire;
      auto v = it->value();
      if (!PeekMetadata(std::string_view(v.data(), v.size()), &t, &expire).ok()) continue;
      if (expire != 0 && expire <= now) {
        ctx_->NoteExpiredFound(db_, std::string_view(k.data() + 3, k.size() - 3));  // as Redis' dbRandomKey
        continue;
      }
      key->assign(k.data() + 3, k.size() - 3);
      return Status::OK();
    }
  }
  return Status::NotFound();
}

}  // namespace kvrocks
