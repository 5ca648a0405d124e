// ApplyPriority: the applier's own switches and the watchdog's raise.
#include "replication/apply_priority.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

namespace kvrocks {
namespace {

// The scheduler state letter of a thread of this process (R, S, ...).
char ThreadState(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
}

template <typename Pred>
bool WaitFor(Pred pred) {
  for (int i = 0; i < 5000; i++) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// An applying thread: it caught up at ms 1000 (and went to SCHED_IDLE), then
// either spins (runnable) or sleeps until released.
class Applier {
 public:
  explicit Applier(bool spin) {
    thread_ = std::thread([this, spin] {
      ApplyPriority priority;
      priority.Update(true, 1000, 200);
      tid_ = gettid();
      priority_ = &priority;
      if (spin) {
        while (!release_.load()) {
        }
      } else {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [this] { return release_.load(); });
      }
      done_ = true;
      std::unique_lock<std::mutex> g(mu_);
      cv_.wait(g, [this] { return finish_; });
    });
    WaitFor([this] { return priority_.load() != nullptr; });
  }
  ~Applier() {
    Release();
    {
      std::lock_guard<std::mutex> g(mu_);
      finish_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Release() {
    {
      std::lock_guard<std::mutex> g(mu_);
      release_ = true;
    }
    cv_.notify_all();
    WaitFor([this] { return done_.load(); });
  }
  ApplyPriority* priority() { return priority_.load(); }
  pid_t tid() const { return tid_.load(); }
  int policy() const { return sched_getscheduler(tid_.load()); }

 private:
  std::thread thread_;
  std::atomic<ApplyPriority*> priority_{nullptr};
  std::atomic<pid_t> tid_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> release_{false}, done_{false};
  bool finish_ = false;
};

class ApplyPriorityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ApplyPriority::Supported()) GTEST_SKIP() << "no CAP_SYS_NICE or RLIMIT_NICE 20";
  }
};

TEST_F(ApplyPriorityTest, WatchdogRaisesARunnableApplierOnlyOnceItIsLate) {
  const int normal = sched_getscheduler(0);
  Applier applier(true);
  ASSERT_EQ(applier.policy(), SCHED_IDLE);
  applier.priority()->RaiseIfLate(1200, 200);  // caught up 200 ms ago: not late yet
  EXPECT_EQ(applier.policy(), SCHED_IDLE);
  ASSERT_TRUE(WaitFor([&] { return ThreadState(applier.tid()) == 'R'; }));
  applier.priority()->RaiseIfLate(1201, 200);
  EXPECT_EQ(applier.policy(), normal);
}

TEST_F(ApplyPriorityTest, WatchdogLeavesASleepingApplierIdle) {
  Applier applier(false);
  ASSERT_TRUE(WaitFor([&] { return ThreadState(applier.tid()) == 'S'; }));
  applier.priority()->RaiseIfLate(60000, 200);
  EXPECT_EQ(applier.policy(), SCHED_IDLE);
  applier.priority()->RaiseIfLate(60000, 0);  // 0: the watchdog is off (the applier keeps normal itself)
  EXPECT_EQ(applier.policy(), SCHED_IDLE);
}

TEST_F(ApplyPriorityTest, ApplierReturnsToIdleOnceCaughtUpAndToNormalWhenDone) {
  const int normal = sched_getscheduler(0);
  std::thread t([normal] {
    {
      ApplyPriority priority;
      priority.Update(true, 1000, 200);
      EXPECT_EQ(sched_getscheduler(0), SCHED_IDLE);
      priority.Update(false, 1100, 200);  // behind since 1100
      priority.Update(false, 1300, 200);
      EXPECT_EQ(sched_getscheduler(0), SCHED_IDLE);
      priority.Update(false, 1301, 200);
      EXPECT_EQ(sched_getscheduler(0), normal);
      priority.Update(true, 1302, 200);
      EXPECT_EQ(sched_getscheduler(0), SCHED_IDLE);
      priority.Update(true, 1303, 0);  // max lag 0: normal throughout
      EXPECT_EQ(sched_getscheduler(0), normal);
      priority.Update(true, 1304, 200);
      EXPECT_EQ(sched_getscheduler(0), SCHED_IDLE);
    }
    EXPECT_EQ(sched_getscheduler(0), normal);  // the destructor gave normal priority back
  });
  t.join();
}

}  // namespace
}  // namespace kvrocks
