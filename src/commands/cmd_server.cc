// Server commands: INFO CONFIG TIME COMMAND SLOWLOG MONITOR LASTSAVE SAVE BGSAVE SHUTDOWN.
#include <fcntl.h>
#include <glog/logging.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>

#include "commands/command_keys.h"
#include "commands/helpers.h"
#include "commands/redis_command_meta.h"
#include "common/time_util.h"
#include "replication/replica.h"
#include "replication/wal_sender.h"
#include "scripting/functions.h"
#include "scripting/lua_engine.h"
#include "server/supervision.h"

extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace kvrocks {

namespace {

std::string RandomHex40() {
  std::random_device rd;
  std::mt19937_64 rng(rd());
  static const char kHex[] = "0123456789abcdef";
  std::string s(40, '0');
  for (auto& c : s) c = kHex[rng() % 16];
  return s;
}

const std::string& RunId() {
  static const std::string id = RandomHex40();
  return id;
}

// Redis' bytesToHuman.
std::string HumanBytes(uint64_t n) {
  static const char kUnits[] = "KMGTP";
  char buf[64];
  if (n < 1024) {
    snprintf(buf, sizeof(buf), "%" PRIu64 "B", n);
    return buf;
  }
  double d = static_cast<double>(n) / 1024;
  int unit = 0;
  while (unit < 4 && d >= 1024) {
    d /= 1024;
    unit++;
  }
  if (d >= 1024) {  // past petabytes: Redis prints the bytes
    snprintf(buf, sizeof(buf), "%" PRIu64 "B", n);
  } else {
    snprintf(buf, sizeof(buf), "%.2f%c", d, kUnits[unit]);
  }
  return buf;
}

std::string Fixed2(double v) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

// ZMALLOC_LIB: the allocator and its version.
std::string AllocatorName() {
  if (mallctl == nullptr) return "libc";
  const char* version = nullptr;
  size_t sz = sizeof(version);
  if (mallctl("version", &version, &sz, nullptr, 0) != 0 || version == nullptr) return "jemalloc";
  std::string v(version);
  return "jemalloc-" + v.substr(0, v.find('-'));
}

void Line(std::string* s, const std::string& k, const std::string& v) { *s += k + ":" + v + "\r\n"; }
void Line(std::string* s, const std::string& k, int64_t v) { Line(s, k, std::to_string(v)); }

// A stable id of this build (Redis' redis_build_id: a hash of how it was built).
std::string BuildId() {
  char buf[32];
  snprintf(buf, sizeof(buf), "%llx",
           static_cast<unsigned long long>(std::hash<std::string>()(std::string(kKvrocksVersion) + " " + __VERSION__)));
  return buf;
}

std::string Executable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string InfoServer(Server* srv) {
  std::string s = "# Server\r\n";
  utsname u{};
  uname(&u);
  int64_t uptime = static_cast<int64_t>(time(nullptr)) - srv->start_time();
  Line(&s, "redis_version", kRedisVersion);
  Line(&s, "kvrocks_version", kKvrocksVersion);
  Line(&s, "redis_git_sha1", "00000000");
  Line(&s, "redis_git_dirty", 0);
  Line(&s, "redis_build_id", BuildId());
  Line(&s, "redis_mode", "standalone");
  Line(&s, "os", std::string(u.sysname) + " " + u.release + " " + u.machine);
  Line(&s, "arch_bits", 64);
  Line(&s, "monotonic_clock", "POSIX clock_gettime");
  Line(&s, "multiplexing_api", "epoll");
  Line(&s, "atomicvar_api", "c11-builtin");
  Line(&s, "gcc_version", std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
                              std::to_string(__GNUC_PATCHLEVEL__));
  Line(&s, "process_id", static_cast<int64_t>(getpid()));
  Line(&s, "process_supervised", "no");
  Line(&s, "run_id", RunId());
  Line(&s, "tcp_port", srv->config()->port);
  Line(&s, "server_time_usec", static_cast<int64_t>(NowUs()));
  Line(&s, "uptime_in_seconds", uptime);
  Line(&s, "uptime_in_days", uptime / 86400);
  Line(&s, "hz", srv->config()->hz);
  Line(&s, "configured_hz", srv->config()->hz);
  Line(&s, "lru_clock", static_cast<int64_t>(AccessClock::Now()));
  Line(&s, "executable", Executable());
  Line(&s, "config_file", srv->config()->config_file);
  Line(&s, "io_threads_active", 0);
  Line(&s, "workers", srv->config()->workers);
  return s;
}

std::string InfoClients(Server* srv) {
  std::string s = "# Clients\r\n";
  Line(&s, "connected_clients", static_cast<int64_t>(srv->ClientCount()));
  Line(&s, "cluster_connections", 0);
  Line(&s, "maxclients", srv->config()->maxclients);
  uint64_t max_in, max_out;
  srv->ClientBuffers(&max_in, &max_out);
  Line(&s, "client_recent_max_input_buffer", std::to_string(max_in));
  Line(&s, "client_recent_max_output_buffer", std::to_string(max_out));
  Line(&s, "blocked_clients", static_cast<int64_t>(srv->BlockedCount()));
  Line(&s, "tracking_clients", static_cast<int64_t>(srv->tracking().clients()));
  Line(&s, "clients_in_timeout_table", static_cast<int64_t>(srv->TimedBlockedCount()));
  return s;
}

std::string InfoMemory(Server* srv) {
  std::string s = "# Memory\r\n";
  MemoryOverhead m = srv->memory_stats().Overhead(srv);
  const uint64_t lua = scripting::LuaEngine::TotalMemory();
  const uint64_t system = MemoryStats::SystemMemory();
  const uint64_t scripts = m.lua_caches + m.functions_caches;
  auto bytes = [&s](const char* name, uint64_t n) {
    Line(&s, name, std::to_string(n));
    Line(&s, std::string(name) + "_human", HumanBytes(n));
  };
  bytes("used_memory", m.total_allocated);
  bytes("used_memory_rss", m.sample.process_rss);
  bytes("used_memory_peak", m.peak_allocated);
  Line(&s, "used_memory_peak_perc", Fixed2(m.peak_perc) + "%");
  Line(&s, "used_memory_overhead", std::to_string(m.overhead_total));
  Line(&s, "used_memory_startup", std::to_string(m.startup_allocated));
  Line(&s, "used_memory_dataset", std::to_string(m.dataset));
  Line(&s, "used_memory_dataset_perc", Fixed2(m.dataset_perc) + "%");
  Line(&s, "allocator_allocated", std::to_string(m.sample.allocated));
  Line(&s, "allocator_active", std::to_string(m.sample.active));
  Line(&s, "allocator_resident", std::to_string(m.sample.resident));
  bytes("total_system_memory", system);
  // One Lua state per thread runs both EVAL scripts and functions: all of it
  // counts as the eval VM.
  Line(&s, "used_memory_lua", std::to_string(lua));
  Line(&s, "used_memory_vm_eval", std::to_string(lua));
  Line(&s, "used_memory_lua_human", HumanBytes(lua));
  Line(&s, "used_memory_scripts_eval", std::to_string(m.lua_caches));
  Line(&s, "number_of_cached_scripts", static_cast<int64_t>(scripting::ScriptCache::Instance().size()));
  Line(&s, "number_of_functions", static_cast<int64_t>(scripting::FunctionRegistry::Instance().NumFunctions()));
  Line(&s, "number_of_libraries", static_cast<int64_t>(scripting::FunctionRegistry::Instance().Libraries().size()));
  Line(&s, "used_memory_vm_functions", 0);
  bytes("used_memory_vm_total", lua);
  Line(&s, "used_memory_functions", std::to_string(m.functions_caches));
  bytes("used_memory_scripts", scripts);
  Line(&s, "maxmemory", 0);
  Line(&s, "maxmemory_human", "0B");
  Line(&s, "maxmemory_policy", "noeviction");
  Line(&s, "allocator_frag_ratio", Fixed2(m.allocator_frag));
  Line(&s, "allocator_frag_bytes", std::to_string(m.allocator_frag_bytes));
  Line(&s, "allocator_rss_ratio", Fixed2(m.allocator_rss));
  Line(&s, "allocator_rss_bytes", std::to_string(m.allocator_rss_bytes));
  Line(&s, "rss_overhead_ratio", Fixed2(m.rss_extra));
  Line(&s, "rss_overhead_bytes", std::to_string(m.rss_extra_bytes));
  Line(&s, "mem_fragmentation_ratio", Fixed2(m.total_frag));
  Line(&s, "mem_fragmentation_bytes", std::to_string(m.total_frag_bytes));
  Line(&s, "mem_not_counted_for_evict", 0);
  Line(&s, "mem_replication_backlog", 0);
  Line(&s, "mem_total_replication_buffers", 0);
  Line(&s, "mem_clients_slaves", 0);
  Line(&s, "mem_clients_normal", std::to_string(m.clients_normal));
  Line(&s, "mem_cluster_links", 0);
  Line(&s, "mem_aof_buffer", 0);
  Line(&s, "mem_allocator", AllocatorName());
  Line(&s, "active_defrag_running", 0);
  Line(&s, "lazyfree_pending_objects", 0);
  Line(&s, "lazyfreed_objects", 0);
  // kvrocks' own: the data files' size on disk.
  Line(&s, "used_disk_bytes", static_cast<int64_t>(srv->storage()->DiskUsage()));
  return s;
}

// Redis' loading_* lines: progress against the payload's size, or (a diskless
// transfer without one) against the RDB's used-mem, never over 99.99% then.
void AddLoadingProgress(std::string* s, const Replica::Info& repl) {
  const uint64_t total = repl.sync_total_bytes > 0 ? static_cast<uint64_t>(repl.sync_total_bytes) : 0;
  const auto loaded = static_cast<uint64_t>(repl.sync_read_bytes);
  double perc = 0;
  int64_t remaining = 1;
  if (total > 0) {
    perc = static_cast<double>(loaded) / static_cast<double>(total) * 100;
    remaining = static_cast<int64_t>(total - std::min(loaded, total));
  } else if (repl.loading_used_mem > 0) {
    perc = std::min(static_cast<double>(loaded) / static_cast<double>(repl.loading_used_mem) * 100, 99.99);
    remaining = std::max<int64_t>(static_cast<int64_t>(repl.loading_used_mem) - static_cast<int64_t>(loaded), 1);
  }
  const int64_t elapsed = static_cast<int64_t>(time(nullptr)) - repl.loading_start_s;
  const int64_t eta = elapsed == 0 ? 1 : elapsed * remaining / static_cast<int64_t>(loaded + 1);
  char pct[32];
  snprintf(pct, sizeof(pct), "%.2f", perc);
  Line(s, "loading_start_time", repl.loading_start_s);
  Line(s, "loading_total_bytes", static_cast<int64_t>(total));
  Line(s, "loading_rdb_used_mem", static_cast<int64_t>(repl.loading_used_mem));
  Line(s, "loading_loaded_bytes", static_cast<int64_t>(loaded));
  Line(s, "loading_loaded_perc", pct);
  Line(s, "loading_eta_seconds", eta);
}

std::string InfoPersistence(Server* srv) {
  std::string s = "# Persistence\r\n";
  // kvrocks never forks: the copy-on-write and fork figures are 0, and there is no AOF.
  // A replica loads its master's RDB while clients read the previous data, as
  // Redis' async loading (repl-diskless-load swapdb) does.
  Replica::Info repl = srv->replica()->GetInfo();
  const bool loading = repl.loading_start_s != 0;
  Line(&s, "loading", 0);
  Line(&s, "async_loading", loading ? 1 : 0);
  Line(&s, "current_cow_peak", 0);
  Line(&s, "current_cow_size", 0);
  Line(&s, "current_cow_size_age", 0);
  Line(&s, "current_fork_perc", "0.00");
  Line(&s, "current_save_keys_processed", 0);
  Line(&s, "current_save_keys_total", 0);
  Line(&s, "rdb_changes_since_last_save", static_cast<int64_t>(srv->stats().dirty.load()));
  Line(&s, "rdb_bgsave_in_progress", srv->bgsave_in_progress() ? 1 : 0);
  Line(&s, "rdb_last_save_time", srv->last_save());
  Line(&s, "rdb_last_bgsave_status", srv->last_bgsave_status());
  Line(&s, "rdb_last_bgsave_time_sec", srv->last_bgsave_seconds());
  Line(&s, "rdb_current_bgsave_time_sec", srv->current_bgsave_seconds());
  Line(&s, "rdb_saves", static_cast<int64_t>(srv->stats().rdb_saves.load()));
  Line(&s, "rdb_last_cow_size", 0);
  Line(&s, "rdb_last_load_keys_expired", static_cast<int64_t>(srv->last_load_keys_expired()));
  Line(&s, "rdb_last_load_keys_loaded", static_cast<int64_t>(srv->last_load_keys_loaded()));
  Line(&s, "aof_enabled", 0);
  Line(&s, "aof_rewrite_in_progress", 0);
  Line(&s, "aof_rewrite_scheduled", 0);
  Line(&s, "aof_last_rewrite_time_sec", -1);
  Line(&s, "aof_current_rewrite_time_sec", -1);
  Line(&s, "aof_last_bgrewrite_status", "ok");
  Line(&s, "aof_rewrites", 0);
  Line(&s, "aof_rewrites_consecutive_failures", 0);
  Line(&s, "aof_last_write_status", "ok");
  Line(&s, "aof_last_cow_size", 0);
  Line(&s, "module_fork_in_progress", 0);
  Line(&s, "module_fork_last_cow_size", 0);
  if (loading) AddLoadingProgress(&s, repl);
  return s;
}

std::string Kbps(int64_t bytes_per_sec) { return Fixed2(static_cast<float>(bytes_per_sec) / 1024); }

std::string InfoStats(Server* srv) {
  Stats& st = srv->stats();
  std::string s = "# Stats\r\n";
  // Mechanisms kvrocks does not have count 0: key eviction (no maxmemory), forks,
  // active defragmentation, partial syncs of replicas, I/O threads.
  Line(&s, "total_connections_received", static_cast<int64_t>(st.total_connections_received.load()));
  Line(&s, "total_commands_processed", static_cast<int64_t>(st.total_commands_processed.load()));
  Line(&s, "instantaneous_ops_per_sec", st.Rate(Stats::kOps));
  // The totals include replication traffic, as Redis' do.
  const uint64_t repl_in = st.net_repl_input_bytes.load(), repl_out = st.net_repl_output_bytes.load();
  Line(&s, "total_net_input_bytes", static_cast<int64_t>(st.net_input_bytes.load() + repl_in));
  Line(&s, "total_net_output_bytes", static_cast<int64_t>(st.net_output_bytes.load() + repl_out));
  Line(&s, "total_net_repl_input_bytes", static_cast<int64_t>(repl_in));
  Line(&s, "total_net_repl_output_bytes", static_cast<int64_t>(repl_out));
  Line(&s, "instantaneous_input_kbps", Kbps(st.Rate(Stats::kNetInput)));
  Line(&s, "instantaneous_output_kbps", Kbps(st.Rate(Stats::kNetOutput)));
  Line(&s, "instantaneous_input_repl_kbps", Kbps(st.Rate(Stats::kNetReplInput)));
  Line(&s, "instantaneous_output_repl_kbps", Kbps(st.Rate(Stats::kNetReplOutput)));
  Line(&s, "rejected_connections", static_cast<int64_t>(st.rejected_connections.load()));
  Line(&s, "sync_full", static_cast<int64_t>(st.sync_full.load()));
  Line(&s, "sync_partial_ok", static_cast<int64_t>(st.sync_partial_ok.load()));  // kvrocks replicas only
  Line(&s, "sync_partial_err", static_cast<int64_t>(st.sync_partial_err.load()));
  Line(&s, "expired_keys", static_cast<int64_t>(st.expired_keys.load()));
  Line(&s, "expired_subkeys", static_cast<int64_t>(st.expired_fields.load()));
  // The expiry index finds every due key, and a pass runs until none is left: no
  // pass stops at a time limit. Stale keys are those that expired since the last
  // pass (Server::ActiveExpireLoop).
  char stale[32];
  snprintf(stale, sizeof(stale), "%.2f", st.expired_stale() * 100);
  Line(&s, "expired_stale_perc", stale);
  Line(&s, "expired_time_cap_reached_count", 0);
  Line(&s, "expire_cycle_cpu_milliseconds", static_cast<int64_t>(st.expire_cycle_us.load() / 1000));
  Line(&s, "evicted_keys", 0);
  Line(&s, "evicted_clients", static_cast<int64_t>(st.evicted_clients.load()));
  Line(&s, "total_eviction_exceeded_time", 0);
  Line(&s, "current_eviction_exceeded_time", 0);
  Line(&s, "keyspace_hits", static_cast<int64_t>(st.keyspace_hits.load()));
  Line(&s, "keyspace_misses", static_cast<int64_t>(st.keyspace_misses.load()));
  Line(&s, "pubsub_channels", static_cast<int64_t>(srv->pubsub().NumChannels(PubSubKind::kChannel)));
  Line(&s, "pubsub_patterns", static_cast<int64_t>(srv->pubsub().NumPatterns()));
  Line(&s, "pubsubshard_channels", static_cast<int64_t>(srv->pubsub().NumChannels(PubSubKind::kShard)));
  Line(&s, "latest_fork_usec", 0);
  Line(&s, "total_forks", 0);
  Line(&s, "migrate_cached_sockets", static_cast<int64_t>(srv->migrate_sockets().Count()));
  Line(&s, "slave_expires_tracked_keys", 0);
  Line(&s, "active_defrag_hits", 0);
  Line(&s, "active_defrag_misses", 0);
  Line(&s, "active_defrag_key_hits", 0);
  Line(&s, "active_defrag_key_misses", 0);
  Line(&s, "total_active_defrag_time", 0);
  Line(&s, "current_active_defrag_time", 0);
  Line(&s, "tracking_total_keys", static_cast<int64_t>(srv->tracking().keys()));
  Line(&s, "tracking_total_items", static_cast<int64_t>(srv->tracking().items()));
  Line(&s, "tracking_total_prefixes", static_cast<int64_t>(srv->tracking().prefixes()));
  Line(&s, "unexpected_error_replies", static_cast<int64_t>(st.unexpected_error_replies.load()));
  Line(&s, "total_error_replies", static_cast<int64_t>(st.total_error_replies.load()));
  Line(&s, "dump_payload_sanitizations", 0);
  Line(&s, "total_reads_processed", static_cast<int64_t>(st.total_reads_processed.load()));
  Line(&s, "total_writes_processed", static_cast<int64_t>(st.total_writes_processed.load()));
  Line(&s, "io_threaded_reads_processed", 0);
  Line(&s, "io_threaded_writes_processed", 0);
  Line(&s, "reply_buffer_shrinks", static_cast<int64_t>(st.reply_buffer_shrinks.load()));
  // Reply buffers grow as replies need, never from the cron.
  Line(&s, "reply_buffer_expands", 0);
  return s;
}

std::string InfoReplication(Server* srv) {
  std::string s = "# Replication\r\n";
  Replica* rep = srv->replica();
  if (!rep->is_replica()) {
    Line(&s, "role", "master");
  } else {
    Replica::Info info = rep->GetInfo();
    Line(&s, "role", "slave");
    Line(&s, "master_host", info.host);
    Line(&s, "master_port", info.port);
    Line(&s, "master_link_status", info.link_up ? "up" : "down");
    Line(&s, "master_last_io_seconds_ago", info.last_io_seconds_ago);
    Line(&s, "master_sync_in_progress", info.sync_in_progress ? 1 : 0);
    Line(&s, "slave_read_repl_offset", static_cast<int64_t>(info.read_offset));
    Line(&s, "slave_repl_offset", static_cast<int64_t>(info.offset));
    if (info.sync_in_progress) {
      Line(&s, "master_sync_total_bytes", info.sync_total_bytes);
      Line(&s, "master_sync_read_bytes", info.sync_read_bytes);
      Line(&s, "master_sync_left_bytes",
           info.sync_total_bytes >= 0 ? info.sync_total_bytes - info.sync_read_bytes : -1);
      Line(&s, "master_sync_last_io_seconds_ago", info.last_io_seconds_ago);
    }
    Line(&s, "slave_priority", srv->config()->replica_priority);
    Line(&s, "slave_read_only", srv->ReadOnlyReplica() ? 1 : 0);
    Line(&s, "replica_announced", srv->config()->replica_announced ? 1 : 0);
    // kvrocks' own counters.
    Line(&s, "replica_full_syncs", static_cast<int64_t>(info.full_syncs));
    Line(&s, "replica_partial_syncs", static_cast<int64_t>(info.partial_syncs));
    Line(&s, "replica_apply_errors", static_cast<int64_t>(info.apply_errors));
    if (!info.last_error.empty()) Line(&s, "replica_last_error", info.last_error);
    if (info.kvrocks) Line(&s, "master_wal_id", info.master_wal_id);
  }
  // kvrocks replicas (KSLAVEOF) of this server; their offsets are sequence numbers.
  std::vector<WalSender::ReplicaInfo> replicas = srv->wal_sender()->Replicas();
  Line(&s, "connected_slaves", static_cast<int64_t>(replicas.size()));
  const uint64_t now_ms = MonotonicUs() / 1000;
  for (size_t i = 0; i < replicas.size(); i++) {
    const auto& r = replicas[i];
    Line(&s, "slave" + std::to_string(i),
         "ip=" + r.ip + ",port=" + std::to_string(r.port) + ",state=" + (r.online ? "online" : "wait_bgsave") +
             ",offset=" + std::to_string(r.acked) + ",lag=" + std::to_string((now_ms - r.last_ack_ms) / 1000));
  }
  if (srv->config()->min_replicas_to_write > 0 && srv->config()->min_replicas_max_lag > 0) {
    Line(&s, "min_slaves_good_slaves", srv->wal_sender()->GoodReplicas(srv->config()->min_replicas_max_lag));
  }
  Line(&s, "master_failover_state", "no-failover");
  Line(&s, "master_replid", rep->replid());
  Line(&s, "master_replid2", std::string(40, '0'));
  Line(&s, "master_repl_offset", static_cast<int64_t>(rep->offset()));
  Line(&s, "second_repl_offset", -1);
  Line(&s, "repl_backlog_active", 0);
  Line(&s, "repl_backlog_size", 1048576);
  Line(&s, "repl_backlog_first_byte_offset", 0);
  Line(&s, "repl_backlog_histlen", 0);
  // This server's write-ahead-log history, which kvrocks replicas follow.
  Line(&s, "wal_id", srv->storage()->wal_id());
  Line(&s, "wal_sequence", static_cast<int64_t>(srv->storage()->db()->GetLatestSequenceNumber()));
  return s;
}

// The CPU time of the worker threads, from /proc (a thread's getrusage is its own).
void WorkersCpu(const std::vector<int>& tids, double* sys, double* user) {
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (int tid : tids) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[1024];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    // After the name, which ends at the last ')': state (3) ... utime (14) and stime (15).
    const char* p = strrchr(buf, ')');
    if (p == nullptr) continue;
    unsigned long long utime = 0, stime = 0;  // NOLINT(runtime/int): the %llu of sscanf
    if (sscanf(p + 2, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &utime, &stime) != 2) continue;
    *user += static_cast<double>(utime) / tick;
    *sys += static_cast<double>(stime) / tick;
  }
}

std::string InfoCpu(const Server& server) {
  std::string s = "# CPU\r\n";
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto secs = [](const timeval& tv) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec), static_cast<long>(tv.tv_usec));
    return std::string(buf);
  };
  Line(&s, "used_cpu_sys", secs(self.ru_stime));
  Line(&s, "used_cpu_user", secs(self.ru_utime));
  Line(&s, "used_cpu_sys_children", secs(children.ru_stime));
  Line(&s, "used_cpu_user_children", secs(children.ru_utime));
  // Redis' main thread runs the commands; here the workers do.
  double worker_sys = 0, worker_user = 0;
  WorkersCpu(server.WorkerThreadIds(), &worker_sys, &worker_user);
  char buf[64];
  snprintf(buf, sizeof(buf), "%.6f", worker_sys);
  Line(&s, "used_cpu_sys_main_thread", buf);
  snprintf(buf, sizeof(buf), "%.6f", worker_user);
  Line(&s, "used_cpu_user_main_thread", buf);
  return s;
}

