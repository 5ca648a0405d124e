#include "types/redis_zset.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "common/encoding.h"
#include "types/rank_index.h"

namespace kvrocks {

static constexpr uint8_t kSkiplistFlag = 1;  // payload[0]: reported as skiplist
// payload[0]: some member was given the score -0. The score index sorts it as 0
// (Redis compares the two equal); the member's own record keeps the sign that
// Redis replies with, and walks read it from there for zero scores.
static constexpr uint8_t kNegativeZeroFlag = 2;
// payload[0] bits 4-7: the number of levels of the set's rank index
// (RankIndex::LevelsOf). A range by rank starting this many members from the
// set's end (and ZCOUNT past as many) uses the index, built for sets of
// RankIndex::kBuildAt members.
static constexpr int64_t kRankBuildOffset = 256;
static constexpr uint64_t kRankBuildAt = RankIndex::kBuildAt;

static int RankLevels(const Metadata& meta) { return RankIndex::LevelsOf(meta); }

std::string EncodeScore(double score) {
  if (score == 0) score = 0;  // -0 and 0 are equal scores
  uint64_t bits;
  std::memcpy(&bits, &score, 8);
  bits = (bits & (1ULL << 63)) ? ~bits : bits | (1ULL << 63);
  std::string out;
  PutBE64(&out, bits);
  return out;
}

double DecodeScore(const char* p) {
  uint64_t bits = DecodeBE64(p);
  bits = (bits & (1ULL << 63)) ? bits & ~(1ULL << 63) : ~bits;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

static std::string RawScore(double score) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &score, 8);
  return out;
}

static double ParseRawScore(const std::string& v) {
  double d = 0;
  if (v.size() == 8) std::memcpy(&d, v.data(), 8);
  return d;
}

// Where the live members begin and end in the score index. Walks from an end
// start there rather than at the version's first key: pops and removals leave
// tombstones at the ends, which an LSM keeps until compaction, and a walk from the
// first key would step over all of them (ZPOPMIN on a drained set fell to a few
// hundred per second). Kept in the metadata payload after the flags byte as
// `low_len(1) low low_stale(2) high_len(1) high high_stale(2)`: every live
// score-index suffix (score(8) member) is >= low and <= high, and *_stale counts
// the removals since that bound was last the first (last) live entry. Past
// kMaxStale, the writing command finds the edge again with one seek, so a walk
// steps over at most that many tombstones. A payload of the flags byte alone
// (sets written before the edges) means unknown; the next write finds them.
struct RedisZSet::Edges {
  bool known = false;
  std::string low, high;
  uint32_t low_stale = 0, high_stale = 0;
};

namespace {

constexpr uint32_t kMaxStale = 32;
// Bounds hold at most this much of a suffix: a long member's bound is cut.
constexpr size_t kEdgeBytes = 8 + 64;

// A lower bound of suffix that is at most kEdgeBytes long (a prefix of it).
std::string LowBound(std::string_view suffix) { return std::string(suffix.substr(0, kEdgeBytes)); }

// An upper bound of suffix that is at most kEdgeBytes long: suffix itself, or the
// successor of its cut (trailing 0xff bytes dropped, the last byte incremented;
// a score's 8 bytes are never all 0xff, +inf being 0xfff0..., NaN refused).
std::string HighBound(std::string_view suffix) {
  if (suffix.size() <= kEdgeBytes) return std::string(suffix);
  return PrefixSuccessor(std::string(suffix.substr(0, kEdgeBytes)));
}

bool ReadBound(std::string_view* in, std::string* bound, uint32_t* stale) {
  if (in->empty()) return false;
  size_t n = static_cast<uint8_t>((*in)[0]);
  if (in->size() < 3 + n) return false;
  bound->assign(in->data() + 1, n);
  *stale = DecodeBE16(in->data() + 1 + n);
  in->remove_prefix(3 + n);
  return true;
}

void PutBound(std::string* out, const std::string& bound, uint32_t stale) {
  out->push_back(static_cast<char>(bound.size()));
  out->append(bound);
  PutBE16(out, static_cast<uint16_t>(std::min<uint32_t>(stale, 0xffff)));
}

}  // namespace

