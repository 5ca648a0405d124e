// One client connection, owned by the worker thread whose event loop serves it.
// Everything here runs on that thread, except the fields documented as
// readable from other threads (CLIENT LIST, CLIENT KILL, WATCH signalling).
#pragma once

#include <event2/event.h>

#include <atomic>
#include <memory>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "server/resp_parser.h"

namespace kvrocks {

class Worker;
class Server;
struct AclUser;
struct CommandSpec;

class Connection {
 public:
  Connection(Worker* worker, int fd, uint64_t id, std::string peer, std::string local);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts reading from the socket.
  void Start();
  // Reads what the socket has and runs it (the read event's work; may destroy
  // the connection).
  void ReadInput() { OnReadable(); }
  // Appends reply bytes (from the owning thread only).
  void Write(std::string_view bytes);
  // The output buffer, for commands that write their replies in place.
  std::string* output();
  // Marks output()[start, end) as a push (Pub/Sub message or (un)subscribe
  // confirmation) written by the running command: CLIENT REPLY OFF / SKIP
  // silence its reply but not these, as in Redis.
  void NotePush(size_t start) { push_ranges.emplace_back(start, out_.size() - start); }
  std::vector<std::pair<size_t, size_t>> push_ranges;  // (offset, length), cleared by each command
  // Sends what is buffered; schedules a write event if the socket is full.
  void Flush();
  // Closes once everything buffered has been written.
  void CloseAfterReply();
  // Closes now, or right after the command being processed if called from
  // within it (the connection must not be destroyed under its own command).
  void CloseSoon();

  uint64_t id() const { return id_; }
  int fd() const { return fd_; }
  Worker* worker() const { return worker_; }
  Server* server() const;
  const std::string& peer() const { return peer_; }
  // A loopback (or unix socket) client: what an enable-*-command / enable-protected-configs
  // "local" setting admits.
  // From 127.0.0.1, ::1 or a Unix socket, as Redis' islocalClient (protected
  // mode, enable-protected-configs local); internal clients (no peer) too.
  bool is_local() const {
    return unix_socket_ || peer_.rfind("127.0.0.1:", 0) == 0 || peer_.rfind("[::1]:", 0) == 0 || peer_.empty();
  }
  bool unix_socket() const { return unix_socket_; }
  void set_unix_socket(bool v) { unix_socket_ = v; }
  const std::string& local() const { return local_; }

  // Logical database (SELECT). Atomic, as the flags below that CLIENT LIST shows:
  // InfoLine reads them on another worker while this one changes them.
  std::atomic<int> db{0};
  // SCRIPT DEBUG: the next EVAL runs in a Lua debugging session, its writes
  // dropped at the end (YES) or kept (SYNC).
  enum class LuaDebug : uint8_t { kOff, kYes, kSync };
  LuaDebug lua_debug = LuaDebug::kOff;
  // Replies wait for the worker's write batch to commit.
  bool awaiting_commit = false;
  // What its own tracking is to be told of its last command (the invalidations
  // of its writes, once they commit; a flush's null) is not written yet: its
  // next commands wait, as Redis writes its pending invalidations after each
  // command, before it runs the next. One count per wait; each ends with
  // EndOwnMessagesWait.
  int awaiting_own_messages = 0;
  // A flush's null for its own tracking is still to be sent (Tracking::InvalidateAll):
  // the replies wait too, so that where tracking is redirected, the null is on its way
  // to the other client before this one reads the flush's answer (Redis has written
  // it to the other client's buffer by then).
  int awaiting_own_null = 0;
  // Ends one such wait from the worker's queue, behind the messages queued
  // there so far, and goes on with the input when none is left.
  void EndOwnMessagesWait();
  // Blocked clients that this client's last command woke have not all been
  // served yet: its replies and next commands wait (Server::WakeScope), as Redis
  // serves them before it answers (handleClientsBlockedOnKeys).
  bool awaiting_wakes = false;
  // Once they have (on this connection's worker): sends the replies, goes on.
  // `served` are the clients those wakes served (and CLIENT UNBLOCK freed):
  // Redis runs their next commands only after this client's whole batch
  // (processUnblockedClients in beforeSleep), so they wait for it to end.
  using ClientRef = std::pair<Worker*, uint64_t>;
  void WakesServed(std::vector<ClientRef> served = {});
  // Lets held clients go on, one after another (each on its own worker).
  static void ResumeHeld(const std::vector<ClientRef>& clients);
  // Queued for a flush after the worker's posted tasks (Worker::FlushAfterPosted).
  bool flush_pending = false;

