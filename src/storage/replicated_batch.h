// A write batch from a kvrocks master's write-ahead log, made ready for its
// replica (KSLAVEOF): the batch is copied as it is, column family by column
// family, except the master's own per-instance state records
// (Storage::IsLocalStateKey), and what the replica must do besides writing it
// is collected: counter changes, the keys it touches (for WATCH, client-side
// caching and blocked clients), whether the in-memory mirror of the state
// column family must be re-read.
//
// A replica's storage is a copy of its master's, byte for byte (same physical
// databases, versions and column families in the same order), so a batch
// applies to it exactly as it applied to the master.
#pragma once

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "storage/storage.h"

namespace kvrocks {

struct ReplicatedBatch {
  rocksdb::WriteBatch batch;  // what the replica writes
  uint32_t master_count = 0;  // operations in the master's batch (its sequence numbers)
  // Counter merges (keys, expiries) per physical db: ApplyCountDeltas after the write.
  std::map<uint8_t, CountDeltas> counts;
  // (physical db, user key) of every metadata record written or deleted, in order.
  std::vector<std::pair<uint8_t, std::string>> keys;
  // Elements written without their key's metadata: (physical db, name, version)
  // of their subkeys. The name is the key's unless a RENAME or MOVE moved the
  // metadata away (a `moved:` record then says where it is).
  std::vector<std::pair<std::pair<uint8_t, std::string>, uint64_t>> element_keys;
  // Physical dbs a range delete emptied (FLUSHDB, FLUSHALL).
  std::vector<uint8_t> flushed_dbs;
  // State records written or deleted other than counter merges (the database
  // map, counters reset, `moved:` records, the function libraries ...).
  std::vector<std::string> state_keys;
  bool moved_noted = false;  // a `moved:` record (RENAME, MOVE of a collection)
  uint64_t max_version = 0;  // the greatest collection version written
};

// Fills *out from the master's batch (its WriteBatch::Data()). Corruption on a
// batch that does not parse or names a column family this storage lacks.
Status TranslateReplicatedBatch(Storage* storage, const std::string& data, ReplicatedBatch* out);

}  // namespace kvrocks