RedisZSet::Edges RedisZSet::DecodeEdges(const Metadata& meta) {
  Edges e;
  if (meta.payload.size() <= 1) return e;
  std::string_view in(meta.payload);
  in.remove_prefix(1);
  e.known = ReadBound(&in, &e.low, &e.low_stale) && ReadBound(&in, &e.high, &e.high_stale);
  return e;
}

void RedisZSet::EncodeEdges(const Edges& e, Metadata* meta) {
  meta->payload.resize(1);
  if (!e.known) return;
  PutBound(&meta->payload, e.low, e.low_stale);
  PutBound(&meta->payload, e.high, e.high_stale);
}

void RedisZSet::NoteInsert(Edges* e, std::string_view suffix, bool was_empty) {
  if (was_empty) {
    *e = Edges{true, LowBound(suffix), HighBound(suffix), 0, 0};
    return;
  }
  if (!e->known) return;
  if (suffix < e->low) {
    e->low = LowBound(suffix);
    e->low_stale = 0;
  }
  if (suffix > e->high) {
    e->high = HighBound(suffix);
    e->high_stale = 0;
  }
}

// A set that is not empty has a first and a last member.
static Status EdgeLost(const rocksdb::Iterator& it) {
  return it.status().ok() ? Status::Corruption("sorted set members missing") : Status::IOError(it.status().ToString());
}

std::unique_ptr<RankIndex> RedisZSet::RankForWrite(std::string_view key, const Metadata& meta, size_t changes) {
  return RankIndex::ForWrite(db_->ctx(), db_->id(), key, meta, changes, ColumnFamily::kZSetScore);
}

Status RedisZSet::FinishRank(std::string_view key, Metadata* meta, RankIndex* incremental) {
  return RankIndex::Finish(db_->ctx(), db_->id(), key, meta, incremental, ColumnFamily::kZSetScore);
}

Status RedisZSet::EnsureRankIndex(std::string_view key, const LoadedKey& lk, Metadata* meta) {
  if (RankLevels(*meta) > 0) return Status::OK();
  Status s = RankIndex::Ensure(db_->ctx(), db_->id(), key, meta, ColumnFamily::kZSetScore);
  if (!s.ok()) return s;
  // Not a modification of the set: no WATCH, keyspace event or dirty count.
  db_->ctx()->Put(ColumnFamily::kMetadata, lk.meta_key, meta->Encode());
  return Status::OK();
}

Status RedisZSet::StoreZSet(std::string_view key, LoadedKey* lk, Metadata* meta, Edges* e, RankIndex* rank) {
  Status s = RefindEdges(key, *meta, e);
  if (!s.ok()) return s;
  s = FinishRank(key, meta, rank);
  if (!s.ok()) return s;
  EncodeEdges(*e, meta);
  db_->StoreCollection(key, lk, *meta);
  return Status::OK();
}

Status RedisZSet::RefindEdges(std::string_view key, const Metadata& meta, Edges* e) {
  if (meta.size == 0) return Status::OK();
  bool low = !e->known || e->low_stale > kMaxStale, high = !e->known || e->high_stale > kMaxStale;
  if (!low && !high) return Status::OK();
  SubkeyBounds bounds(db_->id(), key, meta);
  const std::string& prefix = bounds.prefix();
  auto it = db_->ctx()->NewIterator(ColumnFamily::kZSetScore, bounds.options());
  if (low) {
    it->Seek(e->known ? prefix + e->low : prefix);
    if (!it->Valid()) return EdgeLost(*it);
    e->low = LowBound(std::string_view(it->key().data(), it->key().size()).substr(prefix.size()));
    e->low_stale = 0;
  }
  if (high) {
    if (e->known) {
      it->SeekForPrev(prefix + e->high);
    } else {
      it->SeekToLast();
    }
    if (!it->Valid()) return EdgeLost(*it);
    e->high = HighBound(std::string_view(it->key().data(), it->key().size()).substr(prefix.size()));
    e->high_stale = 0;
  }
  e->known = true;
  return Status::OK();
}

const char* RedisZSet::Encoding(const Metadata& meta) {
  bool skiplist = !meta.payload.empty() && (static_cast<uint8_t>(meta.payload[0]) & kSkiplistFlag);
  return skiplist ? "skiplist" : "listpack";
}

