// libFuzzer target: arbitrary command lines (RESP, as a client or a master's
// replication stream sends them) run through the command table on a real
// storage, the way the replica applies a master's stream (exclusive, one
// context committed per input). Handlers must answer every argument list with
// a reply or an error, never crash, and leave storage consistent.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands/command.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "config/config.h"
#include "server/connection.h"
#include "server/resp_parser.h"
#include "server/server.h"
#include "server/worker.h"
#include "storage/context.h"
#include "storage/lock_manager.h"
#include "storage/storage.h"

namespace {

using namespace kvrocks;

struct Env {
  Config cfg;
  std::unique_ptr<Storage> storage;
  std::unique_ptr<Server> server;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Connection> conn;

  Env() {
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
  }
};

// Commands that act on the process rather than on data, or wait.
bool Skipped(const std::string& name) {
  static const char* const kSkip[] = {"shutdown", "debug",  "save",    "bgsave",  "replicaof", "slaveof",
                                      "compact",  "monitor", "client", "config",  "wait",      "subscribe",
                                      "psubscribe", "ssubscribe", "eval", "evalsha", "eval_ro", "evalsha_ro",
                                      "fcall", "fcall_ro", "function", "script", "acl", "quit", "reset",
                                      "hello", "auth", "latency", "multi", "exec", "discard", "watch", "unwatch",
                                      "info", "role"};  // INFO and ROLE read the replica, made by Server::Start
  for (const char* s : kSkip) {
    if (name == s) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Env* env = new Env();  // lives for the whole run
  std::string buf(reinterpret_cast<const char*>(data), size);
  RespParser parser;
  RespParser::Limits limits;
  limits.max_bulk_len = 64 * 1024;
  limits.authenticated = true;
  size_t pos = 0;
  std::vector<std::string> args;
  std::string error;
  MultiLockGuard all(env->storage->locks());
  Context ctx(env->storage.get());
  for (int n = 0; n < 16; n++) {
    auto r = parser.Parse(buf, &pos, limits, &args, &error);
    if (r != RespParser::Result::kCommand || args.empty()) break;
    const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
    if (spec == nullptr || Skipped(ToLower(spec->name))) continue;
    int argc = static_cast<int>(args.size());
    if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) continue;
    if (spec->flags & kCmdExclusive) {
      if (!ctx.Commit().ok()) __builtin_trap();
    }
    std::string out;
    CommandCall call{env->server.get(), env->conn.get(), args, &ctx, &out, true, n % 2 ? 3 : 2, true};
    spec->handler(call);
    env->conn->block.requested = false;
    if (out.empty() && !(spec->flags & kCmdBlocking)) __builtin_trap();  // every call answers
    ctx.ClearTouched();
  }
  if (!ctx.Commit().ok()) __builtin_trap();
  return 0;
}
