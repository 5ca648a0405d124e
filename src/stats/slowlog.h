// SLOWLOG: the last slowlog-max-len commands slower than slowlog-log-slower-than.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace kvrocks {

struct SlowLogEntry {
  uint64_t id;
  int64_t time;  // unix seconds
  uint64_t duration_us;
  std::vector<std::string> args;  // shortened as Redis shortens them
  std::string peer;
  std::string name;
};

class SlowLog {
 public:
  void Add(const std::vector<std::string>& args, uint64_t duration_us, const std::string& peer,
           const std::string& name, size_t max_len);
  std::vector<SlowLogEntry> Get(size_t count);
  size_t Len();
  void Reset();
  void Trim(size_t max_len);

 private:
  std::mutex mu_;
  std::deque<SlowLogEntry> entries_;
  uint64_t next_id_ = 0;
};

}  // namespace kvrocks
