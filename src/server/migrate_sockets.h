// MIGRATE's connections to target servers, kept per "host:port" as Redis'
// migrate_cached_sockets: at most 64 (a new one replaces an old one), each
// closed once idle for 10 seconds (CloseIdle, from the server's cron).
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "replication/master_link.h"

namespace kvrocks {

class MigrateSockets {
 public:
  struct Cached {
    std::unique_ptr<MasterLink> link;
    int64_t last_dbid = -1;  // the target's selected db; -1: unknown (SELECT next time)
    time_t last_use = 0;
  };
  // Guards everything below; MIGRATE holds it while it uses a connection.
  std::mutex& mu() { return mu_; }
  // The cached connection to name ("host:port"), or a new one; nullptr if it
  // cannot connect (*why: MasterLink::Connect's status). Valid until Close or CloseIdle.
  Cached* Get(const std::string& name, const std::string& host, int port, int timeout_ms, Status* why);
  void Close(const std::string& name) { cache_.erase(name); }
  // Closes the connections idle for 10 seconds or more (takes mu()).
  void CloseIdle();
  // How many are open (takes mu()).
  size_t Count();

 private:
  static constexpr time_t kTtlSeconds = 10;
  static constexpr size_t kMaxItems = 64;
  std::mutex mu_;
  std::map<std::string, Cached> cache_;
  const std::atomic<bool> never_stop_{false};
};

}  // namespace kvrocks
