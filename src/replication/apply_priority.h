// The CPU priority of the thread that applies a master's command stream.
//
// A replica often shares its machine with busy processes: the master itself,
// its clients, kvrocks' own workers. While the replica keeps up, its thread
// runs at SCHED_IDLE: the kernel counts a CPU that runs only idle-policy
// threads as free when it places a waking thread, so the others never queue
// behind a batch being applied. A replica at normal priority wakes on every
// packet the master sends and pushes the master and its clients onto one CPU
// while the other idles (bench/RESULTS.md, session 23).
//
// "Normal priority" is the policy the thread started with: the process' own
// (sched-policy, server/sched_policy.h).
//
// SCHED_IDLE alone could starve the replica on a saturated machine, so the lag
// it adds is bounded: once the stream has had unapplied input for longer than
// max_lag_ms without a break, the thread competes at normal priority until it
// has caught up. max_lag_ms 0 keeps normal priority throughout.
//
// Leaving SCHED_IDLE again needs CAP_SYS_NICE or an RLIMIT_NICE of at least 20
// (sched(7)); without them the thread stays at normal priority throughout.
//
// Not thread-safe: used by the applying thread only, for its own priority.
#pragma once

#include <cstdint>

namespace kvrocks {

class ApplyPriority {
 public:
  // Constructed on the applying thread: its policy now is the one it returns to.
  ApplyPriority();
  ApplyPriority(const ApplyPriority&) = delete;
  ApplyPriority& operator=(const ApplyPriority&) = delete;
  // Restores normal priority.
  ~ApplyPriority();

  // Called after each apply pass. caught_up: no complete command was left
  // unapplied and no byte waited in the socket.
  void Update(bool caught_up, uint64_t now_ms, int max_lag_ms);

  // Whether this process may switch a thread back from SCHED_IDLE.
  static bool Supported();

 private:
  void SetIdle(bool idle);

  bool idle_ = false;
  int own_policy_;  // what the thread goes back to
  uint64_t behind_since_ms_ = 0;  // 0: caught up at the last pass
};

}  // namespace kvrocks
