// Server configuration: kvrocks.conf, command-line overrides and the one
// table behind CONFIG GET / SET / REWRITE.
//
// Every option is one row of the table built in Config::Config(): its name,
// kind, the field it writes, whether CONFIG SET may change it at run time, and
// an optional hook run after a successful SET (e.g. to resize the block cache).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace kvrocks {

// Keyspace notification classes (notify-keyspace-events letters).
enum NotifyFlag : uint32_t {
  kNotifyKeyspace = 1 << 0,   // K
  kNotifyKeyevent = 1 << 1,   // E
  kNotifyGeneric = 1 << 2,    // g
  kNotifyString = 1 << 3,     // $
  kNotifyList = 1 << 4,       // l
  kNotifySet = 1 << 5,        // s
  kNotifyHash = 1 << 6,       // h
  kNotifyZSet = 1 << 7,       // z
  kNotifyExpired = 1 << 8,    // x
  kNotifyEvicted = 1 << 9,    // e
  kNotifyStream = 1 << 10,    // t
  kNotifyKeyMiss = 1 << 11,   // m
  kNotifyModule = 1 << 12,    // d
  kNotifyNew = 1 << 13,       // n
  // A: every class but m and n, as in Redis.
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash | kNotifyZSet | kNotifyExpired |
               kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// An option field that CONFIG SET stores while other threads read it: a relaxed
// atomic that reads and assigns like a plain T. A reader sees the old value or
// the new one, never a torn one, and the access is not a data race (loads and
// stores are plain moves on x86). Options that must change together with
// others are read under Config's own locks instead.
template <typename T>
class Relaxed {
 public:
  constexpr Relaxed(T v) : v_(v) {}  // NOLINT: converts, as the plain field did
  Relaxed(const Relaxed&) = delete;
  Relaxed& operator=(const Relaxed&) = delete;
  operator T() const { return v_.load(std::memory_order_relaxed); }  // NOLINT
  Relaxed& operator=(T v) {
    v_.store(v, std::memory_order_relaxed);
    return *this;
  }
  T get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<T> v_;
};

struct Config {
  // Server
  std::string bind = "127.0.0.1";               // addresses separated by spaces, at most kMaxBindAddresses
  Relaxed<int> port = 6666;                     // 0: no TCP listener (unixsocket only)
  static constexpr int kMaxBindAddresses = 16;  // Redis' CONFIG_BINDADDR_MAX
  // The addresses of bind, in order.
  std::vector<std::string> BindAddresses() const;
  // Refuse clients not on the loopback interface while the default user has no password.
  Relaxed<bool> protected_mode = true;
  std::string unixsocket;           // a Unix domain socket path to listen on too ("" none)
  Relaxed<int> unixsocketperm = 0;  // its file mode (octal in the config), 0 the umask's
  Relaxed<int> workers = 2;
  std::string dir = "./data";
  Relaxed<bool> daemonize = false;
  std::string pidfile;
  std::string log_dir;  // glog's files go here; empty: log to stderr
  std::string logfile;  // as Redis' logfile: logs are appended to it (overrides log_dir)
  std::string log_level = "notice";  // Redis' loglevel: debug, verbose, notice or warning
  std::string requirepass;
  Relaxed<int> maxclients = 10000;
  Relaxed<int> timeout = 0;
  Relaxed<int> databases = 16;
  Relaxed<int> tcp_backlog = 511;  // listen(2)'s backlog for every listening socket
  Relaxed<bool> jemalloc_bg_thread = true;
  std::string bind_source_addr;            // the replica's link to its master binds this first
  Relaxed<bool> crash_log_enabled = true;  // a crash logs its signal and stack (server/logging.h)
  std::string supervised = "no";           // Redis' supervised: no, upstart, systemd or auto
  Relaxed<bool> rdbchecksum = true;        // RDB files written with, and checked against, their CRC64
  // shutdown-on-sigint / shutdown-on-sigterm: what SIGINT / SIGTERM shut down with,
  // SHUTDOWN's options as Redis' bits (0: save if there are save points).
  static constexpr int kShutdownSave = 1, kShutdownNoSave = 2, kShutdownNow = 4, kShutdownForce = 8;
  std::atomic<int> shutdown_on_sigint{0};
  std::atomic<int> shutdown_on_sigterm{0};
  std::string oom_score_adj = "no";  // Redis' oom-score-adj: no, yes (relative) or absolute
  std::array<Relaxed<int>, 3> oom_score_adj_values{0, 200, 800};  // master, replica, background child
  Relaxed<int> tcp_keepalive = 300;
  Relaxed<int64_t> proto_max_bulk_len = 512LL * 1024 * 1024;
  Relaxed<int64_t> client_query_buffer_limit = 1024LL * 1024 * 1024;
  // maxmemory-clients: bytes, or a negative percentage of maxmemory (Redis'
  // encoding of "N%"); 0 disables client eviction.
  std::atomic<int64_t> maxmemory_clients{0};
  // client-output-buffer-limit, per client class (hard bytes, soft bytes, soft seconds).
  struct OutputBufferLimit {
    Relaxed<int64_t> hard = 0;
    Relaxed<int64_t> soft = 0;
    Relaxed<int64_t> soft_seconds = 0;
  };
  OutputBufferLimit obl_normal, obl_replica{256LL << 20, 64LL << 20, 60}, obl_pubsub{32LL << 20, 8LL << 20, 60};
  Relaxed<int64_t> slowlog_log_slower_than = 10000;
  Relaxed<int64_t> slowlog_max_len = 128;
  Relaxed<int64_t> tracking_table_max_keys = 1000000;  // CLIENT TRACKING keys remembered; 0 = no limit
  Relaxed<int64_t> access_clock_slots = 4194304;       // OBJECT IDLETIME's table (server/access_clock.h)
  Relaxed<int64_t> latency_monitor_threshold = 0;      // ms; 0 = latency monitor off
  Relaxed<bool> latency_tracking = true;               // per-command latency histograms
  // INFO latencystats' percentiles (latency-tracking-info-percentiles).
  std::vector<double> LatencyPercentiles() const;
  void SetLatencyPercentiles(std::vector<double> p);
  // Save points (`save <seconds> <changes> ...`, Redis' saveparams): a BGSAVE runs
  // once at least `changes` changes were made and the last save is more than
  // `seconds` old. None by default: kvrocks' data is durable without saves.
  struct SavePoint {
    int64_t seconds;
    int64_t changes;
  };
  std::vector<SavePoint> SavePoints() const;
  void SetSavePoints(std::vector<SavePoint> points);
  Relaxed<int64_t> busy_reply_threshold = 5000;  // ms a script runs before others get -BUSY
  // notify-keyspace-events as NotifyFlag bits (0: off).
  std::atomic<uint32_t> notify_keyspace_events{0};
  Relaxed<int> hz = 10;
  Relaxed<int64_t> hll_sparse_max_bytes = 3000;
  Relaxed<int64_t> stream_node_max_bytes = 4096;
  // Replication from a Redis master.
  std::string replicaof;  // "host port", empty = master
  std::string kslaveof;   // "host port" of a kvrocks master (KSLAVEOF), empty = none
  std::string masterauth, masteruser;
  Relaxed<bool> replica_read_only = true;
  Relaxed<bool> replica_serve_stale_data = true;
  Relaxed<int> repl_timeout = 60;
  Relaxed<int> replica_idle_apply_max_lag_ms = 200;  // apply_priority.h
  Relaxed<int> repl_ping_replica_period = 10;
  std::string replica_announce_ip;
  Relaxed<int> replica_announce_port = 0;
  Relaxed<int> replica_priority = 100;
  Relaxed<bool> replica_announced = true;  // INFO's replica_announced: Sentinel lists the replica
  // Writes need this many replicas with at most min_replicas_max_lag seconds of
  // lag (0 in either: no check). kvrocks serves no replicas, so a master with
  // both set refuses writes with -NOREPLICAS, as a Redis master without replicas.
  Relaxed<int> min_replicas_to_write = 0;
  Relaxed<int> min_replicas_max_lag = 10;
  std::string replica_apply_errors = "skip";  // or "disconnect"
  std::string load_rdb;  // an RDB file to load at startup (replacing the data set)
  Relaxed<int64_t> stream_node_max_entries = 100;
  // Shapes of Redis' quicklist nodes (memory layout only; every Redis 7.0 list
  // reports "quicklist"): kept for CONFIG, nothing in kvrocks' storage depends on them.
  Relaxed<int> list_max_listpack_size = -2;
  Relaxed<int> list_compress_depth = 0;
  // Redis' compact-encoding limits (types/encoding_limits.h: what OBJECT ENCODING reports).
  Relaxed<int64_t> hash_max_listpack_entries = 512;
  Relaxed<int64_t> hash_max_listpack_value = 64;
  Relaxed<int64_t> set_max_intset_entries = 512;
  Relaxed<int64_t> zset_max_listpack_entries = 128;
  Relaxed<int64_t> zset_max_listpack_value = 64;
  Relaxed<bool> active_expire = true;
  Relaxed<bool> disable_thp = false;            // prctl(PR_SET_THP_DISABLE) at startup (main.cc)
  std::string sched_policy = "normal";          // the threads' scheduling policy: normal | batch (startup only)
  std::string enable_debug_command = "no";      // yes | no | local (DEBUG)
  std::string enable_protected_configs = "no";  // yes | no | local (CONFIG SET of dir, dbfilename)
  std::string dbfilename = "dump.rdb";          // the RDB file DEBUG RELOAD writes and reads, in dir
  Relaxed<bool> rdbcompression = true;          // LZF for strings in RDB files and DUMP payloads
  // rename-command old new ("" disables old); startup only, applied in order.
  std::vector<std::pair<std::string, std::string>> rename_commands;
  // ACL users: "user ..." lines of the config file, or a separate aclfile.
  std::vector<std::string> acl_user_lines;
  std::string aclfile;
  std::string acl_pubsub_default = "resetchannels";  // or allchannels: a new user's or selector's channels
  Relaxed<int64_t> acllog_max_len = 128;

