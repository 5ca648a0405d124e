// Server-wide counters for INFO, and per-command call statistics.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace kvrocks {

class Stats {
 public:
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> total_commands_processed{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> keyspace_hits{0};
  std::atomic<uint64_t> keyspace_misses{0};
  std::atomic<uint64_t> expired_keys{0};
  // Redis' server.dirty: changes since the last SAVE (commands/dirty.h).
  std::atomic<uint64_t> dirty{0};
  std::atomic<uint64_t> expired_fields{0};  // hash fields removed by their TTL
  std::atomic<uint64_t> net_input_bytes{0};
  std::atomic<uint64_t> net_output_bytes{0};
  std::atomic<uint64_t> total_error_replies{0};
  // Errors of commands from this replica's master, counted in total_error_replies too
  // (Redis' stat_unexpected_error_replies: the master applied them).
  std::atomic<uint64_t> unexpected_error_replies{0};
  std::atomic<uint64_t> net_repl_input_bytes{0};    // bytes received from a master
  std::atomic<uint64_t> net_repl_output_bytes{0};   // bytes sent to replicas (RDB snapshots, kvrocks replicas)
  std::atomic<uint64_t> sync_full{0};               // full syncs served (RDB snapshots, KPSYNC snapshots)
  std::atomic<uint64_t> sync_partial_ok{0};         // KPSYNCs continued from the write-ahead log
  std::atomic<uint64_t> sync_partial_err{0};        // (K)PSYNCs of a known history that got no partial sync
  std::atomic<uint64_t> total_reads_processed{0};   // socket read events of clients
  std::atomic<uint64_t> total_writes_processed{0};  // socket write events of clients
  std::atomic<uint64_t> expire_cycle_us{0};         // time spent in active expiry passes (us)
  std::atomic<uint64_t> rdb_saves{0};               // successful SAVE/BGSAVE checkpoints
  std::atomic<uint64_t> evicted_clients{0};         // disconnected by maxmemory-clients
  std::atomic<uint64_t> reply_buffer_shrinks{0};    // reply buffers given back by the clients' cron
  // INFO's expired_stale_perc (a fraction): running average of each expiry pass' share.
  void NoteExpireStaleness(double share) {
    expired_stale_.store(share * 0.05 + expired_stale_.load(std::memory_order_relaxed) * 0.95,
                         std::memory_order_relaxed);
  }
  double expired_stale() const { return expired_stale_.load(std::memory_order_relaxed); }

  // Redis' instantaneous_* metrics: a reading of each counter every 100 ms (the
  // server's cron), the rate between readings averaged over the last 16.
  enum Metric { kOps, kNetInput, kNetOutput, kNetReplInput, kNetReplOutput, kNumMetrics };
  void SampleRates(uint64_t now_ms);
  // Per second, averaged over the samples (in integers, as Redis').
  int64_t Rate(Metric m);

  // Counts an error reply (its line without the leading '-') in
  // total_error_replies and under its code, the first word (INFO errorstats):
  // "ERR" when no space comes within its first 31 bytes, as in Redis.
  void RecordError(std::string_view error);
  // (code, count) in code order.
  std::map<std::string, uint64_t> ErrorCounts();

  // Zeroes the counters above (per-command counters live in the command table).
  void Reset();

 private:
  std::atomic<double> expired_stale_{0};
  std::mutex errors_mu_;  // errors are not a hot path
  std::map<std::string, uint64_t> errors_;

  static constexpr int kSamples = 16;  // Redis' STATS_METRIC_SAMPLES
  struct RateTracker {
    uint64_t last_reading = 0;
    uint64_t last_ms = 0;
    int64_t samples[kSamples] = {};
    int next = 0;
  };
  std::mutex rates_mu_;
  RateTracker rates_[kNumMetrics];
};

}  // namespace kvrocks
