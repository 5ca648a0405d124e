// Whole-data-set RDB files: writing one from storage, and reading one into a
// staged load. DEBUG RELOAD saves and loads with these; what WriteRdbFile
// writes is a valid RDB for Redis 7.0 (version 10) as long as no hash carries
// field TTLs (those need version 12, Redis 7.4).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "replication/rdb_loader.h"
#include "storage/storage.h"

namespace kvrocks {

// Writes every live key of logical databases 0..databases-1, read from one
// snapshot, and the function libraries with the given code, as an RDB file at
// path (written to a temporary file, synced, then renamed over path). *keys
// gets the number of keys written. If cancel is given and becomes true, the
// write stops within a thousand keys with Status::Aborted and path is untouched.
Status WriteRdbFile(Storage* storage, int databases, const std::vector<std::string>& function_codes,
                    const std::string& path, uint64_t* keys, const std::atomic<bool>* cancel = nullptr);

// Parses the RDB file at path, handing what it holds to handler.
Status ReadRdbFile(const std::string& path, rdb::Handler* handler);

// Parses the RDB file at path into loader (after loader->Begin()) and flushes
// what it staged. The caller then Finish()es the load, or Abort()s it on error.
Status StageRdbFile(RdbLoader* loader, const std::string& path);

// Loads an RDB file into storage (kvrocks --load-rdb): parse, stage, switch.
// The keys' idle times (IDLE opcodes) go to access_clock if it is not null.
// keep_expired: load keys already expired too (a replica's load, RdbLoader).
// *keys and *expired: the keys loaded and those dropped as already expired.
Status LoadRdbFile(Storage* storage, int databases, const std::string& path, AccessClock* access_clock,
                   bool keep_expired, uint64_t* keys, uint64_t* expired);

}  // namespace kvrocks
