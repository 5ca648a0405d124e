#include "types/rank_index.h"

#include <algorithm>
#include <utility>

#include <glog/logging.h>
#include <rocksdb/perf_context.h>

#include "common/encoding.h"
#include "storage/key_encoding.h"
#include "storage/storage.h"
#include "storage/tombstone_compactor.h"

namespace kvrocks {

namespace {

Status IteratorError(const rocksdb::Iterator& it, const char* what) {
  if (!it.status().ok()) return Status::IOError(it.status().ToString());
  return Status::Corruption(std::string("rank index: ") + what);
}

// Rank records are overwritten by every write to their set, and a walk across
// them steps over each older version a memtable or an L0 file still keeps
// (ZRANK on a 1M-member set right after writes to it ran 2-3 times slower than
// on compacted records, bench/RESULTS.md session 47). RocksDB counts those
// versions in internal_key_skipped_count, besides one entry per Next(). A walk
// that stepped over more than kHiddenVersions asks for the set's records to be
// compacted, which flushes the family's memtable and merges the versions
// (TombstoneCompactor: one range at a time, at most one a second, so a set
// written and ranked all the time costs one small compaction a second).
class WalkWatch {
 public:
  static constexpr uint64_t kHiddenVersions = 32;

  // lower, upper: the set's records; they outlive the watch.
  WalkWatch(Context* ctx, const std::string& lower, const std::string& upper)
      : ctx_(ctx), lower_(lower), upper_(upper), before_(rocksdb::get_perf_context()->internal_key_skipped_count) {}
  WalkWatch(const WalkWatch&) = delete;
  WalkWatch& operator=(const WalkWatch&) = delete;
  ~WalkWatch() {
    uint64_t skipped = rocksdb::get_perf_context()->internal_key_skipped_count - before_;
    TombstoneCompactor* compactor = ctx_->storage()->tombstone_compactor();
    if (skipped > steps_ + kHiddenVersions && compactor != nullptr) {
      compactor->Request(ctx_->storage()->cf(ColumnFamily::kZSetRank), lower_, upper_);
    }
  }
  // Called for every Next() of the walk.
  void Step() { steps_++; }