  // Blocking commands (BLPOP ...). While `active`, the connection runs no other
  // command; the command is retried when one of its keys gets data.
  struct BlockState {
    bool requested = false;  // set by a handler that found nothing to return
    std::atomic<bool> active{false};  // CLIENT LIST's "b" flag reads it on another worker
    std::vector<std::pair<uint8_t, std::string>> keys;  // (logical db, key)
    std::vector<std::string> args;
    // The command as the client sent it, when `args` (what a retry runs: XREAD's
    // $ made an ID) differ: the slow log shows it.
    std::vector<std::string> sent_args;
    uint64_t timeout_ms = 0;  // 0 = forever
    event* timer = nullptr;
    std::string timeout_reply;  // what a timeout replies; "" = a null array (BLPOP ...)
    bool key_removed = false;   // during a retry: the waking write left the key deleted
    // During a retry: the key it runs for (a block it ends passes that key on at
    // once, the others in their turn: Server::Unblock).
    const std::pair<uint8_t, std::string>* serving = nullptr;
    // false: the client waits for the server's own work (COMPACT), which ends the
    // block (EndServerWait); CLIENT UNBLOCK cannot claim it.
    bool claimable = true;
    // WAIT: the server's serial of the wait (0: the block is no WAIT) and the
    // sequence number the replicas are to acknowledge.
    uint64_t ack_wait = 0;
    uint64_t ack_seq = 0;
  };
  BlockState block;
  // Called by a blocking command that found nothing: block on keys. retry_args,
  // if given, is the command to re-run on wake-up instead of the original (XREAD
  // resolves "$" to the id it saw when blocking).
  void RequestBlock(std::vector<std::pair<uint8_t, std::string>> keys, uint64_t timeout_ms,
                    std::vector<std::string> retry_args = {}, std::string timeout_reply = {}, bool claimable = true);
  // CLIENT UNBLOCK: ends a block with the timeout reply, or with an error.
  void UnblockWith(bool error);
  // Ends a block that waits for the server's own work (not claimable) with reply;
  // nothing if the client no longer waits so.
  void EndServerWait(const std::string& reply);
  // Ends WAIT `serial` with reply; nothing if the client no longer waits so.
  void EndAckWait(uint64_t serial, const std::string& reply);
  // When the command running now arrived (wall-clock ns): the kernel's receive
  // time of the bytes that completed it when it runs as soon as they are read,
  // else (a command that waited in the buffer behind others) now. Blocked
  // clients queue by it: with two workers, the second of two BLPOPs sent one
  // right after the other can be parsed first, yet Redis, reading both in one
  // pass, blocks them in the order they came.
  uint64_t CommandArrivalNs() const;
  // Set by a command that made another client reply with an error (CLIENT
  // UNBLOCK ... ERROR): Redis counts any error reply made during a call as a
  // failure of that call (incrCommandStatsOnError). Cleared when it is counted.
  bool call_made_error_reply = false;
  // Readable from other threads: the connection is blocked and no CLIENT
  // UNBLOCK has claimed it yet (Server::UnblockClient clears it).
  // kBlockedForServer: blocked, but not claimable (BlockState::claimable).
  enum Blocked : uint8_t { kNotBlocked, kBlockedClaimable, kBlockedForServer };
  std::atomic<uint8_t> blocked{kNotBlocked};
  // Counted in Server::BlockedCount (and, with a timeout, TimedBlockedCount);
  // both under the server's blocked lock. Redis drops a client from its counts
  // the moment CLIENT UNBLOCK or CLIENT KILL frees it, before its worker gets
  // to end the block, so the count is released once, by whichever comes first.
  bool block_counted = false;
  bool blocked_with_timeout = false;
  // Re-runs the blocked command on `ready`, the (logical db, key) that got data
  // (or was deleted: key_removed), then resumes reading input.
  void RetryBlocked(const std::pair<uint8_t, std::string>& ready, bool key_removed);
  // Starts the timeout of a block that began (if it has one).
  void ArmBlockTimer();
  // Ends blocking: cancels the timer and leaves the server's wait queues.
  void EndBlock();
  // Ends the block with reply written (CLIENT UNBLOCK, EndServerWait) and resumes input.
  void EndBlockWith(const std::string& reply);
  // Continues processing input that arrived while blocked, and flushes.
  void Resume();
  // CLIENT PAUSE: the command that arrived during a pause, run when it ends.
  bool postponed = false;
  // Counted in Server::BlockedCount; a kill takes it out at once (any thread).
  std::atomic<bool> postpone_counted{false};
  std::vector<std::string> postponed_args;
  // A command parked behind wakes (Server::ParkBehindWakes) runs with the
  // kernel's receive time it came with (0: the time it runs).
  uint64_t postponed_arrival_ns = 0;
  // Runs the postponed command, then what arrived after it.
  void RunPostponed();
  // CLIENT REPLY OFF / SKIP (the next command's reply) state.
  bool reply_off = false;
  bool reply_skip = false;       // this command's reply is dropped
  bool reply_skip_next = false;  // the next command's will be
  std::atomic<bool> no_evict{false};  // CLIENT NO-EVICT (flag "e" in CLIENT LIST)
  // Protocol version chosen with HELLO.
  std::atomic<int> resp{2};
  bool authenticated = false;
  // The ACL user (nullptr before AUTH when the default user needs a password)
  // and the ACL generation it was looked up at.
  std::shared_ptr<const AclUser> user;
  uint64_t acl_generation = 0;
  // Signs in as user (AUTH, HELLO AUTH, RESET).
  void SetUser(std::shared_ptr<const AclUser> u);
  std::atomic<bool> monitor{false};
  // What the client said about itself as a replica (REPLCONF), for SYNC / PSYNC.
  struct ReplConf {
    bool port_announced = false;     // listening-port given: a replica, not redis-cli
    int port = 0;                    // the listening-port (INFO replication of kvrocks replicas)
    std::string ip;                  // ip-address, if given
    bool capa_eof = false;
    bool capa_kvrocks = false;       // a kvrocks replica: it follows a kvrocks master by KPSYNC
    bool rdb_only = false;           // rdb-only 1: an RDB snapshot, no stream after it
    bool exclude_data = false;       // rdb-filter-only without keys
    bool exclude_functions = false;  // rdb-filter-only without "functions"
  };
  ReplConf replconf;
  // The replica's client that applies the master's stream (writes are allowed).
  bool is_master = false;
  // A command of this client changed data: WAIT counts replicas that have what was
  // written when it runs, else every replica (a Redis client's woff of 0).
  bool wrote = false;
  // The master client's replication link: its addresses (CLIENT LIST addr and
  // laddr; MONITOR and SLOWLOG show addr) and socket (fd=). Called only while
  // no other thread sees the client (Server::ListMasterClient says when).
  void SetLink(std::string peer, std::string local, int fd);
  // Pub/Sub subscriptions by PubSubKind (channels, patterns, shard channels);
  // the sets belong to the owning thread, the counts are read by CLIENT LIST.
  std::set<std::string> subscriptions[3];
  std::atomic<size_t> subscription_count[3] = {0, 0, 0};
  // In Pub/Sub mode (Redis' CLIENT_PUBSUB): subscribed to anything.
  bool subscribed() const {
    return subscription_count[0] + subscription_count[1] + subscription_count[2] > 0;
  }
  // CLIENT TRACKING state of this client's own commands (Tracking keeps what
  // other threads need). caching: CLIENT CACHING given for the next command.
  bool tracking = false;
  bool tracking_bcast = false;
  bool tracking_optin = false;
  bool tracking_optout = false;
  bool tracking_noloop = false;
  bool tracking_caching = false;
  // The redirect of the last CLIENT TRACKING ON (0: none), kept after OFF as
  // Redis' client_tracking_redirection is: a flush's null for this client's
  // own tracking goes there after its command even if the command turned
  // tracking off.
  uint64_t tracking_redirect = 0;
  // MULTI state.
  std::atomic<bool> in_multi{false};
  bool multi_error = false;
  std::vector<std::vector<std::string>> queued;
  std::atomic<size_t> multi_count{0};  // queued's size since MULTI, for CLIENT LIST
  // Set by any thread that modifies a WATCHed key.
  std::atomic<bool> watch_dirty{false};
  std::vector<std::pair<uint8_t, std::string>> watched;  // (physical db, key); guarded by the server's watch lock