std::string InfoKeyspace(Server* srv) {
  std::string s = "# Keyspace\r\n";
  Storage* st = srv->storage();
  // Redis estimates avg_ttl in its active expire cycle, which a replica does not
  // run: a replica's is 0 (its full sync emptied the estimate).
  const bool replica = srv->replica()->is_replica();
  for (int i = 0; i < srv->config()->databases; i++) {
    uint8_t p = st->PhysicalDb(i);
    int64_t keys = st->KeyCount(p);
    if (keys <= 0) continue;
    const int64_t avg_ttl = replica ? 0 : st->AvgTtlMs(p, NowMs());
    s += "db" + std::to_string(i) + ":keys=" + std::to_string(keys) + ",expires=" + std::to_string(st->ExpireCount(p)) +
         ",avg_ttl=" + std::to_string(avg_ttl) + "\r\n";
  }
  return s;
}

std::string InfoRocksdb(Server* srv) {
  Storage* st = srv->storage();
  std::string s = "# RocksDB\r\n";
  auto cache = st->block_cache();
  Line(&s, "block_cache_capacity", static_cast<int64_t>(cache->GetCapacity()));
  Line(&s, "block_cache_usage", static_cast<int64_t>(cache->GetUsage()));
  Line(&s, "estimate_num_keys_metadata", st->GetProperty("rocksdb.estimate-num-keys"));
  Line(&s, "memtables_size", static_cast<int64_t>(st->GetIntProperty("rocksdb.cur-size-all-mem-tables")));
  Line(&s, "table_readers_memory", static_cast<int64_t>(st->GetIntProperty("rocksdb.estimate-table-readers-mem")));
  Line(&s, "sst_files_size", static_cast<int64_t>(st->GetIntProperty("rocksdb.total-sst-files-size")));
  Line(&s, "blob_files_size", static_cast<int64_t>(st->GetIntProperty("rocksdb.total-blob-file-size")));
  Line(&s, "blob_garbage_size", static_cast<int64_t>(st->GetIntProperty("rocksdb.live-blob-file-garbage-size")));
  Line(&s, "blob_gc_enabled", static_cast<int64_t>(st->blob_gc_on()));
  Line(&s, "blob_compression_enabled", static_cast<int64_t>(st->blob_compression_on()));
  Line(&s, "blob_compression_sampled_saving", static_cast<int64_t>(st->blob_compression_saving()));
  Line(&s, "num_running_compactions", static_cast<int64_t>(st->GetIntProperty("rocksdb.num-running-compactions")));
  Line(&s, "num_running_flushes", static_cast<int64_t>(st->GetIntProperty("rocksdb.num-running-flushes")));
  Line(&s, "pending_compaction_bytes",
       static_cast<int64_t>(st->GetIntProperty("rocksdb.estimate-pending-compaction-bytes")));
  Line(&s, "is_write_stopped", static_cast<int64_t>(st->GetIntProperty("rocksdb.is-write-stopped")));
  Line(&s, "tombstone_compactions", static_cast<int64_t>(st->tombstone_compactor()->done()));
  return s;
}