Status RedisZSet::MarkSkiplist(const LoadedKey& lk) {
  Metadata meta;
  Status s = meta.Decode(lk.raw);
  if (!s.ok() || meta.payload.empty() || std::string_view(Encoding(meta)) == "skiplist") return s;
  meta.payload[0] = static_cast<char>(meta.payload[0] | kSkiplistFlag);
  db_->ctx()->Put(ColumnFamily::kMetadata, lk.meta_key, meta.Encode());
  return Status::OK();
}

// Sets the skiplist flag of a new set's metadata if members make it too big for a listpack.
static void MarkSkiplistIfBig(Metadata* meta, const std::vector<ZMember>& members) {
  bool big = members.size() > EncodingLimits::ZSetEntries() ||
             std::any_of(members.begin(), members.end(),
                         [](const ZMember& m) { return m.member.size() > EncodingLimits::ZSetValue(); });
  if (big) meta->payload[0] = static_cast<char>(meta->payload[0] | kSkiplistFlag);
}

Metadata RedisZSet::NewZSet() const {
  Metadata meta;
  meta.type = RedisType::kZSet;
  meta.version = db_->ctx()->storage()->NewVersion();
  meta.payload.assign(1, '\0');
  return meta;
}

Status RedisZSet::LoadZSet(std::string_view key, LoadedKey* lk, Metadata* meta, bool* exists) {
  return db_->LoadCollection(key, RedisType::kZSet, lk, meta, exists);
}

Status RedisZSet::PutMember(std::string_view key, Metadata* meta, Edges* edges, RankIndex* rank,
                            std::string_view member, double score, const std::optional<double>& old) {
  std::string prefix = SubkeyPrefix(db_->id(), key, *meta);
  const bool was_empty = !old && meta->size == 0;
  std::string old_suffix;
  if (old) {
    old_suffix = EncodeScore(*old) + std::string(member);
    db_->ctx()->Delete(ColumnFamily::kZSetScore, prefix + old_suffix);
    edges->low_stale++;
    edges->high_stale++;
  } else {
    meta->size++;
  }
  // Redis converts to a skiplist before it inserts the element that overflows the listpack.
  if (member.size() > EncodingLimits::ZSetValue() || meta->size > EncodingLimits::ZSetEntries()) {
    meta->payload[0] = static_cast<char>(meta->payload[0] | kSkiplistFlag);
  }
  if (score == 0 && std::signbit(score)) {
    // A listpack stores -0 as the integer 0; only a skiplist keeps the sign.
    if (std::string_view(Encoding(*meta)) == "listpack") {
      score = 0.0;
    } else {
      meta->payload[0] = static_cast<char>(meta->payload[0] | kNegativeZeroFlag);
    }
  }
  db_->ctx()->Put(ColumnFamily::kSubkey, prefix + std::string(member), RawScore(score));
  std::string score_key = prefix + EncodeScore(score) + std::string(member);
  db_->ctx()->Put(ColumnFamily::kZSetScore, score_key, "");
  std::string_view suffix = std::string_view(score_key).substr(prefix.size());
  NoteInsert(edges, suffix, was_empty);
  if (rank == nullptr) return Status::OK();
  return old ? rank->Move(old_suffix, suffix) : rank->Insert(suffix);
}

Status RedisZSet::DeleteMember(std::string_view key, const Metadata& meta, Edges* edges, RankIndex* rank,
                               std::string_view member, double score) {
  std::string prefix = SubkeyPrefix(db_->id(), key, meta);
  std::string suffix = EncodeScore(score) + std::string(member);
  db_->ctx()->Delete(ColumnFamily::kSubkey, prefix + std::string(member));
  db_->ctx()->Delete(ColumnFamily::kZSetScore, prefix + suffix);
  edges->low_stale++;
  edges->high_stale++;
  return rank != nullptr ? rank->Remove(suffix) : Status::OK();
}

