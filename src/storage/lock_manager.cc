#include "storage/lock_manager.h"

#include <algorithm>
#include <functional>
#include <string>

namespace kvrocks {

size_t LockManager::StripeOf(uint8_t db, std::string_view key) const {
  size_t h = std::hash<std::string_view>()(key) ^ (static_cast<size_t>(db) * 0x9E3779B97F4A7C15ULL);
  return h % mutexes_.size();
}

MultiLockGuard::MultiLockGuard(LockManager* lm, std::vector<size_t> stripes) : lm_(lm), stripes_(std::move(stripes)) {
  std::sort(stripes_.begin(), stripes_.end());
  stripes_.erase(std::unique(stripes_.begin(), stripes_.end()), stripes_.end());
  for (size_t s : stripes_) lm_->stripe(s).lock();
}

MultiLockGuard::MultiLockGuard(LockManager* lm) : lm_(lm) {
  stripes_.resize(lm->size());
  for (size_t i = 0; i < stripes_.size(); i++) stripes_[i] = i;
  for (size_t s : stripes_) lm_->stripe(s).lock();
}

MultiLockGuard::~MultiLockGuard() {
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) lm_->stripe(*it).unlock();
}

}  // namespace kvrocks
