#include "types/redis_set.h"

#include "common/encoding.h"
#include "common/string_util.h"

#include <algorithm>
#include <random>
#include <set>

namespace kvrocks {

// payload[0] bits 1-2: the widest intset encoding the set has needed (0: 16 bits,
// 1: 32, 2: 64). An intset never narrows when members go, and DUMP shows the width.
static constexpr int kWidthShift = 1;
static constexpr uint8_t kWidthMask = 3 << kWidthShift;

// Members are stored in hash order: prefix | hash(member) (8, BE) | member.
// Hash order makes random seeks land on uniformly random members (SPOP,
// SRANDMEMBER) and iteration order is unspecified in Redis for such sets anyway.
// The hash is FNV-1a finished with MurmurHash3's fmix64: FNV-1a alone leaves its
// top bits untouched by the last bytes, so members differing only at the end
// ("element:000123", "element:000124") clustered in hash space, random seeks
// landed in the gaps and SPOP crawled over the tombstones of earlier pops.
static void AppendMemberSuffix(std::string* out, std::string_view member) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : member) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  PutBE64(out, h);
  out->append(member);
}

const char* RedisSet::Encoding(const Metadata& meta) {
  bool hashtable = !meta.payload.empty() && (static_cast<uint8_t>(meta.payload[0]) & kHashtableFlag);
  return hashtable ? "hashtable" : "intset";
}

Metadata RedisSet::NewSet() const {
  Metadata meta;
  meta.type = RedisType::kSet;
  meta.version = db_->ctx()->storage()->NewVersion();
  meta.payload.assign(1, '\0');
  return meta;
}

int RedisSet::IntsetWidth(const Metadata& meta) {
  uint8_t flags = meta.payload.empty() ? 0 : static_cast<uint8_t>(meta.payload[0]);
  return 2 << ((flags & kWidthMask) >> kWidthShift);
}

Status RedisSet::WidenIntset(std::string_view key, int width) {
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || width <= IntsetWidth(meta)) return s;
  uint8_t code = width >= 8 ? 2 : 1;
  auto flags = static_cast<uint8_t>(meta.payload[0]);
  meta.payload[0] = static_cast<char>((flags & ~kWidthMask) | (code << kWidthShift));
  db_->StoreCollection(key, &lk, meta);
  return Status::OK();
}

void RedisSet::NoteMember(Metadata* meta, std::string_view member) {
  int64_t v;
  auto flags = static_cast<uint8_t>(meta->payload[0]);
  if (member.size() > 20 || !ParseInt64(member, &v) || meta->size > EncodingLimits::SetEntries()) {
    flags |= kHashtableFlag;
  } else {
    uint8_t code = v < INT32_MIN || v > INT32_MAX ? 2 : v < INT16_MIN || v > INT16_MAX ? 1 : 0;
    if (code > (flags & kWidthMask) >> kWidthShift) flags = (flags & ~kWidthMask) | (code << kWidthShift);
  }
  meta->payload[0] = static_cast<char>(flags);
}

Status RedisSet::LoadSet(std::string_view key, LoadedKey* lk, Metadata* meta, bool* exists) {
  return db_->LoadCollection(key, RedisType::kSet, lk, meta, exists);
}

Status RedisSet::Add(std::string_view key, const std::vector<std::string_view>& members, int64_t* added) {
  *added = 0;
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadSet(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) meta = NewSet();
  std::string prefix = SubkeyPrefix(db_->id(), key, meta), sub, v;
  for (std::string_view m : members) {
    sub.assign(prefix);
    AppendMemberSuffix(&sub, m);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &v);
    if (s.ok()) continue;
    if (!s.IsNotFound()) return s;
    db_->ctx()->Put(ColumnFamily::kSubkey, sub, "");
    meta.size++;
    (*added)++;
    NoteMember(&meta, m);
  }
  if (*added > 0) db_->StoreCollection(key, &lk, meta);
  return Status::OK();
}

Status RedisSet::Remove(std::string_view key, const std::vector<std::string_view>& members, int64_t* removed) {
  *removed = 0;
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  std::string prefix = SubkeyPrefix(db_->id(), key, meta), sub, v;
  for (std::string_view m : members) {
    sub.assign(prefix);
    AppendMemberSuffix(&sub, m);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &v);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    db_->ctx()->Delete(ColumnFamily::kSubkey, sub);
    meta.size--;
    (*removed)++;
  }
  if (*removed > 0) db_->StoreCollection(key, &lk, meta);
  return Status::OK();
}

Status RedisSet::Card(std::string_view key, uint64_t* size) {
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadSet(key, &lk, &meta, &exists);
  *size = exists ? meta.size : 0;
  return s;
}