  // RocksDB
  Relaxed<int64_t> rocksdb_block_cache_size = 512LL * 1024 * 1024;
  Relaxed<int64_t> rocksdb_write_buffer_size = 64LL * 1024 * 1024;
  Relaxed<int> rocksdb_max_write_buffer_number = 4;
  Relaxed<int> rocksdb_max_background_jobs = 4;
  Relaxed<int> rocksdb_max_open_files = 4096;
  Relaxed<int> rocksdb_bloom_filter_bits = 10;
  std::string rocksdb_compression = "no:no:lz4:lz4:lz4:zstd:zstd";
  Relaxed<bool> rocksdb_enable_blob_files = true;
  Relaxed<int64_t> rocksdb_min_blob_size = 4096;
  std::string rocksdb_blob_compression = "lz4";
  Relaxed<int> rocksdb_blob_gc_age_cutoff = 25;  // percent of the oldest blob files whose live values compaction moves
  Relaxed<int> rocksdb_blob_compression_min_saving = 10;  // percent sampled big values must shrink by to compress blobs
  Relaxed<int> rocksdb_blob_gc_min_garbage_ratio = 25;  // percent of blob bytes that must be garbage for GC to run
  std::string rocksdb_wal_compression = "no";
  Relaxed<int64_t> rocksdb_wal_ttl_seconds = 10800;  // archived WAL: kvrocks replicas' backlog
  Relaxed<int64_t> rocksdb_wal_size_limit_mb = 16384;
  Relaxed<int64_t> rocksdb_rate_limiter_bytes_per_sec = 0;  // 0: no limit
  Relaxed<bool> rocksdb_use_direct_reads = false;
  Relaxed<bool> rocksdb_use_direct_io_for_flush_and_compaction = false;
  Relaxed<bool> rocksdb_sync_writes = false;
  Relaxed<bool> rocksdb_low_priority_compaction = true;  // compaction threads at nice 19
  Relaxed<int64_t> rocksdb_target_file_size_base = 64LL * 1024 * 1024;
  Relaxed<int> rocksdb_level0_slowdown_writes_trigger = 20;
  Relaxed<int> rocksdb_level0_stop_writes_trigger = 40;