Status RedisZSet::Add(std::string_view key, const std::vector<ZMember>& members, const AddFlags& f, int64_t* result,
                      std::optional<double>* incr_score, int64_t* written) {
  *result = 0;
  if (written != nullptr) *written = 0;
  incr_score->reset();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) {
    if (f.xx) return Status::OK();
    meta = NewZSet();
    if (f.whole_set) MarkSkiplistIfBig(&meta, members);
  }
  Edges edges = DecodeEdges(meta);
  auto rank = RankForWrite(key, meta, members.size());
  std::string prefix = SubkeyPrefix(db_->id(), key, meta);
  bool changed_meta = false;
  std::string raw;
  for (const auto& m : members) {
    s = db_->ctx()->Get(ColumnFamily::kSubkey, prefix + m.member, &raw);
    if (!s.ok() && !s.IsNotFound()) return s;
    std::optional<double> old;
    if (s.ok()) old = ParseRawScore(raw);
    if (old ? f.nx : f.xx) continue;
    double score = m.score;
    if (f.incr) {
      score = old ? *old + m.score : m.score;  // a new member takes the increment as is (-0 too)
      if (std::isnan(score)) return Status::RedisError("ERR resulting score is not a number (NaN)");
    }
    if (old && ((f.gt && !(score > *old)) || (f.lt && !(score < *old)))) continue;
    if (f.incr) *incr_score = score;
    if (old && *old == score) continue;
    s = PutMember(key, &meta, &edges, rank.get(), m.member, score, old);
    if (!s.ok()) return s;
    changed_meta = true;
    if (written != nullptr) (*written)++;
    if (!old || f.ch) (*result)++;
  }
  return changed_meta ? StoreZSet(key, &lk, &meta, &edges, rank.get()) : Status::OK();
}

Status RedisZSet::Score(std::string_view key, std::string_view member, std::optional<double>* score) {
  score->reset();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  std::string raw;
  s = db_->ctx()->Get(ColumnFamily::kSubkey, SubkeyPrefix(db_->id(), key, meta) + std::string(member),
                      &raw);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  *score = ParseRawScore(raw);
  return Status::OK();
}

Status RedisZSet::Remove(std::string_view key, const std::vector<std::string_view>& members, int64_t* removed) {
  *removed = 0;
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  Edges edges = DecodeEdges(meta);
  auto rank = RankForWrite(key, meta, members.size());
  std::string prefix = SubkeyPrefix(db_->id(), key, meta), raw;
  for (std::string_view m : members) {
    s = db_->ctx()->Get(ColumnFamily::kSubkey, prefix + std::string(m), &raw);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    s = DeleteMember(key, meta, &edges, rank.get(), m, ParseRawScore(raw));
    if (!s.ok()) return s;
    meta.size--;
    (*removed)++;
  }
  return *removed > 0 ? StoreZSet(key, &lk, &meta, &edges, rank.get()) : Status::OK();
}

Status RedisZSet::RemoveMembers(std::string_view key, const std::vector<ZMember>& members, int64_t* removed,
                                End end) {
  *removed = 0;
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || members.empty()) return s;
  Edges edges = DecodeEdges(meta);
  auto rank = RankForWrite(key, meta, members.size());
  for (const auto& m : members) {
    s = DeleteMember(key, meta, &edges, rank.get(), m.member, m.score);
    if (!s.ok()) return s;
    meta.size--;
    (*removed)++;
  }
  if (edges.known && end != End::kNone) {
    // Every member left lies beyond the last one taken.
    std::string past = EncodeScore(members.back().score) + members.back().member;
    if (end == End::kMin) {
      edges.low = LowBound(past);
      edges.low_stale = 0;
    } else {
      edges.high = HighBound(past);
      edges.high_stale = 0;
    }
  }
  return StoreZSet(key, &lk, &meta, &edges, rank.get());
}

Status RedisZSet::Card(std::string_view key, uint64_t* size) {
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  *size = exists ? meta.size : 0;
  return s;
}

Status RedisZSet::Walk(std::string_view key, bool rev, const std::optional<double>& from,
                       const std::function<bool(const ZMember&)>& fn, std::string_view from_member) {
  if (!from) return WalkFrom(key, rev, nullptr, fn);
  std::string target = EncodeScore(*from);
  if (rev && from_member.empty()) {
    target.append(1024, '\xff');  // past every member of that score
  } else {
    target.append(from_member);
  }
  return WalkFrom(key, rev, &target, fn);
}

