// When each key was last accessed, for OBJECT IDLETIME and DEBUG OBJECT.
//
// Redis keeps a 24-bit LRU clock (seconds, wrapping every 194 days) in every
// object and sets it whenever a command looks the key up (lookupKey without
// LOOKUP_NOTOUCH) or creates it. kvrocks keeps no objects in memory, and a
// record per key would grow with the data set, so the clock lives in a fixed
// table of slots indexed by a hash of the key name: a slot holds the LRU clock
// of the last access to any key that hashes to it. The idle time of a key is
// therefore exact unless another key sharing its slot (or the same name in
// another database) was accessed more recently; then it is shorter. A slot
// nobody touched since the data set was loaded (start, full sync, DEBUG
// RELOAD) reads as the load time, as Redis' loaded objects have it.
//
// The table is anonymous memory mapped at start: pages never touched cost
// nothing, and a reset returns them all to the kernel. Thread-safe: slots are
// relaxed atomics, a race between two accesses keeps one of them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kvrocks {

class AccessClock {
 public:
  static constexpr uint32_t kClockMax = (1u << 24) - 1;  // Redis' LRU_CLOCK_MAX

  // slots: rounded up to a power of two (at least 1024).
  explicit AccessClock(size_t slots);
  ~AccessClock();
  AccessClock(const AccessClock&) = delete;
  AccessClock& operator=(const AccessClock&) = delete;

  // Redis' LRU_CLOCK(): seconds since the epoch, modulo 2^24.
  static uint32_t Now();

  // The key was looked up or written now.
  void Touch(std::string_view key) { Set(key, Now()); }
  // Sets the key's LRU clock (RESTORE ... IDLETIME).
  void Set(std::string_view key, uint32_t lru);
  // The key's LRU clock.
  uint32_t Get(std::string_view key) const;
  // Starts loading the key's slot into the cache ahead of a Touch.
  void Prefetch(std::string_view key) const { __builtin_prefetch(&SlotOf(key), 1); }
  // Every key counts as accessed now (a whole data set is being loaded).
  void Reset();
  // Keys not touched since the last Reset count as accessed now (the load ended).
  void MarkLoaded() { base_.store(Now(), std::memory_order_relaxed); }

  // Redis' estimateObjectIdleTime: milliseconds since lru, modulo the clock's wrap.
  static uint64_t IdleMs(uint32_t lru, uint32_t now);
  // Redis' RESTORE/RDB IDLE: the LRU clock of a key idle for idle_s seconds.
  static uint32_t LruForIdle(uint64_t idle_s, uint32_t now);

 private:
  // A slot is 0 (untouched since the last reset) or kSet | lru.
  static constexpr uint32_t kSet = 1u << 31;

  std::atomic<uint32_t>& SlotOf(std::string_view key) const;

  std::atomic<uint32_t>* slots_ = nullptr;
  size_t mask_ = 0;
  size_t bytes_ = 0;
  std::atomic<uint32_t> base_;  // the LRU clock of untouched slots
  std::atomic<uint32_t> fallback_{0};  // the only slot if the table could not be mapped
};

}  // namespace kvrocks
