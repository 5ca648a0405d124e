// Striped per-key locks. A read-modify-write command holds the stripes of
// all its keys for the whole command (several keys are locked in stripe
// order, so two commands never deadlock). Whole-database operations
// (FLUSHDB, SWAPDB ...) hold every stripe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace kvrocks {

class LockManager {
 public:
  explicit LockManager(size_t stripes = 4096) : mutexes_(stripes) {}
  size_t StripeOf(uint8_t db, std::string_view key) const;
  size_t size() const { return mutexes_.size(); }
  std::mutex& stripe(size_t i) { return mutexes_[i]; }

 private:
  std::vector<std::mutex> mutexes_;
};

// Holds a set of stripes, locked in ascending order, until destroyed.
class MultiLockGuard {
 public:
  MultiLockGuard(LockManager* lm, std::vector<size_t> stripes);
  // Locks every stripe.
  explicit MultiLockGuard(LockManager* lm);
  ~MultiLockGuard();
  MultiLockGuard(const MultiLockGuard&) = delete;
  MultiLockGuard& operator=(const MultiLockGuard&) = delete;

 private:
  LockManager* lm_;
  std::vector<size_t> stripes_;
};

}  // namespace kvrocks
