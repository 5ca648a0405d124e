#include "replication/apply_priority.h"

#include <glog/logging.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace kvrocks {

namespace {

// sched_setscheduler(0, ...) changes the calling thread only (Linux).
bool SetPolicy(int policy) {
  sched_param param{};
  return sched_setscheduler(0, policy, &param) == 0;
}

}  // namespace

bool ApplyPriority::Supported() {
  // Tried on a throwaway thread: a thread that cannot leave SCHED_IDLE again
  // must not be the applier.
  static const bool supported = [] {
    bool ok = false;
    const int own = sched_getscheduler(0);  // the probe inherits it (sched-policy)
    std::thread probe([&ok, own] { ok = SetPolicy(SCHED_IDLE) && SetPolicy(own); });
    probe.join();
    if (!ok) {
      LOG(WARNING) << "The replica applies at normal CPU priority: switching back from SCHED_IDLE needs "
                      "CAP_SYS_NICE or RLIMIT_NICE 20";
    }
    return ok;
  }();
  return supported;
}

ApplyPriority::ApplyPriority() : own_policy_(sched_getscheduler(0)) {}

ApplyPriority::~ApplyPriority() { SetIdle(false); }

void ApplyPriority::Update(bool caught_up, uint64_t now_ms, int max_lag_ms) {
  if (max_lag_ms <= 0 || !Supported()) {
    SetIdle(false);
    return;
  }
  if (caught_up) {
    behind_since_ms_ = 0;
    SetIdle(true);
    return;
  }
  if (behind_since_ms_ == 0) behind_since_ms_ = now_ms;
  if (now_ms - behind_since_ms_ > static_cast<uint64_t>(max_lag_ms)) SetIdle(false);
}

void ApplyPriority::SetIdle(bool idle) {
  if (idle == idle_) return;
  if (!SetPolicy(idle ? SCHED_IDLE : own_policy_)) {
    LOG(WARNING) << "sched_setscheduler failed: " << strerror(errno);
    return;
  }
  idle_ = idle;
}

}  // namespace kvrocks