 private:
  PerfCountScope counting_;  // before before_: the count must run from there on
  Context* ctx_;
  const std::string& lower_;
  const std::string& upper_;
  uint64_t before_;
  uint64_t steps_ = 0;
};

}  // namespace

static constexpr int kLevelsShift = 4;

int RankIndex::LevelsOf(const Metadata& meta) {
  return meta.payload.empty() ? 0 : static_cast<uint8_t>(meta.payload[0]) >> kLevelsShift;
}

void RankIndex::SetLevels(Metadata* meta, int levels) {
  auto flags = static_cast<uint8_t>(meta->payload[0]) & ((1 << kLevelsShift) - 1);
  meta->payload[0] = static_cast<char>(flags | (levels << kLevelsShift));
}

std::unique_ptr<RankIndex> RankIndex::ForWrite(Context* ctx, uint8_t db, std::string_view key, const Metadata& meta,
                                               size_t changes, ColumnFamily members) {
  int levels = LevelsOf(meta);
  if (levels == 0 || changes > std::max<uint64_t>(64, meta.size / 8)) return nullptr;
  return std::make_unique<RankIndex>(ctx, SubkeyPrefix(db, key, meta), levels, members);
}

Status RankIndex::Finish(Context* ctx, uint8_t db, std::string_view key, Metadata* meta, RankIndex* incremental,
                         ColumnFamily members) {
  // An emptied collection's records go with its version (the compaction filter).
  if (meta->size == 0) return Status::OK();
  int levels = incremental != nullptr ? incremental->levels() : LevelsOf(*meta);
  bool wanted = meta->size >= (levels > 0 ? kDropAt : kBuildAt);
  if (incremental != nullptr && wanted && !incremental->broken()) {
    SetLevels(meta, levels);
    return Status::OK();
  }
  if (levels == 0) return Status::OK();  // built on a read that needs it (Ensure)
  RankIndex index(ctx, SubkeyPrefix(db, key, *meta), levels, members);
  Status s = wanted ? index.Build() : index.Drop();
  SetLevels(meta, index.levels());
  return s;
}

Status RankIndex::Ensure(Context* ctx, uint8_t db, std::string_view key, Metadata* meta, ColumnFamily members) {
  if (LevelsOf(*meta) > 0) return Status::OK();
  RankIndex index(ctx, SubkeyPrefix(db, key, *meta), 0, members);
  Status s = index.Build();
  if (s.ok()) SetLevels(meta, index.levels());
  return s;
}

RankIndex::RankIndex(Context* ctx, std::string prefix, int levels, ColumnFamily members, uint32_t fanout)
    : ctx_(ctx), prefix_(std::move(prefix)), levels_(levels), members_(members), fanout_(fanout) {
  upper_ = PrefixSuccessor(prefix_);
  lower_slice_ = prefix_;
  upper_slice_ = upper_;
}

// A boundary's key inside its level: the bytes complemented, 0xff (from 0x00)
// escaped as 0xff 0x00, and 0xff 0xff at the end, so that keys sort in the
// reverse order of their boundaries ("" last).
void RankIndex::AppendInverted(std::string* out, std::string_view boundary) {
  for (char c : boundary) {
    out->push_back(static_cast<char>(~c));
    if (c == 0) out->push_back('\0');
  }
  out->append("\xff\xff", 2);
}

std::string RankIndex::LevelKey(int level, std::string_view boundary) const {
  std::string k;
  k.reserve(prefix_.size() + 3 + boundary.size());
  k.append(prefix_);
  k.push_back(static_cast<char>(level));
  AppendInverted(&k, boundary);
  return k;
}

std::unique_ptr<rocksdb::Iterator> RankIndex::NewIterator(ColumnFamily cf) {
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice_;
  ro.iterate_upper_bound = &upper_slice_;
  return ctx_->NewIterator(cf, ro);
}

bool RankIndex::ParseKey(std::string_view key, int* level, std::string* boundary) {
  if (key.size() < 3) return false;
  *level = static_cast<uint8_t>(key[0]);
  boundary->clear();
  for (size_t i = 1; i + 1 < key.size(); i++) {
    if (static_cast<uint8_t>(key[i]) != 0xff) {
      boundary->push_back(static_cast<char>(~key[i]));
    } else if (static_cast<uint8_t>(key[++i]) == 0xff) {
      return i + 1 == key.size();
    } else {
      boundary->push_back('\0');
    }
  }
  return false;
}

// Whether it stands on a record of level; if so, *boundary and *count are its record.
static bool ReadRecord(const rocksdb::Iterator& it, size_t prefix_size, int level, std::string* boundary,
                       uint64_t* count) {
  if (!it.Valid() || it.value().size() != 8) return false;
  int found;
  std::string_view k(it.key().data(), it.key().size());
  if (!RankIndex::ParseKey(k.substr(prefix_size), &found, boundary) || found != level) return false;
  *count = DecodeBE64(it.value().data());
  return true;
}

// Records of a level sort from the greatest boundary down, so the record
// containing a suffix is the first at or after the suffix's own key: a
// forward seek, which stops at a record's newest version. (Counts change with
// every write and an LSM keeps each overwrite until a flush; a SeekForPrev
// steps back over all of them, a walk in boundary order would too.)
Status RankIndex::Containing(rocksdb::Iterator* it, int level, std::string_view suffix, Record* out) {
  it->Seek(LevelKey(level, suffix));
  if (!ReadRecord(*it, prefix_.size(), level, &out->boundary, &out->count)) {
    return IteratorError(*it, "no record contains a member");
  }
  return Status::OK();
}

void RankIndex::PutRecord(int level, const std::string& boundary, uint64_t count) {
  std::string v;
  PutBE64(&v, count);
  ctx_->Put(ColumnFamily::kZSetRank, LevelKey(level, boundary), v);
}

void RankIndex::DeleteRecord(int level, const std::string& boundary) {
  ctx_->Delete(ColumnFamily::kZSetRank, LevelKey(level, boundary));
}

// An index found inconsistent is not kept up: the writer rebuilds it
// (RedisZSet::FinishRank) rather than refusing writes to the set.
static Status NoteBroken(const Status& s, bool* broken) {
  if (!s.IsCorruption()) return s;
  LOG(ERROR) << s.message() << "; the index will be rebuilt";
  *broken = true;
  return Status::OK();
}

Status RankIndex::Insert(std::string_view suffix) {
  if (levels_ == 0 || broken_) return Status::OK();
  return NoteBroken(Add(suffix), &broken_);
}

Status RankIndex::Remove(std::string_view suffix) {
  if (levels_ == 0 || broken_) return Status::OK();
  return NoteBroken(Subtract(suffix), &broken_);
}

Status RankIndex::Move(std::string_view from, std::string_view to) {
  if (levels_ == 0 || broken_) return Status::OK();
  return NoteBroken(Relocate(from, to), &broken_);
}

Status RankIndex::Relocate(std::string_view from, std::string_view to) {
  // Both paths bottom up through one iterator, only as far as the lowest level
  // where they meet (a record containing both members): every count above it stays
  // as it is. The greater member is sought first in each level (its key sorts
  // first: boundaries are inverted), so the iterator only moves forward, and the
  // record it finds holds the other member too when its boundary is not above
  // that member: then the paths meet without a second seek. A member moving
  // within its level-1 block (a small ZINCRBY, mostly) costs one seek and changes
  // no count.
  std::vector<Record> old_path(levels_ + 2), new_path(levels_ + 2);
  int top = levels_;
  {
    auto it = NewIterator(ColumnFamily::kZSetRank);
    const bool to_first = to > from;
    const std::string_view first = to_first ? to : from, second = to_first ? from : to;
    std::vector<Record>& first_path = to_first ? new_path : old_path;
    std::vector<Record>& second_path = to_first ? old_path : new_path;
    for (int k = 1; k <= levels_; k++) {
      Status s = Containing(it.get(), k, first, &first_path[k]);
      if (!s.ok()) return s;
      if (second >= first_path[k].boundary) {
        second_path[k] = first_path[k];
        top = k - 1;
        break;
      }
      s = Containing(it.get(), k, second, &second_path[k]);
      if (!s.ok()) return s;
    }
  }
  if (top == 0) return Status::OK();
  // The records of new_path below top are not on old_path, nor in a group
  // SubtractPath empties (that group would contain `to` too).
  Status s = SubtractPath(&old_path, top);
  if (!s.ok()) return s;
  for (int k = 1; k <= top; k++) PutRecord(k, new_path[k].boundary, ++new_path[k].count);
  return SplitIfFull(1, new_path[1]);
}

Status RankIndex::PathTo(std::string_view suffix, std::vector<Record>* path) {
  auto it = NewIterator(ColumnFamily::kZSetRank);
  path->assign(levels_ + 2, Record{});
  for (int k = 1; k <= levels_; k++) {
    Status s = Containing(it.get(), k, suffix, &(*path)[k]);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status RankIndex::Add(std::string_view suffix) {
  std::vector<Record> path;
  Status s = PathTo(suffix, &path);
  if (!s.ok()) return s;
  for (int k = 1; k <= levels_; k++) PutRecord(k, path[k].boundary, ++path[k].count);
  return SplitIfFull(1, path[1]);
}

Status RankIndex::Subtract(std::string_view suffix) {
  std::vector<Record> path;
  Status s = PathTo(suffix, &path);
  return s.ok() ? SubtractPath(&path, levels_) : s;
}

Status RankIndex::SubtractPath(std::vector<Record>* records, int top) {
  std::vector<Record>& path = *records;
  for (int k = 1; k <= top; k++) {
    if (path[k].count == 0) return Status::Corruption("rank index: count below zero");
  }
  // Top down, so that a record emptied above no longer keeps its boundary below.
  // An emptied record's group is empty: the records below with its boundary
  // (its first child, that child's first child ...) are empty too and go with it.
  std::vector<std::string> emptied;
  bool deleted_above = false;
  for (int k = top; k >= 1; k--) {
    Record& r = path[k];
    r.count--;
    bool used_above = k < levels_ && path[k + 1].boundary == r.boundary && !deleted_above;
    for (const auto& e : emptied) {
      if (e != r.boundary) DeleteRecord(k, e);
    }
    if (r.count == 0 && !r.boundary.empty() && !used_above) {
      DeleteRecord(k, r.boundary);
      if (std::find(emptied.begin(), emptied.end(), r.boundary) == emptied.end()) emptied.push_back(r.boundary);
      deleted_above = true;
    } else {
      PutRecord(k, r.boundary, r.count);
      deleted_above = false;
    }
  }
  return Status::OK();
}

Status RankIndex::SplitIfFull(int level, const Record& r) {
  const uint64_t full = 2ULL * fanout_;
  std::string cut;
  uint64_t first = 0;  // members staying in r
  if (level == 1) {
    if (r.count <= full) return Status::OK();
    Status s = MemberAfter(r.boundary, fanout_, &cut, nullptr);
    if (!s.ok()) return s;
    first = fanout_;
  } else {
    std::vector<Record> children;
    Status s = Children(level, r.boundary, &children);
    if (!s.ok()) return s;
    if (children.size() <= full) return Status::OK();
    for (uint32_t i = 0; i < fanout_; i++) first += children[i].count;
    cut = children[fanout_].boundary;
  }
  PutRecord(level, r.boundary, first);
  PutRecord(level, cut, r.count - first);
  // The level above has one more child.
  if (level == levels_) {
    std::vector<Record> top;
    Status s = Group(level, "", nullptr, &top);
    if (!s.ok() || top.size() <= full) return s;
    if (levels_ == 15) return Status::OK();  // the metadata keeps 4 bits; 128^15 members are never reached
    uint64_t total = 0;
    for (const auto& t : top) total += t.count;
    levels_++;
    PutRecord(levels_, "", total);
    return SplitIfFull(levels_, Record{"", total});
  }
  Record parent;
  auto it = NewIterator(ColumnFamily::kZSetRank);
  Status s = Containing(it.get(), level + 1, r.boundary, &parent);
  it.reset();
  if (!s.ok()) return s;
  return SplitIfFull(level + 1, parent);
}

Status RankIndex::Children(int level, const std::string& boundary, std::vector<Record>* out) {
  // The group ends at the next greater boundary of `level`, found from the top
  // down. (The record before this one in key order has that boundary too; a
  // backward step would find it, but the family was once updated in place,
  // where RocksDB cannot iterate backwards, and this works as well.) Splits only.
  std::string start, end;
  bool bounded = false;
  Status s = Descend(
      level,
      [&boundary](const std::vector<Record>& group) {
        size_t i = 0;
        while (i + 1 < group.size() && group[i + 1].boundary <= boundary) i++;
        return group.empty() || group[i].boundary > boundary ? group.size() : i;
      },
      &start, &end, &bounded);
  if (!s.ok()) return s;
  if (start != boundary) return Status::Corruption("rank index: no record at a boundary");
  return Group(level - 1, boundary, bounded ? &end : nullptr, out);
}

Status RankIndex::Descend(int level, const std::function<size_t(const std::vector<Record>&)>& choose,
                              std::string* start, std::string* end, bool* bounded) {
  start->clear();
  *bounded = false;
  std::vector<Record> group;
  for (int k = levels_; k >= level; k--) {
    Status s = Group(k, *start, *bounded ? end : nullptr, &group);
    if (!s.ok()) return s;
    size_t i = choose(group);
    if (i >= group.size()) return Status::Corruption("rank index: no record to descend to");
    if (i + 1 < group.size()) {
      *end = group[i + 1].boundary;
      *bounded = true;
    }
    *start = group[i].boundary;
  }
  return Status::OK();
}

Status RankIndex::Group(int level, const std::string& start, const std::string* end, std::vector<Record>* out) {
  out->clear();
  auto it = NewIterator(ColumnFamily::kZSetRank);
  WalkWatch watch(ctx_, prefix_, upper_);
  it->Seek(end != nullptr ? LevelKey(level, *end) : prefix_ + static_cast<char>(level));
  for (; it->Valid(); it->Next(), watch.Step()) {
    Record c;
    if (!ReadRecord(*it, prefix_.size(), level, &c.boundary, &c.count)) break;
    if (end != nullptr && c.boundary >= *end) continue;
    if (c.boundary < start) break;
    out->push_back(std::move(c));
  }
  if (!it->status().ok()) return IteratorError(*it, "");
  std::reverse(out->begin(), out->end());
  return Status::OK();
}

Status RankIndex::MemberAfter(const std::string& block_start, uint64_t skip, std::string* found,
                              std::string* value) {
  auto it = NewIterator(members_);
  uint64_t i = 0;
  for (it->Seek(prefix_ + block_start); it->Valid(); it->Next(), i++) {
    if (i == skip) {
      found->assign(it->key().data() + prefix_.size(), it->key().size() - prefix_.size());
      if (value != nullptr) value->assign(it->value().data(), it->value().size());
      return Status::OK();
    }
  }
  return IteratorError(*it, "fewer members than counted");
}

Status RankIndex::CountMembers(const std::string& block_start, std::string_view stop, uint64_t* n) {
  *n = 0;
  auto it = NewIterator(members_);
  std::string end = prefix_ + std::string(stop);
  for (it->Seek(prefix_ + block_start); it->Valid() && it->key().compare(end) < 0; it->Next()) (*n)++;
  if (!it->status().ok()) return IteratorError(*it, "");
  return Status::OK();
}

Status RankIndex::CountBelow(std::string_view suffix, uint64_t* rank) {
  *rank = 0;
  std::string start;  // the group of each level: the boundary of the record containing suffix above
  {
    auto it = NewIterator(ColumnFamily::kZSetRank);
    WalkWatch watch(ctx_, prefix_, upper_);
    for (int k = levels_; k >= 1; k--) {
      // From the record containing suffix down to the group's start: the records before it.
      Record containing;
      Status s = Containing(it.get(), k, suffix, &containing);
      if (!s.ok()) return s;
      if (containing.boundary != start) {
        // Keys of a level sort from the greatest boundary down, so the group's
        // records end at the key of its first one; compared as keys, not decoded.
        const std::string start_key = LevelKey(k, start);
        for (it->Next(), watch.Step(); it->Valid(); it->Next(), watch.Step()) {
          rocksdb::Slice key = it->key(), value = it->value();
          if (value.size() != 8 || key.size() <= prefix_.size() || static_cast<uint8_t>(key[prefix_.size()]) != k) {
            return IteratorError(*it, "a group without its first record");
          }
          *rank += DecodeBE64(value.data());
          if (key.compare(start_key) >= 0) break;
        }
        if (!it->Valid()) return IteratorError(*it, "a group without its first record");
      }
      start = std::move(containing.boundary);
    }
  }
  uint64_t in_block;
  Status s = CountMembers(start, suffix, &in_block);
  *rank += in_block;
  return s;
}

Status RankIndex::Select(uint64_t rank, std::string* suffix, std::string* value) {
  // The top level whole: its total is the set's size, which the index is not given.
  std::vector<Record> top;
  Status s = Group(levels_, "", nullptr, &top);
  if (!s.ok()) return s;
  size_t i = 0;
  for (; i < top.size() && rank >= top[i].count; i++) rank -= top[i].count;
  if (i == top.size()) return Status::Corruption("rank index: no record to descend to");
  // Below it, keys rather than boundaries: the chosen record's key, and the key
  // of the next greater boundary of its level (empty: none). A boundary's key
  // one level down differs only in the level byte.
  std::string chosen = LevelKey(levels_, top[i].boundary);
  std::string end = i + 1 < top.size() ? LevelKey(levels_, top[i + 1].boundary) : std::string();
  uint64_t count = top[i].count;
  if (levels_ > 1) {
    auto it = NewIterator(ColumnFamily::kZSetRank);
    WalkWatch watch(ctx_, prefix_, upper_);
    for (int k = levels_ - 1; k >= 1; k--) {
      chosen[prefix_.size()] = static_cast<char>(k);
      if (!end.empty()) end[prefix_.size()] = static_cast<char>(k);
      // The chosen record's children from the greatest boundary down: the ranks
      // past rank are counted from the record's own count, so the walk stops at
      // the child holding rank (on average half way) instead of reading them all.
      if (end.empty()) {
        it->Seek(prefix_ + static_cast<char>(k));
      } else {
        it->Seek(end);
        if (it->Valid() && it->key() == rocksdb::Slice(end)) it->Next(), watch.Step();
      }
      uint64_t above = 0;
      bool found = false;
      for (; it->Valid(); it->Next(), watch.Step()) {
        rocksdb::Slice key = it->key(), value = it->value();
        if (value.size() != 8 || key.size() <= prefix_.size() || static_cast<uint8_t>(key[prefix_.size()]) != k) break;
        const uint64_t c = DecodeBE64(value.data());
        if (above + c > count) break;
        if (count - above - c <= rank) {
          rank -= count - above - c;
          count = c;
          chosen.assign(key.data(), key.size());
          found = true;
          break;
        }
        above += c;
        end.assign(key.data(), key.size());
        if (key.compare(chosen) >= 0) break;  // the group's first record, and rank not reached
      }
      if (!found) return IteratorError(*it, "children that do not add up to their record");
    }
  }
  int level;
  std::string block;
  if (!ParseKey(std::string_view(chosen).substr(prefix_.size()), &level, &block)) {
    return Status::Corruption("rank index: a malformed record key");
  }
  return MemberAfter(block, rank, suffix, value);
}

Status RankIndex::Drop() {
  std::vector<std::string> keys;
  {
    auto it = NewIterator(ColumnFamily::kZSetRank);
    for (it->Seek(prefix_); it->Valid(); it->Next()) keys.emplace_back(it->key().data(), it->key().size());
    if (!it->status().ok()) return IteratorError(*it, "");
  }
  for (const auto& k : keys) ctx_->Delete(ColumnFamily::kZSetRank, k);
  levels_ = 0;
  return Status::OK();
}

Status RankIndex::Build() {
  Status s = Drop();
  if (!s.ok()) return s;
  // Level 1: blocks of F members, half full, so that inserts find room.
  std::vector<Record> level;
  {
    auto it = NewIterator(members_);
    uint64_t i = 0;
    for (it->Seek(prefix_); it->Valid(); it->Next(), i++) {
      if (i % fanout_ == 0) {
        level.push_back(Record{i == 0 ? std::string() : std::string(it->key().data() + prefix_.size(),
                                                                     it->key().size() - prefix_.size()),
                               0});
      }
      level.back().count++;
    }
    if (!it->status().ok()) return IteratorError(*it, "");
  }
  if (level.empty()) return Status::OK();
  for (int k = 1;; k++) {
    for (const auto& r : level) PutRecord(k, r.boundary, r.count);
    levels_ = k;
    if (level.size() <= 2ULL * fanout_ || k == 15) break;
    std::vector<Record> above;
    for (size_t i = 0; i < level.size(); i++) {
      if (i % fanout_ == 0) above.push_back(Record{level[i].boundary, 0});
      above.back().count += level[i].count;
    }
    level = std::move(above);
  }
  return Status::OK();
}

}  // namespace kvrocks
