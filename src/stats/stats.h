// Server-wide counters for INFO, and per-command call statistics.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace kvrocks {

struct CommandStat {
  uint64_t calls = 0;
  uint64_t usec = 0;
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
};

class Stats {
 public:
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> total_commands_processed{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> keyspace_hits{0};
  std::atomic<uint64_t> keyspace_misses{0};
  std::atomic<uint64_t> expired_keys{0};
  std::atomic<uint64_t> net_input_bytes{0};
  std::atomic<uint64_t> net_output_bytes{0};
  std::atomic<uint64_t> total_error_replies{0};

  // Records one call of a command (name in lower case).
  void RecordCall(const std::string& name, uint64_t usec, bool failed);
  void RecordRejected(const std::string& name);
  std::map<std::string, CommandStat> CommandStats();
  void Reset();

 private:
  std::mutex mu_;
  std::map<std::string, CommandStat> commands_;
};

}  // namespace kvrocks
