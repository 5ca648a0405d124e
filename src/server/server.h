// The server: workers, the client registry, WATCH and MONITOR bookkeeping,
// SLOWLOG, statistics, background jobs (active expiry, BGSAVE) and shutdown.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/detached_sessions.h"
#include "config/config.h"
#include "server/access_clock.h"
#include "server/acl.h"
#include "server/connection.h"
#include "server/memory_stats.h"
#include "server/migrate_sockets.h"
#include "server/pubsub.h"
#include "server/tracking.h"
#include "stats/latency.h"
#include "stats/slowlog.h"
#include "stats/stats.h"
#include "storage/context.h"
#include "storage/storage.h"

namespace kvrocks {

class Worker;
class Connection;
class Replica;
class RdbSnapshotSender;
class WalSender;
struct CommandSpec;

// Parses "host port" (the replicaof option).
bool ParseHostPort(const std::string& s, std::string* host, int* port);

class Server {
 public:
  Server(Config* config, Storage* storage);
  ~Server();

  // Binds listeners and starts worker and background threads.
  Status Start();
  // Blocks until Stop() is called and everything has shut down.
  void Wait();
  // Requests shutdown (thread-safe, async-signal-unsafe: call from a thread).
  void Stop();

  Config* config() { return config_; }
  // Replication from a Redis master (REPLICAOF); never null after Start().
  Replica* replica() { return replica_.get(); }
  // RDB snapshots sent to SYNC / PSYNC clients (redis-cli --rdb, rdb-only
  // replicas); never null after Start().
  RdbSnapshotSender* rdb_sender() { return rdb_sender_.get(); }
  // The streams to kvrocks replicas (KPSYNC); never null after Start().
  WalSender* wal_sender() { return wal_sender_.get(); }
  // While a kvrocks replica loads its master's snapshot, commands without the
  // `loading` flag get -LOADING, as on a Redis replica loading its RDB.
  bool loading() const { return loading_.load(std::memory_order_relaxed); }
  void set_loading(bool v) { loading_.store(v); }

  // A writable replica expires the keys its own clients gave a TTL (Redis'
  // rememberSlaveKeyWithExpire and expireSlaveKeys); the master's keys wait for its
  // DELs. NotesOwnExpiries: whether client writes are to note such keys now (a
  // replica with replica-read-only off). NoteOwnExpiries takes the keys (logical
  // db, key: Context::NoteExpiring) a client's command gave an expiry, called under
  // their key locks; ForgetOwnExpiries drops them all (FLUSHALL, a full sync: Redis'
  // emptyData).
  bool NotesOwnExpiries();
  // Whether this server follows a master now (REPLICAOF host port, KSLAVEOF host port).
  bool IsReplica();
  // Whether clients may not write here: a replica with replica-read-only on, or any
  // replica of a kvrocks master (its storage is a copy of the master's).
  bool ReadOnlyReplica();
  void NoteOwnExpiries(std::vector<std::pair<uint8_t, std::string>> keys);
  void ForgetOwnExpiries();
  // SCRIPT DEBUG sessions (ended before storage closes).
  DetachedSessions* detached() { return &detached_; }
  // Redis' checkGoodReplicasStatus failing: a master whose min-replicas-to-write
  // and min-replicas-max-lag are set has fewer good (kvrocks) replicas.
  bool NotEnoughGoodReplicas();
  MigrateSockets& migrate_sockets() { return migrate_sockets_; }
  Storage* storage() { return storage_; }
  Stats& stats() { return stats_; }
  SlowLog& slowlog() { return slowlog_; }
  // Last-access times of keys (OBJECT IDLETIME).
  AccessClock& access_clock() { return access_clock_; }
  MemoryStats& memory_stats() { return memory_stats_; }
  // The bytes of all clients' query and output buffers (Redis' clients_normal),
  // and the biggest input and output buffer of a client within the last few
  // seconds (client_recent_max_input_buffer / output_buffer).
  uint64_t ClientBuffers(uint64_t* recent_max_in, uint64_t* recent_max_out);
  // Client eviction (maxmemory-clients, as Redis 7.0's): a connection reports
  // changes of its buffers' bytes here; once the clients' total reaches the
  // limit, the biggest clients not in NO-EVICT mode are disconnected until it
  // is below (largest first; clients holding nothing are never chosen).
  void AddClientMemory(int64_t delta);
  // The limit in bytes; 0 when client eviction is off (maxmemory-clients 0, or a
  // percentage of maxmemory, which is always 0 here).
  uint64_t ClientEvictionLimit() const;
  void EvictClients();
  PubSub& pubsub() { return pubsub_; }
  Tracking& tracking() { return tracking_; }
  Acl& acl() { return acl_; }
  // Loads the ACL users of the configuration (requirepass, "user" lines, aclfile).
  Status LoadAcl();
  LatencyMonitor& latency() { return latency_; }
  // Drops every channel, pattern and shard-channel subscription of conn.
  void UnsubscribeAll(Connection* conn);
  int64_t start_time() const { return start_time_; }

