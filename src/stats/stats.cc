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
  unexpected_error_replies = 0;
  net_repl_input_bytes = 0;
  net_repl_output_bytes = 0;
  sync_full = 0;
  sync_partial_ok = 0;
  sync_partial_err = 0;
  total_reads_processed = 0;
  total_writes_processed = 0;
  expire_cycle_us = 0;
  rdb_saves = 0;
  evicted_clients = 0;
  reply_buffer_shrinks = 0;
  expired_stale_ = 0;
  {
    // As Redis' resetServerStats: the instantaneous metrics start over.
    std::lock_guard<std::mutex> g(rates_mu_);
    for (auto& r : rates_) r = RateTracker{};
  }
  std::lock_guard<std::mutex> g(errors_mu_);
  errors_.clear();
}

void Stats::SampleRates(uint64_t now_ms) {
  const uint64_t repl_in = net_repl_input_bytes.load();
  // The network totals include replication traffic, as Redis' do.
  const uint64_t repl_out = net_repl_output_bytes.load();
  const uint64_t readings[kNumMetrics] = {total_commands_processed.load(), net_input_bytes.load() + repl_in,
                                          net_output_bytes.load() + repl_out, repl_in, repl_out};
  std::lock_guard<std::mutex> g(rates_mu_);
  for (int m = 0; m < kNumMetrics; m++) {
    RateTracker& r = rates_[m];
    // trackInstantaneousMetric: the first reading (or one after a reset) only sets the base.
    if (r.last_ms != 0 && now_ms > r.last_ms && readings[m] >= r.last_reading) {
      r.samples[r.next] = static_cast<int64_t>((readings[m] - r.last_reading) * 1000 / (now_ms - r.last_ms));
      r.next = (r.next + 1) % kSamples;
    }
    r.last_reading = readings[m];
    r.last_ms = now_ms;
  }
}

int64_t Stats::Rate(Metric m) {
  std::lock_guard<std::mutex> g(rates_mu_);
  int64_t sum = 0;
  for (int64_t v : rates_[m].samples) sum += v;
  return sum / kSamples;
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
