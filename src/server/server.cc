#include "server/server.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>

#include "commands/command.h"
#include "commands/script_runner.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "replication/rdb_snapshot_sender.h"
#include "replication/replica.h"
#include "replication/wal_sender.h"
#include "server/connection.h"
#include "server/notify.h"
#include "server/oom_score.h"
#include "server/supervision.h"
#include "server/worker.h"
#include "server/write_batcher.h"
#include "storage/context.h"
#include "storage/key_encoding.h"
#include "types/database.h"
#include "types/redis_hash.h"

namespace kvrocks {

Server::Server(Config* config, Storage* storage)
    : config_(config),
      storage_(storage),
      access_clock_(static_cast<size_t>(config->access_clock_slots)),
      start_time_(static_cast<int64_t>(std::time(nullptr))),
      last_save_(static_cast<int64_t>(std::time(nullptr))) {}

bool Server::NotEnoughGoodReplicas() {
  return !replica_->is_replica() && config_->min_replicas_to_write > 0 && config_->min_replicas_max_lag > 0 &&
         wal_sender_->GoodReplicas(config_->min_replicas_max_lag) < config_->min_replicas_to_write;
}

Server::~Server() {
  if (bgsave_thread_.joinable()) bgsave_thread_.join();
}

bool ParseHostPort(const std::string& s, std::string* host, int* port) {
  size_t sp = s.find(' ');
  if (sp == std::string::npos) return false;
  *host = s.substr(0, sp);
  int64_t p;
  if (!ParseInt64(s.substr(sp + 1), &p) || p <= 0 || p > 65535) return false;
  *port = static_cast<int>(p);
  return true;
}

Status Server::LoadAcl() {
  if (!config_->aclfile.empty() && !config_->acl_user_lines.empty()) {
    return Status::InvalidArgument("Configuring Redis with users defined in redis.conf and at the same setting an "
                                   "ACL file path is invalid. This setup is very likely to lead to configuration "
                                   "errors and security holes, please define either an ACL file or declare users "
                                   "directly in your redis.conf, but not both.");
  }
  acl_.SetPubsubDefault(config_->acl_pubsub_default == "allchannels");
  acl_.SetLogMaxLen(config_->acllog_max_len);
  config_->OnSet("acl-pubsub-default", [this](const Config& c) {
    acl_.SetPubsubDefault(c.acl_pubsub_default == "allchannels");
    return Status::OK();
  });
  config_->OnSet("acllog-max-len", [this](const Config& c) {
    acl_.SetLogMaxLen(c.acllog_max_len);
    return Status::OK();
  });
  std::vector<std::string> lines = config_->acl_user_lines;
  if (!config_->aclfile.empty()) {
    std::ifstream in(config_->aclfile);
    if (!in) return Status::IOError("cannot open the ACL file " + config_->aclfile);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  if (!lines.empty()) {
    std::string err = acl_.LoadLines(lines);
    if (!err.empty()) return Status::InvalidArgument("ACL: " + err);
  }
  // requirepass is the default user's password (its only one), as in Redis.
  if (!config_->requirepass.empty()) acl_.SetDefaultPassword(config_->requirepass);
  config_->OnSet("requirepass", [this](const Config& c) {
    acl_.SetDefaultPassword(c.requirepass);
    return Status::OK();
  });
  return Status::OK();
}

namespace {

// As Redis' checkTcpBacklogSettings: the kernel silently caps listen(2)'s backlog.
void WarnIfBacklogCapped(int backlog) {
  std::ifstream in("/proc/sys/net/core/somaxconn");
  int somaxconn = 0;
  if (in >> somaxconn && somaxconn > 0 && somaxconn < backlog) {
    LOG(WARNING) << "WARNING: The TCP backlog setting of " << backlog
                 << " cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of "
                 << somaxconn << ".";
  }
}

}  // namespace

Status Server::Start() {
  WarnIfBacklogCapped(config_->tcp_backlog);
  MemoryStats::SetJemallocBackgroundThread(config_->jemalloc_bg_thread);
  config_->OnSet("jemalloc-bg-thread", [](const Config& c) {
    MemoryStats::SetJemallocBackgroundThread(c.jemalloc_bg_thread);
    return Status::OK();
  });
  ApplyOomScoreAdj(*config_, !config_->replicaof.empty());  // Follow applies a replica's
  auto oom = [this](const Config& c) {
    if (ApplyOomScoreAdj(c, replica_ != nullptr && replica_->is_replica())) return Status::OK();
    return Status::InvalidArgument("Failed to set current oom_score_adj. Check server logs.");
  };
  config_->OnSet("oom-score-adj", oom);
  config_->OnSet("oom-score-adj-values", oom);
  Status acl_status = LoadAcl();
  if (!acl_status.ok()) return acl_status;
  for (int i = 0; i < config_->workers; i++) workers_.push_back(std::make_unique<Worker>(this, i));
  // The first worker accepts and deals the connections out to all workers. One
  // listening socket per address, without SO_REUSEPORT: a second server started
  // on the same port fails to bind, as redis-server does, instead of silently
  // taking a share of the connections. port 0: no TCP listener, as in Redis.
  const std::vector<std::string> hosts = config_->BindAddresses();
  Status listening = workers_[0]->ListenTcp(hosts, config_->port);
  if (!listening.ok()) return listening;
  listening_port_ = config_->port;
  // CONFIG SET rebinds as Redis' updatePort (only for a new port) and applyBind
  // (always) do. A failure leaves no TCP listener; CONFIG SET then restores the
  // old values and runs these again, which rebinds them.
  auto rebind = [this](const Config& c, const char* failure) {
    listening_port_ = -1;
    if (!workers_[0]->ListenTcp(c.BindAddresses(), c.port).ok()) return Status::InvalidArgument(failure);
    listening_port_ = c.port;
    return Status::OK();
  };
  config_->OnSet("port", [this, rebind](const Config& c) {
    return c.port == listening_port_ ? Status::OK() : rebind(c, "Unable to listen on this port. Check server logs.");
  });
  config_->OnSet("bind", [rebind](const Config& c) { return rebind(c, "Failed to bind to specified addresses."); });
  if (!config_->unixsocket.empty()) {
    Status s = workers_[0]->ListenUnix(config_->unixsocket, config_->unixsocketperm);
    if (!s.ok()) return s;
  }
  if ((config_->port == 0 || hosts.empty()) && config_->unixsocket.empty()) {
    return Status::InvalidArgument("Configured to not listen anywhere, exiting.");
  }
  // Every command asks the replica's role: it exists (and a configured replica
  // already follows, so that no write slips in) before a worker serves anyone.
  replica_ = std::make_unique<Replica>(this);
  rdb_sender_ = std::make_unique<RdbSnapshotSender>(storage_, config_->databases, &stats_);
  wal_sender_ = std::make_unique<WalSender>(storage_, &stats_);
  wal_sender_->SetAckListener([this] { OnReplicaAck(); });
  Status s = replica_->LoadState();
  if (!s.ok()) return s;
  if (!config_->replicaof.empty() && !config_->kslaveof.empty()) {
    return Status::InvalidArgument("replicaof and kslaveof are both set: a server follows one master");
  }
  for (const std::string* master : {&config_->replicaof, &config_->kslaveof}) {
    if (master->empty()) continue;
    std::string host;
    int port = 0;
    const char* name = master == &config_->replicaof ? "replicaof" : "kslaveof";
    if (!ParseHostPort(*master, &host, &port)) {
      return Status::InvalidArgument(std::string("bad ") + name + " '" + *master + "' (expected: host port)");
    }
    replica_->Follow(host, port, master == &config_->kslaveof);
  }
  for (auto& w : workers_) w->Start();
  memory_stats_.MarkStartup();
  expire_thread_ = std::thread([this] { ActiveExpireLoop(); });
  return Status::OK();
}

void Server::Stop() {
  {
    std::lock_guard<std::mutex> g(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
}

void Server::Wait() {
  {
    std::unique_lock<std::mutex> g(stop_mu_);
    stop_cv_.wait(g, [this] { return stop_.load(); });
  }
  if (replica_) replica_->Stop();
  if (rdb_sender_) rdb_sender_->Stop();
  if (wal_sender_) wal_sender_->Stop();
  detached_.Stop();
  StopCompactions();
  for (auto& w : workers_) w->Stop();
  if (expire_thread_.joinable()) expire_thread_.join();
  if (bgsave_thread_.joinable()) bgsave_thread_.join();
  workers_.clear();
  if (!config_->unixsocket.empty()) {
    LOG(INFO) << "Removing the unix socket file.";
    if (unlink(config_->unixsocket.c_str()) != 0) {
      LOG(WARNING) << "Error removing the unix socket file: " << strerror(errno);
    }
  }
}

bool Server::Register(Connection* conn) {
  std::lock_guard<std::mutex> g(clients_mu_);
  if (static_cast<int>(clients_.size() + (listed_master_ != nullptr)) >= config_->maxclients) return false;
  clients_[conn->id()] = conn;
  return true;
}

void Server::Unregister(Connection* conn) {
  conn->EndBlock();
  if (conn->postponed) EndPostpone(conn);
  UnwatchAll(conn);
  if (conn->monitor) RemoveMonitor(conn);
  UnsubscribeAll(conn);
  tracking_.Disable(conn);
  clients_memory_.fetch_sub(static_cast<int64_t>(conn->reported_memory()), std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(clients_mu_);
  if (clients_.erase(conn->id()) > 0 && conn->kill_requested.load()) {
    killed_clients_--;
    pubsub_.ForgetKilled();
  }
}

std::vector<int> Server::WorkerThreadIds() const {
  std::vector<int> ids;
  for (const auto& w : workers_) {
    if (w->thread_id() != 0) ids.push_back(w->thread_id());
  }
  return ids;
}

Worker* Server::WorkerOf(uint64_t id) {
  std::lock_guard<std::mutex> g(clients_mu_);
  auto it = clients_.find(id);
  return it == clients_.end() || it->second->kill_requested.load() ? nullptr : it->second->worker();
}

void Server::UnsubscribeAll(Connection* conn) {
  for (int kind = 0; kind < 3; kind++) {
    auto names = conn->subscriptions[kind];
    for (const auto& name : names) pubsub_.Unsubscribe(static_cast<PubSubKind>(kind), conn, name);
  }
}

size_t Server::ClientCount() {
  std::lock_guard<std::mutex> g(clients_mu_);
  return clients_.size() - killed_clients_ + (listed_master_ != nullptr);
}

void Server::ListMasterClient(Connection* master) {
  std::lock_guard<std::mutex> g(clients_mu_);
  listed_master_ = master;
  // The ids handed out so far: a resumed link's client (PSYNC) keeps its old id.
  master_listed_before_ = next_client_id_.load();
}

bool Server::IsListedMasterClient(uint64_t id) {
  std::lock_guard<std::mutex> g(clients_mu_);
  return listed_master_ != nullptr && listed_master_->id() == id;
}

void Server::UnlistMasterClient(Connection* master) {
  std::lock_guard<std::mutex> g(clients_mu_);
  if (master == nullptr || listed_master_ == master) listed_master_ = nullptr;
}

void Server::AddClientMemory(int64_t delta) {
  int64_t total = clients_memory_.fetch_add(delta, std::memory_order_relaxed) + delta;
  if (delta <= 0) return;
  uint64_t limit = ClientEvictionLimit();
  if (limit != 0 && total >= static_cast<int64_t>(limit)) EvictClients();
}

uint64_t Server::ClientEvictionLimit() const {
  int64_t v = config_->maxmemory_clients.load(std::memory_order_relaxed);
  if (v <= 0) return 0;  // off, or a percentage of a maxmemory of 0
  // As Redis: never so small that no client can talk to the server.
  return std::max<uint64_t>(static_cast<uint64_t>(v), 128 * 1024);
}

void Server::EvictClients() {
  const uint64_t limit = ClientEvictionLimit();
  if (limit == 0) return;
  // Another thread's pass is choosing already: its kills are on their way.
  std::unique_lock<std::mutex> pass(evict_mu_, std::try_to_lock);
  if (!pass.owns_lock()) return;
  int64_t total = clients_memory_.load();
  if (total < static_cast<int64_t>(limit)) return;
  std::vector<std::pair<uint64_t, uint64_t>> candidates;  // (memory, id)
  {
    std::lock_guard<std::mutex> g(clients_mu_);
    for (const auto& [id, c] : clients_) {
      if (c->no_evict.load() || c->kill_requested.load()) continue;
      uint64_t m = c->query_buffer_size.load() + c->output_buffer_size.load();
      if (m > 0) candidates.emplace_back(m, id);
    }
  }
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  for (const auto& [m, id] : candidates) {
    if (total < static_cast<int64_t>(limit)) return;
    if (!Kill(id)) continue;
    LOG(INFO) << "Evicting client: id=" << id << " tot-mem=" << m;
    stats_.evicted_clients++;
    total -= static_cast<int64_t>(m);
  }
  if (total >= static_cast<int64_t>(limit)) LOG(WARNING) << "Over client maxmemory after evicting all evictable clients";
}

uint64_t Server::ClientBuffers(uint64_t* recent_max_in, uint64_t* recent_max_out) {
  uint64_t total = 0, max_in = 0, max_out = 0;
  {
    std::lock_guard<std::mutex> g(clients_mu_);
    for (const auto& [id, c] : clients_) {
      uint64_t in = c->query_buffer_size.load(), out = c->output_buffer_size.load();
      total += in + out;
      max_in = std::max(max_in, in);
      max_out = std::max(max_out, out);
    }
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  std::lock_guard<std::mutex> g(recent_buffers_mu_);
  RecentMax& slot = recent_buffers_[static_cast<size_t>(now % kRecentSeconds)];
  if (slot.second != now) slot = RecentMax{now, 0, 0};
  slot.in = std::max(slot.in, max_in);
  slot.out = std::max(slot.out, max_out);
  *recent_max_in = *recent_max_out = 0;
  for (const RecentMax& r : recent_buffers_) {
    if (r.second <= now - kRecentSeconds) continue;
    *recent_max_in = std::max(*recent_max_in, r.in);
    *recent_max_out = std::max(*recent_max_out, r.out);
  }
  return total;
}

void Server::Watch(Connection* conn, uint8_t db, const std::string& key, bool stale, uint64_t since) {
  std::lock_guard<std::mutex> g(watch_mu_);
  auto& watchers = watched_[{db, key}];
  if (watchers.emplace(conn, Watcher{stale, since}).second) {
    conn->watched.emplace_back(db, key);
    watch_count_++;
  }
}

void Server::UnwatchAll(Connection* conn) {
  if (conn->watched.empty()) {
    conn->watch_dirty = false;
    return;
  }
  std::lock_guard<std::mutex> g(watch_mu_);
  for (auto& k : conn->watched) {
    auto it = watched_.find(k);
    if (it == watched_.end()) continue;
    if (it->second.erase(conn) > 0) watch_count_--;
    if (it->second.empty()) watched_.erase(it);
  }
  conn->watched.clear();
  conn->watch_dirty = false;
}

void Server::SignalTouched(const Context& ctx) {
  const auto& keys = ctx.touched();
  const auto& kinds = ctx.touch_kinds();
  const auto& ready = ctx.touch_ready();
  // Each key someone may wait on is signalled once, in Redis' ready_keys order:
  // where Redis first signals it (a `ready` touch, a ready signal), else where
  // it was first touched. Places are 2i+1 for touch i and 2*at for a signal
  // noted before touch `at`.
  struct Signal {
    size_t place = SIZE_MAX;
    bool has_ready = false;
    size_t last = 0;  // the place of its last touch or removing signal
    bool removed = false;  // ... and whether that left the key deleted
    bool all = false;
    size_t seq = 0;  // among signals noted at one place: the order they were noted in
  };
  std::map<std::pair<int, std::string>, Signal> signals;  // by logical db
  for (size_t i = 0; i < keys.size(); i++) {
    if (!MayBeWaited(keys[i].second)) continue;
    Signal& sig = signals[{LogicalDbAt(ctx, keys[i].first, true, i), keys[i].second}];
    if (ready[i] && !sig.has_ready) {
      sig.place = 2 * i + 1;
      sig.has_ready = true;
    } else if (!sig.has_ready && sig.place == SIZE_MAX) {
      sig.place = 2 * i + 1;
    }
    sig.last = 2 * i + 1;
    sig.removed = kinds[i] == Context::TouchKind::kRemoved || kinds[i] == Context::TouchKind::kExpired;
  }
  const auto& noted = ctx.ready_signals();
  for (size_t j = 0; j < noted.size(); j++) {
    const Context::ReadySignal& r = noted[j];
    if (!MayBeWaited(r.key.second)) continue;
    Signal& sig = signals[{LogicalDbAt(ctx, r.key.first, false, j), r.key.second}];
    if (!sig.has_ready || 2 * r.at < sig.place) {
      sig.place = 2 * r.at;
      sig.seq = j;
    }
    sig.has_ready = true;
    sig.all |= r.all;
    if (r.removed && 2 * r.at >= sig.last) {
      sig.last = 2 * r.at;
      sig.removed = true;
    }
  }
  std::vector<std::pair<std::pair<size_t, size_t>, decltype(signals)::const_iterator>> order;
  for (auto it = signals.cbegin(); it != signals.cend(); ++it) {
    order.emplace_back(std::make_pair(it->second.place, it->second.seq), it);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [place, it] : order) {
    SignalKeyReady(it->first.first, it->first.second, it->second.removed, it->second.all);
  }
}

bool Server::TouchesWaitedKeys(const Context& ctx, std::pair<size_t, size_t>* from) const {
  const auto& keys = ctx.touched();
  const auto& signals = ctx.ready_signals();
  const size_t key_from = from->first, signal_from = from->second;
  *from = {keys.size(), signals.size()};
  if (blocked_clients_.load(std::memory_order_relaxed) == 0) return false;
  for (size_t i = key_from; i < keys.size(); i++) {
    if (MayBeWaited(keys[i].second)) return true;
  }
  for (size_t i = signal_from; i < signals.size(); i++) {
    if (MayBeWaited(signals[i].key.second)) return true;
  }
  return false;
}

int Server::LogicalDbAt(const Context& ctx, uint8_t physical, bool is_touch, size_t index) const {
  int db = storage_->LogicalDb(physical);
  const auto& swaps = ctx.db_swaps();
  // Undo the swaps noted after the entry, latest first (swaps are noted in order).
  for (auto it = swaps.rbegin(); it != swaps.rend(); ++it) {
    if ((is_touch ? it->touch_at : it->signal_at) <= index) break;
    if (db == it->a) {
      db = it->b;
    } else if (db == it->b) {
      db = it->a;
    }
  }
  return db;
}

void Server::TouchKeys(const Context& ctx) {
  // As Redis signals a key on every creation, overwrite or deletion (RENAME,
  // COPY, SORT STORE ... onto a list a client waits on; a stream deleted under
  // XREADGROUP): a woken client whose key holds nothing for it blocks on.
  // Counted before its block ends its command's batch (which holds the key
  // locks this write needed), so a waiter is never missed here.
  if (blocked_clients_.load(std::memory_order_relaxed) != 0) SignalTouched(ctx);
  const auto& keys = ctx.touched();
  const auto& kinds = ctx.touch_kinds();
  const auto& marks = ctx.touch_marks();
  if (watch_count_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> g(watch_mu_);
  const bool swapped = !ctx.db_swaps().empty();
  for (size_t i = 0; i < keys.size(); i++) {
    // Watchers stay in their logical db across SWAPDB (SwapWatchedDbs moves
    // them): one swapped since this touch now sits under another physical db.
    const int logical = swapped ? LogicalDbAt(ctx, keys[i].first, true, i) : -1;
    auto it = logical >= 0 ? watched_.find({storage_->PhysicalDb(logical), keys[i].second}) : watched_.find(keys[i]);
    if (it == watched_.end()) continue;
    bool gone = kinds[i] == Context::TouchKind::kExpired || kinds[i] == Context::TouchKind::kRemoved;
    for (auto& [c, w] : it->second) {
      if (w.since != 0 && Tracking::MarkTime(marks[i]) < w.since) {
        // A busy script's write before the WATCH, which Redis saw: after it the key
        // was live or gone, not stale (WATCH read the committed data, without it).
        w.stale = false;
        continue;
      }
      if (w.stale && gone) {
        w.stale = false;  // a key stale when watched is now gone: logically no change
        continue;
      }
      c->watch_dirty = true;
    }
  }
}

void Server::TouchWatchedInDbChange(uint8_t db, const std::string& key, WatchedState before, WatchedState after) {
  if (before == WatchedState::kAbsent && after == WatchedState::kAbsent) return;
  std::lock_guard<std::mutex> g(watch_mu_);
  auto it = watched_.find({db, key});
  if (it == watched_.end()) return;
  for (auto& [c, w] : it->second) {
    if (w.stale) {
      if (after == WatchedState::kAbsent) {
        w.stale = false;  // the stale key is gone
        continue;
      }
      if (after == WatchedState::kStale) continue;  // stale it stays
    } else if (before == WatchedState::kAbsent && after == WatchedState::kStale) {
      w.stale = true;  // no key became a stale one
      continue;
    }
    c->watch_dirty = true;
  }
}

std::vector<std::pair<uint8_t, std::string>> Server::WatchedLiveBy(Connection* conn) {
  std::vector<std::pair<uint8_t, std::string>> out;
  std::lock_guard<std::mutex> g(watch_mu_);
  for (const auto& k : conn->watched) {
    auto it = watched_.find(k);
    if (it == watched_.end()) continue;
    auto w = it->second.find(conn);
    if (w != it->second.end() && !w->second.stale) out.push_back(k);
  }
  return out;
}

std::vector<std::pair<uint8_t, std::string>> Server::WatchedBy(Connection* conn) {
  std::lock_guard<std::mutex> g(watch_mu_);
  return conn->watched;
}

void Server::SwapWatchedDbs(uint8_t a, uint8_t b) {
  std::lock_guard<std::mutex> g(watch_mu_);
  auto swap_db = [a, b](uint8_t d) { return d == a ? b : (d == b ? a : d); };
  std::map<std::pair<uint8_t, std::string>, Watchers> moved;
  std::set<Connection*> conns;
  for (auto& [k, watchers] : watched_) moved[{swap_db(k.first), k.second}] = std::move(watchers);
  watched_.swap(moved);
  for (auto& [k, watchers] : watched_) {
    for (auto& [c, w] : watchers) conns.insert(c);
  }
  for (Connection* c : conns) {
    for (auto& w : c->watched) w.first = swap_db(w.first);
  }
}

std::vector<std::string> Server::WatchedKeys(uint8_t db) {
  std::vector<std::string> keys;
  if (watch_count_.load(std::memory_order_relaxed) == 0) return keys;
  std::lock_guard<std::mutex> g(watch_mu_);
  for (auto& [k, conns] : watched_) {
    if (k.first == db) keys.push_back(k.second);
  }
  return keys;
}

void Server::PauseClients(int64_t until_ms, bool all, Worker* timer_worker) {
  int64_t now = static_cast<int64_t>(NowMs());
  if (pause_until_ms_.load() <= now) pause_all_ = false;  // a pause that ended is replaced
  if (until_ms > pause_until_ms_.load()) pause_until_ms_ = until_ms;
  if (all) pause_all_ = true;
  timer_worker->RunAfter(static_cast<uint64_t>(std::max<int64_t>(0, until_ms - now)), [this] {
    if (static_cast<int64_t>(NowMs()) >= pause_until_ms_.load()) UnpauseClients();
  });
}

void Server::UnpauseClients() {
  pause_until_ms_ = 0;
  pause_all_ = false;
  std::vector<std::pair<Worker*, uint64_t>> waiting;
  {
    std::lock_guard<std::mutex> g(postponed_mu_);
    waiting.swap(postponed_);
  }
  for (const auto& entry : waiting) {
    Worker* w = entry.first;
    uint64_t id = entry.second;
    w->Post([w, id] {
      if (Connection* c = w->Find(id)) c->RunPostponed();
    });
  }
}

bool Server::ClientsPaused() const {
  int64_t until = pause_until_ms_.load(std::memory_order_relaxed);
  return until != 0 && until > static_cast<int64_t>(NowMs());  // no clock read when never paused
}

bool Server::PausedFor(const Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args) const {
  if (conn->is_master || !ClientsPaused()) return false;
  if (pause_all_) return true;
  // WRITE pauses what writes or may be propagated, also inside EXEC.
  if (CommandMayReplicate(spec, args)) return true;
  if (TokenEquals(spec.name, "exec")) {
    for (const auto& q : conn->queued) {
      const CommandSpec* s = CommandTable::Instance().Find(q[0]);
      if (s != nullptr && CommandMayReplicate(*s, q)) return true;
    }
  }
  return false;
}

void Server::Postpone(Connection* conn, std::vector<std::string> args) {
  conn->postponed = true;
  conn->postpone_counted = true;
  postponed_clients_++;
  conn->postponed_args = std::move(args);
  {
    std::lock_guard<std::mutex> g(postponed_mu_);
    postponed_.emplace_back(conn->worker(), conn->id());
  }
  if (!ClientsPaused()) UnpauseClients();  // the pause ended meanwhile: nobody else would resume us
}

size_t Server::BlockFilterSlot(const std::string& key) { return std::hash<std::string>()(key) % kBlockFilterSlots; }

bool Server::MayBeWaited(const std::string& key) const {
  return block_filter_[BlockFilterSlot(key)].load(std::memory_order_relaxed) != 0;
}

void Server::Block(Connection* conn) {
  conn->blocked = conn->block.claimable ? Connection::kBlockedClaimable : Connection::kBlockedForServer;
  const bool group_read = !conn->block.args.empty() && TokenEquals(conn->block.args[0], "xreadgroup");
  const uint64_t arrival = conn->CommandArrivalNs();
  std::lock_guard<std::mutex> g(blocked_mu_);
  for (auto& k : conn->block.keys) {
    std::deque<Waiter>& q = blocked_[k];
    auto at = q.end();
    while (at != q.begin() && std::prev(at)->arrival_ns > arrival) --at;
    q.insert(at, Waiter{conn->worker(), conn->id(), group_read, arrival});
    block_filter_[BlockFilterSlot(k.second)].fetch_add(1);
  }
  conn->block_counted = true;
  blocked_clients_++;
  conn->blocked_with_timeout = conn->block.timeout_ms > 0;
  if (conn->blocked_with_timeout) timed_blocked_clients_++;
}

void Server::ReleaseBlockCountsLocked(Connection* conn) {
  if (!conn->block_counted) return;
  conn->block_counted = false;
  blocked_clients_--;
  if (conn->blocked_with_timeout) timed_blocked_clients_--;
  conn->blocked_with_timeout = false;
}

void Server::FreeWaiterLocked(Connection* conn) {
  if (!conn->block_counted) return;
  ReleaseBlockCountsLocked(conn);
  freed_waiters_.insert(conn->id());
}

void Server::Unblock(Connection* conn) {
  conn->blocked = Connection::kNotBlocked;
  std::vector<std::pair<uint8_t, std::string>> keys = conn->block.keys;
  {
    std::lock_guard<std::mutex> g(blocked_mu_);
    for (auto& k : keys) {
      auto it = blocked_.find(k);
      if (it == blocked_.end()) continue;
      auto& q = it->second;
      for (auto qi = q.begin(); qi != q.end(); ++qi) {
        if (qi->id == conn->id()) {
          q.erase(qi);
          block_filter_[BlockFilterSlot(k.second)].fetch_sub(1);
          break;
        }
      }
      if (q.empty()) blocked_.erase(it);
    }
    ReleaseBlockCountsLocked(conn);
    if (!freed_waiters_.empty()) freed_waiters_.erase(conn->id());
  }
  // Whatever this client was woken for (or leaves behind) goes to the next in line:
  // the key it was served from at once, the others in their turn.
  const auto* served = conn->block.serving;
  for (auto& [db, key] : keys) {
    const bool from = served != nullptr && served->first == db && served->second == key;
    WakeBlocked(db, key, Wakes::kFirst, false, from ? WakeCause::kPassOn : WakeCause::kLeftBehind);
  }
}

namespace {

// Held by every retry a client's command posted; the last one to let go
// resumes that client (`owner`), which holds the clients the retries served
// (HoldForWakes) until its batch is done, in the order Redis would have freed
// them (Slot::order), whatever order the workers ran the retries in.
struct WakeTicket {
  // Where a wake stands in Redis' order. CLIENT UNBLOCK frees a client during
  // the command (unblockClient), keys are served after it (handleClientsBlockedOnKeys):
  // the keys its command signalled in the order of their first signal, each
  // key's clients one after another (a client served passes the key on), then
  // the keys those clients' own writes signalled, as the next round.
  enum class Kind { kUnblock, kSignal, kPassOn };
  struct Slot {
    std::vector<uint32_t> order;  // compared lexicographically
    Connection::ClientRef client;
    bool served = false;
    uint32_t passed_on = 0;  // wakes this slot's retry passed on to the next in line
    uint32_t signalled = 0;  // wakes its own writes caused (the next round)
  };
  // A key waiting for its turn: Redis serves one key's clients, then the next
  // key's, and the keys their serving signals after this round's.
  struct Queued {
    std::pair<uint8_t, std::string> key;
    bool all = false;
    bool removed = false;
    bool pass_on = false;  // a key a client left behind
    int parent = -1;       // the slot whose run signalled it (-1: the owner's command)
    uint64_t mark = 0;     // its first waiter's arrival, marked as being served meanwhile
  };
  enum class Turn { kNow, kQueued, kMerged };
  // Whether q's key may be served at once (nothing of this ticket runs or waits:
  // the caller then has the turn, `advancing`), or waits behind what does (kQueued,
  // or kMerged into the same key's entry, which keeps its place, as Redis' ready_keys).
  Turn Take(Queued q) {
    std::lock_guard<std::mutex> g(mu);
    if (in_flight == 0 && !advancing && queued.empty()) {
      advancing = true;
      return Turn::kNow;
    }
    for (Queued& e : queued) {
      if (e.key != q.key) continue;
      e.all |= q.all;
      e.removed |= q.removed;
      e.pass_on &= q.pass_on;
      return Turn::kMerged;
    }
    queued.push_back(std::move(q));
    return Turn::kQueued;
  }

  WakeTicket(Server* s, Worker* w, uint64_t id) : server(s), owner(w, id) {}
  WakeTicket(const WakeTicket&) = delete;
  WakeTicket& operator=(const WakeTicket&) = delete;

  // A slot for a wake of client, made by the owner's command (parent < 0) or by
  // the retry of slot parent.
  size_t Reserve(Kind kind, Connection::ClientRef client, int parent) {
    std::lock_guard<std::mutex> g(mu);
    std::vector<uint32_t> order;
    if (parent < 0) {
      order = {kind == Kind::kUnblock ? 0u : 1u, top++};
    } else if (kind == Kind::kSignal) {
      Slot& p = slots[parent];
      order.push_back(p.order[0] + 1);
      order.insert(order.end(), p.order.begin(), p.order.end());
      order.push_back(0);  // before whatever the clients it passed the key on to signal
      order.push_back(p.signalled++);
    } else {
      Slot& p = slots[parent];
      order = p.order;
      order.push_back(1 + p.passed_on++);
    }
    slots.push_back(Slot{std::move(order), client});
    in_flight++;  // until its task has run (Server::WakeEnded)
    return slots.size() - 1;
  }

  ~WakeTicket() {
    if (server->stopping()) {  // workers may be gone
      if (on_done) on_done();
      return;
    }
    std::vector<const Slot*> done;
    for (const Slot& s : slots) {
      if (s.served) done.push_back(&s);
    }
    std::stable_sort(done.begin(), done.end(), [](const Slot* a, const Slot* b) { return a->order < b->order; });
    std::vector<Connection::ClientRef> served;
    for (const Slot* s : done) {
      if (std::find(served.begin(), served.end(), s->client) == served.end()) served.push_back(s->client);
    }
    if (owner.first != nullptr) {
      ResumeOwner(std::move(served));
    } else {
      Connection::ResumeHeld(served);
    }
    if (on_done) on_done();
  }

  void ResumeOwner(std::vector<Connection::ClientRef> served) {
    auto [w, id] = owner;
    w->Post([w = w, id = id, served = std::move(served)]() mutable {
      if (Connection* c = w->Find(id)) {
        c->WakesServed(std::move(served));
      } else {
        Connection::ResumeHeld(served);
      }
    });
  }

  Server* server;
  Connection::ClientRef owner;
  std::mutex mu;
  std::vector<Slot> slots;
  uint32_t top = 0;
  std::deque<Queued> queued;
  uint32_t in_flight = 0;  // posted wakes (reserved slots) whose tasks have not run
  bool advancing = false;  // a thread is serving the queued keys
  std::function<void()> on_done;  // a ticket without an owner client (the master link's)
};

// The client whose command runs on this thread (WakeScope), and the ticket its
// wakes share so far; inside a retry, the ticket of the client that caused it
// and the retry's slot in it.
thread_local Connection* tl_waiter = nullptr;
thread_local std::shared_ptr<WakeTicket> tl_ticket;
thread_local int tl_slot = -1;

// The ticket of the command running on this thread, made on first use (none
// outside a WakeScope).
std::shared_ptr<WakeTicket> CurrentTicket(Server* server) {
  if (tl_ticket == nullptr && tl_waiter != nullptr) {
    tl_ticket = std::make_shared<WakeTicket>(server, tl_waiter->worker(), tl_waiter->id());
  }
  return tl_ticket;
}

// Reserves client's place in the current ticket (-1: there is none).
int ReserveSlot(const std::shared_ptr<WakeTicket>& ticket, WakeTicket::Kind kind, Connection::ClientRef client) {
  if (ticket == nullptr) return -1;
  return static_cast<int>(ticket->Reserve(kind, client, tl_slot));
}

// Runs fn (a posted retry or unblock) as slot of ticket: what it wakes in turn
// joins the same ticket.
template <typename Fn>
void RunWithTicket(const std::shared_ptr<WakeTicket>& ticket, int slot, Fn fn) {
  Connection* outer_waiter = tl_waiter;
  std::shared_ptr<WakeTicket> outer_ticket = std::move(tl_ticket);
  int outer_slot = tl_slot;
  tl_waiter = nullptr;
  tl_ticket = ticket;
  tl_slot = slot;
  fn();
  tl_slot = outer_slot;
  tl_ticket = std::move(outer_ticket);
  tl_waiter = outer_waiter;
}

}  // namespace

// Scopes nest when a worker serves other clients while a script runs (ServeWhileBusy).
Server::WakeScope::WakeScope(Connection* conn)
    : conn_(conn), outer_(tl_waiter), outer_ticket_(std::move(tl_ticket)), outer_slot_(tl_slot) {
  tl_waiter = conn;
  tl_ticket = nullptr;
  tl_slot = -1;
}

Server::WakeScope::~WakeScope() {
  if (tl_ticket != nullptr) {
    conn_->awaiting_wakes = true;
    tl_ticket.reset();
  }
  tl_waiter = outer_;
  tl_ticket = std::static_pointer_cast<WakeTicket>(std::move(outer_ticket_));
  tl_slot = outer_slot_;
}

std::future<void> Server::TouchKeysServed(const Context& ctx) {
  if (blocked_clients_.load(std::memory_order_relaxed) == 0) {
    TouchKeys(ctx);
    return {};
  }
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> served = done->get_future();
  auto ticket = std::make_shared<WakeTicket>(this, nullptr, 0);
  ticket->on_done = [done] { done->set_value(); };
  RunWithTicket(ticket, -1, [&] { TouchKeys(ctx); });
  return served;
}

bool Server::HoldForWakes(Connection* conn) {
  if (tl_ticket == nullptr || tl_slot < 0) return false;
  std::lock_guard<std::mutex> g(tl_ticket->mu);
  tl_ticket->slots[tl_slot].served = true;
  conn->awaiting_wakes = true;
  return true;
}

bool Server::Kill(uint64_t id) {
  std::lock_guard<std::mutex> g(clients_mu_);
  if (listed_master_ != nullptr && listed_master_->id() == id) {
    // Gone from the list at once, as Redis caches a killed master client away.
    listed_master_->kill_requested = true;
    listed_master_ = nullptr;
    return true;
  }
  auto it = clients_.find(id);
  if (it == clients_.end()) return false;
  Connection* conn = it->second;
  Worker* w = conn->worker();
  if (!conn->kill_requested.exchange(true)) {
    // What Redis' freeClient takes away at once; the rest goes when the worker
    // closes the connection.
    killed_clients_++;
    pubsub_.NoteKilled();
    tracking_.Forget(id);
    if (conn->blocked.exchange(Connection::kNotBlocked) != Connection::kNotBlocked) {
      std::lock_guard<std::mutex> b(blocked_mu_);
      FreeWaiterLocked(conn);
    }
    if (conn->postpone_counted.exchange(false)) postponed_clients_--;
  }
  // As CLIENT UNBLOCK's: what the close passes on to the next client in line
  // (a blocked victim's keys) is served in the caller's turn.
  std::shared_ptr<WakeTicket> ticket = CurrentTicket(this);
  int slot = ReserveSlot(ticket, WakeTicket::Kind::kUnblock, {w, id});
  w->Post([this, w, id, ticket, slot] {
    // CloseSoon: the client may be the one whose command (a busy script) is running.
    if (Connection* c = w->Find(id)) RunWithTicket(ticket, slot, [&] { c->CloseSoon(); });
    WakeEnded(ticket);
  });
  return true;
}

bool Server::UnblockClient(uint64_t id, bool error) {
  std::lock_guard<std::mutex> g(clients_mu_);
  auto it = clients_.find(id);
  // Cleared here, not when the client's worker runs the unblock: a second
  // CLIENT UNBLOCK in the same EXEC or script (or from another worker) must
  // find the client already freed, as Redis' synchronous unblockClient leaves it.
  uint8_t claimable = Connection::kBlockedClaimable;
  if (it == clients_.end() || !it->second->blocked.compare_exchange_strong(claimable, Connection::kNotBlocked)) {
    return false;
  }
  {
    std::lock_guard<std::mutex> b(blocked_mu_);
    FreeWaiterLocked(it->second);
  }
  Worker* w = it->second->worker();
  // As a wake: the caller's reply waits for it, the client's next commands
  // for the caller's batch.
  std::shared_ptr<WakeTicket> ticket = CurrentTicket(this);
  int slot = ReserveSlot(ticket, WakeTicket::Kind::kUnblock, {w, id});
  w->Post([this, w, id, error, ticket, slot] {
    if (Connection* c = w->Find(id)) RunWithTicket(ticket, slot, [&] { c->UnblockWith(error); });
    WakeEnded(ticket);
  });
  return true;
}

void Server::WakeBlocked(int logical_db, const std::string& key, Wakes who, bool removed, WakeCause cause) {
  std::shared_ptr<WakeTicket> ticket;
  {
    std::lock_guard<std::mutex> g(blocked_mu_);
    auto it = blocked_.find({static_cast<uint8_t>(logical_db), key});
    if (it == blocked_.end() || it->second.empty()) return;
    ticket = CurrentTicket(this);
    if (ticket == nullptr || cause == WakeCause::kPassOn || who == Wakes::kGroupReaders) {
      PostWakesLocked(it, who, removed, cause != WakeCause::kSignal, ticket);
      return;
    }
    const uint64_t first = it->second.front().arrival_ns;
    WakeTicket::Queued q{it->first, who == Wakes::kAll, removed, cause == WakeCause::kLeftBehind, tl_slot, first};
    switch (ticket->Take(std::move(q))) {
      case WakeTicket::Turn::kNow:
        PostWakesLocked(it, who, removed, cause != WakeCause::kSignal, ticket);
        break;
      case WakeTicket::Turn::kQueued:
        // Until its turn, a pop that came after its first waiter parks (ParkBehindWakes).
        serving_[it->first].insert(first);
        wakes_in_flight_++;
        return;
      case WakeTicket::Turn::kMerged:
        return;
    }
  }
  AdvanceWakes(ticket);
}

void Server::AdvanceWakes(const std::shared_ptr<void>& t) {
  auto ticket = std::static_pointer_cast<WakeTicket>(t);
  for (;;) {
    WakeTicket::Queued q;
    {
      std::lock_guard<std::mutex> g(ticket->mu);
      if (ticket->in_flight > 0 || ticket->queued.empty()) {
        ticket->advancing = false;
        return;
      }
      q = std::move(ticket->queued.front());
      ticket->queued.pop_front();
    }
    RunWithTicket(ticket, q.parent, [&] {
      std::lock_guard<std::mutex> g(blocked_mu_);
      auto it = blocked_.find(q.key);
      if (it != blocked_.end() && !it->second.empty()) {
        PostWakesLocked(it, q.all ? Wakes::kAll : Wakes::kFirst, q.removed, q.pass_on, ticket);
      }
    });
    WakeRan(q.key, q.mark);  // its own wakes mark it now
  }
}

void Server::WakeEnded(const std::shared_ptr<void>& t) {
  if (t == nullptr) return;
  auto* ticket = static_cast<WakeTicket*>(t.get());
  {
    std::lock_guard<std::mutex> g(ticket->mu);
    if (--ticket->in_flight > 0 || ticket->advancing || ticket->queued.empty()) return;
    ticket->advancing = true;
  }
  AdvanceWakes(t);
}

void Server::PostWakesLocked(WaitQueues::iterator it, Wakes who, bool removed, bool pass_on,
                             const std::shared_ptr<void>& t) {
  auto ticket = std::static_pointer_cast<WakeTicket>(t);
  const WakeTicket::Kind kind = pass_on ? WakeTicket::Kind::kPassOn : WakeTicket::Kind::kSignal;
  if (!pass_on) {
    // Redis runs the commands that came before this write first, so a client whose
    // BLPOP is still unread on another worker would be served ahead of the waiters
    // queued now. That worker reads and runs what it has, then wakes (one hop only:
    // the inner call passes the key on). No write path pays for it, only a wake.
    Worker* here = Worker::Current();
    for (const auto& w : workers_) {
      if (w.get() == here || !w->HasUnreadInput()) continue;
      // A place in the ticket for the wake it will make, and the key marked as
      // being served, so that a pop that came after the first waiter parks.
      int slot = ReserveSlot(ticket, kind, {w.get(), 0});
      const uint64_t first = it->second.front().arrival_ns;
      serving_[it->first].insert(first);
      wakes_in_flight_++;
      w->Post([this, worker = w.get(), ready = it->first, who, removed, ticket, slot, first] {
        worker->ReadPending();
        RunWithTicket(ticket, slot, [&] { WakeBlocked(ready.first, ready.second, who, removed, WakeCause::kPassOn); });
        WakeRan(ready, first);
        WakeEnded(ticket);
      });
      return;
    }
  }
  for (const Waiter& waiter : it->second) {
    if (who == Wakes::kGroupReaders && !waiter.group_read) continue;
    if (!freed_waiters_.empty() && freed_waiters_.count(waiter.id) > 0) continue;
    int slot = ReserveSlot(ticket, kind, {waiter.worker, waiter.id});
    serving_[it->first].insert(waiter.arrival_ns);
    wakes_in_flight_++;
    waiter.worker->Post([this, worker = waiter.worker, id = waiter.id, arrival = waiter.arrival_ns,
                         ready = it->first, removed, ticket, slot] {
      if (Connection* c = worker->Find(id)) {
        RunWithTicket(ticket, slot, [&] { c->RetryBlocked(ready, removed); });
        // The client waits for this retry's writes to be committed, not just made.
        if (ticket != nullptr && worker->batcher()->pending()) worker->batcher()->AfterCommit([ticket] {});
      }
      WakeRan(ready, arrival);
      WakeEnded(ticket);
    });
    if (who == Wakes::kFirst) break;
  }
}

bool Server::ServedBefore(const std::pair<uint8_t, std::string>& key, uint64_t arrival_ns) const {
  auto it = serving_.find(key);
  return it != serving_.end() && *it->second.begin() < arrival_ns;
}

void Server::WakeRan(const std::pair<uint8_t, std::string>& key, uint64_t arrival_ns) {
  std::vector<Parked> released;
  {
    std::lock_guard<std::mutex> g(blocked_mu_);
    wakes_in_flight_--;
    auto it = serving_.find(key);
    if (it == serving_.end()) return;
    it->second.erase(it->second.find(arrival_ns));
    if (it->second.empty()) serving_.erase(it);
    for (auto p = parked_.begin(); p != parked_.end();) {
      auto waits = [&](const auto& k) { return ServedBefore(k, p->arrival_ns); };
      if (std::any_of(p->keys.begin(), p->keys.end(), waits)) {
        ++p;
        continue;
      }
      released.push_back(std::move(*p));
      p = parked_.erase(p);
    }
  }
  // In the order they parked.
  for (const Parked& p : released) {
    p.worker->Post([w = p.worker, id = p.id] {
      if (Connection* c = w->Find(id)) c->RunPostponed();
    });
  }
}

bool Server::ParkBehindWakes(Connection* conn, std::vector<std::pair<uint8_t, std::string>> keys,
                             const std::vector<std::string>& args) {
  const uint64_t arrival = conn->CommandArrivalNs();
  std::lock_guard<std::mutex> g(blocked_mu_);
  if (std::none_of(keys.begin(), keys.end(), [&](const auto& k) { return ServedBefore(k, arrival); })) return false;
  conn->postponed = true;
  conn->postponed_args = args;  // copied only when it parks
  conn->postponed_arrival_ns = arrival;
  parked_.push_back(Parked{conn->worker(), conn->id(), arrival, std::move(keys)});
  return true;
}

void Server::WakeGroupReaders(const std::vector<std::pair<uint8_t, std::string>>& keys) {
  for (const auto& [db, key] : keys) WakeBlocked(db, key, Wakes::kGroupReaders, false, WakeCause::kPassOn);
}

void Server::SignalKeyReady(int logical_db, const std::string& key, bool removed, bool all) {
  if (!MayBeWaited(key)) return;
  if (logical_db >= 0) WakeBlocked(logical_db, key, all ? Wakes::kAll : Wakes::kFirst, removed, WakeCause::kSignal);
}

std::vector<std::pair<int, std::string>> Server::BlockedKeysIn(const std::vector<int>& logical_dbs) {
  std::vector<std::pair<int, std::string>> keys;
  if (blocked_clients_.load(std::memory_order_relaxed) == 0) return keys;
  std::lock_guard<std::mutex> g(blocked_mu_);
  for (int db : logical_dbs) {
    auto it = blocked_.lower_bound({static_cast<uint8_t>(db), std::string()});
    for (; it != blocked_.end() && it->first.first == db; ++it) {
      if (!it->second.empty()) keys.emplace_back(db, it->first.second);
    }
  }
  return keys;
}

size_t Server::BlockedCount() { return blocked_clients_.load() + postponed_clients_.load(); }

void Server::EndPostpone(Connection* conn) {
  conn->postponed = false;
  if (conn->postpone_counted.exchange(false)) postponed_clients_--;
}

void Server::AddMonitor(Connection* conn) {
  std::lock_guard<std::mutex> g(monitor_mu_);
  if (monitors_.insert(conn).second) monitor_count_++;
  conn->monitor = true;
}

void Server::RemoveMonitor(Connection* conn) {
  std::lock_guard<std::mutex> g(monitor_mu_);
  if (monitors_.erase(conn) > 0) monitor_count_--;
}

void Server::FeedMonitors(Connection* from, const std::vector<std::string>& args, bool from_script) {
  uint64_t us = NowUs();
  char ts[64];
  snprintf(ts, sizeof(ts), "+%llu.%06llu ", static_cast<unsigned long long>(us / 1000000),
           static_cast<unsigned long long>(us % 1000000));
  std::string line = ts;
  line += "[" + std::to_string(from->db) + " " + (from_script ? std::string("lua") : from->peer()) + "]";
  for (const auto& a : args) {
    line.push_back(' ');
    AppendRepr(&line, a);
  }
  line += "\r\n";
  std::lock_guard<std::mutex> g(monitor_mu_);
  for (Connection* m : monitors_) {
    if (m == from) continue;
    Worker* w = m->worker();
    uint64_t id = m->id();
    w->Post([w, id, line] {
      if (Connection* c = w->Find(id)) {
        c->Write(line);
        if (!c->awaiting_commit) c->Flush();
      }
    });
  }
}

Status Server::Save() {
  std::lock_guard<std::mutex> g(save_mu_);
  namespace fs = std::filesystem;
  std::string target = config_->dir + "/checkpoint";
  std::string tmp = target + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  // The changes the checkpoint covers leave rdb_changes_since_last_save (Redis:
  // 0 after SAVE, minus those before it after BGSAVE).
  const uint64_t covered = stats_.dirty.load();
  Status s = storage_->Checkpoint(tmp);
  if (!s.ok()) return s;
  fs::remove_all(target, ec);
  fs::rename(tmp, target, ec);
  if (ec) return Status::IOError("rename checkpoint: " + ec.message());
  NoteSaved(covered);
  return Status::OK();
}

void Server::NoteSaved(uint64_t covered) {
  stats_.dirty.fetch_sub(covered);
  stats_.rdb_saves++;
  last_save_ = static_cast<int64_t>(std::time(nullptr));
}

bool Server::BgSave() {
  bool expected = false;
  if (!bgsave_running_.compare_exchange_strong(expected, true)) return false;
  last_bgsave_try_ = static_cast<int64_t>(std::time(nullptr));
  if (bgsave_thread_.joinable()) bgsave_thread_.join();
  bgsave_start_ = static_cast<int64_t>(std::time(nullptr));
  bgsave_thread_ = std::thread([this] {
    Status s = Save();
    last_bgsave_seconds_ = static_cast<int64_t>(std::time(nullptr)) - bgsave_start_.load();
    last_bgsave_ok_ = s.ok();
    if (!s.ok()) LOG(WARNING) << "BGSAVE failed: " << s.message();
    bgsave_running_ = false;
  });
  return true;
}

int64_t Server::current_bgsave_seconds() const {
  if (!bgsave_running_.load()) return -1;
  return static_cast<int64_t>(std::time(nullptr)) - bgsave_start_.load();
}

void Server::MaybeSaveOnSchedule() {
  constexpr int64_t kBgSaveRetryDelay = 5;  // Redis' CONFIG_BGSAVE_RETRY_DELAY
  if (bgsave_running_.load()) return;
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  const uint64_t dirty = stats_.dirty.load();
  for (const auto& p : config_->SavePoints()) {
    if (dirty >= static_cast<uint64_t>(p.changes) && now - last_save_.load() > p.seconds &&
        (now - last_bgsave_try_.load() > kBgSaveRetryDelay || last_bgsave_ok_.load())) {
      LOG(INFO) << p.changes << " changes in " << p.seconds << " seconds. Saving...";
      BgSave();
      return;
    }
  }
}

Status Server::SaveBeforeShutdown(bool nosave, bool save) {
  NotifySystemd("STOPPING=1\n");
  if (!save && (nosave || config_->SavePoints().empty())) return Status::OK();
  LOG(INFO) << "Saving the final checkpoint before exiting.";
  NotifySystemd("STATUS=Saving the final RDB snapshot\n");
  return Save();
}

void Server::SetActiveExpire(bool on) {
  expire_switching_ = true;  // a pass under way stops after its current batch
  std::lock_guard<std::mutex> after_the_pass(expire_pass_mu_);
  config_->active_expire = on;
  expire_switching_ = false;
}

void Server::PauseCron(bool on) {
  expire_switching_ = true;
  std::lock_guard<std::mutex> after_the_pass(expire_pass_mu_);
  cron_paused_ = on;
  expire_switching_ = false;
}

void Server::ActiveExpireLoop() {
  pthread_setname_np(pthread_self(), "active-expire");
  // This thread also switches blob GC and blob compression (Storage::AdjustBlobGc, AdjustBlobCompression)
  // and raises a starved replica applier (Replica::WatchApplier).
  uint64_t last_blob_check_ms = 0, last_memory_sample_ms = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> g(stop_mu_);
      int hz = std::max(1, config_->hz.get());
      stop_cv_.wait_for(g, std::chrono::milliseconds(1000 / hz), [this] { return stop_.load(); });
      if (stop_) return;
    }
    // Not Redis' serverCron work, so DEBUG PAUSE-CRON does not stop it.
    if (replica_) replica_->WatchApplier();
    std::lock_guard<std::mutex> pass(expire_pass_mu_);
    if (cron_paused_) continue;
    uint64_t now_ms = MonotonicUs() / 1000;
    if (now_ms - last_blob_check_ms >= 1000) {
      storage_->AdjustBlobGc();
      storage_->AdjustBlobCompression();
      last_blob_check_ms = now_ms;
    }
    storage_->FlushDeferredMemtables();
    // As Redis' cron: a lowered tracking-table-max-keys takes effect without new reads.
    if (!tracking_.idle()) tracking_.Trim();
    MaybeSaveOnSchedule();
    migrate_sockets_.CloseIdle();
    // As Redis' serverCron: the allocator's figures, the peak and the clients'
    // biggest buffers, every 100 ms.
    if (now_ms - last_memory_sample_ms >= 100) {
      stats_.SampleRates(now_ms);
      memory_stats_.Sample();
      EvictClients();  // a lowered maxmemory-clients takes effect without new traffic
      uint64_t in, out;
      ClientBuffers(&in, &out);
      last_memory_sample_ms = now_ms;
    }
    if (!config_->active_expire) continue;
    if (IsReplica()) {
      // A replica leaves expiry to its master, which sends the DELs (as Redis replicas
      // do), but for the keys its own clients gave a TTL. Redis' expireSlaveKeys does
      // not wait for CLIENT PAUSE.
      ExpireOwnKeys(kOwnExpiriesPerTick);
      continue;
    }
    // CLIENT PAUSE keeps the data set still.
    if (ClientsPaused()) continue;
    uint64_t start_us = MonotonicUs();
    uint64_t volatile_keys = 0, expired = 0;
    for (int db = 0; db < Storage::kMaxDatabases; db++) {
      if (storage_->KeyCount(static_cast<uint8_t>(db)) == 0) continue;
      volatile_keys += static_cast<uint64_t>(std::max<int64_t>(storage_->ExpireCount(static_cast<uint8_t>(db)), 0));
      // Keep going while a cycle finds a full batch of expired keys.
      std::string cursor;
      while (!stop_ && !expire_switching_ &&
             ExpireCycle(static_cast<uint8_t>(db), 200, &cursor, &expired) == 200) {
      }
    }
    // Redis' expired_stale_perc: the share of keys with a TTL found expired but not
    // yet deleted, a running average giving each pass 5%. kvrocks' pass deletes all
    // it finds, so this is how stale the volatile keys were when it started.
    stats_.NoteExpireStaleness(volatile_keys == 0 ? 0 : static_cast<double>(expired) / volatile_keys);
    // As Redis' activeExpireCycle: the whole pass is one "expire-cycle" latency sample.
    const uint64_t elapsed_us = MonotonicUs() - start_us;
    stats_.expire_cycle_us.fetch_add(elapsed_us, std::memory_order_relaxed);
    int64_t elapsed_ms = static_cast<int64_t>(elapsed_us / 1000);
    int64_t threshold = config_->latency_monitor_threshold;
    if (threshold > 0 && elapsed_ms >= threshold) latency_.Add("expire-cycle", elapsed_ms);
  }
}

size_t Server::ExpireCycle(uint8_t db, size_t budget, std::string* cursor, uint64_t* expired_total) {
  uint64_t now = NowMs();
  uint64_t floor = storage_->ExpireFloor(db);
  std::string lower = cursor->empty() ? EncodeExpireKey(db, floor, "") : *cursor;
  std::string upper = EncodeExpireKey(db, now + 1, "");
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(storage_->db()->NewIterator(ro, storage_->cf(ColumnFamily::kExpire)));
  std::vector<std::pair<uint64_t, std::string>> due;
  for (it->Seek(lower); it->Valid() && due.size() < budget; it->Next()) {
    uint8_t d;
    uint64_t expire;
    std::string_view key;
    if (!DecodeExpireKey(std::string_view(it->key().data(), it->key().size()), &d, &expire, &key) || d != db) break;
    due.emplace_back(expire, std::string(key));
  }
  if (due.empty()) {
    // Nothing due between the floor and now: later scans can start near here. The margin
    // covers writes that computed an expiry just before now but committed after this scan.
    constexpr uint64_t kMarginMs = 2000;
    if (cursor->empty() && now > floor + kMarginMs) storage_->RaiseExpireFloor(db, floor, now - kMarginMs);
    return 0;
  }
  Context ctx(storage_);
  std::vector<uint64_t> keys;
  for (auto& [e, k] : due) keys.push_back(LockManager::KeyHash(db, k));
  MultiLockGuard guard(storage_->locks(), std::move(keys));
  uint64_t expired = 0;
  std::vector<std::string> expired_names;
  for (auto& [e, k] : due) {
    std::string raw;
    std::string meta_key = EncodeMetaKey(db, k);
    Status s = ctx.Get(ColumnFamily::kMetadata, meta_key, &raw);
    RedisType type;
    uint64_t actual = 0;
    if (s.ok() && PeekMetadata(raw, &type, &actual).ok() && actual == e && actual <= now) {
      DeleteExpiredKey(&ctx, db, k, raw, actual);
      expired_names.push_back(k);
      expired++;
    } else if (s.ok() && type == RedisType::kHash) {
      // An entry for a hash field's TTL: drop the fields that are due.
      Database database(&ctx, db);
      int64_t fields = 0;
      RedisHash(&database).DeleteExpiredFields(k, &fields);
      stats_.expired_fields += static_cast<uint64_t>(fields);
    }
    ctx.Delete(ColumnFamily::kExpire, EncodeExpireKey(db, e, k));
  }
  *cursor = EncodeExpireKey(db, due.back().first, due.back().second);
  // Counted before the deletions are visible, as Context::Commit moves the key counts.
  stats_.expired_keys += expired;
  if (!ctx.Commit().ok()) {
    stats_.expired_keys -= expired;
  } else {
    *expired_total += expired;
    if (!ctx.touched().empty()) TouchKeys(ctx);
    KeysChanged(ctx.touched(), 0);
    NotifyExpired(this, db, expired_names);
  }
  return due.size();
}

void Server::DeleteExpiredKey(Context* ctx, uint8_t db, const std::string& key, const std::string& raw,
                              uint64_t expire_ms) {
  ctx->Delete(ColumnFamily::kMetadata, EncodeMetaKey(db, key));
  uint64_t moved;
  if (HasMovedSubkeys(raw, &moved)) ctx->Delete(ColumnFamily::kState, EncodeMovedKey(moved));
  ctx->AddKeyCount(db, -1);
  ctx->ChangeExpire(db, expire_ms, 0);
  ctx->Touch(db, key, Context::TouchKind::kExpired);
}

bool Server::IsReplica() { return replica_ && replica_->is_replica(); }

bool Server::NotesOwnExpiries() { return IsReplica() && !ReadOnlyReplica(); }

bool Server::ReadOnlyReplica() { return IsReplica() && (config_->replica_read_only || replica_->follows_kvrocks()); }

void Server::NoteOwnExpiries(std::vector<std::pair<uint8_t, std::string>> keys) {
  std::lock_guard<std::mutex> g(own_expiries_mu_);
  for (auto& k : keys) own_expiries_.insert(std::move(k));
}

void Server::ForgetOwnExpiries() {
  std::lock_guard<std::mutex> g(own_expiries_mu_);
  own_expiries_.clear();
}

void Server::ExpireOwnKeys(size_t budget) {
  std::vector<std::pair<uint8_t, std::string>> visit;
  {
    std::lock_guard<std::mutex> g(own_expiries_mu_);
    if (own_expiries_.empty()) return;
    auto it = own_expiries_.upper_bound(own_expiries_cursor_);
    while (visit.size() < std::min(budget, own_expiries_.size())) {
      if (it == own_expiries_.end()) it = own_expiries_.begin();
      visit.push_back(*it++);
    }
    own_expiries_cursor_ = visit.back();
  }
  // The notes name logical databases, as Redis' do: after a SWAPDB the cycle looks
  // at whatever key of that name the database now holds.
  std::vector<uint8_t> physical;
  std::vector<uint64_t> hashes;
  for (auto& [logical, k] : visit) {
    physical.push_back(storage_->PhysicalDb(logical));
    hashes.push_back(LockManager::KeyHash(physical.back(), k));
  }
  // Under the keys' locks a client's write that gives one of them an expiry is either
  // committed (and seen here) or noted again after this pass forgets the key.
  MultiLockGuard guard(storage_->locks(), std::move(hashes));
  Context ctx(storage_);
  const uint64_t now = NowMs();
  std::map<uint8_t, std::vector<std::string>> expired;
  uint64_t count = 0;
  std::vector<const std::pair<uint8_t, std::string>*> done;  // to forget: expired, or without an expiry
  for (size_t i = 0; i < visit.size(); i++) {
    const auto& entry = visit[i];
    const uint8_t db = physical[i];
    const std::string& k = entry.second;
    // A SWAPDB between the lookup and the lock: the lock is another key's; next round.
    if (storage_->PhysicalDb(entry.first) != db) continue;
    std::string raw;
    RedisType type;
    uint64_t expire_ms = 0;
    Status s = ctx.Get(ColumnFamily::kMetadata, EncodeMetaKey(db, k), &raw);
    if (!s.ok() && !s.IsNotFound()) continue;  // a failed read: visited again next round
    if (!s.ok() || !PeekMetadata(raw, &type, &expire_ms).ok() || expire_ms == 0) {
      done.push_back(&entry);
    } else if (expire_ms <= now) {
      DeleteExpiredKey(&ctx, db, k, raw, expire_ms);
      ctx.Delete(ColumnFamily::kExpire, EncodeExpireKey(db, expire_ms, k));
      expired[db].push_back(k);
      count++;
      done.push_back(&entry);
    }
  }
  stats_.expired_keys += count;  // before the deletions are visible, as in ExpireCycle
  Status s = ctx.Commit();
  if (!s.ok()) {
    stats_.expired_keys -= count;
    return;
  }
  {
    std::lock_guard<std::mutex> g(own_expiries_mu_);
    for (auto* entry : done) own_expiries_.erase(*entry);
  }
  if (!ctx.touched().empty()) TouchKeys(ctx);
  KeysChanged(ctx.touched(), 0);
  for (auto& [db, names] : expired) NotifyExpired(this, db, names);
}

void Server::CompactFor(Connection* conn) {
  conn->RequestBlock({}, 0, {}, {}, false);
  std::lock_guard<std::mutex> g(compact_mu_);
  // Once the server stops, nothing starts: the client waits until it is closed.
  if (compact_stopped_) return;
  compact_waiters_.emplace_back(conn->worker(), conn->id());
  if (compact_running_) return;
  if (compact_thread_.joinable()) compact_thread_.join();  // the last run's, which has ended
  compact_running_ = true;
  compact_thread_ = std::thread([this] { CompactLoop(); });
}

void Server::WaitForReplicaAcks(Connection* conn, uint64_t seq, int64_t wanted, uint64_t timeout_ms) {
  conn->RequestBlock({}, timeout_ms);
  {
    std::lock_guard<std::mutex> g(ack_waits_mu_);
    conn->block.ack_wait = ++ack_wait_serial_;
    conn->block.ack_seq = seq;
    ack_waits_.push_back({conn->worker(), conn->id(), conn->block.ack_wait, seq, wanted});
  }
  wal_sender_->RequestAcks();
}

int Server::ReplicasAcked(uint64_t seq) { return wal_sender_->AckedReplicas(seq); }

void Server::ForgetReplicaAckWait(Connection* conn) {
  std::lock_guard<std::mutex> g(ack_waits_mu_);
  for (size_t i = 0; i < ack_waits_.size(); i++) {
    if (ack_waits_[i].serial == conn->block.ack_wait) {
      ack_waits_.erase(ack_waits_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}

void Server::OnReplicaAck() {
  std::lock_guard<std::mutex> g(ack_waits_mu_);
  for (size_t i = 0; i < ack_waits_.size();) {
    const AckWait w = ack_waits_[i];
    const int n = wal_sender_->AckedReplicas(w.seq);
    if (n < w.wanted) {
      i++;
      continue;
    }
    ack_waits_.erase(ack_waits_.begin() + static_cast<std::ptrdiff_t>(i));
    w.worker->Post([w, n] {
      if (Connection* c = w.worker->Find(w.client_id)) c->EndAckWait(w.serial, ":" + std::to_string(n) + "\r\n");
    });
  }
}

void Server::CompactLoop() {
  for (;;) {
    std::vector<std::pair<Worker*, uint64_t>> waiters;
    {
      std::lock_guard<std::mutex> g(compact_mu_);
      if (compact_waiters_.empty() || compact_stopped_) {
        compact_running_ = false;
        return;
      }
      waiters.swap(compact_waiters_);
    }
    Status s = storage_->CompactAll();
    std::string reply = s.ok() ? "+OK\r\n" : "-ERR " + s.message() + "\r\n";
    for (const auto& waiter : waiters) {
      Worker* w = waiter.first;
      w->Post([w, id = waiter.second, reply] {
        if (Connection* c = w->Find(id)) c->EndServerWait(reply);
      });
    }
  }
}

void Server::StopCompactions() {
  {
    std::lock_guard<std::mutex> g(compact_mu_);
    compact_stopped_ = true;
  }
  storage_->CancelManualCompactions();
  if (compact_thread_.joinable()) compact_thread_.join();
}

}  // namespace kvrocks
