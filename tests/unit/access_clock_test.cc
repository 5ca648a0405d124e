#include "server/access_clock.h"

#include <gtest/gtest.h>

#include <string>

namespace kvrocks {
namespace {

TEST(AccessClockTest, UntouchedKeysReadAsTheLoadTime) {
  AccessClock clock(1024);
  uint32_t now = AccessClock::Now();
  uint32_t lru = clock.Get("never-seen");
  EXPECT_LE(AccessClock::IdleMs(lru, now), 10000u);  // however slow the machine
}

TEST(AccessClockTest, SetAndGetPerKey) {
  AccessClock clock(1 << 16);
  uint32_t now = AccessClock::Now();
  clock.Set("a", AccessClock::LruForIdle(1000, now));
  clock.Set("b", AccessClock::LruForIdle(5, now));
  EXPECT_EQ(AccessClock::IdleMs(clock.Get("a"), now), 1000u * 1000);
  EXPECT_EQ(AccessClock::IdleMs(clock.Get("b"), now), 5u * 1000);
  clock.Touch("a");
  EXPECT_LE(AccessClock::IdleMs(clock.Get("a"), AccessClock::Now()), 10000u);
}

TEST(AccessClockTest, ResetMakesEveryKeyFresh) {
  AccessClock clock(4096);
  uint32_t now = AccessClock::Now();
  for (int i = 0; i < 100; i++) clock.Set("k" + std::to_string(i), AccessClock::LruForIdle(3600, now));
  clock.Reset();
  for (int i = 0; i < 100; i++) {
    EXPECT_LE(AccessClock::IdleMs(clock.Get("k" + std::to_string(i)), AccessClock::Now()), 10000u);
  }
}

TEST(AccessClockTest, TwentyFourBitClockWrapsAsRedis) {
  // estimateObjectIdleTime: a clock behind the object's lru has wrapped.
  EXPECT_EQ(AccessClock::IdleMs(10, 15), 5000u);
  EXPECT_EQ(AccessClock::IdleMs(AccessClock::kClockMax - 5, 10), (10u + 5) * 1000);
  // objectSetLRUOrLFU: an idle time longer than the clock adds LRU_CLOCK_MAX once,
  // then keeps the low 24 bits.
  EXPECT_EQ(AccessClock::LruForIdle(20, 100), 80u);
  EXPECT_EQ(AccessClock::LruForIdle(120, 100), AccessClock::kClockMax - 20);
  uint32_t far = AccessClock::LruForIdle(3ull << 24, 100);
  EXPECT_EQ(far, static_cast<uint32_t>(100 - (3ll << 24) + AccessClock::kClockMax) & AccessClock::kClockMax);
}

TEST(AccessClockTest, SlotCountRoundsUp) {
  AccessClock tiny(1);  // at least 1024 slots: distinct keys rarely share one
  uint32_t now = AccessClock::Now();
  int exact = 0;
  for (int i = 0; i < 16; i++) tiny.Set("key" + std::to_string(i), AccessClock::LruForIdle(i, now));
  for (int i = 0; i < 16; i++) {
    exact += AccessClock::IdleMs(tiny.Get("key" + std::to_string(i)), now) == static_cast<uint64_t>(i) * 1000;
  }
  EXPECT_GE(exact, 14);
}

}  // namespace
}  // namespace kvrocks
