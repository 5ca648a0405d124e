#pragma once

#include <chrono>
#include <cstdint>

namespace kvrocks {

inline uint64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

namespace internal {
inline thread_local uint64_t frozen_expiry_ms = 0;  // 0: not frozen
// frozen_expiry_ms while expiry is ignored (ExpiryTimeIgnore): the clock reads 0.
constexpr uint64_t kExpiryIgnored = UINT64_MAX;
}  // namespace internal

// The clock a key's (or a hash field's) expiry is judged by when it is read. As
// Redis 7.0's keyIsExpired, it stands still for the length of a command, a
// transaction (EXEC) or a script, on the thread running it (ExpiryTimeFreeze):
// a key live when EXEC or EVAL starts stays live until it ends. Elsewhere (the
// active-expire cycle, TTL replies, new expiry times) the real clock counts.
inline uint64_t ExpiryNowMs() {
  uint64_t frozen = internal::frozen_expiry_ms;
  if (frozen == 0) return NowMs();
  return frozen == internal::kExpiryIgnored ? 0 : frozen;
}

// The time a relative expiry counts from: the command's frozen clock where one
// stands still (Redis 7.4's commandTimeSnapshot, which both the new time and
// the check whether it is already past read), else the real clock (also where
// expiry is ignored).
inline uint64_t CommandNowMs() {
  uint64_t frozen = internal::frozen_expiry_ms;
  return frozen == 0 || frozen == internal::kExpiryIgnored ? NowMs() : frozen;
}

// Fixes ExpiryNowMs() for its lifetime, unless an enclosing one already did.
class ExpiryTimeFreeze {
 public:
  ExpiryTimeFreeze() : outer_(internal::frozen_expiry_ms) {
    if (outer_ == 0) internal::frozen_expiry_ms = NowMs();
  }
  ~ExpiryTimeFreeze() { internal::frozen_expiry_ms = outer_; }
  ExpiryTimeFreeze(const ExpiryTimeFreeze&) = delete;
  ExpiryTimeFreeze& operator=(const ExpiryTimeFreeze&) = delete;

 private:
  uint64_t outer_;
};

// Judges expiry as at `ms` for its lifetime, on this thread, whatever an enclosing
// freeze says (0: leaves the clock alone). Redis stops the clock for every client
// while a script runs: a WATCH during a busy script judges by the script's clock.
class ExpiryTimeAt {
 public:
  explicit ExpiryTimeAt(uint64_t ms) : outer_(internal::frozen_expiry_ms) {
    if (ms != 0) internal::frozen_expiry_ms = ms;
  }
  ~ExpiryTimeAt() { internal::frozen_expiry_ms = outer_; }
  ExpiryTimeAt(const ExpiryTimeAt&) = delete;
  ExpiryTimeAt& operator=(const ExpiryTimeAt&) = delete;

 private:
  uint64_t outer_;
};

// Judges expiry as at time 0 for its lifetime, on this thread: every stored key
// and hash field reads as live (an expiry of 1 ms, PXAT 1, included), and so
// none is found expired (and deleted) by a read. Redis' debug commands (DEBUG OBJECT, DEBUG DIGEST,
// MEMORY USAGE) look in its dict directly and so see logically expired keys
// that are still stored, and leave them there; and a replica applies its master's
// commands so (StreamApplier), as Redis' expireIfNeeded never expires for the master.
class ExpiryTimeIgnore {
 public:
  ExpiryTimeIgnore() : outer_(internal::frozen_expiry_ms) { internal::frozen_expiry_ms = internal::kExpiryIgnored; }
  ~ExpiryTimeIgnore() { internal::frozen_expiry_ms = outer_; }
  ExpiryTimeIgnore(const ExpiryTimeIgnore&) = delete;
  ExpiryTimeIgnore& operator=(const ExpiryTimeIgnore&) = delete;

 private:
  uint64_t outer_;
};

inline uint64_t NowUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

// The wall clock in ns, the clock of the kernel's receive timestamps (SO_TIMESTAMPNS).
inline uint64_t RealtimeNs() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
}

inline uint64_t MonotonicUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

// MonotonicUs in milliseconds.
inline uint64_t MonotonicMs() { return MonotonicUs() / 1000; }

}  // namespace kvrocks
