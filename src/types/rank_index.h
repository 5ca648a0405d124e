// Order statistics over one collection version's keys in a column family, for
// big sorted sets (over the score index: ZRANK, ZREVRANK, ranges by rank,
// ZRANDMEMBER) and big hashes (over the fields: HRANDFIELD) in O(log n) RocksDB
// work instead of a walk from an end.
//
// The index is a tree of counts over the members' keys (column family
// zset_rank, named for its first user; one version's records under its subkey
// prefix, which is also the prefix of the members' keys):
//
//   prefix | level(1) | boundary, bytes inverted  ->  count (8 bytes, big-endian)
//
// Inverted: each level's keys sort from the greatest boundary down (LevelKey),
// so that every lookup a write makes is a forward seek (rank_index.cc).
//
// `boundary` is a member key's suffix (after the prefix: a sorted set's
// order-preserving score(8) member, a hash's field); the
// first record of every level has the empty boundary. A level-1 record counts
// the members in [boundary, next level-1 boundary); a level-k record (k > 1)
// counts the members of its children: the level-(k-1) records from its
// boundary up to the next level-k boundary (every level-k boundary is also a
// level-(k-1) boundary). A level-1 record holds at most 2F members and a
// group at most 2F children (F = fanout): past that a record is split in two,
// its first F members (children) staying. The top level holds at most 2F
// records; past that a level is added above. Records whose count falls to zero
// are deleted (except the first of a level and a record whose boundary the
// level above still uses), so no walk crosses more than 2F records per level
// and 2F members at the bottom, whatever the set's history.
//
// The caller (RedisZSet, RedisHash) holds the key's lock, keeps the number of
// levels in the collection's metadata and calls Insert/Remove after it wrote a
// new member key or deleted one in the same context.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "storage/context.h"
#include "storage/key_encoding.h"

namespace kvrocks {

class RankIndex {
 public:
  static constexpr uint32_t kFanout = 64;
  // A collection of kBuildAt members gets an index when a read needs one (a
  // rank, a random member); writes keep it from then on, and drop it below
  // kDropAt members, where a walk is as cheap. Collections nobody asks that of
  // never pay for one (it roughly halves ZADD's throughput, docs/encoding.md).
  static constexpr uint64_t kBuildAt = 1024;
  static constexpr uint64_t kDropAt = 256;

  // The number of levels of a collection's index as its metadata records it
  // (bits 4-7 of payload[0], below them the type's own flags); 0: no index.
  static int LevelsOf(const Metadata& meta);
  static void SetLevels(Metadata* meta, int levels);

  // The policy above for key (of database db) with this metadata; the prefix is
  // computed only when an index is read or written. ForWrite: the index a write
  // of `changes` members keeps member by member (null when there is none, or
  // when the write changes so many members that Finish rebuilds it once).
  // Finish, after the write (meta's size updated): records the incremental
  // index's levels in meta, or builds, rebuilds or drops it. Ensure: builds the
  // index if meta records none. The caller stores meta.
  static std::unique_ptr<RankIndex> ForWrite(Context* ctx, uint8_t db, std::string_view key, const Metadata& meta,
                                             size_t changes, ColumnFamily members);
  static Status Finish(Context* ctx, uint8_t db, std::string_view key, Metadata* meta, RankIndex* incremental,
                       ColumnFamily members);
  static Status Ensure(Context* ctx, uint8_t db, std::string_view key, Metadata* meta, ColumnFamily members);

  // prefix: the collection version's subkey prefix. levels: 0 when it has no
  // index. members: the column family of the keys counted.
  RankIndex(Context* ctx, std::string prefix, int levels, ColumnFamily members = ColumnFamily::kZSetScore,
            uint32_t fanout = kFanout);
  RankIndex(const RankIndex&) = delete;  // iterators' bounds point into it
  RankIndex& operator=(const RankIndex&) = delete;

  int levels() const { return levels_; }