void CommandStatsLine(std::string* s, const std::string& name, const CommandCounters& c) {
  uint64_t calls = c.calls.load(), usec = c.usec.load();
  uint64_t rejected = c.rejected_calls.load(), failed = c.failed_calls.load();
  if (calls == 0 && rejected == 0 && failed == 0) return;
  char buf[256];
  snprintf(buf, sizeof(buf),
           "calls=%" PRIu64 ",usec=%" PRIu64 ",usec_per_call=%.2f,rejected_calls=%" PRIu64 ",failed_calls=%" PRIu64,
           calls, usec, calls ? static_cast<double>(usec) / static_cast<double>(calls) : 0.0, rejected, failed);
  Line(s, "cmdstat_" + name, buf);
}

std::string InfoCommandStats() {
  std::string s = "# Commandstats\r\n";
  for (auto& [name, spec] : CommandTable::Instance().all()) {
    CommandStatsLine(&s, spec.name, *spec.counters);  // Redis names a renamed command by its own name
    for (const SubcommandSpec& sub : spec.subcommands) CommandStatsLine(&s, sub.name, *sub.counters);
  }
  return s;
}

void LatencyStatsLine(std::string* s, const std::string& name, const CommandCounters& c,
                      const std::vector<double>& percentiles) {
  LatencyHistogram::Snapshot h = c.latency.Read();
  if (h.total() == 0) return;
  std::string value;
  for (size_t i = 0; i < percentiles.size(); i++) {
    char buf[64];
    snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(h.ValueAtPercentile(percentiles[i])) / 1000.0);
    value += (i ? ",p" : "p") + FormatTrimmedDouble(percentiles[i]) + "=" + buf;
  }
  Line(s, "latency_percentiles_usec_" + name, value);
}

