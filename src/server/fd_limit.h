// The process' open-files limit (RLIMIT_NOFILE), sized as redis-server sizes it:
// raised to what the configuration needs when the system allows, otherwise the
// configuration is cut down to what the limit allows.
#pragma once

#include <string>

#include "common/status.h"

namespace kvrocks {

// Descriptors the server uses besides clients and RocksDB's table and blob
// files: listeners, epoll and event fds, WAL, MANIFEST, logs, files being
// written by flushes and compactions, replication links, checkpoints.
constexpr int kReservedFds = 128;

struct FdBudget {
  int maxclients;
  int rocksdb_open_files;
  int original_limit;  // the open-files limit found
  int limit;           // the open-files limit in force afterwards
  std::string warning;  // what was cut and why; empty when nothing was
};

// Raises the soft open-files limit (and the hard one, if allowed) towards
// maxclients + rocksdb_open_files + kReservedFds. When the system refuses, keeps
// the highest limit it accepts and divides it: RocksDB keeps at least half of
// what the reserve leaves (up to what it asked for), clients get the rest.
// Fails when not even one client would fit.
Status AdjustOpenFilesLimit(int maxclients, int rocksdb_open_files, FdBudget* out);

}  // namespace kvrocks
