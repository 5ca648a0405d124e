#include "stats/latency.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace kvrocks {

void LatencyMonitor::Add(const std::string& event, int64_t latency_ms) {
  int64_t now = static_cast<int64_t>(time(nullptr));
  std::lock_guard<std::mutex> g(mu_);
  Series& ts = events_[event];
  if (latency_ms > ts.max) ts.max = latency_ms;
  // One sample per second: the worst.
  Sample& prev = ts.samples[(ts.idx + kSamples - 1) % kSamples];
  if (prev.time == now) {
    if (latency_ms > prev.latency) prev.latency = latency_ms;
    return;
  }
  ts.samples[ts.idx] = Sample{now, latency_ms};
  ts.idx = (ts.idx + 1) % kSamples;
}

std::map<std::string, LatencyMonitor::Series> LatencyMonitor::Snapshot() {
  std::lock_guard<std::mutex> g(mu_);
  return events_;
}

int LatencyMonitor::Reset(const std::vector<std::string>& events) {
  std::lock_guard<std::mutex> g(mu_);
  if (events.empty()) {
    int n = static_cast<int>(events_.size());
    events_.clear();
    return n;
  }
  int n = 0;
  for (const auto& e : events) n += static_cast<int>(events_.erase(e));
  return n;
}

std::string LatencyMonitor::Doctor(int64_t threshold_ms) {
  auto events = Snapshot();
  if (events.empty() && threshold_ms == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "
           "\"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep "
           "space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n";
  }
  if (events.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest "
           "bit. I honestly think you ought to sleep tonight.\n";
  }
  std::string report =
      "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you "
      "Dave?\n\n";
  int n = 0;
  bool commands = false;
  for (const auto& [name, ts] : events) {
    // Redis' analyzeLatencyForEvent: count, average, mean deviation, period.
    int64_t samples = 0, sum = 0, min_time = 0, max_time = 0;
    for (const auto& s : ts.samples) {
      if (s.time == 0) continue;
      samples++;
      sum += s.latency;
      if (min_time == 0 || s.time < min_time) min_time = s.time;
      if (s.time > max_time) max_time = s.time;
    }
    double avg = samples ? static_cast<double>(sum) / static_cast<double>(samples) : 0;
    double mad = 0;
    for (const auto& s : ts.samples) {
      if (s.time != 0) mad += std::fabs(static_cast<double>(s.latency) - avg);
    }
    if (samples) mad /= static_cast<double>(samples);
    double period = samples > 1 ? static_cast<double>(max_time - min_time) / static_cast<double>(samples) : 0;
    char line[512];
    snprintf(line, sizeof(line),
             "%d. %s: %lld latency spikes (average %llums, mean deviation %llums, period %.2f sec). Worst all time "
             "event %lldms.\n",
             ++n, name.c_str(), static_cast<long long>(samples), static_cast<unsigned long long>(avg),
             static_cast<unsigned long long>(mad), period, static_cast<long long>(ts.max));
    report += line;
    if (name == "command" || name == "fast-command") commands = true;
  }
  report += "\nI have a few advices for you:\n\n";
  if (commands) {
    report +=
        "- Check your Slow Log to understand what are the commands you are running which are too slow to execute. "
        "Please check https://redis.io/commands/slowlog for more information.\n";
  }
  report +=
      "- kvrocks keeps data in RocksDB: check INFO rocksdb for flushes, compactions and write stalls around the "
      "spikes.\n";
  return report;
}

bool LatencyMonitor::Graph(const std::string& event, int64_t now, std::string* out) {
  Series ts;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = events_.find(event);
    if (it == events_.end()) return false;
    ts = it->second;
  }
  std::vector<std::pair<double, std::string>> samples;
  int64_t low = 0, high = 0;
  for (int j = 0; j < kSamples; j++) {
    const Sample& s = ts.samples[(ts.idx + j) % kSamples];
    if (s.time == 0) continue;
    high = samples.empty() ? s.latency : std::max(high, s.latency);
    low = samples.empty() ? s.latency : std::min(low, s.latency);
    int64_t ago = now - s.time;
    std::string label = ago < 60     ? std::to_string(ago) + "s"
                        : ago < 3600 ? std::to_string(ago / 60) + "m"
                        : ago < 86400 ? std::to_string(ago / 3600) + "h"
                                      : std::to_string(ago / 86400) + "d";
    samples.emplace_back(static_cast<double>(s.latency), label);
  }
  constexpr int kColumns = 80;
  *out = event + " - high " + std::to_string(high) + " ms, low " + std::to_string(low) + " ms (all time high " +
         std::to_string(ts.max) + " ms)\n" + std::string(kColumns, '-') + "\n" + Sparkline(samples, kColumns, 4);
  return true;
}

std::string LatencyMonitor::Sparkline(const std::vector<std::pair<double, std::string>>& samples, int columns,
                                      int rows) {
  static const char kFill[] = "_o#";
  constexpr int kCharsetLen = 3;
  constexpr int kLabelMarginTop = 1;
  if (samples.empty()) return "";
  double min = samples[0].first, max = samples[0].first;
  bool labels = false;
  for (const auto& [value, label] : samples) {
    min = std::min(min, value);
    max = std::max(max, value);
    labels = labels || !label.empty();
  }
  double relmax = max - min;
  if (relmax == 0) relmax = 1;
  const int steps = kCharsetLen * rows;
  std::string out;
  for (size_t offset = 0; offset < samples.size(); offset += static_cast<size_t>(columns)) {
    size_t len = std::min(samples.size() - offset, static_cast<size_t>(columns));
    if (offset != 0) out += "\n";
    for (int row = 0;; row++) {
      std::string line(len, ' ');
      bool more = false;
      for (size_t j = 0; j < len; j++) {
        const auto& [value, label] = samples[offset + j];
        // As Redis computes it: the product truncated to int before the division.
        int step = static_cast<int>(static_cast<int>((value - min) * steps) / relmax);
        if (step < 0) step = 0;
        if (step >= steps) step = steps - 1;
        if (row < rows) {
          more = true;
          int charidx = step - (rows - row - 1) * kCharsetLen;
          if (charidx >= 0 && charidx < kCharsetLen) {
            line[j] = kFill[charidx];
          } else if (charidx >= kCharsetLen) {
            line[j] = '|';
          }
        } else {
          if (labels && row - rows < kLabelMarginTop) {  // a blank line above the labels
            more = true;
            break;
          }
          int label_char = row - rows - kLabelMarginTop;
          if (static_cast<int>(label.size()) > label_char) {
            more = true;
            line[j] = label[static_cast<size_t>(label_char)];
          }
        }
      }
      if (!more) break;
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace kvrocks
