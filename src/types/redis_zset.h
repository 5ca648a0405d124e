// The sorted set type. Each member has two entries of the same version:
//   subkey CF:     prefix(version) | member                   -> score (8 bytes, IEEE bits)
//   zset_score CF: prefix(version) | order-preserving score(8) | member -> ""
//   zset_rank CF:  counts for ranks, once a rank is asked of a big set (rank_index.h)
// Point operations (ZADD, ZREM, ZSCORE, ZINCRBY) are O(1) RocksDB operations
// (plus O(log n) for the rank index, when the set has one); ranges by score or lex
// seek the score index and read what they return; ranges by rank and ZRANK go
// through the rank index, or walk from an end on small sets. The metadata
// records where the live members begin and end, so walks from an end do not step
// over the tombstones of earlier pops and removals.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/database.h"
#include "types/encoding_limits.h"

namespace kvrocks {

class RankIndex;

// Order-preserving encoding of a double (for the score index). -0 sorts as 0.
std::string EncodeScore(double score);
double DecodeScore(const char* p);

struct ScoreBound {
  double value = 0;
  bool exclusive = false;
};
struct LexBound {
  std::string value;
  bool exclusive = false;
  bool neg_inf = false;  // "-"
  bool pos_inf = false;  // "+"
};

struct ZMember {
  std::string member;
  double score;
};

class RedisZSet {
 public:
  explicit RedisZSet(Database* db) : db_(db) {}

  // "listpack" up to zset-max-listpack-entries members of at most
  // zset-max-listpack-value bytes (EncodingLimits), "skiplist" past them (sticky).
  static const char* Encoding(const Metadata& meta);
  // Reports the sorted set lk (as the caller loaded it) as "skiplist" from now
  // on, as Redis' SORT converts a sorted set it reads. Not a modification: no
  // WATCH or keyspace event.
  Status MarkSkiplist(const LoadedKey& lk);

  struct AddFlags {
    bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
    // The members of a whole set being created (RDB load, RESTORE): as in Redis'
    // loader, the final size decides the encoding, not the order of insertion.
    bool whole_set = false;
  };
  // ZADD. *result: added (or changed with CH) count; with INCR *incr_score is the
  // new score, or empty if the member was not updated (NX/XX/GT/LT). *written
  // (if given): members added or whose score changed (Redis' dirty count).
  Status Add(std::string_view key, const std::vector<ZMember>& members, const AddFlags& flags, int64_t* result,
             std::optional<double>* incr_score, int64_t* written = nullptr);
  Status Score(std::string_view key, std::string_view member, std::optional<double>* score);
  Status Remove(std::string_view key, const std::vector<std::string_view>& members, int64_t* removed);
  Status Card(std::string_view key, uint64_t* size);

  // Visits members in score order (reverse if rev) starting at the lowest (highest)
  // score >= from (<= from); fn returns false to stop. With from_member too, the
  // walk starts at (from, from_member): the first member >= it (the last <= it).
  Status Walk(std::string_view key, bool rev, const std::optional<double>& from,
              const std::function<bool(const ZMember&)>& fn, std::string_view from_member = {});
  // Members with rank in [start, stop] (Redis indexes, negative from the end).
  Status RangeByRank(std::string_view key, int64_t start, int64_t stop, bool rev, std::vector<ZMember>* out);
  Status RangeByScore(std::string_view key, const ScoreBound& min, const ScoreBound& max, bool rev, int64_t offset,
                      int64_t limit, std::vector<ZMember>* out);
  Status RangeByLex(std::string_view key, const LexBound& min, const LexBound& max, bool rev, int64_t offset,
                    int64_t limit, std::vector<ZMember>* out);
  // ZCOUNT and ZLEXCOUNT: how many members a range holds. Past kRankBuildOffset of
  // them, from the ranks of its first and last members when the set has (or, big
  // enough, gets) a rank index, as Redis counts: O(log n), not O(members).
  Status CountByScore(std::string_view key, const ScoreBound& min, const ScoreBound& max, uint64_t* n);
  Status CountByLex(std::string_view key, const LexBound& min, const LexBound& max, uint64_t* n);
  // Rank of member (0-based), empty if absent.
  Status Rank(std::string_view key, std::string_view member, bool rev, std::optional<int64_t>* rank,
              double* score);
  // Which end of the set a run of members was taken from, if any.
  enum class End { kNone, kMin, kMax };
  // Removes the given members (from a range query) and returns how many. With
  // kMin (kMax) they are the set's lowest (highest) members, in walk order, as
  // pops take them.
  Status RemoveMembers(std::string_view key, const std::vector<ZMember>& members, int64_t* removed,
                       End end = End::kNone);
  // Replaces dst with members (deleting it when empty).
  Status Store(std::string_view dst, const std::vector<ZMember>& members);
  // All members (score order).
  Status All(std::string_view key, std::vector<ZMember>* out, bool* exists = nullptr);
  // ZRANDMEMBER: up to count distinct members picked at random or, with repeat,
  // count independent picks. Distinct picks of the whole set (a count of at least
  // its size) come from the greatest member down, as Redis' iterator gives them. A
  // set of fewer than kRankBuildAt members, or distinct picks of more than a third
  // of one (where Redis copies the set too), is read whole and sampled; otherwise
  // each pick selects a random rank through the set's rank index, built the first
  // time as for ZRANK (the caller holds the key's lock): O(log n) a pick. With
  // repeat, fits(average member length, of the set or of the first picks) is asked
  // first: if it says no, nothing more is picked and Aborted is returned.
  Status RandomMembers(std::string_view key, uint64_t count, bool repeat, std::vector<ZMember>* out,
                       const std::function<bool(uint64_t)>& fits = nullptr);
  Status LoadZSet(std::string_view key, LoadedKey* lk, Metadata* meta, bool* exists);

