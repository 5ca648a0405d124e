// kvrocks as a replica of a Redis master (REPLICAOF host port): a state
// machine on its own thread, after Redis' replication.c.
//
//   connect -> PING -> AUTH -> REPLCONF listening-port / capa eof psync2 kvrocks
//     -> PSYNC <replid> <offset+1>  (or PSYNC ? -1 the first time)
//        -KVROCKS ...       -> the master is kvrocks: KPSYNC (native_follower.h)
//        +FULLRESYNC id off -> payload ($len or $EOF:<mark>) parsed while it
//                              arrives, loaded beside the visible data, switched in
//        +CONTINUE [id]     -> stream
//        -ERR (old master)  -> SYNC -> payload -> stream
//   stream: applied by StreamApplier (stream_applier.h) as the master client,
//           in batches that also persist (replid, offset), so after kill -9
//           the replica resumes exactly where its data ends; REPLCONF ACK
//           every second and on GETACK; on error: reconnect with PSYNC after
//           a back-off.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "replication/stream_applier.h"

namespace kvrocks {

class ApplyPriority;
class Server;
class Connection;
class MasterLink;
class NativeFollower;
class Context;

class Replica {
 public:
  explicit Replica(Server* server);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // Reads the persisted replication id and offset.
  Status LoadState();
  // REPLICAOF host port: follows a (new) master. Returns at once: a supervisor
  // thread stops the previous session and starts the new one (the caller, a
  // worker, may hold key locks the old session is waiting for). kvrocks: the
  // master is a kvrocks server (KSLAVEOF host port, native_follower.h).
  void Follow(const std::string& host, int port, bool kvrocks = false);
  // REPLICAOF NO ONE: stops following; the data stays and writes are accepted.
  void Unfollow();
  // Stops the threads (shutdown).
  void Stop();

  // Whether kvrocks is a replica (role slave).
  bool is_replica() const { return following_.load(); }
  // Whether it follows a kvrocks master (KSLAVEOF, or REPLICAOF of a master
  // that turned out to be kvrocks).
  bool follows_kvrocks() const { return following_.load() && (kvrocks_.load() || native_link_.load()); }
  // Whether the master was given by KSLAVEOF (not REPLICAOF).
  bool kvrocks_requested() const { return kvrocks_.load(); }
  // Whether the link to the master is up (streaming).
  bool link_up() const { return state_.load() == kConnected; }

  struct Info {
    std::string host;
    int port = 0;
    std::string state;  // ROLE's connect / connecting / sync / connected
    bool link_up = false;
    bool sync_in_progress = false;
    int64_t last_io_seconds_ago = -1;
    uint64_t offset = 0;
    uint64_t read_offset = 0;
    std::string replid;
    uint64_t full_syncs = 0, partial_syncs = 0, apply_errors = 0;
    int64_t sync_total_bytes = -1, sync_read_bytes = 0;
    int64_t loading_start_s = 0;  // 0: no RDB loading
    uint64_t loading_used_mem = 0;
    std::string last_error;
    bool kvrocks = false;       // the master is kvrocks (KSLAVEOF)
    std::string master_wal_id;  // its WAL history (offset: the sequence number applied)
  };
  Info GetInfo();
  // The replication id and offset kvrocks reports as master_replid / master_repl_offset.
  std::string replid();
  // A kvrocks master's: the last sequence number of its write-ahead log applied.
  uint64_t offset() const;

  // Called periodically by a thread at normal priority (the server's cron):
  // raises a starved idle-priority applier (apply_priority.h).
  void WatchApplier();

 private:
  enum State { kNone, kConnect, kConnecting, kSync, kConnected };

  void Run(std::string host, int port, bool kvrocks);
  void Supervise();
  // A new master client (a new id, age 0) for the stream to come; the session
  // thread's, or the supervisor's while no session runs.
  void NewMasterClient();
  // REPLICAOF (any thread): the session is to stop, its master client is unlisted now.
  void DropMasterClient();
  void Request(bool follow, const std::string& host, int port, bool kvrocks);
  // Stops the running session thread and waits for it.
  void StopSession();
  // One connection's life: handshake, sync, stream until an error.
  Status Session(const std::string& host, int port, bool kvrocks);
  // PING, AUTH and REPLCONF listening-port / ip-address.
  Status Greet(MasterLink* link);
  // *kvrocks: the master is kvrocks and wants KPSYNC (native_frames.h); nothing else happened.
  Status Handshake(MasterLink* link, const std::string& host, int port, bool* kvrocks);
  // Follows the kvrocks master on the link (native_follower.h).
  Status FollowNative(MasterLink* link);
  // Persists replid_ with the offset as the position a PSYNC to a Redis master
  // asks for. Given a new id, such a PSYNC cannot resume: after a promotion, or
  // once the data comes from a kvrocks master. No session may run but the caller's.
  Status PersistReplId(uint64_t offset);
  Status ReceivePayload(MasterLink* link, const std::string& replid, uint64_t offset);
  Status StreamCommands(MasterLink* link);
  // Applies the complete commands at the front of the link's buffer.
  Status ApplyBuffered(MasterLink* link, bool* more);
  void SetError(const std::string& e);

  Server* server_;
  std::unique_ptr<Connection> master_client_;
  std::thread thread_;      // the session (connect, sync, stream)
  std::thread supervisor_;  // starts and stops sessions on request
  std::mutex req_mu_;
  std::condition_variable req_cv_;
  struct Pending {
    bool follow;
    std::string host;
    int port;
    bool kvrocks;
  };
  std::vector<Pending> requests_;
  bool quit_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> following_{false};
  std::atomic<bool> kvrocks_{false};      // the master is kvrocks (KSLAVEOF)
  std::atomic<bool> native_link_{false};  // REPLICAOF's master is kvrocks (said so to PSYNC, or presumed)
  bool replid_shifted_ = false;           // for this request's kvrocks master; the session thread's
  std::unique_ptr<NativeFollower> native_;
  std::atomic<int> state_{kNone};
  std::mutex mu_;  // guards host_, port_, replid_, last_error_
  std::string host_;
  int port_ = 0;
  std::string replid_;  // the master's replication id we follow ("?" unknown)
  std::string last_error_;
  StreamApplier applier_;  // the stream's offsets; applies it on the session thread
  std::atomic<uint64_t> last_io_ms_{0};
  // The master answered SYNC, not PSYNC (Redis' CLIENT_PRE_PSYNC): no REPLCONF ACKs to it.
  bool pre_psync_master_ = false;  // the session thread's
  uint64_t stream_began_ms_ = 0;   // when the session's stream began (0: it did not); the session thread's
  std::atomic<uint64_t> full_syncs_{0}, partial_syncs_{0};
  std::atomic<int64_t> sync_total_bytes_{-1}, sync_read_bytes_{0};
  // While an RDB from the master loads (clients read the previous data meanwhile):
  // its start (unix seconds, 0 when none) and the RDB's used-mem aux field.
  std::atomic<int64_t> loading_start_s_{0};
  std::atomic<uint64_t> loading_used_mem_{0};
  std::mutex priority_mu_;             // guards priority_
  ApplyPriority* priority_ = nullptr;  // the streaming applier's, while it streams
};

}  // namespace kvrocks