Status RedisZSet::WalkFrom(std::string_view key, bool rev, const std::string* from,
                           const std::function<bool(const ZMember&)>& fn) {
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  SubkeyBounds bounds(db_->id(), key, meta);
  const std::string& prefix = bounds.prefix();
  rocksdb::ReadOptions ro = bounds.options();
  // Bounded by the live edges, the iterator never visits the tombstones beyond them.
  Edges edges = DecodeEdges(meta);
  std::string lower, upper;
  rocksdb::Slice lower_slice, upper_slice;
  if (edges.known) {
    lower = prefix + edges.low;
    upper = prefix + edges.high;
    upper.push_back('\0');
    lower_slice = lower;
    upper_slice = upper;
    ro.iterate_lower_bound = &lower_slice;
    ro.iterate_upper_bound = &upper_slice;
  }
  auto it = db_->ctx()->NewIterator(ColumnFamily::kZSetScore, ro);
  if (!rev) {
    if (from) {
      std::string target = prefix + *from;
      it->Seek(edges.known ? std::max(target, lower) : target);
    } else {
      it->SeekToFirst();
    }
  } else {
    if (from) {
      std::string past = prefix + *from;
      if (edges.known && past >= upper) {
        it->SeekToLast();
      } else {
        it->SeekForPrev(past);
      }
    } else {
      it->SeekToLast();
    }
  }
  bool negative_zeros = !meta.payload.empty() && (static_cast<uint8_t>(meta.payload[0]) & kNegativeZeroFlag);
  std::string raw;
  for (; it->Valid(); rev ? it->Prev() : it->Next()) {
    rocksdb::Slice k = it->key();
    if (!k.starts_with(prefix) || k.size() < prefix.size() + 8) break;
    ZMember m{std::string(k.data() + prefix.size() + 8, k.size() - prefix.size() - 8),
              DecodeScore(k.data() + prefix.size())};
    if (m.score == 0 && negative_zeros) {
      s = db_->ctx()->Get(ColumnFamily::kSubkey, prefix + m.member, &raw);
      if (!s.ok()) return s;
      m.score = ParseRawScore(raw);
    }
    if (!fn(m)) break;
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return Status::OK();
}

Status RedisZSet::RandomMembers(std::string_view key, uint64_t count, bool repeat, std::vector<ZMember>* out,
                                const std::function<bool(uint64_t)>& fits) {
  out->clear();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || meta.size == 0 || count == 0) return s;
  static thread_local std::mt19937_64 rng(std::random_device{}());
  auto average_length = [](const std::vector<ZMember>& ms) {
    uint64_t len = 0;
    for (const auto& m : ms) len += m.member.size();
    return len / ms.size();
  };
  if (meta.size < kRankBuildAt || (!repeat && count > meta.size / 3)) {
    std::vector<ZMember> all;
    s = All(key, &all);
    if (!s.ok() || all.empty()) return s;
    if (repeat) {
      if (fits && !fits(average_length(all))) return Status::Aborted();
      out->reserve(count);
      for (uint64_t i = 0; i < count; i++) out->push_back(all[rng() % all.size()]);
    } else if (count >= all.size()) {
      std::reverse(all.begin(), all.end());
      *out = std::move(all);
    } else {
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(count);
      *out = std::move(all);
    }
    return Status::OK();
  }
  s = EnsureRankIndex(key, lk, &meta);
  if (!s.ok()) return s;
  std::string prefix = SubkeyPrefix(db_->id(), key, meta);
  RankIndex index(db_->ctx(), prefix, RankLevels(meta));
  bool negative_zeros = static_cast<uint8_t>(meta.payload[0]) & kNegativeZeroFlag;
  std::string suffix, raw;
  auto pick = [&](uint64_t rank) -> Status {
    Status st = index.Select(rank, &suffix);
    if (!st.ok()) return st;
    if (suffix.size() < 8) return Status::Corruption("sorted set rank index: short suffix");
    ZMember m{suffix.substr(8), DecodeScore(suffix.data())};
    if (m.score == 0 && negative_zeros) {
      st = db_->ctx()->Get(ColumnFamily::kSubkey, prefix + m.member, &raw);
      if (!st.ok()) return st;
      m.score = ParseRawScore(raw);
    }
    out->push_back(std::move(m));
    return Status::OK();
  };
  if (repeat) {
    // The reply's size is judged from the first picks' members.
    const uint64_t sample = std::min<uint64_t>(count, 16);
    for (uint64_t i = 0; s.ok() && i < count; i++) {
      if (i == sample && fits && !fits(average_length(*out))) return Status::Aborted();
      s = pick(rng() % meta.size);
    }
    if (s.ok() && count == sample && fits && !fits(average_length(*out))) return Status::Aborted();
    return s;
  }
  // Distinct picks of at most a third of the set: few draws repeat a rank.
  std::set<uint64_t> ranks;
  while (s.ok() && ranks.size() < count) {
    uint64_t rank = rng() % meta.size;
    if (ranks.insert(rank).second) s = pick(rank);
  }
  return s;
}

