// The master side of kvrocks-to-kvrocks replication (KSLAVEOF): one thread per
// replica, which owns the replica's socket from its KPSYNC on.
//
// KPSYNC <wal-id> <seq> asks for the master's writes from sequence number seq
// of WAL history wal-id (Storage::wal_id). If that history is this database's
// and its archived write-ahead log still holds seq, the answer is
// `+CONTINUE <wal-id>` and the batches from seq on; else `+FULLSYNC <wal-id>
// <snapshot-seq>`, every record of one storage snapshot (all column families,
// but the master's per-instance state records), then the batches after it.
// native_frames.h gives the frames. A running stream ends (the replica
// reconnects and gets a full sync) when the history changes under it: data
// written without the WAL (a full sync of this server from its own master, a
// DEBUG RELOAD) is not in the log.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/detached_sessions.h"
#include "storage/storage.h"

namespace kvrocks {

class Stats;

class WalSender {
 public:
  struct Request {
    int fd = -1;  // the replica's socket, owned by the sender from Start on
    std::string ip;
    int port = 0;  // REPLCONF listening-port, 0 if none
    std::string wal_id;
    uint64_t seq = 0;
    int timeout_s = 60;  // repl-timeout
  };

  WalSender(Storage* storage, Stats* stats) : storage_(storage), stats_(stats) {}
  ~WalSender();
  WalSender(const WalSender&) = delete;
  WalSender& operator=(const WalSender&) = delete;

  void Start(Request req);
  // Ends every stream and waits for the threads (before storage closes).
  void Stop();

  struct ReplicaInfo {
    std::string ip;
    int port = 0;
    bool online = false;       // streaming (false: the snapshot is being sent)
    uint64_t acked = 0;        // last sequence number the replica applied
    uint64_t last_ack_ms = 0;  // monotonic
  };
  std::vector<ReplicaInfo> Replicas();
  // Replicas streaming whose last acknowledgement is at most max_lag_s seconds old
  // (Redis' good replicas, for min-replicas-to-write).
  int GoodReplicas(int max_lag_s);

  // Streaming replicas that have acknowledged sequence number seq (WAIT).
  int AckedReplicas(uint64_t seq);
  // Asks every streaming replica to acknowledge at once what it has applied
  // (WAIT); the answers reach the ack listener.
  void RequestAcks();
  // Called on a stream's thread after each acknowledgement.
  // Set before the first Start.
  void SetAckListener(std::function<void()> listener) { ack_listener_ = std::move(listener); }

  // Whether a stream can resume at seq of this database's history.
  bool CanContinue(uint64_t seq);

 private:
  void Run(int fd, std::atomic<bool>* cancel, const Request& req, uint64_t id);

  Storage* storage_;
  Stats* stats_;
  std::atomic<uint64_t> next_id_{0};
  std::atomic<uint64_t> ack_requests_{0};  // RequestAcks calls
  std::function<void()> ack_listener_;
  std::mutex mu_;  // guards replicas_
  std::map<uint64_t, ReplicaInfo> replicas_;
  DetachedSessions streams_;
};

}  // namespace kvrocks
