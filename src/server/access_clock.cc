#include "server/access_clock.h"

#include <sys/mman.h>
#include <time.h>

#include <functional>


namespace kvrocks {

AccessClock::AccessClock(size_t slots) : base_(Now()) {
  size_t n = 1024;
  while (n < slots) n <<= 1;
  bytes_ = n * sizeof(std::atomic<uint32_t>);
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    // Every key shares one slot: idle times can only come out shorter.
    slots_ = &fallback_;
    bytes_ = 0;
    return;
  }
  // Huge pages: a touch lands anywhere in the table, and with 4 KiB pages most
  // would also miss the TLB.
  madvise(p, bytes_, MADV_HUGEPAGE);
  slots_ = static_cast<std::atomic<uint32_t>*>(p);  // zero pages: every slot untouched
  mask_ = n - 1;
}

AccessClock::~AccessClock() {
  if (bytes_ > 0) munmap(slots_, bytes_);
}

uint32_t AccessClock::Now() {
  // A clock of whole seconds needs no more than the coarse clock's millisecond
  // ticks, which the vDSO reads without the TSC.
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<uint32_t>(ts.tv_sec) & kClockMax;
}

std::atomic<uint32_t>& AccessClock::SlotOf(std::string_view key) const {
  return slots_[std::hash<std::string_view>()(key) & mask_];
}

void AccessClock::Set(std::string_view key, uint32_t lru) {
  std::atomic<uint32_t>& slot = SlotOf(key);
  const uint32_t v = kSet | (lru & kClockMax);
  // Most accesses find the slot already at this second: no store, so the
  // cache line stays shared between the workers.
  if (slot.load(std::memory_order_relaxed) != v) slot.store(v, std::memory_order_relaxed);
}

uint32_t AccessClock::Get(std::string_view key) const {
  uint32_t v = SlotOf(key).load(std::memory_order_relaxed);
  return (v & kSet) ? (v & kClockMax) : base_.load(std::memory_order_relaxed);
}

void AccessClock::Reset() {
  base_.store(Now(), std::memory_order_relaxed);
  // Private anonymous pages read as zeros again once dropped.
  if (bytes_ > 0) madvise(slots_, bytes_, MADV_DONTNEED);
  fallback_.store(0, std::memory_order_relaxed);
}

uint64_t AccessClock::IdleMs(uint32_t lru, uint32_t now) {
  if (now >= lru) return static_cast<uint64_t>(now - lru) * 1000;
  return (static_cast<uint64_t>(now) + (kClockMax - lru)) * 1000;
}

uint32_t AccessClock::LruForIdle(uint64_t idle_s, uint32_t now) {
  // objectSetLRUOrLFU: one correction for the wrap, then the 24-bit field
  // keeps the low bits.
  int64_t abs = static_cast<int64_t>(now) - static_cast<int64_t>(idle_s);
  if (abs < 0) abs += kClockMax;
  return static_cast<uint32_t>(static_cast<uint64_t>(abs)) & kClockMax;
}

}  // namespace kvrocks
