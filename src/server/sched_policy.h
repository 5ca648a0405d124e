// The Linux scheduling policy of kvrocks' threads (the sched-policy option).
//
// "batch" runs the server at SCHED_BATCH. A thread of that policy, woken by a
// client's request, does not preempt the thread running on its CPU: it takes an
// idle CPU when there is one and otherwise waits for the running thread's turn
// to end. On a machine whose CPUs kvrocks shares with busy clients (an
// application on the same host, redis-benchmark in bench/), a normal-policy
// worker woken by every request keeps preempting the very client that sends the
// next one, and the two workers and the client, three runnable threads on two
// CPUs, leave CPUs idle while they displace each other (bench/RESULTS.md,
// session 59: GET p1 on 2 CPUs at 0.64 of Redis with "normal", 0.83 with
// "batch"). The price is latency under contention: a request may wait for the
// current thread's slice instead of displacing it. On an idle CPU nothing changes.
//
// "normal" is SCHED_OTHER, a process' usual policy.
#pragma once

#include <string>

#include "common/status.h"

namespace kvrocks {

// Sets the calling thread's policy to policy ("normal" or "batch"). Threads
// inherit their creator's policy, so main calls this before it starts any: then
// every thread of the process (workers, RocksDB's, the replica's) runs at it,
// but for RocksDB's compaction threads under rocksdb.low-priority-compaction,
// which RocksDB sets to SCHED_OTHER at nice 19, and the replica's applier while
// it idles (replication/apply_priority.h).
Status SetSchedPolicy(const std::string& policy);

}  // namespace kvrocks