std::string InfoLatencyStats(Server* srv) {
  std::string s = "# Latencystats\r\n";
  if (!srv->config()->latency_tracking) return s;
  std::vector<double> percentiles = srv->config()->LatencyPercentiles();
  for (auto& [name, spec] : CommandTable::Instance().all()) {
    LatencyStatsLine(&s, spec.name, *spec.counters, percentiles);
    for (const SubcommandSpec& sub : spec.subcommands) LatencyStatsLine(&s, sub.name, *sub.counters, percentiles);
  }
  return s;
}

std::string InfoErrorStats(Server* srv) {
  std::string s = "# Errorstats\r\n";
  for (auto& [code, count] : srv->stats().ErrorCounts()) {
    std::string name = code;
    for (char& ch : name) {
      if (ch == ':' || ch == '\r' || ch == '\n') ch = '_';  // Redis' getSafeInfoString
    }
    Line(&s, "errorstat_" + name, "count=" + std::to_string(count));
  }
  return s;
}

void ResetCommandStats() {
  auto reset = [](CommandCounters* c) {
    c->calls = 0;
    c->usec = 0;
    c->rejected_calls = 0;
    c->failed_calls = 0;
    c->latency.Reset();
  };
  for (auto& [name, spec] : CommandTable::Instance().all()) {
    reset(spec.counters.get());
    for (const SubcommandSpec& sub : spec.subcommands) reset(sub.counters.get());
  }
}