Status RedisZSet::All(std::string_view key, std::vector<ZMember>* out, bool* exists) {
  out->clear();
  if (exists != nullptr) {
    LoadedKey lk;
    Metadata meta;
    Status s = LoadZSet(key, &lk, &meta, exists);
    if (!s.ok()) return s;
  }
  return Walk(key, false, std::nullopt, [&](const ZMember& m) {
    out->push_back(m);
    return true;
  });
}

Status RedisZSet::RangeByRank(std::string_view key, int64_t start, int64_t stop, bool rev, std::vector<ZMember>* out) {
  out->clear();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || meta.size == 0) return s;
  auto n = static_cast<int64_t>(meta.size);
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0) start = 0;
  if (start > stop || start >= n) return Status::OK();
  if (stop >= n) stop = n - 1;
  if (start >= kRankBuildOffset && meta.size >= kRankBuildAt) {
    s = EnsureRankIndex(key, lk, &meta);
    if (!s.ok()) return s;
  }
  if (RankLevels(meta) > 0 && start >= kRankBuildOffset) {
    // Start at the first member in range, found through the rank index (nearer
    // an end, walking there is as cheap).
    std::string first;
    uint64_t forward = rev ? n - 1 - start : start;
    s = RankIndex(db_->ctx(), SubkeyPrefix(db_->id(), key, meta), RankLevels(meta))
            .Select(forward, &first);
    if (!s.ok()) return s;
    int64_t want = stop - start + 1;
    return WalkFrom(key, rev, &first, [&](const ZMember& m) {
      out->push_back(m);
      return static_cast<int64_t>(out->size()) < want;
    });
  }
  int64_t i = 0;
  return Walk(key, rev, std::nullopt, [&](const ZMember& m) {
    if (i >= start) out->push_back(m);
    return ++i <= stop;
  });
}

static bool AboveMin(double v, const ScoreBound& min) { return min.exclusive ? v > min.value : v >= min.value; }
static bool BelowMax(double v, const ScoreBound& max) { return max.exclusive ? v < max.value : v <= max.value; }

Status RedisZSet::LoadWithRanks(std::string_view key, Metadata* meta, int* levels) {
  *levels = 0;
  LoadedKey lk;
  bool exists;
  Status s = LoadZSet(key, &lk, meta, &exists);
  if (!s.ok() || !exists) return s;
  if (RankLevels(*meta) == 0 && meta->size >= kRankBuildAt) s = EnsureRankIndex(key, lk, meta);
  *levels = RankLevels(*meta);
  return s;
}

static std::string ScoreSuffix(const ZMember& m) { return EncodeScore(m.score) + m.member; }

Status RedisZSet::SkipByRank(std::string_view key, bool rev, const RangeReader& read, int64_t offset, int64_t limit,
                             const std::function<bool(const ZMember&)>& past_end, std::vector<ZMember>* out,
                             bool* used) {
  *used = false;
  std::vector<ZMember> firsts;
  Status s = read(rev, 1, &firsts);
  if (!s.ok() || firsts.empty()) {
    *used = true;  // an empty range (or an error): nothing to walk either
    return s;
  }
  const ZMember& first = firsts[0];
  Metadata meta;
  int levels;
  s = LoadWithRanks(key, &meta, &levels);
  *used = s.ok() && levels > 0;
  if (!*used) return s;
  RankIndex index(db_->ctx(), SubkeyPrefix(db_->id(), key, meta), levels);
  uint64_t rank;
  s = index.CountBelow(ScoreSuffix(first), &rank);
  if (!s.ok()) return s;
  const auto skip = static_cast<uint64_t>(offset);
  if (rev ? skip > rank : rank + skip >= meta.size) return Status::OK();  // past the set's end
  std::string from;
  s = index.Select(rev ? rank - skip : rank + skip, &from);
  if (!s.ok()) return s;
  return WalkFrom(key, rev, &from, [&](const ZMember& m) {
    if (past_end(m) || (limit >= 0 && static_cast<int64_t>(out->size()) >= limit)) return false;
    out->push_back(m);
    return limit < 0 || static_cast<int64_t>(out->size()) < limit;
  });
}