  // The worker that gets the next accepted connection.
  Worker* NextWorker() { return workers_[next_worker_.fetch_add(1) % workers_.size()].get(); }
  // The kernel's thread ids of the workers that run (INFO cpu reads their times).
  std::vector<int> WorkerThreadIds() const;

  // Client registry. Register fails when maxclients is reached.
  uint64_t NextClientId() { return next_client_id_.fetch_add(1) + 1; }
  bool Register(Connection* conn);
  // The worker serving client id, or nullptr if there is no such client.
  Worker* WorkerOf(uint64_t id);
  void Unregister(Connection* conn);
  size_t ClientCount();
  // Calls fn(conn) for every client under the registry lock; fn must not block.
  // A client killed by Kill() is left out although its worker may not have
  // closed it yet: Redis frees a killed client at once, so the next CLIENT LIST
  // or CLIENT KILL no longer sees it.
  // The replica's master client, while listed, is one of them, where Redis'
  // list of clients has it.
  template <typename Fn>
  void ForEachClient(Fn fn) {
    std::lock_guard<std::mutex> g(clients_mu_);
    Connection* master = listed_master_;
    for (auto& [id, c] : clients_) {
      if (master != nullptr && id > master_listed_before_) {
        fn(master);
        master = nullptr;
      }
      if (!c->kill_requested.load(std::memory_order_relaxed)) fn(c);
    }
    if (master != nullptr) fn(master);
  }
  // Closes a client from any thread; false if no such client. The master client
  // is only marked (kill_requested): the replica drops its link.
  bool Kill(uint64_t id);
  // The replica's master client joins the clients (CLIENT LIST / KILL, INFO
  // clients, maxclients) while its link streams, as Redis links its master
  // client in: after the clients connected so far. Until Unlist, other threads
  // may read it as they read any client; Unlist returns once none does.
  // Unlist(nullptr) takes out whichever is listed.
  void ListMasterClient(Connection* master);
  void UnlistMasterClient(Connection* master);
  // Whether id is the listed master client's: a client that exists for CLIENT
  // TRACKING REDIRECT, though it takes no replies (Redis' CLIENT_MASTER).
  bool IsListedMasterClient(uint64_t id);

