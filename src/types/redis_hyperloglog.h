// HyperLogLog commands over string values in Redis' own HLL format
// (types/hll_format.h). Values are small (at most 12304 bytes, dense) and are
// read and written whole, as Redis does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "types/database.h"

namespace kvrocks {

extern const char kInvalidHllError[];  // a string that is not an HLL (WRONGTYPE ...)
extern const char kCorruptHllError[];  // INVALIDOBJ

class RedisHyperLogLog {
 public:
  RedisHyperLogLog(Database* db, size_t sparse_max_bytes) : db_(db), sparse_max_bytes_(sparse_max_bytes) {}

  // PFADD: *updated tells whether the HLL was created or a register changed.
  Status Add(std::string_view key, const std::vector<std::string_view>& elements, bool* updated);
  // PFCOUNT. With one key, a stale cached cardinality is recomputed and
  // stored back into the value, as Redis does (so the command writes).
  Status Count(const std::vector<std::string_view>& keys, uint64_t* card);
  // PFMERGE: dest becomes the union of dest and the sources.
  Status Merge(std::string_view dest, const std::vector<std::string_view>& sources);
  // PFDEBUG's view of key: its HLL value ("ERR The specified key does not exist" if
  // absent). With to_dense, a sparse value is converted and stored, as Redis does
  // for GETREG and TODENSE; *converted tells whether it was sparse.
  Status DebugValue(std::string_view key, bool to_dense, std::string* value, bool* converted);

 private:
  // Reads key for a write: *exists=false if absent; errors for non-HLL values.
  Status Load(std::string_view key, LoadedKey* lk, std::string* value, bool* exists);
  // Merges key's registers into regs (absent keys are empty); *dense tells its encoding.
  Status MergeKey(std::string_view key, uint8_t* regs, bool* dense);

  Database* db_;
  size_t sparse_max_bytes_;
};

}  // namespace kvrocks
