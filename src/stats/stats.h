// Server-wide counters for INFO, and per-command call statistics.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvrocks {

class Stats {
 public:
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> total_commands_processed{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> keyspace_hits{0};
  std::atomic<uint64_t> keyspace_misses{0};
  std::atomic<uint64_t> expired_keys{0};
  std::atomic<uint64_t> expired_fields{0};  // hash fields removed by their TTL
  std::atomic<uint64_t> net_input_bytes{0};
  std::atomic<uint64_t> net_output_bytes{0};
  std::atomic<uint64_t> total_error_replies{0};

  // Zeroes the counters above (per-command counters live in the command table).
  void Reset();
};

}  // namespace kvrocks