  // WATCH bookkeeping. A key watched while stale (expired, not yet deleted) is
  // remembered as such, as Redis' watchedKey.expired: its deletion as an expired
  // key changes nothing for that watcher, and EXEC does not fail for it.
  // A WATCH while a script is busy runs in the middle of the script (as in
  // Redis): `since`, a Tracking::Tick() taken before, tells the script's writes
  // that came before it (their touch marks are smaller) from those after it,
  // which alone make the watcher dirty. 0: every later touch counts.
  void Watch(Connection* conn, uint8_t db, const std::string& key, bool stale, uint64_t since = 0);
  void UnwatchAll(Connection* conn);
  // Marks watchers of the keys ctx touched dirty and wakes the first client
  // blocked on each (it checks what the key holds now), or all of them where
  // ctx says so (Context::WakeAllWaiters). Called while the key locks are held.
  // The touch kinds tell which touches are deletions (a watcher of a key stale
  // when watched is not dirtied by those).
  void TouchKeys(const Context& ctx);
  // The master link's TouchKeys: as a Redis replica serves its blocked clients after
  // each command of the master (handleClientsBlockedOnKeys), the applier waits,
  // with its key locks released, until the future is ready: the clients these keys
  // woke have been served (in Redis' order, under a ticket without an owner client)
  // and their writes committed. No future (not valid()) if no client is blocked.
  std::future<void> TouchKeysServed(const Context& ctx);
  // Whether the keys ctx touched or signalled since *from (counts of its touches
  // and ready signals, moved to the ends) may have clients blocked on them.
  bool TouchesWaitedKeys(const Context& ctx, std::pair<size_t, size_t>* from) const;
  // A key's state in a database as WATCH sees it.
  enum class WatchedState { kAbsent, kLive, kStale };
  // A whole-database operation (FLUSHDB, FLUSHALL, SWAPDB) changed key of physical
  // db from `before` to `after` (SWAPDB: the other database's state; else absent):
  // its watchers become dirty or not as in Redis' touchAllWatchedKeysInDb.
  void TouchWatchedInDbChange(uint8_t db, const std::string& key, WatchedState before, WatchedState after);
  // The keys conn watches that were not stale when it watched them (EXEC fails
  // if one of them has expired since, as Redis' isWatchedKeyExpired).
  std::vector<std::pair<uint8_t, std::string>> WatchedLiveBy(Connection* conn);
  // Client-side caching: keys (physical db, name) changed by client `by` (0:
  // none) are invalidated. Called once the change is visible to readers. marks:
  // the keys' Context::touch_marks (Tracking::Invalidate), or null.
  void KeysChanged(const std::vector<std::pair<uint8_t, std::string>>& keys, uint64_t by,
                   const std::vector<uint64_t>* marks = nullptr) {
    if (!keys.empty() && !tracking_.idle()) tracking_.Invalidate(keys, by, marks);
  }
  // Watched keys of a physical db (to find which a FLUSHDB or SWAPDB affects).
  std::vector<std::string> WatchedKeys(uint8_t db);
  // The (physical db, key) pairs conn watches.
  std::vector<std::pair<uint8_t, std::string>> WatchedBy(Connection* conn);
  // After SWAPDB: watches follow their logical database, as in Redis.
  void SwapWatchedDbs(uint8_t a, uint8_t b);

  // Blocking commands. Each key has a FIFO queue of blocked connections; data
  // arriving on a key wakes the first of them (which re-signals the key if it
  // leaves data behind), so clients are served in the order they blocked.
  // Blocked keys are (logical db, key), as in Redis clients stay in their
  // database across SWAPDB; a signal goes to the logical db its write used then
  // (Server::LogicalDbAt).
  void Block(Connection* conn);
  void Unblock(Connection* conn);
  // Called (under the key's lock) for keys a command changed (TouchKeys).
  // removed: the write that signals left the key deleted (a woken XREADGROUP then
  // ends with -UNBLOCKED, decided now, whatever a later write makes of the key).
  // all: every client blocked on the key wakes (stream readers all see a new entry).
  void SignalKeyReady(int logical_db, const std::string& key, bool removed = false, bool all = false);
  // Redis serves the clients a command unblocks before that command's reply and
  // its client's next command (handleClientsBlockedOnKeys), so a client that
  // sees its LPUSH answered also sees the BRPOPLPUSH it fed done. Here woken
  // clients retry on their own workers: while a WakeScope is open around a
  // client's command, the retries it posts (and those their writes post in
  // turn) share a ticket, and the client waits (awaiting_wakes) until the last
  // of them has run and its writes have committed.
  class WakeScope {
   public:
    explicit WakeScope(Connection* conn);
    ~WakeScope();
    WakeScope(const WakeScope&) = delete;
    WakeScope& operator=(const WakeScope&) = delete;

