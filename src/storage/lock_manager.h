// Key locks. A read-modify-write command holds the locks of all its keys for
// the whole command; a worker's write batch holds them until it commits.
//
// Locks are taken on a 64-bit hash of (db, key) in a sharded hash set, so two
// commands contend only when they touch the same key (or, with negligible
// probability, keys whose hashes collide). Several keys are locked in hash
// order, so blocking acquisitions cannot deadlock. Whole-database operations
// (FLUSHDB, SWAPDB ...) take the global lock exclusively; everyone who holds
// key locks holds it shared. Writers of the global lock are preferred, so a
// steady stream of key lockers cannot starve FLUSHALL.
#pragma once

#include <pthread.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace kvrocks {

class LockManager {
 public:
  LockManager();
  ~LockManager();
  LockManager(const LockManager&) = delete;
  LockManager& operator=(const LockManager&) = delete;

  static uint64_t KeyHash(uint8_t db, std::string_view key);

  // The global lock: shared by key lockers, exclusive for whole-database operations.
  void LockShared() { pthread_rwlock_rdlock(&global_); }
  void UnlockShared() { pthread_rwlock_unlock(&global_); }
  void LockExclusive() { pthread_rwlock_wrlock(&global_); }
  void UnlockExclusive() { pthread_rwlock_unlock(&global_); }

  // Key locks; the caller holds the global lock shared.
  bool TryLock(uint64_t h);
  void Lock(uint64_t h);
  void Unlock(uint64_t h);

 private:
  struct Shard {
    std::mutex mu;
    std::condition_variable cv;
    std::unordered_set<uint64_t> held;
    int waiters = 0;
  };
  static constexpr size_t kShards = 64;
  Shard& ShardOf(uint64_t h) { return shards_[h % kShards]; }

  pthread_rwlock_t global_;
  Shard shards_[kShards];
};

// Holds the global lock shared and a set of key locks (taken in hash order,
// blocking), or the global lock exclusively, until destroyed.
class MultiLockGuard {
 public:
  MultiLockGuard(LockManager* lm, std::vector<uint64_t> keys);
  // Exclusive: no key lock is held by anyone while this guard lives.
  explicit MultiLockGuard(LockManager* lm);
  ~MultiLockGuard();
  MultiLockGuard(const MultiLockGuard&) = delete;
  MultiLockGuard& operator=(const MultiLockGuard&) = delete;

 private:
  LockManager* lm_;
  bool exclusive_;
  std::vector<uint64_t> keys_;
};

}  // namespace kvrocks