Status RedisZSet::CountBetween(std::string_view key, const ZMember& first, const ZMember& last, uint64_t* n,
                               bool* used) {
  Metadata meta;
  int levels;
  Status s = LoadWithRanks(key, &meta, &levels);
  *used = s.ok() && levels > 0;
  if (!*used) return s;
  RankIndex index(db_->ctx(), SubkeyPrefix(db_->id(), key, meta), levels);
  uint64_t low, high;
  s = index.CountBelow(ScoreSuffix(first), &low);
  if (s.ok()) s = index.CountBelow(ScoreSuffix(last), &high);
  if (s.ok()) *n = high >= low ? high - low + 1 : 0;
  return s;
}

Status RedisZSet::CountRange(std::string_view key, const RangeReader& read, uint64_t* n) {
  std::vector<ZMember> ms, last;
  Status s = read(false, kRankBuildOffset + 1, &ms);
  *n = ms.size();
  if (!s.ok() || ms.size() <= static_cast<size_t>(kRankBuildOffset)) return s;
  s = read(true, 1, &last);
  bool used = false;
  if (s.ok() && !last.empty()) s = CountBetween(key, ms[0], last[0], n, &used);
  if (!s.ok() || used) return s;
  s = read(false, -1, &ms);  // under kRankBuildAt members
  *n = ms.size();
  return s;
}

Status RedisZSet::CountByScore(std::string_view key, const ScoreBound& min, const ScoreBound& max, uint64_t* n) {
  return CountRange(key, [&](bool rev, int64_t limit, std::vector<ZMember>* out) {
    return RangeByScore(key, min, max, rev, 0, limit, out);
  }, n);
}

Status RedisZSet::CountByLex(std::string_view key, const LexBound& min, const LexBound& max, uint64_t* n) {
  return CountRange(key, [&](bool rev, int64_t limit, std::vector<ZMember>* out) {
    return RangeByLex(key, min, max, rev, 0, limit, out);
  }, n);
}

Status RedisZSet::RangeByScore(std::string_view key, const ScoreBound& min, const ScoreBound& max, bool rev,
                               int64_t offset, int64_t limit, std::vector<ZMember>* out) {
  out->clear();
  if (offset >= kRankBuildOffset) {
    auto read = [&](bool r, int64_t l, std::vector<ZMember>* o) { return RangeByScore(key, min, max, r, 0, l, o); };
    bool used;
    auto past_end = [&](const ZMember& m) { return rev ? !AboveMin(m.score, min) : !BelowMax(m.score, max); };
    Status s = SkipByRank(key, rev, read, offset, limit, past_end, out, &used);
    if (!s.ok() || used) return s;
  }
  int64_t skipped = 0;
  std::optional<double> from = rev ? max.value : min.value;
  if (std::isinf(*from)) from.reset();
  return Walk(key, rev, from, [&](const ZMember& m) {
    if (!rev && !AboveMin(m.score, min)) return true;
    if (rev && !BelowMax(m.score, max)) return true;
    if (!rev && !BelowMax(m.score, max)) return false;
    if (rev && !AboveMin(m.score, min)) return false;
    if (skipped < offset) {
      skipped++;
      return true;
    }
    if (limit >= 0 && static_cast<int64_t>(out->size()) >= limit) return false;
    out->push_back(m);
    return limit < 0 || static_cast<int64_t>(out->size()) < limit;
  });
}

static bool LexAboveMin(const std::string& v, const LexBound& min) {
  if (min.neg_inf) return true;
  if (min.pos_inf) return false;
  return min.exclusive ? v > min.value : v >= min.value;
}

static bool LexBelowMax(const std::string& v, const LexBound& max) {
  if (max.pos_inf) return true;
  if (max.neg_inf) return false;
  return max.exclusive ? v < max.value : v <= max.value;
}