  // Readable from other threads under info_mu.
  std::mutex info_mu;
  std::string name;
  std::string username = "default";
  // Full name of the last command ("client|list"), nullptr for an unknown one;
  // points into the command table, which outlives connections.
  std::atomic<const char*> last_command{nullptr};
  std::atomic<int64_t> created_ms{0};
  std::atomic<int64_t> last_interaction_ms{0};
  std::atomic<size_t> query_buffer_size{0};
  std::atomic<size_t> query_buffer_free{0};  // allocated beyond query_buffer_size (CLIENT LIST qbuf-free)
  std::atomic<size_t> output_buffer_size{0};
  // CLIENT LIST argv-mem: the bytes of the arguments of the command running now
  // (0 between commands); multi-mem: of the queued commands, each with 8 bytes
  // per argument, as Redis counts them (meaningful while in_multi).
  std::atomic<size_t> argv_mem{0};
  std::atomic<size_t> multi_mem{0};
  // CLIENT LIST rbs/rbp: the reply buffer's allocated size and its peak use
  // since the last TrimBuffers.
  std::atomic<size_t> reply_buffer_size{0};
  std::atomic<size_t> reply_buffer_peak{0};
  // Set by Server::Kill. From then on the client is gone for everyone else
  // (CLIENT LIST, INFO clients, PUBLISH's count, tracking redirects), as Redis
  // frees a killed client at once, while its worker has yet to close it.
  std::atomic<bool> kill_requested{false};
  // Reports query_buffer_size + output_buffer_size to the server's total of
  // client memory, which may evict clients (maxmemory-clients). Owner thread only.
  void UpdateMemory();
  // What UpdateMemory last reported (the server takes it back when the client goes).
  size_t reported_memory() const { return reported_memory_; }
  // CLIENT LIST line for this connection.
  std::string InfoLine();
  // Gives back the buffer memory a burst left behind, as Redis' clientsCron
  // resizes its query and reply buffers: once a second (worker cron) a buffer with
  // more room than its peak use since the last call needs shrinks to that peak,
  // the query buffer of a client idle over 2 s to what it holds. Owner thread only.
  void TrimBuffers(int64_t now_ms);

