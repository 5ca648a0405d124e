// The set type: metadata (version, size, encoding flag) plus one subkey per
// member, `prefix(version) | member -> ""`. Membership tests are point reads.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "types/database.h"
#include "types/encoding_limits.h"

namespace kvrocks {

class RedisSet {
 public:
  explicit RedisSet(Database* db) : db_(db) {}

  // Redis 7.0: a set of integers with at most set-max-intset-entries members is an
  // "intset", anything else a "hashtable" (sticky, as in Redis).
  static const char* Encoding(const Metadata& meta);
  // Bytes per value of the set's intset: the most any member has needed so far
  // (2, 4 or 8; 2 for a set written before kvrocks recorded it).
  static int IntsetWidth(const Metadata& meta);
  // Records that key's intset takes at least `width` bytes a value (RESTORE of a
  // payload whose intset is wider than its members need).
  Status WidenIntset(std::string_view key, int width);

  Status Add(std::string_view key, const std::vector<std::string_view>& members, int64_t* added);
  Status Remove(std::string_view key, const std::vector<std::string_view>& members, int64_t* removed);
  Status Card(std::string_view key, uint64_t* size);
  Status IsMember(std::string_view key, const std::vector<std::string_view>& members, std::vector<bool>* result);
  // All members: numeric order for an intset, else storage (hash) order; *exists=false if absent.
  Status Members(std::string_view key, std::vector<std::string>* members, bool* exists = nullptr);
  // Moves member from src to dst; *moved tells if src had it.
  Status Move(std::string_view src, std::string_view dst, std::string_view member, bool* moved);
  // Replaces dst with members (deleting it when empty). Its encoding is that of a
  // Redis set that had `built` added one by one (those not in members removed
  // again): SDIFFSTORE's second algorithm starts from the whole first set. With
  // built null, members were added.
  Status Store(std::string_view dst, const std::vector<std::string>& members,
               const std::vector<std::string>* built = nullptr);
  // Members after position `after` (an opaque position from *next), about count of
  // them, matching pattern (SSCAN). *next is "" when the set is exhausted.
  Status Scan(std::string_view key, const std::string& after, size_t count, std::string_view pattern,
              std::vector<std::string>* members, std::string* next);
  // SPOP: removes and returns up to count members. A count of at least the size
  // takes the whole set, in the order Redis answers it then (FitsIntset: numeric
  // order, else storage order). Otherwise members come in hash order
  // from a cursor kept in the metadata (it starts at a random point), so a pop
  // never crawls over the tombstones of earlier pops: draining a set is O(1)
  // per member. The order is as unpredictable as the hash, but consecutive pops
  // are not independent draws as in Redis.
  Status Pop(std::string_view key, uint64_t count, std::vector<std::string>* out);
  // SRANDMEMBER: up to count distinct members chosen at random or, with repeat,
  // count independent picks. Distinct picks of the whole set (a count of at least
  // its size) come in the order of Members, as Redis answers them. A small set (or
  // a large share of one) is read whole
  // and sampled uniformly. Otherwise each pick seeks to a random point of the hash
  // order and takes one of the next kRandomWindow members (wrapping around): as
  // Redis' fair random key samples a few buckets, this evens out the unequal hash
  // gaps a single seek would favour, without reading the set. With repeat and a
  // set read whole, fits(average member length) is asked first: if it says no,
  // nothing is picked and Aborted is returned.
  Status RandomMembers(std::string_view key, uint64_t count, bool repeat, std::vector<std::string>* out,
                       const std::function<bool(uint64_t)>& fits = nullptr);
  static constexpr uint64_t kRandomReadWhole = 128;
  static constexpr uint64_t kRandomWindow = 32;
  static void SortIntset(std::vector<std::string>* members);
  // Whether Redis would hold members as an intset had it added them one by one to
  // an empty set (its SUNION, SDIFF and whole-set SPOP build such a set and answer
  // in its order): every one an integer as Redis reads them, and no more of them
  // than set-max-intset-entries.
  static bool FitsIntset(const std::vector<std::string>& members);
  // Loads key's metadata for a read; WRONGTYPE for other types.
  Status LoadSet(std::string_view key, LoadedKey* lk, Metadata* meta, bool* exists);

 private:
  Metadata NewSet() const;
  static void NoteMember(Metadata* meta, std::string_view member);

  Database* db_;
};

}  // namespace kvrocks
