#include "server/sched_policy.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace kvrocks {

Status SetSchedPolicy(const std::string& policy) {
  int p;
  if (policy == "normal") {
    p = SCHED_OTHER;
  } else if (policy == "batch") {
    p = SCHED_BATCH;
  } else {
    return Status::InvalidArgument("sched-policy must be normal or batch");
  }
  if (sched_getscheduler(0) == p) return Status::OK();
  sched_param param{};  // priority 0, the only one these policies take
  if (sched_setscheduler(0, p, &param) != 0) {
    return Status::IOError(std::string("sched-policy ") + policy + ": sched_setscheduler failed: " +
                           strerror(errno));
  }
  return Status::OK();
}

}  // namespace kvrocks
