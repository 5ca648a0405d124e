#include "stats/stats.h"

namespace kvrocks {

void Stats::Reset() {
  total_connections_received = 0;
  total_commands_processed = 0;
  rejected_connections = 0;
  keyspace_hits = 0;
  keyspace_misses = 0;
  expired_keys = 0;
  net_input_bytes = 0;
  net_output_bytes = 0;
  total_error_replies = 0;
  std::lock_guard<std::mutex> g(errors_mu_);
  errors_.clear();
}

void Stats::RecordError(std::string_view error) {
  total_error_replies++;
  // Redis looks for the space within the first 32 bytes of "-CODE ...".
  size_t space = error.substr(0, 31).find(' ');
  std::string code = space == std::string_view::npos ? "ERR" : std::string(error.substr(0, space));
  std::lock_guard<std::mutex> g(errors_mu_);
  errors_[code]++;
}

std::map<std::string, uint64_t> Stats::ErrorCounts() {
  std::lock_guard<std::mutex> g(errors_mu_);
  return errors_;
}

}  // namespace kvrocks