   private:
    Connection* conn_;
    Connection* outer_;
    std::shared_ptr<void> outer_ticket_;
    int outer_slot_;
  };
  // Redis serves every client a write unblocks before any of them runs its next
  // command. Called by a client its retry just served: if that retry belongs
  // to a WakeScope's ticket, the client waits (awaiting_wakes) with the
  // ticket's owner for the rest of the ticket's retries; false if there is none.
  bool HoldForWakes(Connection* conn);
  // Redis serves every client a write unblocks before any other command runs;
  // here their retries run on their own workers a moment later, and meanwhile
  // another client's pop (in Redis' order after them) could take what a waiter
  // that came before it was woken for, leaving that waiter blocked for good.
  // So such a command (TakesWaitedData) on a key with a retry still to run for
  // a client that was waiting before the command arrived is parked: conn stops
  // (`postponed`, args kept) and runs again, with its arrival time, once those
  // retries have run. False if no key (logical db, name) has such a retry.
  bool ParkBehindWakes(Connection* conn, std::vector<std::pair<uint8_t, std::string>> keys,
                       const std::vector<std::string>& args);
  // Whether any key is being served (no lock: a hint for the dispatcher).
  bool ServingWakes() const { return wakes_in_flight_.load(std::memory_order_relaxed) > 0; }
  // Retries every XREADGROUP blocked on these (logical db, key)s: a client
  // ahead of them found their stream deleted or overwritten and stays blocked.
  void WakeGroupReaders(const std::vector<std::pair<uint8_t, std::string>>& keys);
  // The keys clients are blocked on in these logical databases, by database in
  // the order given, then by key (FLUSHDB, FLUSHALL, SWAPDB change keys without
  // touching each: commands/blocked_signals.h).
  std::vector<std::pair<int, std::string>> BlockedKeysIn(const std::vector<int>& logical_dbs);
  // Clients blocked on keys (or WAIT) or held by CLIENT PAUSE, as Redis'
  // blocked_clients counts them.
  size_t BlockedCount();
  // Of those blocked on keys, the ones with a timeout (Redis' clients_in_timeout_table).
  size_t TimedBlockedCount() const { return timed_blocked_clients_.load(); }

  // CLIENT PAUSE: until until_ms (unix ms), all commands (all) or those that
  // write; a later pause can only extend it. The pause ends by itself (a
  // timer on `timer_worker`) or with UnpauseClients.
  void PauseClients(int64_t until_ms, bool all, Worker* timer_worker);
  void UnpauseClients();
  // DEBUG SET-ACTIVE-EXPIRE: switches the active-expire cycle; once it returns,
  // no pass that started before is still deleting keys.
  void SetActiveExpire(bool on);
  // DEBUG PAUSE-CRON: stops (or resumes) the periodic work Redis' serverCron
  // does (active expiry, client timeouts, tracking-table trims, statistics
  // samples, scheduled saves); once it returns, no pass is under way.
  void PauseCron(bool on);
  bool cron_paused() const { return cron_paused_.load(std::memory_order_relaxed); }
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call some noscript commands
  // (commands/script_runner.cc says which).
  void set_scripts_deny_disabled(bool v) { scripts_deny_disabled_ = v; }
  bool scripts_deny_disabled() const { return scripts_deny_disabled_.load(std::memory_order_relaxed); }
  bool ClientsPaused() const;
  // True if conn's command must wait for the pause to end.
  bool PausedFor(const Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args) const;
  // Holds conn's command until the pause ends.
  void Postpone(Connection* conn, std::vector<std::string> args);
  // Releases conn's held command (it runs now).
  void EndPostpone(Connection* conn);
  // CLIENT UNBLOCK: false if no client id is blocked.
  bool UnblockClient(uint64_t id, bool error);

  // MONITOR.
  void AddMonitor(Connection* conn);
  void RemoveMonitor(Connection* conn);
  bool HasMonitors() const { return monitor_count_.load(std::memory_order_relaxed) > 0; }
  // One MONITOR line for a command of `from`; from_script: a script's call,
  // shown as "[db lua]" as Redis does.
  void FeedMonitors(Connection* from, const std::vector<std::string>& args, bool from_script = false);

  // COMPACT (Storage::CompactAll) without stopping conn's worker: the client waits
  // blocked (a block CLIENT UNBLOCK cannot claim) while the compaction thread
  // runs, then gets +OK or the error. Callers that come while a compaction runs
  // wait for the next one, which starts when it ends (their writes may have missed
  // it). Called on conn's worker, from the command.
  void CompactFor(Connection* conn);