void Info(CommandCall& call) {
  Server* srv = call.server;
  // Counters move when a batch commits: commit this worker's pending writes first.
  Status committed = call.ctx->Commit();
  if (!committed.ok()) return ReplyStatusError(call, committed);
  std::vector<std::string> wanted;
  for (size_t i = 1; i < call.args.size(); i++) wanted.push_back(ToLower(call.args[i]));
  bool all = false, everything = false, defaults = wanted.empty();
  for (auto& w : wanted) {
    if (w == "all") all = true;
    if (w == "everything") everything = true;
    if (w == "default") defaults = true;
  }
  auto want = [&](const std::string& name, bool in_default) {
    if (everything || (all && name != "commandstats_only") || (defaults && in_default)) return true;
    return std::find(wanted.begin(), wanted.end(), name) != wanted.end();
  };
  std::vector<std::string> parts;
  if (want("server", true)) parts.push_back(InfoServer(srv));
  if (want("clients", true)) parts.push_back(InfoClients(srv));
  if (want("memory", true)) parts.push_back(InfoMemory(srv));
  if (want("persistence", true)) parts.push_back(InfoPersistence(srv));
  if (want("stats", true)) parts.push_back(InfoStats(srv));
  if (want("replication", true)) parts.push_back(InfoReplication(srv));
  if (want("cpu", true)) parts.push_back(InfoCpu(*call.server));
  if (want("modules", true)) parts.push_back("# Modules\r\n");  // no module can load
  if (want("commandstats", false)) parts.push_back(InfoCommandStats());
  if (want("errorstats", true)) parts.push_back(InfoErrorStats(srv));
  if (want("latencystats", false)) parts.push_back(InfoLatencyStats(srv));
  if (want("cluster", true)) parts.push_back("# Cluster\r\ncluster_enabled:0\r\n");
  if (want("keyspace", true)) parts.push_back(InfoKeyspace(srv));
  if (want("rocksdb", true)) parts.push_back(InfoRocksdb(srv));
  std::string text;
  for (size_t i = 0; i < parts.size(); i++) text += (i ? "\r\n" : "") + parts[i];
  reply::Verbatim(call.out, text, call.resp);
}

void ConfigCmd(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  Config* cfg = call.server->config();
  if (TokenEquals(sub, "get")) {
    if (a.size() < 3) return ReplySubcommandSyntaxError(call);
    std::vector<std::pair<std::string, std::string>> found;
    for (size_t i = 2; i < a.size(); i++) {
      for (auto& kv : cfg->Get(a[i])) {
        if (std::find(found.begin(), found.end(), kv) == found.end()) found.push_back(kv);
      }
    }
    reply::MapHeader(call.out, found.size(), call.resp);
    for (auto& [k, v] : found) {
      reply::Bulk(call.out, k);
      reply::Bulk(call.out, v);
    }
    return;
  }
  if (TokenEquals(sub, "set")) {
    if (a.size() % 2 != 0) return ReplyError(call, kSyntaxError);  // not option-value pairs
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 2; i + 1 < a.size(); i += 2) pairs.emplace_back(a[i], a[i + 1]);
    const std::string& mode = cfg->enable_protected_configs;
    const bool protected_ok = mode == "yes" || (mode == "local" && call.conn->is_local());
    Status s = cfg->SetAtRuntime(pairs, [&](const std::string&) { return protected_ok; });
    if (!s.ok()) return ReplyError(call, s.ToRedisError());
    call.server->slowlog().Trim(static_cast<size_t>(cfg->slowlog_max_len));
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "rewrite")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    std::vector<std::string> users;
    for (const auto& u : call.server->acl().Users()) users.push_back(u->Describe());
    Status s = cfg->Rewrite(users);
    if (!s.ok()) return ReplyError(call, "ERR Rewriting config file: " + s.message());
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "resetstat")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    call.server->stats().Reset();
    ResetCommandStats();
    call.server->slowlog().Reset();
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "help") && a.size() == 2) {
    static const std::vector<std::string> kHelp = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Prints this help."};
    return ReplyHelp(call, kHelp);
  }
  ReplyUnknownSubcommand(call, "CONFIG");
}

void Time(CommandCall& call) {
  uint64_t us = NowUs();
  reply::ArrayHeader(call.out, 2);
  reply::Bulk(call.out, std::to_string(us / 1000000));
  reply::Bulk(call.out, std::to_string(us % 1000000));
}

std::vector<std::string> WithAt(std::vector<std::string> cats) {
  for (auto& c : cats) c.insert(0, "@");
  return cats;
}

std::vector<std::string> AclCategories(const CommandSpec& c) { return WithAt(CommandAclCategories(c)); }

// RESP3 bytes recorded from Redis, as this client's protocol has them.
void AppendResp(std::string* out, const char* resp3, int resp) {
  if (resp == 3) {
    out->append(resp3);
  } else {
    Resp3ToResp2(resp3, out);
  }
}

// The recorded data of the subcommands of c that Redis lists.
std::vector<const RedisCommandMeta*> ListedSubcommands(const CommandSpec& c) {
  std::vector<const RedisCommandMeta*> subs;
  for (const std::string& name : ListedSubcommandNames(c)) {
    if (const RedisCommandMeta* m = FindRedisCommandMeta(name)) subs.push_back(m);
  }
  return subs;
}

