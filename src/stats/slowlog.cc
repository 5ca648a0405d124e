#include "stats/slowlog.h"

#include <ctime>

namespace kvrocks {

static constexpr size_t kMaxArgc = 32;
static constexpr size_t kMaxArgLen = 128;

void SlowLog::Add(const std::vector<std::string>& args, uint64_t duration_us, const std::string& peer,
                  const std::string& name, size_t max_len) {
  SlowLogEntry e;
  e.time = static_cast<int64_t>(std::time(nullptr));
  e.duration_us = duration_us;
  e.peer = peer;
  e.name = name;
  size_t n = std::min(args.size(), kMaxArgc);
  for (size_t i = 0; i < n; i++) {
    if (n < args.size() && i == n - 1) {
      e.args.push_back("... (" + std::to_string(args.size() - n + 1) + " more arguments)");
      break;
    }
    if (args[i].size() > kMaxArgLen) {
      e.args.push_back(args[i].substr(0, kMaxArgLen) + "... (" + std::to_string(args[i].size() - kMaxArgLen) +
                       " more bytes)");
    } else {
      e.args.push_back(args[i]);
    }
  }
  std::lock_guard<std::mutex> g(mu_);
  e.id = next_id_++;
  entries_.push_front(std::move(e));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowLogEntry> SlowLog::Get(size_t count) {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<SlowLogEntry> out;
  for (size_t i = 0; i < entries_.size() && i < count; i++) out.push_back(entries_[i]);
  return out;
}

size_t SlowLog::Len() {
  std::lock_guard<std::mutex> g(mu_);
  return entries_.size();
}

void SlowLog::Reset() {
  std::lock_guard<std::mutex> g(mu_);
  entries_.clear();
}

void SlowLog::Trim(size_t max_len) {
  std::lock_guard<std::mutex> g(mu_);
  while (entries_.size() > max_len) entries_.pop_back();
}

}  // namespace kvrocks
