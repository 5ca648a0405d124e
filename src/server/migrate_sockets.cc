#include "server/migrate_sockets.h"

#include <iterator>

namespace kvrocks {

MigrateSockets::Cached* MigrateSockets::Get(const std::string& name, const std::string& host, int port,
                                            int timeout_ms, Status* why) {
  time_t now = std::time(nullptr);
  auto it = cache_.find(name);
  if (it != cache_.end()) {
    it->second.last_use = now;
    return &it->second;
  }
  if (cache_.size() >= kMaxItems) {
    // Too many: drop one at random, as Redis does.
    cache_.erase(std::next(cache_.begin(), static_cast<long>(static_cast<size_t>(now) % cache_.size())));
  }
  auto link = std::make_unique<MasterLink>(&never_stop_);
  *why = link->Connect(host, port, timeout_ms);
  if (!why->ok()) return nullptr;
  Cached& c = cache_[name];
  c.link = std::move(link);
  c.last_use = now;
  return &c;
}

void MigrateSockets::CloseIdle() {
  std::lock_guard<std::mutex> g(mu_);
  time_t now = std::time(nullptr);
  for (auto it = cache_.begin(); it != cache_.end();) {
    it = now - it->second.last_use > kTtlSeconds ? cache_.erase(it) : std::next(it);
  }
}

size_t MigrateSockets::Count() {
  std::lock_guard<std::mutex> g(mu_);
  return cache_.size();
}

}  // namespace kvrocks