// A command Redis 7.0 does not have (or one renamed by rename-command): its
// entry from kvrocks' own table.
void OwnCommandInfoEntry(std::string* out, const CommandSpec& c, int resp) {
  reply::ArrayHeader(out, 10);
  reply::Bulk(out, c.name);
  reply::Integer(out, c.arity);
  auto flags = CommandFlagNames(c.flags);
  reply::SetHeader(out, flags.size(), resp);
  for (auto& f : flags) reply::Simple(out, f);
  reply::Integer(out, c.first_key);
  reply::Integer(out, c.last_key);
  reply::Integer(out, c.key_step);
  auto cats = AclCategories(c);
  reply::SetHeader(out, cats.size(), resp);
  for (auto& cat : cats) reply::Simple(out, cat);
  reply::ArrayHeader(out, 0);  // tips
  reply::ArrayHeader(out, 0);  // key specs
  reply::SetHeader(out, 0, resp);  // no subcommands: Redis replies an empty set (a list when there are some)
}

void SubcommandInfoEntry(std::string* out, const RedisCommandMeta& sub, int resp) {
  reply::ArrayHeader(out, 10);
  AppendResp(out, sub.info, resp);
  reply::SetHeader(out, 0, resp);
}

void CommandInfoEntry(std::string* out, const CommandSpec& c, int resp) {
  const RedisCommandMeta* m = FindRedisCommandMeta(ToLower(c.name));
  if (m == nullptr) return OwnCommandInfoEntry(out, c, resp);
  reply::ArrayHeader(out, 10);
  AppendResp(out, m->info, resp);
  auto subs = ListedSubcommands(c);
  // Redis' addReplyCommandSubCommands: an empty set without subcommands, else a list.
  if (subs.empty()) return reply::SetHeader(out, 0, resp);
  reply::ArrayHeader(out, subs.size());
  for (const RedisCommandMeta* sub : subs) SubcommandInfoEntry(out, *sub, resp);
}


// The COMMAND DOCS map of a command or subcommand (without its name).
void DocsEntry(std::string* out, const CommandSpec* c, const RedisCommandMeta* m, int resp) {
  if (m == nullptr) {
    reply::MapHeader(out, 3, resp);
    reply::Bulk(out, "summary");
    reply::Bulk(out, c->summary);
    reply::Bulk(out, "since");
    reply::Bulk(out, c->since);
    reply::Bulk(out, "group");
    reply::Bulk(out, c->group);
    return;
  }
  std::vector<const RedisCommandMeta*> subs;
  if (c != nullptr) subs = ListedSubcommands(*c);
  reply::MapHeader(out, m->docs_fields + (subs.empty() ? 0 : 1), resp);
  AppendResp(out, m->docs, resp);
  if (subs.empty()) return;
  reply::Bulk(out, "subcommands");
  reply::MapHeader(out, subs.size(), resp);
  for (const RedisCommandMeta* sub : subs) {
    reply::Bulk(out, sub->name);
    DocsEntry(out, nullptr, sub, resp);
  }
}

// A name COMMAND INFO / DOCS take: "get" or "config|get". Sets *sub for a
// subcommand kvrocks has; returns the command, or nullptr.
const CommandSpec* FindCommandOrSubcommand(const std::string& name, const RedisCommandMeta** sub) {
  *sub = nullptr;
  size_t bar = name.find('|');
  const CommandSpec* c = CommandTable::Instance().Find(name.substr(0, bar));
  if (c == nullptr || bar == std::string::npos) return c;
  std::string full = ToLower(name);
  for (const std::string& listed : ListedSubcommandNames(*c)) {
    if (listed == full) {
      *sub = FindRedisCommandMeta(full);  // one level of subcommands, as in Redis
      return *sub != nullptr ? c : nullptr;
    }
  }
  return nullptr;
}

void CommandCmd(CommandCall& call) {
  const auto& a = call.args;
  const auto& all = CommandTable::Instance().all();
  if (a.size() == 1) {
    reply::ArrayHeader(call.out, all.size());
    for (auto& [name, c] : all) CommandInfoEntry(call.out, c, call.resp);
    return;
  }
  const std::string& sub = a[1];
  if (TokenEquals(sub, "count") && a.size() == 2) return reply::Integer(call.out, static_cast<int64_t>(all.size()));
  if (TokenEquals(sub, "info")) {
    if (a.size() == 2) {
      reply::ArrayHeader(call.out, all.size());
      for (auto& [name, c] : all) CommandInfoEntry(call.out, c, call.resp);
      return;
    }
    reply::ArrayHeader(call.out, a.size() - 2);
    for (size_t i = 2; i < a.size(); i++) {
      const RedisCommandMeta* sub = nullptr;
      const CommandSpec* c = FindCommandOrSubcommand(a[i], &sub);
      if (c == nullptr) {
        reply::Null(call.out, call.resp);  // Redis' addReplyNull: $-1 in RESP2
      } else if (sub != nullptr) {
        SubcommandInfoEntry(call.out, *sub, call.resp);
      } else {
        CommandInfoEntry(call.out, *c, call.resp);
      }
    }
    return;
  }
  if (TokenEquals(sub, "docs")) {
    // (name, command, recorded docs): a subcommand has no command of its own here.
    std::vector<std::tuple<std::string, const CommandSpec*, const RedisCommandMeta*>> entries;
    if (a.size() == 2) {
      for (auto& [name, c] : all) entries.emplace_back(c.name, &c, FindRedisCommandMeta(ToLower(c.name)));
    } else {
      for (size_t i = 2; i < a.size(); i++) {
        const RedisCommandMeta* subm = nullptr;
        const CommandSpec* c = FindCommandOrSubcommand(a[i], &subm);
        if (c == nullptr) continue;
        if (subm != nullptr) {
          entries.emplace_back(subm->name, nullptr, subm);
        } else {
          entries.emplace_back(c->name, c, FindRedisCommandMeta(ToLower(c->name)));
        }
      }
    }
    reply::MapHeader(call.out, entries.size(), call.resp);
    for (auto& [name, c, m] : entries) {
      reply::Bulk(call.out, name);
      DocsEntry(call.out, c, m, call.resp);
    }
    return;
  }
  if (TokenEquals(sub, "list")) {
    std::string pattern, category, module;
    if (a.size() == 5 && TokenEquals(a[2], "filterby")) {
      if (TokenEquals(a[3], "pattern")) {
        pattern = a[4];
      } else if (TokenEquals(a[3], "aclcat")) {
        category = "@" + ToLower(a[4]);
      } else if (TokenEquals(a[3], "module")) {
        module = a[4];
      } else {
        return ReplyError(call, kSyntaxError);
      }
    } else if (a.size() != 2) {
      return ReplyError(call, kSyntaxError);
    }
    std::vector<std::string> names;
    if (module.empty()) {
      // Commands and, as in Redis, their subcommands ("config|get").
      auto consider = [&](const std::string& name, auto categories_of) {
        if (!pattern.empty() && !StringMatch(pattern, name, true)) return;
        if (!category.empty()) {
          auto cats = categories_of();
          if (std::find(cats.begin(), cats.end(), category) == cats.end()) return;
        }
        names.push_back(name);
      };
      for (auto& [name, c] : all) {
        consider(name, [&c = c] { return AclCategories(c); });
        for (const RedisCommandMeta* sub : ListedSubcommands(c)) {
          consider(sub->name, [sub] { return WithAt(RecordedAclCategories(*sub)); });
        }
      }
    }
    reply::BulkArray(call.out, names);
    return;
  }
  bool with_flags = TokenEquals(sub, "getkeysandflags");
  if (with_flags || TokenEquals(sub, "getkeys")) {
    if (a.size() < 3) return ReplySubcommandSyntaxError(call);
    std::vector<std::string> target(a.begin() + 2, a.end());
    const CommandSpec* c = CommandTable::Instance().Find(target[0]);
    std::optional<CommandKeyFinder> finder;
    if (c != nullptr) finder.emplace(*c, target);
    if (!finder || !finder->valid()) return ReplyError(call, "ERR Invalid command specified");
    if (!finder->may_have_keys()) return ReplyError(call, "ERR The command has no key arguments");
    int argc = static_cast<int>(target.size()), arity = finder->arity();
    if ((arity > 0 && argc != arity) || argc < -arity) {
      return ReplyError(call, "ERR Invalid number of arguments specified for command");
    }
    std::vector<KeyReference> keys = finder->Find(target);
    if (keys.empty() && !finder->keys_optional()) {
      return ReplyError(call, "ERR Invalid arguments specified for command");
    }
    reply::ArrayHeader(call.out, keys.size());
    for (const KeyReference& k : keys) {
      if (with_flags) reply::ArrayHeader(call.out, 2);
      reply::Bulk(call.out, target[k.pos]);
      if (with_flags) {
        std::vector<std::string> flags = KeyFlagNames(k.flags);
        reply::SetHeader(call.out, flags.size(), call.resp);
        for (const std::string& f : flags) reply::Simple(call.out, f);
      }
    }
    return;
  }
  if (TokenEquals(sub, "help") && a.size() == 2) {
    static const std::vector<std::string> kHelp = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        "HELP",
        "    Prints this help."};
    return ReplyHelp(call, kHelp);
  }
  if (TokenEquals(sub, "count")) return ReplySubcommandSyntaxError(call);
  ReplyUnknownSubcommand(call, "COMMAND");
}

