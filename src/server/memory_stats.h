// Memory figures as Redis reports them (INFO memory, MEMORY STATS, MEMORY
// DOCTOR): Redis' getMemoryOverheadData and cron_malloc_stats with kvrocks'
// own sources.
//
// Allocator figures come from jemalloc (stats.allocated/active/resident),
// refreshed by Sample() from the server's cron as Redis' serverCron does every
// 100 ms, and the peak is the largest allocation seen by Sample() or by a
// report. "Overhead" is what Redis counts as such and kvrocks has too: the
// memory in use at startup, client buffers, the Lua scripts and function
// libraries kept. What remains of the allocation is the "dataset": for kvrocks
// that is RocksDB's memtables, block cache and table readers. kvrocks keeps no
// per-key structures in memory, so the per-database hash table overheads are 0,
// and it keeps no replication backlog, AOF buffer or cluster links.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace kvrocks {

class Server;

// Redis' cron_malloc_stats.
struct AllocatorSample {
  uint64_t allocated = 0;
  uint64_t active = 0;
  uint64_t resident = 0;
  uint64_t process_rss = 0;
};

// Redis' struct redisMemOverhead (its ratios are floats, as Redis computes them).
struct MemoryOverhead {
  uint64_t total_allocated = 0;
  uint64_t startup_allocated = 0;
  uint64_t peak_allocated = 0;
  uint64_t repl_backlog = 0;
  uint64_t clients_slaves = 0;
  uint64_t clients_normal = 0;
  uint64_t cluster_links = 0;
  uint64_t aof_buffer = 0;
  uint64_t lua_caches = 0;
  uint64_t functions_caches = 0;
  uint64_t overhead_total = 0;
  uint64_t dataset = 0;
  uint64_t total_keys = 0;
  uint64_t bytes_per_key = 0;
  float dataset_perc = 0;
  float peak_perc = 0;
  float total_frag = 0;
  int64_t total_frag_bytes = 0;
  float allocator_frag = 0;
  int64_t allocator_frag_bytes = 0;
  float allocator_rss = 0;
  int64_t allocator_rss_bytes = 0;
  float rss_extra = 0;
  int64_t rss_extra_bytes = 0;
  std::vector<int> dbs;  // logical databases holding keys (each has zero hash table overhead)
  AllocatorSample sample;
};

class MemoryStats {
 public:
  // Bytes the allocator has handed out now (Redis' zmalloc_used_memory).
  static uint64_t Allocated();
  // The process' resident set.
  static uint64_t ProcessRss();
  // The machine's memory (Redis' total_system_memory).
  static uint64_t SystemMemory();
  // jemalloc's background threads purge freed memory instead of the threads that
  // free it (Redis' jemalloc-bg-thread); nothing without jemalloc.
  static void SetJemallocBackgroundThread(bool on);

  // Records the memory in use once the server is up (used_memory_startup).
  void MarkStartup();
  // Refreshes the allocator sample and the peak (from the server's cron).
  void Sample();
  // Raises the peak to what is allocated now (INFO does, as Redis' does).
  uint64_t UpdatePeak(uint64_t allocated);
  AllocatorSample last_sample();

  // getMemoryOverheadData.
  MemoryOverhead Overhead(Server* srv);
  // getMemoryDoctorReport.
  std::string DoctorReport(Server* srv);

 private:
  std::atomic<uint64_t> startup_{0};
  std::atomic<uint64_t> peak_{0};
  std::mutex mu_;
  AllocatorSample sample_;
};

}  // namespace kvrocks