Status RedisZSet::RangeByLex(std::string_view key, const LexBound& min, const LexBound& max, bool rev, int64_t offset,
                             int64_t limit, std::vector<ZMember>* out) {
  out->clear();
  if (offset >= kRankBuildOffset) {
    auto read = [&](bool r, int64_t l, std::vector<ZMember>* o) { return RangeByLex(key, min, max, r, 0, l, o); };
    bool used;
    auto past_end = [&](const ZMember& m) { return rev ? !LexAboveMin(m.member, min) : !LexBelowMax(m.member, max); };
    Status s = SkipByRank(key, rev, read, offset, limit, past_end, out, &used);
    if (!s.ok() || used) return s;
  }
  int64_t skipped = 0;
  // Lex ranges assume one score for all members (as in Redis). The walk, in set
  // order, starts at the range's bound among the members of the end's score: the
  // members it passes over would all be filtered out (below min, above max).
  const LexBound& start = rev ? max : min;
  if (rev ? start.neg_inf : start.pos_inf) {
    uint64_t size;  // nothing is in range; WRONGTYPE still is an error
    return Card(key, &size);
  }
  std::optional<double> edge_score;
  if (!start.neg_inf && !start.pos_inf) {
    Status s = Walk(key, rev, std::nullopt, [&](const ZMember& m) {
      edge_score = m.score;
      return false;
    });
    if (!s.ok() || !edge_score) return s;
  }
  return Walk(key, rev, edge_score, [&](const ZMember& m) {
    if (!rev && !LexAboveMin(m.member, min)) return true;
    if (rev && !LexBelowMax(m.member, max)) return true;
    if (!rev && !LexBelowMax(m.member, max)) return false;
    if (rev && !LexAboveMin(m.member, min)) return false;
    if (skipped < offset) {
      skipped++;
      return true;
    }
    if (limit >= 0 && static_cast<int64_t>(out->size()) >= limit) return false;
    out->push_back(m);
    return limit < 0 || static_cast<int64_t>(out->size()) < limit;
  }, edge_score ? std::string_view(start.value) : std::string_view());
}

Status RedisZSet::Rank(std::string_view key, std::string_view member, bool rev, std::optional<int64_t>* rank,
                       double* score) {
  rank->reset();
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = LoadZSet(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  std::string prefix = SubkeyPrefix(db_->id(), key, meta), raw;
  s = db_->ctx()->Get(ColumnFamily::kSubkey, prefix + std::string(member), &raw);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  *score = ParseRawScore(raw);
  if (meta.size >= kRankBuildAt) {
    s = EnsureRankIndex(key, lk, &meta);
    if (!s.ok()) return s;
  }
  if (RankLevels(meta) > 0) {
    uint64_t below;
    s = RankIndex(db_->ctx(), prefix, RankLevels(meta)).CountBelow(EncodeScore(*score) + std::string(member), &below);
    if (!s.ok()) return s;
    *rank = static_cast<int64_t>(rev ? meta.size - 1 - below : below);
    return Status::OK();
  }
  // Forwards even for ZREVRANK: RocksDB steps back several times slower than
  // forwards (ZREVRANK of the lowest of 1000 members: 0.82 ms walking back).
  int64_t i = 0;
  const auto last = static_cast<int64_t>(meta.size) - 1;
  return Walk(key, false, std::nullopt, [&](const ZMember& m) {
    if (m.member == member) {
      *rank = rev ? last - i : i;
      return false;
    }
    i++;
    return true;
  });
}

Status RedisZSet::Store(std::string_view dst, const std::vector<ZMember>& members) {
  LoadedKey lk;
  Status s = db_->Load(dst, &lk);
  if (!s.ok()) return s;
  Metadata meta = NewZSet();
  // Redis builds the result as a skiplist and converts it to a listpack only if small enough.
  MarkSkiplistIfBig(&meta, members);
  Edges edges;
  for (const auto& m : members) {
    s = PutMember(dst, &meta, &edges, nullptr, m.member, m.score, std::nullopt);
    if (!s.ok()) return s;
  }
  return StoreZSet(dst, &lk, &meta, &edges, nullptr);
}

}  // namespace kvrocks
