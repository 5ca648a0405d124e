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
// it adds is bounded: once the applier has not caught up for longer than
// max_lag_ms, it competes at normal priority until it has. On a saturated
// machine an idle-policy thread may not run for seconds, so it cannot notice
// by itself: a thread at normal priority (the server's cron) calls RaiseIfLate.
// max_lag_ms 0 keeps normal priority throughout.
//
// Leaving SCHED_IDLE again needs CAP_SYS_NICE or an RLIMIT_NICE of at least 20
// (sched(7)); without them the thread stays at normal priority throughout.
//
// Thread-safe: the applying thread calls Update, any thread RaiseIfLate.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace kvrocks {

class ApplyPriority {
 public:
  // Constructed on the applying thread: its policy now is the one it returns to.
  ApplyPriority();
  ApplyPriority(const ApplyPriority&) = delete;
  ApplyPriority& operator=(const ApplyPriority&) = delete;
  // Restores normal priority. On the applying thread.
  ~ApplyPriority();

  // Called by the applying thread after each apply pass. caught_up: no
  // complete command was left unapplied and no byte waited in the socket.
  void Update(bool caught_up, uint64_t now_ms, int max_lag_ms);

  // Raises the applying thread to normal priority if it is at SCHED_IDLE,
  // runnable, and its last pass that caught up is more than max_lag_ms old.
  // A thread asleep waits for the master's bytes (or for storage), not for a
  // CPU, and is left alone.
  void RaiseIfLate(uint64_t now_ms, int max_lag_ms);

  // Whether this process may switch a thread back from SCHED_IDLE.
  static bool Supported();

 private:
  void SetIdle(bool idle);
  // Whether the applying thread is running or waits for a CPU (/proc).
  bool Runnable() const;

  const pid_t tid_;        // the applying thread
  const int own_policy_;   // what it goes back to
  std::mutex mu_;          // serializes changes of policy
  std::atomic<bool> idle_{false};
  std::atomic<uint64_t> caught_up_ms_;  // the last pass that caught up (construction at first)
  uint64_t behind_since_ms_ = 0;        // applying thread only; 0: caught up at the last pass
};

}  // namespace kvrocks
