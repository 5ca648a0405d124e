// The latency monitor (LATENCY LATEST/HISTORY/RESET/DOCTOR): per event
// ("command", "fast-command"), the worst latency of each second, for the last
// 160 seconds that had one, and the all-time maximum. Events are recorded when
// latency-monitor-threshold is set and reached, as in Redis.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kvrocks {

class LatencyMonitor {
 public:
  static constexpr int kSamples = 160;
  struct Sample {
    int64_t time = 0;  // unix seconds; 0 = unused
    int64_t latency = 0;  // ms
  };
  struct Series {
    std::vector<Sample> samples = std::vector<Sample>(kSamples);
    int idx = 0;
    int64_t max = 0;
  };

  void Add(const std::string& event, int64_t latency_ms);
  // Copies of the series, by event name.
  std::map<std::string, Series> Snapshot();
  // Forgets the given events (all if empty); returns how many existed.
  int Reset(const std::vector<std::string>& events);
  // LATENCY DOCTOR's text; threshold_ms is the current setting.
  std::string Doctor(int64_t threshold_ms);
  // LATENCY GRAPH's text for event at unix time now (labels say how long ago each
  // sample was); false if the event has no samples.
  bool Graph(const std::string& event, int64_t now, std::string* out);

  // Redis' sparkline (sparkline.c with SPARKLINE_FILL): each value a column of
  // `rows` text lines scaled between the smallest and largest value, "_o#" steps
  // within a line and '|' below, then the labels written downwards; `columns`
  // values per block.
  static std::string Sparkline(const std::vector<std::pair<double, std::string>>& samples, int columns, int rows);

 private:
  std::mutex mu_;
  std::map<std::string, Series> events_;
};

}  // namespace kvrocks