  // WAIT on a master: blocks conn (on its worker, from the command) until
  // `wanted` kvrocks replicas have acknowledged sequence number seq, then
  // replies their count; the timeout and CLIENT UNBLOCK reply the count then.
  void WaitForReplicaAcks(Connection* conn, uint64_t seq, int64_t wanted, uint64_t timeout_ms);
  // kvrocks replicas streaming that have acknowledged seq.
  int ReplicasAcked(uint64_t seq);
  // Drops conn's wait (its block ended otherwise). Called on conn's worker.
  void ForgetReplicaAckWait(Connection* conn);

  // SAVE / BGSAVE: a RocksDB checkpoint at dir/checkpoint.
  Status Save();
  bool BgSave();  // false if one is running
  // Redis' serverCron save points: starts a BGSAVE when one of the `save` points is
  // reached (after a failed one, not before 5 seconds). Called by the cron thread.
  void MaybeSaveOnSchedule();
  // Redis' save on shutdown: a SAVE when asked (SHUTDOWN SAVE) or when save points
  // are set, unless NOSAVE.
  Status SaveBeforeShutdown(bool nosave, bool save);
  // Records a save that covered the first `covered` changes of the dirty
  // counter (rdb_changes_since_last_save) now: LASTSAVE moves to now.
  void NoteSaved(uint64_t covered);
  int64_t last_save() const { return last_save_.load(); }
  // Seconds the last BGSAVE took, and the running one has taken so far (-1: none).
  int64_t last_bgsave_seconds() const { return last_bgsave_seconds_.load(); }
  int64_t current_bgsave_seconds() const;
  // What the last RDB load (full sync, DEBUG RELOAD, --load-rdb) loaded and
  // dropped as already expired (INFO rdb_last_load_keys_loaded / _expired).
  void NoteRdbLoaded(uint64_t loaded, uint64_t expired) {
    last_load_keys_loaded_ = loaded;
    last_load_keys_expired_ = expired;
  }
  uint64_t last_load_keys_loaded() const { return last_load_keys_loaded_.load(); }
  uint64_t last_load_keys_expired() const { return last_load_keys_expired_.load(); }
  bool bgsave_in_progress() const { return bgsave_running_.load(); }
  std::string last_bgsave_status() const { return last_bgsave_ok_.load() ? "ok" : "err"; }

  bool stopping() const { return stop_.load(); }

 private:
  void ActiveExpireLoop();
  // Deletes expired keys of one physical db; returns how many index entries were processed.
  // *cursor (empty at the start of a pass) is where the scan starts and, on return, the last
  // entry processed: later cycles of the pass do not walk again over the tombstones of
  // entries this pass deleted, which made a pass over n due keys quadratic. The keys
  // it deleted are added to *expired_total.
  size_t ExpireCycle(uint8_t db, size_t budget, std::string* cursor, uint64_t* expired_total);
  // Removes key, found expired with metadata raw and expiry expire_ms, in ctx: the
  // expiry cycle's deletion (not of its expire-index entry, which the caller drops).
  static void DeleteExpiredKey(Context* ctx, uint8_t db, const std::string& key, const std::string& raw,
                               uint64_t expire_ms);
  // A replica's cycle over the keys its clients gave a TTL (NoteOwnExpiries): visits
  // up to budget of them, round robin, deleting the expired ones and forgetting those
  // without an expiry (Redis' expireSlaveKeys).
  void ExpireOwnKeys(size_t budget);
  // Redis samples a few such keys per cron tick; a bounded round robin expires them all
  // in time without a pass over them all each tick.
  static constexpr size_t kOwnExpiriesPerTick = 256;

  Config* config_;
  Storage* storage_;
  Stats stats_;
  SlowLog slowlog_;
  AccessClock access_clock_;
  MemoryStats memory_stats_;
  std::atomic<int64_t> clients_memory_{0};
  std::mutex evict_mu_;  // one eviction pass at a time
  // The biggest client buffers of each of the last kRecentSeconds seconds, as
  // Redis' clientsCronTrackExpansiveClients keeps them.
  static constexpr int kRecentSeconds = 8;
  std::mutex recent_buffers_mu_;
  struct RecentMax {
    int64_t second = -1;
    uint64_t in = 0, out = 0;
  };
  std::array<RecentMax, kRecentSeconds> recent_buffers_{};
  PubSub pubsub_;
  Tracking tracking_{this};
  Acl acl_;
  LatencyMonitor latency_;
  int64_t start_time_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<int> listening_port_{-1};  // the port of the TCP listeners; -1 while none are bound
  std::unique_ptr<Replica> replica_;
  std::mutex own_expiries_mu_;  // a leaf: taken under key locks, none taken under it
  std::set<std::pair<uint8_t, std::string>> own_expiries_;
  std::pair<uint8_t, std::string> own_expiries_cursor_;  // the last key ExpireOwnKeys visited
  std::unique_ptr<RdbSnapshotSender> rdb_sender_;
  std::unique_ptr<WalSender> wal_sender_;
  std::atomic<bool> loading_{false};
  DetachedSessions detached_;

