#include "stats/stats.h"

namespace kvrocks {

void Stats::RecordCall(const std::string& name, uint64_t usec, bool failed) {
  std::lock_guard<std::mutex> g(mu_);
  auto& c = commands_[name];
  c.calls++;
  c.usec += usec;
  if (failed) c.failed_calls++;
}

void Stats::RecordRejected(const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  commands_[name].rejected_calls++;
}

std::map<std::string, CommandStat> Stats::CommandStats() {
  std::lock_guard<std::mutex> g(mu_);
  return commands_;
}

void Stats::Reset() {
  {
    std::lock_guard<std::mutex> g(mu_);
    commands_.clear();
  }
  total_connections_received = 0;
  total_commands_processed = 0;
  rejected_connections = 0;
  keyspace_hits = 0;
  keyspace_misses = 0;
  expired_keys = 0;
  net_input_bytes = 0;
  net_output_bytes = 0;
  total_error_replies = 0;
}

}  // namespace kvrocks