  // Not options: where the config came from.
  std::string config_file;

  Config();
  ~Config();
  Config(const Config&) = delete;
  Config& operator=(const Config&) = delete;

  // Reads a kvrocks.conf file (redis.conf syntax: "name value...", '#' comments).
  Status LoadFile(const std::string& path);
  // Applies one "name value" pair as from the file or a --name flag
  // (at_startup), or as one CONFIG SET pair (SetAtRuntime, protected allowed).
  Status Set(const std::string& name, const std::string& value, bool at_startup);
  // CONFIG SET with Redis 7.0's semantics: every pair or none (old values put
  // back, hooks run again, on any failure), unknown names, immutable,
  // protected (unless protected_allowed(name)) and repeated options refused
  // before anything is set. The error is Redis' reply text, without "ERR ".
  Status SetAtRuntime(const std::vector<std::pair<std::string, std::string>>& pairs,
                      const std::function<bool(const std::string&)>& protected_allowed);
  // Pairs (name, value) of options whose name matches the glob pattern.
  std::vector<std::pair<std::string, std::string>> Get(const std::string& pattern) const;
  // Whether name is one of Redis' protected configs (CONFIG SET needs enable-protected-configs).
  bool IsProtected(const std::string& name) const;
  // Rewrites config_file with the current values, keeping comments and order, as
  // Redis' CONFIG REWRITE does: byte sizes in gb/mb/kb, an option on its first line
  // only (later lines of it blanked, runs of blank lines written as one), and an
  // option missing from the file appended (after "# Generated by CONFIG REWRITE")
  // only when its value differs from the default. users ("user <name> <rules>" lines, as ACL LIST gives
  // them) replace the file's user lines in order, the rest appended; without an
  // aclfile every user is written, with one the file keeps none.
  Status Rewrite(const std::vector<std::string>& users) const;