Status RedisSet::IsMember(std::string_view key, const std::vector<std::string_view>& members,
                          std::vector<bool>* result) {
  result->assign(members.size(), false);
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  std::string prefix = SubkeyPrefix(db_->id(), key, meta), sub, v;
  for (size_t i = 0; i < members.size(); i++) {
    sub.assign(prefix);
    AppendMemberSuffix(&sub, members[i]);
    s = db_->ctx()->Get(ColumnFamily::kSubkey, sub, &v);
    if (s.ok()) {
      (*result)[i] = true;
    } else if (!s.IsNotFound()) {
      return s;
    }
  }
  return Status::OK();
}

Status RedisSet::Scan(std::string_view key, const std::string& after, size_t count, std::string_view pattern,
                      std::vector<std::string>* members, std::string* next) {
  next->clear();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadSet(key, &lk, &meta, &exists);
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
  for (; it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (examined == count) return Status::OK();
    examined++;
    if (it->key().size() < prefix.size() + 8) continue;
    next->assign(it->key().data() + prefix.size(), it->key().size() - prefix.size());
    std::string m(it->key().data() + prefix.size() + 8, it->key().size() - prefix.size() - 8);
    if (pattern != "*" && !StringMatch(pattern, m)) continue;
    members->push_back(std::move(m));
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  next->clear();
  return Status::OK();
}

Status RedisSet::Pop(std::string_view key, uint64_t count, std::vector<std::string>* out) {
  out->clear();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || count == 0) return s;
  static thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t cursor = meta.payload.size() >= 9 ? DecodeBE64(meta.payload.data() + 1) : rng();
  SubkeyBounds bounds(db_->id(), key, meta);
  const std::string& prefix = bounds.prefix();
  const rocksdb::ReadOptions& ro = bounds.options();
  std::vector<std::string> doomed;
  uint64_t last = cursor;
  {
    auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
    std::string target = prefix;
    PutBE64(&target, cursor);
    it->Seek(target);
    bool wrapped = false;
    while (doomed.size() < count && doomed.size() < meta.size) {
      if (!it->Valid()) {
        if (wrapped) break;
        wrapped = true;
        it->SeekToFirst();
        continue;
      }
      rocksdb::Slice k = it->key();
      if (k.size() < prefix.size() + 8) break;
      uint64_t h = DecodeBE64(k.data() + prefix.size());
      if (wrapped && h >= cursor) break;  // a full turn
      out->emplace_back(k.data() + prefix.size() + 8, k.size() - prefix.size() - 8);
      doomed.emplace_back(k.ToString());
      last = h;
      it->Next();
    }
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
  }
  // Redis' SPOP takes most of a set (the rest times 5 at most the count) by
  // building a new set of the rest: its encoding and intset width start afresh.
  if (doomed.size() < meta.size && (meta.size - doomed.size()) * 5 <= count) {
    std::set<std::string> gone(doomed.begin(), doomed.end());
    uint8_t flags = 0;
    uint64_t rest = 0;
    auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      if (gone.count(it->key().ToString()) != 0) continue;
      Metadata fresh;
      fresh.payload.assign(1, static_cast<char>(flags));
      fresh.size = ++rest;
      NoteMember(&fresh, std::string_view(it->key().data() + prefix.size() + 8, it->key().size() - prefix.size() - 8));
      flags = static_cast<uint8_t>(fresh.payload[0]);
    }
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
    meta.payload[0] = static_cast<char>(flags);
  }
  // All of it: Redis answers with SUNION of the set, a new set built member by member.
  if (count >= meta.size && FitsIntset(*out)) SortIntset(out);
  for (const auto& k : doomed) db_->ctx()->Delete(ColumnFamily::kSubkey, k);
  meta.size -= doomed.size();
  meta.payload.resize(9, '\0');
  std::string next;
  PutBE64(&next, last + 1);
  meta.payload.replace(1, 8, next);
  if (!doomed.empty()) db_->StoreCollection(key, &lk, meta);
  return Status::OK();
}

