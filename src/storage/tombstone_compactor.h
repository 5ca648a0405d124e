// TombstoneCompactor: compacts the key ranges where reads step over many
// deletions.
//
// An LSM keeps a deleted key's tombstone until a compaction reaches the bottom
// level, and a memtable keeps it until it is flushed: a collection drained by
// SPOP, HDEL or SREM leaves a run of tombstones that every iterator crossing it
// steps over one by one (SRANDMEMBER on a set with 270k popped members: 15 ms
// instead of 0.05 ms). RocksDB's deletion-triggered compaction sees only SST
// files, and only once the memtable is flushed. Context's iterators count the
// tombstones they skip (RocksDB's perf context); one that skipped more than
// kSkippedTombstones asks for its bounded range to be compacted, which flushes
// the memtables holding it and drops the tombstones at the bottom level.
// Requests are served one at a time on a thread of their own, at most one per
// kMinInterval, so a workload that keeps deleting cannot turn them into a
// stream of flushes; a range already queued is not queued again. The sorted
// sets' rank index asks for its records the same way when its walks step over
// many overwritten versions of them (rank_index.cc).
#pragma once

#include <rocksdb/db.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace kvrocks {

class TombstoneCompactor {
 public:
  static constexpr uint64_t kSkippedTombstones = 10000;
  static constexpr std::chrono::milliseconds kMinInterval{1000};
  static constexpr size_t kMaxQueued = 16;

  // db must outlive Stop().
  explicit TombstoneCompactor(rocksdb::DB* db);
  ~TombstoneCompactor();
  TombstoneCompactor(const TombstoneCompactor&) = delete;
  TombstoneCompactor& operator=(const TombstoneCompactor&) = delete;

  // Queues a compaction of [begin, end) in cf; dropped when queued already,
  // when the queue is full, or after Stop().
  void Request(rocksdb::ColumnFamilyHandle* cf, std::string begin, std::string end);
  // Cancels a running compaction and joins the thread. Idempotent.
  void Stop();
  // Compactions done (INFO, tests).
  uint64_t done() const;

 private:
  struct Range {
    rocksdb::ColumnFamilyHandle* cf;
    std::string begin, end;
  };
  void Loop();

  rocksdb::DB* db_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Range> queue_;
  bool stopping_ = false;
  uint64_t done_ = 0;
  std::thread thread_;
};

// While one lives, RocksDB's perf context counts on this thread (level
// kEnableCount at least; scopes nest, the outermost restores the level).
class PerfCountScope {
 public:
  PerfCountScope();
  ~PerfCountScope();
  PerfCountScope(const PerfCountScope&) = delete;
  PerfCountScope& operator=(const PerfCountScope&) = delete;
};

// Counts the tombstones skipped while an iterator lives (switching the
// thread's RocksDB perf level to counting for that time) and, when it dies,
// requests a compaction of its bounds if it skipped more than
// TombstoneCompactor::kSkippedTombstones. Iterators without both bounds are
// not watched.
void WatchTombstones(TombstoneCompactor* compactor, rocksdb::ColumnFamilyHandle* cf, const rocksdb::ReadOptions& ro,
                     rocksdb::Iterator* it);

}  // namespace kvrocks
