// The hash type: metadata (version, size, flags) plus one subkey per field,
// `prefix(version) | field -> value`. Single-field operations are point
// reads/writes; HGETALL and friends iterate the key's subkey prefix (and a
// listpack hash's are put in insertion order, see docs/encoding.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "types/database.h"
#include "types/encoding_limits.h"

namespace kvrocks {

class RankIndex;

class RedisHash {
 public:
  explicit RedisHash(Database* db) : db_(db) {}

  // Sets fields; *added is the number of new fields. nx: only absent fields (HSETNX).
  Status Set(std::string_view key, const std::vector<std::pair<std::string_view, std::string_view>>& fvs, bool nx,
             int64_t* added);
  // NotFound if the key or the field is absent.
  Status Get(std::string_view key, std::string_view field, std::string* value);
  // values[i] is empty-optional for absent fields.
  Status MGet(std::string_view key, const std::vector<std::string_view>& fields,
              std::vector<std::optional<std::string>>* values);
  Status Delete(std::string_view key, const std::vector<std::string_view>& fields, int64_t* deleted);
  Status Size(std::string_view key, uint64_t* size);
  // All fields and values: a listpack hash in insertion order (as Redis), a
  // hashtable one in field order.
  Status GetAll(std::string_view key, std::vector<std::pair<std::string, std::string>>* fvs);
  Status IncrBy(std::string_view key, std::string_view field, int64_t delta, int64_t* result);
  Status IncrByFloat(std::string_view key, std::string_view field, long double delta, std::string* result);
  // Fields after `after` ("" = first), about count of them, matching pattern.
  // *next is the last field examined, or "" when the hash is exhausted.
  Status Scan(std::string_view key, const std::string& after, size_t count, std::string_view pattern,
              std::vector<std::pair<std::string, std::string>>* fvs, std::string* next);
  using FieldValues = std::vector<std::pair<std::string, std::string>>;
  // HRANDFIELD's picks: `count` fields with their values, distinct unless
  // `repeat` (then independent picks). Distinct picks of the whole hash (count
  // at least its size) come in GetAll's order, fewer in no particular order
  // except a listpack's picks of at most a third of it, which keep its order
  // (Redis' lpRandomPairsUnique). A hash of RankIndex::kBuildAt fields or more
  // picks random ranks through its rank index (built by the first pick; the
  // caller holds the key's lock): O(log n) a pick, for repeated picks and for
  // distinct picks of at most a third of it; otherwise, as Redis copies the
  // hash there, it is read whole. fits(sample): whether `count` picks like the
  // sample's fit in a reply; if not, Aborted and nothing picked.
  Status RandomFields(std::string_view key, uint64_t count, bool repeat, FieldValues* out,
                      const std::function<bool(const FieldValues& sample)>& fits = nullptr);
  // "listpack" or "hashtable" (OBJECT ENCODING).
  static const char* Encoding(const Metadata& meta);

  // Hash field expiry (Redis 7.4). Field results use Redis' codes: -2 no such
  // field (or key).
  enum class ExpireCond { kAlways, kNX, kXX, kGT, kLT };
  // HEXPIRE family, absolute expire_ms: 0 condition not met, 1 set, 2 deleted
  // (a time not in the future).
  Status ExpireFields(std::string_view key, const std::vector<std::string_view>& fields, uint64_t expire_ms,
                      ExpireCond cond, std::vector<int64_t>* results);
  // HTTL family: each field's absolute expiry in ms, -1 none.
  Status FieldExpireTimes(std::string_view key, const std::vector<std::string_view>& fields,
                          std::vector<int64_t>* results);
  // HPERSIST: 1 TTL removed, -1 none.
  Status PersistFields(std::string_view key, const std::vector<std::string_view>& fields,
                       std::vector<int64_t>* results);
  // Deletes the fields whose TTL has passed (the active-expire cycle); the key
  // goes with its last field. *deleted counts them. The soonest TTL left gets an
  // entry in the expire index under the key's name, so that the cycle comes back.
  Status DeleteExpiredFields(std::string_view key, int64_t* deleted);
  // For a hash that arrived under this name (RENAME, COPY, MOVE): its field TTLs'
  // entries in the expire index name its old key, so an entry for now makes the
  // cycle visit it (DeleteExpiredFields then schedules the rest). Nothing for a
  // hash without field TTLs or another type.
  Status ScheduleFieldExpiry(std::string_view key);

 private:
  // RandomFields from the whole hash, and through the rank index (*whole: too
  // many expired fields were picked, nothing is; read it whole instead).
  Status RandomFieldsOfAll(std::string_view key, const Metadata& meta, uint64_t count, bool repeat,
                           FieldValues* out, const std::function<bool(const FieldValues& sample)>& fits);
  Status RandomFieldsByRank(std::string_view key, const LoadedKey& lk, Metadata* meta, uint64_t count, bool repeat,
                            FieldValues* out, const std::function<bool(const FieldValues& sample)>& fits,
                            bool* whole);
  // An entry in the expire index that makes the active-expire cycle visit key at expire_ms.
  void ScheduleExpiry(std::string_view key, uint64_t expire_ms);
  // Stores meta after a write, with its rank index kept member by member in
  // `rank` (RankIndex::ForWrite), or built, rebuilt or dropped.
  Status Store(std::string_view key, LoadedKey* lk, Metadata* meta, RankIndex* rank);
  // Loads key's hash metadata; *exists=false if absent. WRONGTYPE for other types.
  Status LoadHash(std::string_view key, LoadedKey* lk, Metadata* meta, bool* exists);
  // Metadata for a new hash, a listpack (keeping insertion order) or a hashtable.
  Metadata NewHash(bool listpack) const;
  // Rewrites every value of the hash for the layout `flags` asks for (field
  // TTLs, insertion numbers): O(n), once per change of layout. A hash numbered
  // now is numbered in field order.
  Status Recode(std::string_view key, Metadata* meta, uint8_t flags);
  // Insertion order is kept exactly while the hash is a listpack in Redis: a
  // hash that became a hashtable loses its numbers, a listpack hash from before
  // they were kept gets them.
  Status KeepOrderIfListpack(std::string_view key, Metadata* meta);
  // fn(index, subkey, value, expire, seq) of ForLiveFields.
  using FieldFn = std::function<void(size_t, const std::string&, std::string&, uint64_t, uint64_t)>;
  // Calls fn(index, subkey, value, expire, seq) for each of fields that exists and
  // has not expired (value without its prefix; expire 0 = none; seq its insertion number).
  Status ForLiveFields(std::string_view key, const Metadata& meta, const std::vector<std::string_view>& fields,
                       const FieldFn& fn);
  // Rewrites every value with an expiry prefix (the first field TTL of a hash; O(n) once).
  Status EnableFieldTtls(std::string_view key, Metadata* meta);
  // Read-modify-write of one field (HINCRBY, HINCRBYFLOAT): fn gets the old value
  // (nullptr if absent) and produces the new one, or an error that aborts.
  Status UpdateField(std::string_view key, std::string_view field,
                     const std::function<Status(const std::string* old, std::string* value)>& fn);

  Database* db_;
};

}  // namespace kvrocks
