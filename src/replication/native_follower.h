// The replica side of kvrocks-to-kvrocks replication (KSLAVEOF host port), run
// by Replica's session thread once the link is up and authenticated:
//
//   KPSYNC <wal-id> <seq>   the master's history and the next sequence number
//     +CONTINUE <wal-id>        -> the master's write batches from seq on
//     +FULLSYNC <wal-id> <seq>  -> its storage snapshot at seq, then the batches
//
// A full sync empties this server's storage and ingests the snapshot's records
// as they arrive, column family by column family; commands get -LOADING
// meanwhile. Each batch is then written as the master wrote it
// (ReplicatedBatch), under every key lock, together with the position it
// brings the replica to, so that after kill -9 the replica resumes exactly
// where its data ends; the keys it touched are signalled to WATCH, client-side
// caching and blocked clients as a Redis replica signals its master's writes.
// The replica acknowledges the last sequence applied every second, and at once
// when the master asks (a client of the master WAITs).
//
// Not thread-safe: one session thread runs it; the getters may be read by any.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <string>

#include "common/status.h"

namespace kvrocks {

class MasterLink;
class Server;
struct ReplicatedBatch;

class NativeFollower {
 public:
  explicit NativeFollower(Server* server) : server_(server) {}
  NativeFollower(const NativeFollower&) = delete;
  NativeFollower& operator=(const NativeFollower&) = delete;

  // Reads the persisted position (none: the next link asks for a full sync).
  Status LoadState();
  // Forgets the position (a promoted replica: its writes are its own history).
  Status ForgetState();

  enum class Phase { kSync, kStream };
  // Asks for the stream and follows it until an error or *stop; on_phase is
  // told when a snapshot starts loading and when the stream begins.
  Status Follow(MasterLink* link, const std::atomic<bool>* stop, std::function<void(Phase)> on_phase);

  // The master's history and the last sequence number of it applied.
  std::string wal_id();
  uint64_t seq() const { return seq_.load(); }
  uint64_t full_syncs() const { return full_syncs_.load(); }
  uint64_t partial_syncs() const { return partial_syncs_.load(); }
  // The snapshot's bytes received so far (while one loads).
  int64_t sync_read_bytes() const { return sync_read_bytes_.load(); }

 private:
  Status Handshake(MasterLink* link, bool* full);
  Status LoadSnapshot(MasterLink* link, const std::atomic<bool>* stop);
  Status Stream(MasterLink* link, const std::atomic<bool>* stop);
  // Empties the storage for a snapshot (and the persisted position with it).
  Status Wipe();
  // Writes one batch of the master's (first sequence number seq) with the position after it.
  Status Apply(uint64_t seq, const std::string& data);
  // What a batch means besides its records: counters, state reloads, touched keys
  // (called under every key lock). The future: the clients they woke are served.
  std::future<void> AfterWrite(const ReplicatedBatch& rb);
  // Reads the next frame into *type / *payload if its bytes arrive within
  // timeout_ms (*have tells).
  Status ReadFrame(MasterLink* link, int timeout_ms, char* type, std::string* payload, bool* have);
  Status SendAck(MasterLink* link);
  // The function libraries and moved records of the state column family, reloaded.
  void ReloadStateModules(bool functions, bool moved);

  Server* server_;
  std::mutex mu_;  // guards wal_id_
  std::string wal_id_ = "?";
  std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> full_syncs_{0}, partial_syncs_{0};
  std::atomic<int64_t> sync_read_bytes_{0};
  std::function<void(Phase)> on_phase_;
  // The position a snapshot being loaded stands for.
  std::string pending_wal_id_;
  uint64_t pending_seq_ = 0;
};

}  // namespace kvrocks