 private:
  size_t reported_memory_ = 0;
  static void OnEvent(evutil_socket_t fd, short what, void* arg);
  static void OnBlockTimeout(evutil_socket_t fd, short what, void* arg);
  void OnReadable();
  void OnWritable();
  // True if the unsent output exceeds client-output-buffer-limit (the client is then closed).
  bool OverOutputLimit(size_t pending);
  void ProcessInput();
  // read(2) into buf that also takes the kernel's receive time of the data
  // (SO_TIMESTAMPNS) into read_arrival_ns_ (0 when the kernel gave none).
  ssize_t ReadStamped(char* buf, size_t len);

  Worker* worker_;
  int fd_;
  int link_fd_ = -1;  // the master client's: its link's socket, which it does not own
  uint64_t id_;
  std::string peer_, local_;
  bool unix_socket_ = false;
  event* read_ev_ = nullptr;
  event* write_ev_ = nullptr;
  std::string in_;
  size_t in_pos_ = 0;
  std::string out_;
  size_t out_pos_ = 0;
  // Clients whose next commands wait for this client's batch (WakesServed).
  std::vector<ClientRef> held_;
  size_t in_peak_ = 0;   // the most in_ held since the last TrimBuffers
  size_t out_peak_ = 0;  // the most out_ held since the last TrimBuffers
  bool close_after_reply_ = false;
  bool processing_ = false;  // inside ProcessInput
  uint64_t read_arrival_ns_ = 0;  // while OnReadable runs the commands of a read: CommandArrivalNs
  int64_t soft_limit_since_ms_ = 0;  // when the output buffer first exceeded the soft limit
  bool closing_ = false;
  RespParser parser_;
  std::vector<std::string> args_;
};

}  // namespace kvrocks