  // Counts a member whose key suffix was just written.
  Status Insert(std::string_view suffix);
  // Uncounts a member whose key suffix was just deleted.
  Status Remove(std::string_view suffix);
  // Recounts a member whose key suffix changed from `from` to `to`
  // (both entries already written): Remove(from) then Insert(to), or nothing
  // when both lie in one level-1 block.
  Status Move(std::string_view from, std::string_view to);
  // Whether an Insert, Remove or Move found the index inconsistent (a bug, reported
  // in the log): the writer then rebuilds it instead of failing the write.
  bool broken() const { return broken_; }
  // Replaces the index with one built from the member keys as the context sees them.
  Status Build();
  // Deletes every record of the index (levels() becomes 0).
  Status Drop();

  // A boundary as record keys hold it: bytes sorting in the reverse order of
  // the boundaries. ParseKey reads a record key (without its prefix) back:
  // level and boundary; false if malformed.
  static void AppendInverted(std::string* out, std::string_view boundary);
  static bool ParseKey(std::string_view key, int* level, std::string* boundary);

  // *rank: how many members sort before suffix (the member's 0-based rank).
  Status CountBelow(std::string_view suffix, uint64_t* rank);
  // *suffix: the key suffix of the member of 0-based rank `rank` (which must
  // be below the collection's size); *value, if given, the value of its key.
  Status Select(uint64_t rank, std::string* suffix, std::string* value = nullptr);

 private:
  struct Record {
    std::string boundary;
    uint64_t count = 0;
  };
  std::string LevelKey(int level, std::string_view boundary) const;
  std::unique_ptr<rocksdb::Iterator> NewIterator(ColumnFamily cf);
  // Insert, Remove and Move without the broken check.
  Status Add(std::string_view suffix);
  Status Subtract(std::string_view suffix);
  Status Relocate(std::string_view from, std::string_view to);
  // Subtracts one along a path at levels 1..top (its counts are changed); the
  // records above top are left as they are. path[k] is the record containing the
  // member at level k, for k = 1..top and, if top < levels, top + 1.
  Status SubtractPath(std::vector<Record>* path, int top);
  // The record containing suffix at every level (path[k], k = 1..levels).
  Status PathTo(std::string_view suffix, std::vector<Record>* path);
  // The record of `level` containing suffix (greatest boundary <= suffix).
  Status Containing(rocksdb::Iterator* it, int level, std::string_view suffix, Record* out);
  void PutRecord(int level, const std::string& boundary, uint64_t count);
  void DeleteRecord(int level, const std::string& boundary);
  // Splits the level-`level` record r (count already updated) if it is too big,
  // then whatever that overfills above it.
  Status SplitIfFull(int level, const Record& r);
  // The children of the level-`level` record starting at boundary (level > 1),
  // in order.
  Status Children(int level, const std::string& boundary, std::vector<Record>* out);
  // Walks down from the top level to `level`, each level's group being the
  // children of the record chosen above: choose(group) returns the index of the
  // record to go on with (the group's size: none, a corruption). *start: the
  // boundary of the record chosen at `level`; *end, when *bounded, the next
  // greater boundary of that level (where its group's records end).
  Status Descend(int level, const std::function<size_t(const std::vector<Record>&)>& choose, std::string* start,
                 std::string* end, bool* bounded);
  // The records of `level` with boundaries in [start, *end) (end null: no
  // upper end), in boundary order.
  Status Group(int level, const std::string& start, const std::string* end, std::vector<Record>* out);
  // The suffix of the member `skip` places after the first at or past block_start.
  Status MemberAfter(const std::string& block_start, uint64_t skip, std::string* found, std::string* value);
  // How many members lie in [block_start, stop).
  Status CountMembers(const std::string& block_start, std::string_view stop, uint64_t* n);

  Context* ctx_;
  std::string prefix_;
  std::string upper_;  // the first key past the prefix
  rocksdb::Slice lower_slice_, upper_slice_;
  int levels_;
  ColumnFamily members_;
  uint32_t fanout_;
  bool broken_ = false;
};

}  // namespace kvrocks
