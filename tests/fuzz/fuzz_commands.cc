// libFuzzer target: arbitrary command lines (RESP, as a client or a master's
// replication stream sends them) run through the command table on a real
// storage, the way the replica applies a master's stream (exclusive, one
// context committed per input). Handlers must answer every argument list with
// a reply or an error, never crash, and leave storage consistent. Every key an
// input wrote must DUMP to a payload the RDB parser takes back (what DUMP,
// MIGRATE and DEBUG RELOAD rely on).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <set>
#include <utility>

#include "commands/command.h"
#include "common/string_util.h"
#include "fuzz_env.h"
#include "replication/rdb_object.h"
#include "replication/rdb_reader.h"
#include "server/resp_parser.h"
#include "storage/context.h"
#include "storage/lock_manager.h"

using namespace kvrocks;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzEnv* env = new FuzzEnv();  // lives for the whole run
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
  std::set<std::pair<uint8_t, std::string>> written;
  for (int n = 0; n < 16; n++) {
    auto r = parser.Parse(buf, &pos, limits, &args, &error);
    if (r != RespParser::Result::kCommand || args.empty()) break;
    const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
    if (spec == nullptr) continue;
    std::string name = ToLower(spec->name);
    if (ActsOnProcess(name) || name == "multi" || name == "exec" || name == "discard") continue;
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
    written.insert(ctx.touched().begin(), ctx.touched().end());
    ctx.ClearTouched();
  }
  for (const auto& [physical, key] : written) {
    Database db(&ctx, physical);
    std::string payload;
    Status s = rdb::DumpObject(&db, key, &payload);
    rdb::Object obj;
    if (s.ok() && !rdb::Reader::ParseDump(payload, &obj).ok()) __builtin_trap();
  }
  if (!ctx.Commit().ok()) __builtin_trap();
  return 0;
}
