// The latency distribution of one command (LATENCY HISTOGRAM, INFO
// latencystats), laid out as the HdrHistogram Redis keeps per command: values
// from 1 ns to 1 s with two significant digits (128 sub-buckets per power of
// two), so that percentiles and histogram buckets read exactly as Redis' do for
// the same recorded values.
//
// Thread-safe: any thread may Record while others read or Reset; counters are
// relaxed atomics, so a reader sees each one at some recent value. The counter
// array (24 KiB) is allocated on the first Record.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace kvrocks {

class LatencyHistogram {
 public:
  // Records one call that took ns nanoseconds (clamped to 1 ns .. 1 s, as Redis).
  void Record(int64_t ns);
  // Forgets every recorded value (CONFIG RESETSTAT).
  void Reset();

  // The recorded counts at one moment; what the readers below work on.
  class Snapshot {
   public:
    int64_t total() const { return total_; }
    // The value at percentile (0..100) in ns, as hdr_value_at_percentile: the
    // highest value equivalent to the one where the cumulative count reaches
    // the percentile (the lowest for percentile 0); 0 when nothing was recorded.
    int64_t ValueAtPercentile(double percentile) const;
    // LATENCY HISTOGRAM's buckets: (µs, calls that took at most about that
    // long, cumulative) for 1, 2, 4, 8, 16, 33, 66 ... µs (the highest value
    // equivalent to 1024 ns times a power of two), only where the count grows.
    std::vector<std::pair<int64_t, int64_t>> CumulativeBuckets() const;

   private:
    friend class LatencyHistogram;
    std::vector<int64_t> counts_;
    int64_t total_ = 0;
  };
  Snapshot Read() const;

 private:
  std::once_flag allocated_;
  std::unique_ptr<std::atomic<int64_t>[]> counts_;
  std::atomic<bool> ready_{false};  // counts_ is set
};

}  // namespace kvrocks
