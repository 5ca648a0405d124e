// RDB snapshots for clients that ask for one over Redis' replication protocol:
// SYNC, or `REPLCONF rdb-only 1` then PSYNC (`redis-cli --rdb` and
// `redis-cli --functions-rdb` send REPLCONF rdb-only 1 and SYNC).
//
// Each transfer runs on its own thread and owns the client's socket, taken
// from its worker: the RDB is written from one storage snapshot to a temporary
// file under dir (a newline goes to the client every second meanwhile, as
// Redis sends to replicas waiting for their BGSAVE), then sent as Redis'
// disk-based payload, `$<length>\r\n` and the file's bytes, and the socket is
// closed, as Redis closes an rdb-only replica once its RDB is sent. A client
// that stops reading for repl-timeout seconds is dropped.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/detached_sessions.h"
#include "storage/storage.h"

namespace kvrocks {

class Stats;

class RdbSnapshotSender {
 public:
  struct Request {
    int fd = -1;       // the client's socket, owned (and closed) by the sender from Start on
    std::string peer;  // for the log
    // Sent ahead of everything else: "+FULLRESYNC <replid> <offset>\r\n" for PSYNC.
    std::string preamble;
    bool include_data = true;                 // REPLCONF rdb-filter-only may leave the keys out
    std::vector<std::string> function_codes;  // the function libraries the RDB carries
    std::string dir;                          // where the temporary file goes
    int timeout_s = 60;                       // repl-timeout
  };

  // stats gets sync_full and the bytes sent (net_repl_output_bytes).
  RdbSnapshotSender(Storage* storage, int databases, Stats* stats);
  ~RdbSnapshotSender();
  RdbSnapshotSender(const RdbSnapshotSender&) = delete;
  RdbSnapshotSender& operator=(const RdbSnapshotSender&) = delete;

  // Starts a transfer. After Stop() the socket is closed at once.
  void Start(Request req);
  // Cancels every transfer (their sockets shut down, their files removed) and
  // waits for their threads. Called before storage closes.
  void Stop();

 private:
  // One transfer, on its thread; *cancel: stop now (Stop(), or the client is gone).
  void Run(int fd, std::atomic<bool>* cancel, const Request& req, uint64_t id);

  Storage* storage_;
  int databases_;
  Stats* stats_;
  std::atomic<uint64_t> next_id_{0};
  DetachedSessions transfers_;
};

}  // namespace kvrocks
