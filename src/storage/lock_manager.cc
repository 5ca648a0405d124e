#include "storage/lock_manager.h"

#include <algorithm>
#include <functional>

namespace kvrocks {

LockManager::LockManager() {
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init(&attr);
  pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init(&global_, &attr);
  pthread_rwlockattr_destroy(&attr);
}

LockManager::~LockManager() { pthread_rwlock_destroy(&global_); }

uint64_t LockManager::KeyHash(uint8_t db, std::string_view key) {
  uint64_t h = std::hash<std::string_view>()(key);
  return h ^ ((static_cast<uint64_t>(db) + 1) * 0x9E3779B97F4A7C15ULL);
}

bool LockManager::TryLock(uint64_t h) {
  Shard& s = ShardOf(h);
  std::lock_guard<std::mutex> g(s.mu);
  return s.held.insert(h).second;
}

void LockManager::Lock(uint64_t h) {
  Shard& s = ShardOf(h);
  std::unique_lock<std::mutex> g(s.mu);
  if (s.held.insert(h).second) return;
  s.waiters++;
  s.cv.wait(g, [&] { return s.held.count(h) == 0; });
  s.waiters--;
  s.held.insert(h);
}

void LockManager::Unlock(uint64_t h) {
  Shard& s = ShardOf(h);
  std::lock_guard<std::mutex> g(s.mu);
  s.held.erase(h);
  // The buckets a huge command's locks made stay after erase: let them go.
  if (s.held.empty() && s.held.bucket_count() > 1024) std::unordered_set<uint64_t>().swap(s.held);
  if (s.waiters > 0) s.cv.notify_all();
}

MultiLockGuard::MultiLockGuard(LockManager* lm, std::vector<uint64_t> keys)
    : lm_(lm), exclusive_(false), keys_(std::move(keys)) {
  std::sort(keys_.begin(), keys_.end());
  keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  lm_->LockShared();
  for (uint64_t k : keys_) lm_->Lock(k);
}

MultiLockGuard::MultiLockGuard(LockManager* lm) : lm_(lm), exclusive_(true) { lm_->LockExclusive(); }

MultiLockGuard::~MultiLockGuard() {
  if (exclusive_) {
    lm_->UnlockExclusive();
    return;
  }
  for (auto it = keys_.rbegin(); it != keys_.rend(); ++it) lm_->Unlock(*it);
  lm_->UnlockShared();
}

}  // namespace kvrocks
