#include "server/memory_stats.h"

#include <unistd.h>

#include <fstream>

#include "scripting/functions.h"
#include "scripting/lua_engine.h"
#include "server/server.h"

extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace kvrocks {

namespace {

// A jemalloc statistic (after the caller refreshed the epoch); 0 without jemalloc.
uint64_t JemallocStat(const char* name) {
  size_t v = 0, sz = sizeof(v);
  if (mallctl == nullptr || mallctl(name, &v, &sz, nullptr, 0) != 0) return 0;
  return v;
}

void RefreshJemallocStats() {
  if (mallctl == nullptr) return;
  uint64_t epoch = 1;
  size_t sz = sizeof(epoch);
  mallctl("epoch", &epoch, &sz, &epoch, sz);
}

// C's (float)a / b.
float Ratio(uint64_t a, uint64_t b) { return b == 0 ? 0 : static_cast<float>(a) / static_cast<float>(b); }

}  // namespace

void MemoryStats::SetJemallocBackgroundThread(bool on) {
  bool value = on;
  if (mallctl != nullptr) mallctl("background_thread", nullptr, nullptr, &value, sizeof(value));
}

uint64_t MemoryStats::ProcessRss() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, rss = 0;
  in >> size >> rss;
  return rss * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t MemoryStats::Allocated() {
  if (mallctl == nullptr) return ProcessRss();
  RefreshJemallocStats();
  return JemallocStat("stats.allocated");
}

uint64_t MemoryStats::SystemMemory() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

void MemoryStats::MarkStartup() {
  uint64_t used = Allocated();
  startup_.store(used);
  UpdatePeak(used);
  Sample();
}

uint64_t MemoryStats::UpdatePeak(uint64_t allocated) {
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (allocated > peak && !peak_.compare_exchange_weak(peak, allocated)) {
  }
  return std::max(peak, allocated);
}

void MemoryStats::Sample() {
  AllocatorSample s;
  RefreshJemallocStats();
  s.allocated = JemallocStat("stats.allocated");
  s.active = JemallocStat("stats.active");
  s.resident = JemallocStat("stats.resident");
  s.process_rss = ProcessRss();
  if (mallctl == nullptr) s.allocated = s.active = s.resident = s.process_rss;
  UpdatePeak(s.allocated);
  std::lock_guard<std::mutex> g(mu_);
  sample_ = s;
}

AllocatorSample MemoryStats::last_sample() {
  std::lock_guard<std::mutex> g(mu_);
  return sample_;
}

MemoryOverhead MemoryStats::Overhead(Server* srv) {
  MemoryOverhead m;
  const uint64_t used = Allocated();
  m.total_allocated = used;
  m.startup_allocated = startup_.load();
  m.peak_allocated = UpdatePeak(used);
  m.sample = last_sample();
  const AllocatorSample& s = m.sample;
  m.total_frag = Ratio(s.process_rss, s.allocated);
  m.total_frag_bytes = static_cast<int64_t>(s.process_rss) - static_cast<int64_t>(s.allocated);
  m.allocator_frag = Ratio(s.active, s.allocated);
  m.allocator_frag_bytes = static_cast<int64_t>(s.active) - static_cast<int64_t>(s.allocated);
  m.allocator_rss = Ratio(s.resident, s.active);
  m.allocator_rss_bytes = static_cast<int64_t>(s.resident) - static_cast<int64_t>(s.active);
  m.rss_extra = Ratio(s.process_rss, s.resident);
  m.rss_extra_bytes = static_cast<int64_t>(s.process_rss) - static_cast<int64_t>(s.resident);

  uint64_t max_in = 0, max_out = 0;
  m.clients_normal = srv->ClientBuffers(&max_in, &max_out);
  m.lua_caches = scripting::ScriptCache::Instance().MemoryBytes();
  m.functions_caches = scripting::FunctionRegistry::Instance().MemoryBytes();
  m.overhead_total = m.startup_allocated + m.repl_backlog + m.clients_slaves + m.clients_normal + m.cluster_links +
                     m.aof_buffer + m.lua_caches + m.functions_caches;
  Storage* st = srv->storage();
  for (int j = 0; j < srv->config()->databases; j++) {
    int64_t keys = st->KeyCount(st->PhysicalDb(j));
    if (keys <= 0) continue;
    m.total_keys += static_cast<uint64_t>(keys);
    m.dbs.push_back(j);
  }
  // (Redis' size_t would wrap if the overhead were above the allocation.)
  m.dataset = used > m.overhead_total ? used - m.overhead_total : 0;
  m.peak_perc = m.peak_allocated == 0 ? 0 : static_cast<float>(used) * 100 / static_cast<float>(m.peak_allocated);
  uint64_t net = used > m.startup_allocated ? used - m.startup_allocated : 1;
  m.dataset_perc = static_cast<float>(m.dataset) * 100 / static_cast<float>(net);
  m.bytes_per_key = m.total_keys ? net / m.total_keys : 0;
  return m;
}

std::string MemoryStats::DoctorReport(Server* srv) {
  MemoryOverhead m = Overhead(srv);
  bool empty = false, big_peak = false, high_frag = false, high_alloc_frag = false, high_proc_rss = false,
       high_alloc_rss = false, big_client_buf = false, many_scripts = false;
  int reports = 0;
  if (m.total_allocated < 5 * 1024 * 1024) {
    empty = true;
    reports++;
  } else {
    if (Ratio(m.peak_allocated, m.total_allocated) > 1.5) big_peak = true, reports++;
    if (m.total_frag > 1.4 && m.total_frag_bytes > (10 << 20)) high_frag = true, reports++;
    if (m.allocator_frag > 1.1 && m.allocator_frag_bytes > (10 << 20)) high_alloc_frag = true, reports++;
    if (m.allocator_rss > 1.1 && m.allocator_rss_bytes > (10 << 20)) high_alloc_rss = true, reports++;
    if (m.rss_extra > 1.1 && m.rss_extra_bytes > (10 << 20)) high_proc_rss = true, reports++;
    uint64_t clients = std::max<uint64_t>(1, srv->ClientCount());
    if (m.clients_normal / clients > 1024 * 200) big_client_buf = true, reports++;
    if (scripting::ScriptCache::Instance().size() > 1000) many_scripts = true, reports++;
  }
  if (reports == 0) {
    return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this "
           "base.\n";
  }
  if (empty) {
    return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these "
           "conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be "
           "back to our programming as soon as I finished rebooting.\n";
  }
  // Redis' texts (kvrocks has no replica output buffers to report).
  std::string s = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
  if (big_peak) {
    s += " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The "
         "allocator is normally not able to release memory after a peak, so you can expect to see a big "
         "fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the "
         "Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon "
         "as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try "
         "to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and "
         "restart the instance.\n\n";
  }
  if (high_frag) {
    s += " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means "
         "that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations "
         "Redis performed). This problem is usually due either to a large peak memory (check if there is a peak "
         "memory entry above in the report) or may result from a workload that causes the allocator to fragment "
         "memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are "
         "using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"" +
         std::string(mallctl != nullptr ? "jemalloc" : "libc") + "\".\n\n";
  }
  if (high_alloc_frag) {
    s += " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. "
         "This problem is usually due either to a large peak memory (check if there is a peak memory entry above in "
         "the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try "
         "enabling 'activedefrag' config option.\n\n";
  }
  if (high_alloc_rss) {
    s += " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means "
         "that the Resident Set Size of the allocator is much larger than the sum what the allocator actually "
         "holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above "
         "in the report), you can try the MEMORY PURGE command to reclaim it.\n\n";
  }
  if (high_proc_rss) {
    s += " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this "
         "means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). "
         "This problem may be due to Lua scripts or Modules.\n\n";
  }
  if (big_client_buf) {
    s += " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on "
         "average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not "
         "receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending "
         "commands with large replies or very large sequences of commands in the same pipeline. Please use the "
         "CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to "
         "understand better why certain clients are using a big amount of memory.\n\n";
  }
  if (many_scripts) {
    s += " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be "
         "because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT "
         "LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up "
         "consuming most of your memory.\n\n";
  }
  s += "I'm here to keep you safe, Sam. I want to help you.\n";
  return s;
}

}  // namespace kvrocks
