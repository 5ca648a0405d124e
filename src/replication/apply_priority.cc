#include "replication/apply_priority.h"

#include <glog/logging.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "common/time_util.h"

namespace kvrocks {

namespace {

// sched_setscheduler(tid, ...) changes that one thread (Linux; 0: the caller).
bool SetPolicy(pid_t tid, int policy) {
  sched_param param{};
  return sched_setscheduler(tid, policy, &param) == 0;
}

}  // namespace

bool ApplyPriority::Supported() {
  // Tried on a throwaway thread: a thread that cannot leave SCHED_IDLE again
  // must not be the applier.
  static const bool supported = [] {
    bool ok = false;
    const int own = sched_getscheduler(0);  // the probe inherits it (sched-policy)
    std::thread probe([&ok, own] { ok = SetPolicy(0, SCHED_IDLE) && SetPolicy(0, own); });
    probe.join();
    if (!ok) {
      LOG(WARNING) << "The replica applies at normal CPU priority: switching back from SCHED_IDLE needs "
                      "CAP_SYS_NICE or RLIMIT_NICE 20";
    }
    return ok;
  }();
  return supported;
}

ApplyPriority::ApplyPriority()
    : tid_(gettid()), own_policy_(sched_getscheduler(0)), caught_up_ms_(MonotonicUs() / 1000) {}

ApplyPriority::~ApplyPriority() { SetIdle(false); }

void ApplyPriority::Update(bool caught_up, uint64_t now_ms, int max_lag_ms) {
  if (max_lag_ms <= 0 || !Supported()) {
    SetIdle(false);
    return;
  }
  if (caught_up) {
    caught_up_ms_.store(now_ms, std::memory_order_relaxed);
    behind_since_ms_ = 0;
    SetIdle(true);
    return;
  }
  if (behind_since_ms_ == 0) behind_since_ms_ = now_ms;
  if (now_ms - behind_since_ms_ > static_cast<uint64_t>(max_lag_ms)) SetIdle(false);
}

void ApplyPriority::RaiseIfLate(uint64_t now_ms, int max_lag_ms) {
  if (!idle_.load() || max_lag_ms <= 0) return;
  uint64_t caught_up = caught_up_ms_.load(std::memory_order_relaxed);
  if (now_ms <= caught_up || now_ms - caught_up <= static_cast<uint64_t>(max_lag_ms)) return;
  if (Runnable()) SetIdle(false);
}

bool ApplyPriority::Runnable() const {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid_) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc: raising costs little
  size_t paren = line.rfind(')');             // the name may hold spaces and parentheses
  return paren == std::string::npos || line.compare(paren + 1, 3, " R ") == 0;
}

void ApplyPriority::SetIdle(bool idle) {
  if (idle == idle_.load()) return;
  std::lock_guard<std::mutex> g(mu_);
  if (idle == idle_.load()) return;  // the other thread was first
  if (!SetPolicy(tid_, idle ? SCHED_IDLE : own_policy_)) {
    LOG(WARNING) << "sched_setscheduler failed: " << strerror(errno);
    return;
  }
  idle_ = idle;
}

}  // namespace kvrocks