Status RedisSet::RandomMembers(std::string_view key, uint64_t count, bool repeat, std::vector<std::string>* out,
                               const std::function<bool(uint64_t)>& fits) {
  out->clear();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || count == 0) return s;
  static thread_local std::mt19937_64 rng(std::random_device{}());
  if (meta.size <= kRandomReadWhole || count >= meta.size / 4) {
    std::vector<std::string> all;
    s = Members(key, &all);
    if (!s.ok() || all.empty()) return s;
    if (repeat) {
      uint64_t len = 0;
      for (const auto& m : all) len += m.size();
      if (fits && !fits(len / all.size())) return Status::Aborted();
      out->reserve(count);
      for (uint64_t i = 0; i < count; i++) out->push_back(all[rng() % all.size()]);
    } else {
      if (all.size() > count) {
        std::shuffle(all.begin(), all.end(), rng);
        all.resize(count);
      }
      *out = std::move(all);
    }
    return Status::OK();
  }
  // Bounds keep seeks from wandering over other keys' data (and this set's
  // tombstones beyond its range) when a target falls past the last member.
  SubkeyBounds bounds(db_->id(), key, meta);
  const std::string& prefix = bounds.prefix();
  auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, bounds.options());
  auto next_wrapping = [&] {
    it->Next();
    if (!it->Valid()) it->SeekToFirst();
  };
  std::set<std::string> picked;
  std::string target;
  // Distinct picks: count is under a quarter of the members, so few tries repeat one.
  for (uint64_t tries = 0; (repeat ? out->size() : picked.size()) < count && tries < count * 8; tries++) {
    target = prefix;
    PutBE64(&target, rng());
    it->Seek(target);
    if (!it->Valid()) it->SeekToFirst();
    for (uint64_t skip = rng() % kRandomWindow; skip > 0 && it->Valid(); skip--) next_wrapping();
    if (!it->Valid() || it->key().size() < prefix.size() + 8) break;
    std::string member(it->key().data() + prefix.size() + 8, it->key().size() - prefix.size() - 8);
    if (repeat) {
      out->push_back(std::move(member));
    } else {
      picked.insert(std::move(member));
    }
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  if (!repeat) {
    out->assign(picked.begin(), picked.end());
    std::shuffle(out->begin(), out->end(), rng);
  }
  return Status::OK();
}

Status RedisSet::Members(std::string_view key, std::vector<std::string>* members, bool* exists) {
  members->clear();
  LoadedKey lk;
  Metadata meta;
  bool found;
  Status s = LoadSet(key, &lk, &meta, &found);
  if (exists != nullptr) *exists = found;
  if (!s.ok() || !found) return s;
  std::string next;
  s = Scan(key, "", SIZE_MAX, "*", members, &next);
  if (s.ok() && std::string(Encoding(meta)) == "intset") SortIntset(members);
  return s;
}

bool RedisSet::FitsIntset(const std::vector<std::string>& members) {
  // Redis caps the setting at 2^30 entries (intset internals).
  if (members.size() > std::min<uint64_t>(EncodingLimits::SetEntries(), uint64_t{1} << 30)) return false;
  int64_t v;
  return std::all_of(members.begin(), members.end(),
                     [&v](const std::string& m) { return m.size() <= 20 && ParseInt64(m, &v); });
}

void RedisSet::SortIntset(std::vector<std::string>* members) {
  // An intset answers in numeric order, as Redis' does.
  std::sort(members->begin(), members->end(), [](const std::string& a, const std::string& b) {
    int64_t x = 0, y = 0;
    ParseInt64(a, &x);
    ParseInt64(b, &y);
    return x < y;
  });
}

Status RedisSet::Move(std::string_view src, std::string_view dst, std::string_view member, bool* moved) {
  *moved = false;
  LoadedKey slk, dlk;
  Metadata smeta, dmeta;
  bool sexists, dexists;
  // As Redis' smoveCommand: both keys are looked up first (so an expired one is
  // deleted whatever the answer), then a missing source answers 0 before either
  // type is checked.
  Status s = LoadSet(src, &slk, &smeta, &sexists);
  Status d = LoadSet(dst, &dlk, &dmeta, &dexists);
  if (!s.ok() || !sexists) return s;
  if (!d.ok()) return d;
  std::vector<bool> in_src;
  s = IsMember(src, {member}, &in_src);
  if (!s.ok() || !in_src[0]) return s;
  *moved = true;
  if (src == dst) return Status::OK();
  int64_t n;
  s = Remove(src, {member}, &n);
  if (!s.ok()) return s;
  s = Add(dst, {member}, &n);
  // Redis counts the removal, and the addition if the destination lacked the member.
  if (s.ok()) db_->ctx()->AddDirty(1 + n);
  return s;
}

Status RedisSet::Store(std::string_view dst, const std::vector<std::string>& members,
                       const std::vector<std::string>* built) {
  LoadedKey lk;
  Status s = db_->Load(dst, &lk);
  if (!s.ok()) return s;
  // The destination is replaced whatever its type; its old subkeys become garbage.
  Metadata meta = NewSet();
  for (const auto& m : built != nullptr ? *built : members) {
    meta.size++;
    NoteMember(&meta, m);
  }
  meta.size = 0;
  std::string prefix = SubkeyPrefix(db_->id(), dst, meta), sub;
  for (const auto& m : members) {
    sub.assign(prefix);
    AppendMemberSuffix(&sub, m);
    db_->ctx()->Put(ColumnFamily::kSubkey, sub, "");
    meta.size++;
  }
  db_->StoreCollection(dst, &lk, meta);
  return Status::OK();
}

}  // namespace kvrocks
