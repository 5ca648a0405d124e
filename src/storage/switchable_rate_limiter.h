// SwitchableRateLimiter is the RocksDB rate limiter of flush and compaction
// writes whose rate CONFIG SET changes (rocksdb.rate-limiter-bytes-per-sec).
//
// RocksDB's GenericRateLimiter keeps the tokens of its current period when its
// rate is lowered; an "unlimited" one (a rate of INT64_MAX) holds terabytes of
// them, so lowering it at run time limited nothing. This one forwards to a
// GenericRateLimiter made afresh for each new rate, and to none while the rate
// is 0 (no limit). A request already waiting finishes on the limiter it began
// with. Thread-safe.
#pragma once

#include <rocksdb/rate_limiter.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>

namespace kvrocks {

class SwitchableRateLimiter : public rocksdb::RateLimiter {
 public:
  // bytes_per_second 0: no limit.
  explicit SwitchableRateLimiter(int64_t bytes_per_second) { SetBytesPerSecond(bytes_per_second); }

  // Also takes 0 (no limit), which RocksDB's own limiters do not.
  void SetBytesPerSecond(int64_t bytes_per_second) override {
    std::shared_ptr<rocksdb::RateLimiter> next;
    if (bytes_per_second > 0) next.reset(rocksdb::NewGenericRateLimiter(bytes_per_second));
    std::lock_guard<std::mutex> g(mu_);
    inner_ = std::move(next);
    rate_ = bytes_per_second;
  }

  void Request(const int64_t bytes, const rocksdb::Env::IOPriority pri, rocksdb::Statistics* stats) override {
    std::shared_ptr<rocksdb::RateLimiter> inner = Inner();
    if (!inner) return;
    through_.fetch_add(bytes, std::memory_order_relaxed);
    requests_.fetch_add(1, std::memory_order_relaxed);
    // The caller sized bytes by the burst of the rate it saw, which may have been higher.
    const int64_t burst = inner->GetSingleBurstBytes() > 0 ? inner->GetSingleBurstBytes() : 1;
    for (int64_t left = bytes; left > 0; left -= burst) inner->Request(left < burst ? left : burst, pri, stats);
  }

  int64_t GetSingleBurstBytes() const override {
    std::shared_ptr<rocksdb::RateLimiter> inner = Inner();
    // Unlimited: a burst as big as RocksDB asks for (it clamps requests to this).
    return inner ? inner->GetSingleBurstBytes() : std::numeric_limits<int32_t>::max();
  }
  int64_t GetTotalBytesThrough(const rocksdb::Env::IOPriority /*pri*/) const override {
    return through_.load(std::memory_order_relaxed);
  }
  int64_t GetTotalRequests(const rocksdb::Env::IOPriority /*pri*/) const override {
    return requests_.load(std::memory_order_relaxed);
  }
  int64_t GetBytesPerSecond() const override {
    std::lock_guard<std::mutex> g(mu_);
    return rate_ > 0 ? rate_ : std::numeric_limits<int64_t>::max();
  }

 private:
  std::shared_ptr<rocksdb::RateLimiter> Inner() const {
    std::lock_guard<std::mutex> g(mu_);
    return inner_;
  }

  mutable std::mutex mu_;  // guards inner_ and rate_
  std::shared_ptr<rocksdb::RateLimiter> inner_;
  int64_t rate_ = 0;
  std::atomic<int64_t> through_{0};   // bytes of limited requests (all priorities)
  std::atomic<int64_t> requests_{0};  // limited requests
};

}  // namespace kvrocks