 private:
  struct Edges;  // where the live members begin and end (redis_zset.cc)
  static Edges DecodeEdges(const Metadata& meta);
  static void EncodeEdges(const Edges& e, Metadata* meta);
  static void NoteInsert(Edges* e, std::string_view suffix, bool was_empty);
  // Finds a stale (or unknown) edge again, once per kMaxStale removals.
  Status RefindEdges(std::string_view key, const Metadata& meta, Edges* e);
  // Stores meta with its edges (refound first if stale).
  // Stores meta with its edges (refound first if stale) and its rank index:
  // kept member by member in `rank` (RankForWrite), else built, rebuilt or
  // dropped here as the set's size asks.
  // Walk from a score-index suffix: the first entry >= *from (rev: the last <=
  // *from), or from an end if from is null.
  Status WalkFrom(std::string_view key, bool rev, const std::string* from,
                  const std::function<bool(const ZMember&)>& fn);
  Status StoreZSet(std::string_view key, LoadedKey* lk, Metadata* meta, Edges* e, RankIndex* rank);
  // The set's rank index, for a write of `changes` members to keep member by
  // member; null when there is none or the write is better off rebuilding it.
  std::unique_ptr<RankIndex> RankForWrite(std::string_view key, const Metadata& meta, size_t changes);
  Status FinishRank(std::string_view key, Metadata* meta, RankIndex* incremental);
  // Builds the set's rank index if it has none. The caller holds the key's
  // lock (the rank commands take it: kCmdLocksKeys).
  Status EnsureRankIndex(std::string_view key, const LoadedKey& lk, Metadata* meta);
  // Loads key's set with its rank index, built first if the set has none and has
  // kRankBuildAt members or more; *levels is 0 when it still has none.
  Status LoadWithRanks(std::string_view key, Metadata* meta, int* levels);

  // A range's members from its near end (rev: from its far end), up to limit (-1:
  // all): RangeByScore or RangeByLex with the range's bounds.
  using RangeReader = std::function<Status(bool rev, int64_t limit, std::vector<ZMember>* out)>;
  // The count of ZCOUNT and ZLEXCOUNT (see CountByScore).
  Status CountRange(std::string_view key, const RangeReader& read, uint64_t* n);
  // A range read that skips offset (kRankBuildOffset or more) members from the
  // range's first member in walk order (read(rev, 1)): the rank index finds the
  // member offset places on (O(log n)), from which the walk goes on while
  // !past_end, up to limit. *used is false when the set has no rank index (the
  // caller walks instead).
  Status SkipByRank(std::string_view key, bool rev, const RangeReader& read, int64_t offset, int64_t limit,
                    const std::function<bool(const ZMember&)>& past_end, std::vector<ZMember>* out, bool* used);
  // Members from first to last (score order, both in the set) through the rank
  // index; *used as for SkipByRank.
  Status CountBetween(std::string_view key, const ZMember& first, const ZMember& last, uint64_t* n, bool* used);

  Metadata NewZSet() const;
  Status PutMember(std::string_view key, Metadata* meta, Edges* edges, RankIndex* rank, std::string_view member,
                   double score, const std::optional<double>& old);
  Status DeleteMember(std::string_view key, const Metadata& meta, Edges* edges, RankIndex* rank,
                      std::string_view member, double score);

  Database* db_;
};

}  // namespace kvrocks