void SlowlogCmd(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  SlowLog& log = call.server->slowlog();
  if (TokenEquals(sub, "get") && a.size() <= 3) {
    int64_t count = 10;
    if (a.size() == 3) {
      if (!ParseInt64(a[2], &count) || count < -1) {
        return ReplyError(call, "ERR count should be greater than or equal to -1");
      }
      if (count == -1) count = INT64_MAX;
    }
    auto entries = log.Get(static_cast<size_t>(count));
    reply::ArrayHeader(call.out, entries.size());
    for (auto& e : entries) {
      reply::ArrayHeader(call.out, 6);
      reply::Integer(call.out, static_cast<int64_t>(e.id));
      reply::Integer(call.out, e.time);
      reply::Integer(call.out, static_cast<int64_t>(e.duration_us));
      reply::BulkArray(call.out, e.args);
      reply::Bulk(call.out, e.peer);
      reply::Bulk(call.out, e.name);
    }
    return;
  }
  if (TokenEquals(sub, "len") && a.size() == 2) return reply::Integer(call.out, static_cast<int64_t>(log.Len()));
  if (TokenEquals(sub, "reset") && a.size() == 2) {
    log.Reset();
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "help") && a.size() == 2) {
    static const std::vector<std::string> kHelp = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Prints this help."};
    return ReplyHelp(call, kHelp);
  }
  if (TokenEquals(sub, "get") || TokenEquals(sub, "len") || TokenEquals(sub, "reset") ||
      TokenEquals(sub, "help")) {
    return ReplySubcommandSyntaxError(call);
  }
  ReplyUnknownSubcommand(call, "SLOWLOG");
}

void Monitor(CommandCall& call) {
  if (call.in_exec) return ReplyError(call, "ERR MONITOR isn't allowed in this context");
  call.server->AddMonitor(call.conn);
  reply::Ok(call.out);
}

// COMPACT (kvrocks-specific): a full manual compaction, so that the space of
// deleted and overwritten data comes back now rather than later. The client waits
// for it without holding up the other clients of its worker; inside a transaction
// the worker runs it (as Redis runs a blocking command there: without blocking).
void Compact(CommandCall& call) {
  if (!call.in_exec && call.conn != nullptr && !call.conn->is_master) return call.server->CompactFor(call.conn);
  Status s = call.server->storage()->CompactAll();
  if (!s.ok()) return ReplyError(call, "ERR " + s.message());
  reply::Ok(call.out);
}

void LastSave(CommandCall& call) { reply::Integer(call.out, call.server->last_save()); }

void Save(CommandCall& call) {
  if (call.server->bgsave_in_progress()) return ReplyError(call, "ERR Background save already in progress");
  Status s = call.server->Save();
  if (!s.ok()) return ReplyError(call, "ERR " + s.message());
  reply::Ok(call.out);
}

void BgSave(CommandCall& call) {
  if (call.args.size() > 2 || (call.args.size() == 2 && !TokenEquals(call.args[1], "schedule"))) {
    return ReplyError(call, kSyntaxError);
  }
  if (!call.server->BgSave()) return ReplyError(call, "ERR Background save already in progress");
  reply::Simple(call.out, "Background saving started");
}