  std::atomic<uint64_t> next_client_id_{0};
  std::atomic<size_t> next_worker_{0};
  std::mutex clients_mu_;
  std::map<uint64_t, Connection*> clients_;
  Connection* listed_master_ = nullptr;  // under clients_mu_
  uint64_t master_listed_before_ = 0;    // clients with greater ids came after it
  size_t killed_clients_ = 0;  // in clients_ with kill_requested set; under clients_mu_

  std::mutex watch_mu_;
  std::atomic<size_t> watch_count_{0};
  // How a client watches a key: whether the key was stale when it watched it,
  // and the `since` of Watch.
  struct Watcher {
    bool stale;
    uint64_t since;
  };
  using Watchers = std::map<Connection*, Watcher>;
  std::map<std::pair<uint8_t, std::string>, Watchers> watched_;

  std::mutex blocked_mu_;
  struct Waiter {
    Worker* worker;
    uint64_t id;
    bool group_read;  // XREADGROUP (WakeGroupReaders)
    uint64_t arrival_ns;  // a key's waiters queue in the order their commands arrived
  };
  using WaitQueues = std::map<std::pair<uint8_t, std::string>, std::deque<Waiter>>;
  WaitQueues blocked_;
  // Retries posted for each key and not yet run, by their waiters' arrival
  // times (under blocked_mu_), their number, and the clients parked behind them
  // (ParkBehindWakes) with their commands' arrival times.
  std::map<std::pair<uint8_t, std::string>, std::multiset<uint64_t>> serving_;
  std::atomic<uint32_t> wakes_in_flight_{0};
  struct Parked {
    Worker* worker;
    uint64_t id;
    uint64_t arrival_ns;
    std::vector<std::pair<uint8_t, std::string>> keys;
  };
  std::vector<Parked> parked_;
  // Whether a command that arrived at arrival_ns must wait for the retries of key:
  // one of them serves a client that was waiting before it came (under blocked_mu_).
  bool ServedBefore(const std::pair<uint8_t, std::string>& key, uint64_t arrival_ns) const;
  // The retry of a client that arrived at arrival_ns, posted for key, has run:
  // the clients parked on key that no longer wait for an earlier one run again.
  void WakeRan(const std::pair<uint8_t, std::string>& key, uint64_t arrival_ns);
  std::atomic<size_t> blocked_clients_{0};  // written under blocked_mu_; read without it
  std::atomic<size_t> timed_blocked_clients_{0};  // the same
  // Takes conn out of the two counts above if it still is in them (under blocked_mu_).
  void ReleaseBlockCountsLocked(Connection* conn);
  // CLIENT UNBLOCK or CLIENT KILL freed conn (under blocked_mu_): out of the
  // counts above, and passed over by wakes (freed_waiters_) until its worker
  // ends the block (Unblock), as Redis' unblockClient leaves nothing behind.
  void FreeWaiterLocked(Connection* conn);
  std::set<uint64_t> freed_waiters_;
  // Blocked clients per slot of a key's hash: a write to a key nobody waits on
  // (the common case) signals without taking blocked_mu_.
  static constexpr size_t kBlockFilterSlots = 1024;
  std::array<std::atomic<uint32_t>, kBlockFilterSlots> block_filter_{};
  static size_t BlockFilterSlot(const std::string& key);
  // Whether a client may be blocked on key, in any database (the filter has false positives).
  bool MayBeWaited(const std::string& key) const;
  // TouchKeys' part for blocked clients.
  void SignalTouched(const Context& ctx);
  // The logical database that held physical database `physical` when touch
  // `index` of ctx (or, with is_touch false, its ready signal `index`) was noted:
  // a SWAPDB later in the same transaction changed which one holds it now.
  int LogicalDbAt(const Context& ctx, uint8_t physical, bool is_touch, size_t index) const;
  // Posts a retry to the first, every, or every XREADGROUP client blocked on
  // (logical db, key). Why: a write signalled the key (kSignal); a client the
  // key served (or that found it gone) passes it on to the next in line, who
  // then comes right after it in the order the current ticket frees clients
  // (kPassOn); a client whose wait ended leaves a key it was not served from,
  // whose wake it may have taken (kLeftBehind). Under a ticket, signals and
  // left keys wait their turn (AdvanceWakes): Redis serves a key's clients
  // one after another before it looks at the next key (handleClientsBlockedOnKeys),
  // so a client blocked on two keys that both got data is served from the
  // one signalled first, and the keys its serving signals come after them.
  enum class Wakes { kFirst, kAll, kGroupReaders };
  enum class WakeCause { kSignal, kPassOn, kLeftBehind };
  void WakeBlocked(int logical_db, const std::string& key, Wakes who, bool removed, WakeCause cause);
  // WakeBlocked's posting, under blocked_mu_, for the waiters of `it`.
  void PostWakesLocked(WaitQueues::iterator it, Wakes who, bool removed, bool pass_on,
                       const std::shared_ptr<void>& ticket);
  // Serves the keys queued on ticket while none of its wakes is running; the
  // caller has claimed the turn to do so (WakeTicket::advancing).
  void AdvanceWakes(const std::shared_ptr<void>& ticket);
  // A wake posted under ticket (null: none) has run: the next queued key's turn
  // if it was the last.
  void WakeEnded(const std::shared_ptr<void>& ticket);

