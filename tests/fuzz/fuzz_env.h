// What the fuzz targets that run commands share: a real storage in a fresh
// temporary directory, a server object (not started: no listener, no
// threads), one worker and a connection flagged as the master client.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "common/time_util.h"
#include "config/config.h"
#include "server/connection.h"
#include "server/server.h"
#include "server/worker.h"
#include "storage/storage.h"

namespace kvrocks {

struct FuzzEnv {
  Config cfg;
  std::unique_ptr<Storage> storage;
  std::unique_ptr<Server> server;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Connection> conn;

  FuzzEnv() {
    auto dir = std::filesystem::temp_directory_path() / ("kvrocks-fuzz-" + std::to_string(NowUs()));
    cfg.dir = dir.string();
    cfg.rocksdb_block_cache_size = 8 << 20;
    cfg.rocksdb_write_buffer_size = 4 << 20;
    storage = std::make_unique<Storage>(&cfg);
    if (!storage->Open().ok()) __builtin_trap();
    server = std::make_unique<Server>(&cfg, storage.get());
    worker = std::make_unique<Worker>(server.get(), 0);
    conn = std::make_unique<Connection>(worker.get(), -1, 1, "fuzz", "");
    conn->is_master = true;
    // libFuzzer ends a run with exit(): RocksDB's flushes and compactions must
    // stop before static objects are destroyed under them, or a crash at exit
    // fails the run with an empty input.
    Registered() = this;
    std::atexit([] { Registered()->storage->Close(); });
  }

  static FuzzEnv*& Registered() {
    static FuzzEnv* env = nullptr;
    return env;
  }
};

// Commands (lower-case names) that act on the process rather than on data,
// wait, or need a real client (WATCH): the harnesses never run them.
inline bool ActsOnProcess(const std::string& name) {
  static const char* const kSkip[] = {
      "shutdown", "debug", "save", "bgsave", "replicaof", "slaveof", "compact", "monitor", "client", "config", "wait",
      "subscribe", "psubscribe", "ssubscribe", "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro",
      "function", "script", "acl", "quit", "reset", "hello", "auth", "latency", "watch", "unwatch",
      // INFO, ROLE, FAILOVER, SYNC, PSYNC, KSLAVEOF and KPSYNC read the
      // replica or the WAL sender, made by Server::Start
      "info", "role", "failover", "sync", "psync", "kslaveof", "kpsync", "migrate"};  // connects to the network
  for (const char* s : kSkip) {
    if (name == s) return true;
  }
  return false;
}

}  // namespace kvrocks