void Shutdown(CommandCall& call) {
  bool abort = false, nosave = false, save = false, force = false, now = false;
  for (size_t i = 1; i < call.args.size(); i++) {
    const std::string& o = call.args[i];
    if (TokenEquals(o, "abort")) {
      abort = true;
    } else if (TokenEquals(o, "nosave")) {
      nosave = true;
    } else if (TokenEquals(o, "save")) {
      save = true;
    } else if (TokenEquals(o, "force")) {
      force = true;
    } else if (TokenEquals(o, "now")) {
      now = true;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  if ((abort && (nosave || save || force || now)) || (nosave && save)) return ReplyError(call, kSyntaxError);
  if (abort) return ReplyError(call, "ERR No shutdown in progress.");
  if (call.in_exec) return ReplyError(call, "ERR SHUTDOWN isn't allowed in this context");
  // Data is already durable in RocksDB (WAL); the server closes it cleanly on the way
  // out. A save (a checkpoint) is what Redis' save on shutdown would leave behind.
  Status s = call.server->SaveBeforeShutdown(nosave, save);
  if (!s.ok()) {
    LOG(WARNING) << "Error trying to save the DB, can't exit: " << s.message();
    if (!force) {
      NotifySystemd("STATUS=Error trying to save the DB, can't exit.\n");
      return ReplyError(call, "ERR Errors trying to SHUTDOWN. Check logs.");
    }
  }
  call.conn->CloseAfterReply();
  call.server->Stop();
}

// One command's entry of LATENCY HISTOGRAM: {calls, histogram_usec {µs: cumulative calls}}.
void HistogramEntry(CommandCall& call, const std::string& name, const LatencyHistogram::Snapshot& h) {
  reply::Bulk(call.out, name);
  reply::MapHeader(call.out, 2, call.resp);
  reply::Bulk(call.out, "calls");
  reply::Integer(call.out, h.total());
  reply::Bulk(call.out, "histogram_usec");
  auto buckets = h.CumulativeBuckets();
  reply::MapHeader(call.out, buckets.size(), call.resp);
  for (const auto& [usec, count] : buckets) {
    reply::Integer(call.out, usec);
    reply::Integer(call.out, count);
  }
}

// LATENCY HISTOGRAM [command ...]: every command with recorded calls, or the
// named ones ("config|get"; a container adds its subcommands; unknown names are
// skipped), in a map as Redis replies.
void LatencyHistogramReply(CommandCall& call) {
  std::vector<std::pair<std::string, LatencyHistogram::Snapshot>> entries;
  auto add = [&entries](const std::string& name, const CommandCounters& c) {
    LatencyHistogram::Snapshot h = c.latency.Read();
    if (h.total() > 0) entries.emplace_back(name, std::move(h));
  };
  const CommandTable& table = CommandTable::Instance();
  if (call.args.size() == 2) {
    for (auto& [key, spec] : table.all()) {
      add(spec.name, *spec.counters);
      for (const SubcommandSpec& sub : spec.subcommands) add(sub.name, *sub.counters);
    }
  }
  for (size_t i = 2; i < call.args.size(); i++) {
    std::string name = ToLower(call.args[i]);
    size_t bar = name.find('|');
    const CommandSpec* spec = table.Find(name.substr(0, bar));
    if (spec == nullptr) continue;
    if (bar == std::string::npos) {
      add(spec->name, *spec->counters);
      for (const SubcommandSpec& sub : spec->subcommands) add(sub.name, *sub.counters);
      continue;
    }
    for (const SubcommandSpec& sub : spec->subcommands) {
      if (sub.name == std::string(spec->name) + name.substr(bar)) add(sub.name, *sub.counters);
    }
  }
  reply::MapHeader(call.out, entries.size(), call.resp);
  for (const auto& [name, h] : entries) HistogramEntry(call, name, h);
}

void Latency(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  LatencyMonitor& mon = call.server->latency();
  if (TokenEquals(sub, "help") && a.size() == 2) {
    return ReplyHelp(call, {"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                            "DOCTOR",
                            "    Return a human readable latency analysis report.",
                            "GRAPH <event>",
                            "    Return an ASCII latency graph for the <event> class.",
                            "HISTORY <event>",
                            "    Return time-latency samples for the <event> class.",
                            "LATEST",
                            "    Return the latest latency samples for all events.",
                            "RESET [<event> ...]",
                            "    Reset latency data of one or more <event> classes.",
                            "    (default: reset all data for all event classes)",
                            "HISTOGRAM [COMMAND ...]",
                            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
                            "    If no commands are specified then all histograms are replied.",
                            "HELP",
                            "    Prints this help."});
  }
  if (TokenEquals(sub, "latest")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    auto events = mon.Snapshot();
    reply::ArrayHeader(call.out, events.size());
    for (const auto& [name, ts] : events) {
      const auto& last = ts.samples[(ts.idx + LatencyMonitor::kSamples - 1) % LatencyMonitor::kSamples];
      reply::ArrayHeader(call.out, 4);
      reply::Bulk(call.out, name);
      reply::Integer(call.out, last.time);
      reply::Integer(call.out, last.latency);
      reply::Integer(call.out, ts.max);
    }
    return;
  }
  if (TokenEquals(sub, "history")) {
    if (a.size() != 3) return ReplySubcommandSyntaxError(call);
    auto events = mon.Snapshot();
    auto it = events.find(a[2]);
    std::vector<LatencyMonitor::Sample> samples;
    if (it != events.end()) {
      for (int j = 0; j < LatencyMonitor::kSamples; j++) {
        const auto& s = it->second.samples[(it->second.idx + j) % LatencyMonitor::kSamples];
        if (s.time != 0) samples.push_back(s);
      }
    }
    reply::ArrayHeader(call.out, samples.size());
    for (const auto& s : samples) {
      reply::ArrayHeader(call.out, 2);
      reply::Integer(call.out, s.time);
      reply::Integer(call.out, s.latency);
    }
    return;
  }
  if (TokenEquals(sub, "reset")) {
    return reply::Integer(call.out, mon.Reset(std::vector<std::string>(a.begin() + 2, a.end())));
  }
  if (TokenEquals(sub, "histogram")) return LatencyHistogramReply(call);
  if (TokenEquals(sub, "graph")) {
    if (a.size() != 3) return ReplySubcommandSyntaxError(call);
    std::string graph;
    if (!mon.Graph(a[2], static_cast<int64_t>(time(nullptr)), &graph)) {
      return ReplyError(call, "ERR No samples available for event '" + CString(a[2]) + "'");
    }
    return reply::Verbatim(call.out, graph, call.resp);
  }
  if (TokenEquals(sub, "doctor")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    return reply::Verbatim(call.out, mon.Doctor(call.server->config()->latency_monitor_threshold), call.resp);
  }
  ReplyUnknownSubcommand(call, "LATENCY");
}

}  // namespace

void RegisterServerCommands(CommandTable* t) {
  const uint32_t adm = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;
  t->Add({"info", -1, kCmdLoading | kCmdStale | kCmdSlow, 0, 0, 0, Info, "server", "Returns information and statistics about the server.", "1.0.0"});
  t->Add({"config", -2, adm, 0, 0, 0, ConfigCmd, "server", "A container for server configuration commands.", "2.0.0", nullptr,
          {{"config|get", -3}, {"config|set", -4}, {"config|rewrite", 2}, {"config|resetstat", 2},
           {"config|help", 2}}});
  t->Add({"time", 1, kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, Time, "server", "Returns the server time.", "2.6.0"});
  t->Add({"command", -1, kCmdLoading | kCmdStale | kCmdSlow, 0, 0, 0, CommandCmd, "server", "Returns detailed information about all commands.", "2.8.13", nullptr,
          {{"command|count", 2}, {"command|info", -2}, {"command|docs", -2}, {"command|list", -2},
           {"command|getkeys", -4}, {"command|getkeysandflags", -4}, {"command|help", 2}}});
  t->Add({"slowlog", -2, adm, 0, 0, 0, SlowlogCmd, "server", "A container for slow log commands.", "2.2.12", nullptr,
          {{"slowlog|get", -2}, {"slowlog|len", 2}, {"slowlog|reset", 2}, {"slowlog|help", 2}}});
  t->Add({"monitor", 1, adm, 0, 0, 0, Monitor, "server", "Listens for all requests received by the server in real-time.", "1.0.0"});
  t->Add({"compact", 1, adm | kCmdSlow, 0, 0, 0, Compact, "server", "Compacts the whole database now (kvrocks).", "kvrocks 0.1.0"});
  t->Add({"latency", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0, Latency, "server",
          "A container for latency diagnostics commands.", "2.8.13", nullptr,
          {{"latency|doctor", 2}, {"latency|help", 2}, {"latency|history", 3}, {"latency|latest", 2},
           {"latency|reset", -2}, {"latency|histogram", -2}, {"latency|graph", 3}}});
  t->Add({"lastsave", 1, kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, LastSave, "server", "Returns the Unix timestamp of the last successful save to disk.", "1.0.0"});
  t->Add({"save", 1, kCmdAdmin | kCmdNoScript | kCmdDenyMulti, 0, 0, 0, Save, "server", "Synchronously saves the database(s) to disk.", "1.0.0"});
  t->Add({"bgsave", -1, kCmdAdmin | kCmdNoScript, 0, 0, 0, BgSave, "server", "Asynchronously saves the database(s) to disk.", "1.0.0"});
  t->Add({"shutdown", -1, kCmdAllowBusy | kCmdDenyMulti | adm, 0, 0, 0, Shutdown, "server", "Synchronously saves the database(s) to disk and shuts down the Redis server.", "1.0.0"});
}

}  // namespace kvrocks