  std::atomic<int64_t> pause_until_ms_{0};
  std::atomic<bool> pause_all_{false};
  std::mutex postponed_mu_;
  std::vector<std::pair<Worker*, uint64_t>> postponed_;
  std::atomic<size_t> postponed_clients_{0};

  std::mutex monitor_mu_;
  std::atomic<size_t> monitor_count_{0};
  std::set<Connection*> monitors_;

  std::mutex save_mu_;
  std::atomic<int64_t> last_save_;
  std::atomic<bool> bgsave_running_{false};
  std::atomic<bool> last_bgsave_ok_{true};
  std::atomic<int64_t> last_bgsave_try_{0};  // unix seconds
  std::atomic<int64_t> bgsave_start_{0};     // unix seconds of the running BGSAVE
  std::atomic<int64_t> last_bgsave_seconds_{-1};
  std::atomic<uint64_t> last_load_keys_loaded_{0}, last_load_keys_expired_{0};
  std::thread bgsave_thread_;

  // COMPACT's thread (CompactFor): runs while callers wait; stopped (cancelling a
  // running compaction) before the workers when the server stops.
  void CompactLoop();
  void StopCompactions();
  // WaitForReplicaAcks: answers the waits an acknowledgement satisfied.
  void OnReplicaAck();
  struct AckWait {
    Worker* worker;
    uint64_t client_id;
    uint64_t serial;  // the connection's block.ack_wait of this wait
    uint64_t seq;
    int64_t wanted;
  };
  std::mutex ack_waits_mu_;
  std::vector<AckWait> ack_waits_;
  uint64_t ack_wait_serial_ = 0;  // under ack_waits_mu_

  std::mutex compact_mu_;
  std::vector<std::pair<Worker*, uint64_t>> compact_waiters_;  // (worker, client id)
  bool compact_running_ = false;
  bool compact_stopped_ = false;
  std::thread compact_thread_;

  std::atomic<bool> stop_{false};
  MigrateSockets migrate_sockets_;
  std::mutex stop_mu_;
  // Held by the active-expire thread for a whole pass (see SetActiveExpire).
  std::mutex expire_pass_mu_;
  std::atomic<bool> expire_switching_{false};
  std::atomic<bool> cron_paused_{false};
  std::atomic<bool> scripts_deny_disabled_{false};
  std::condition_variable stop_cv_;
  std::thread expire_thread_;
};

}  // namespace kvrocks