  using SetHook = std::function<Status(const Config&)>;
  // Registers a function run after CONFIG SET name succeeds at run time.
  void OnSet(const std::string& name, SetHook hook);

  // Threads. CONFIG SET runs on any worker while other threads read options.
  // Changes at run time (SetAtRuntime, SetValue) are serialized with each other,
  // hooks included, as in Redis' single thread (Rewrite holds that lock too);
  // values change under a reader-writer lock that Get and Value take. So a
  // thread other than the one changing options reads a string option through
  // Value(), never the field itself (a string copied while it is assigned can
  // come out torn). Hooks, startup code and the changing thread itself read
  // fields directly. Numeric and bool options are Relaxed atomics read without
  // the lock: a reader sees the old or the new value (the three numbers of an
  // output buffer limit each on its own; lists are guarded below).
  std::string Value(std::string Config::*field) const;
  // Sets a string option outside CONFIG SET (REPLICAOF records replicaof).
  void SetValue(std::string Config::*field, std::string value);

  struct Option;

 private:
  mutable std::mutex update_mu_;         // one run-time change at a time
  mutable std::shared_mutex values_mu_;  // values change under it exclusively
  mutable std::mutex percentiles_mu_;  // INFO reads them on any worker
  std::vector<double> latency_percentiles_{50, 99, 99.9};
  mutable std::mutex save_points_mu_;  // the cron thread reads them
  std::vector<SavePoint> save_points_;
  std::vector<std::unique_ptr<Option>> options_;
  std::map<std::string, Option*> by_name_;
  void Add(std::unique_ptr<Option> opt);
  Option* Find(const std::string& name) const;
};

// Redis' memtoull (util.c): digits and an optional unit (b, k, kb, m, mb, g, gb);
// no digits is 0, and what does not fit wraps as in C (the bounds then refuse it).
bool RedisMemToUll(const std::string& s, uint64_t* out);
// Parses "1gb", "512mb", "100k", "42" as redis.conf does (k=1000, kb=1024 ...,
// Redis' memtoull); false for "" and for what does not fit in an int64_t.
bool ParseMemory(const std::string& s, int64_t* out);
// Writes a byte count as CONFIG REWRITE does in Redis: the largest of gb, mb, kb that
// divides it exactly ("512mb", "1gb", "1536kb"), else plain bytes ("0", "1000").
std::string FormatMemory(int64_t bytes);

}  // namespace kvrocks
