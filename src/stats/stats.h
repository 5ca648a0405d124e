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

  // Counts an error reply (its line without the leading '-') in
  // total_error_replies and under its code, the first word (INFO errorstats):
  // "ERR" when no space comes within its first 31 bytes, as in Redis.
  void RecordError(std::string_view error);
  // (code, count) in code order.
  std::map<std::string, uint64_t> ErrorCounts();

  // Zeroes the counters above (per-command counters live in the command table).
  void Reset();

 private:
  std::mutex errors_mu_;  // errors are not a hot path
  std::map<std::string, uint64_t> errors_;
};

}  // namespace kvrocks
