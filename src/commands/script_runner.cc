#include "commands/script_runner.h"

#include <set>

#include "commands/command_keys.h"
#include "commands/dirty.h"
#include "commands/expire_on_access.h"
#include "commands/redact.h"
#include "commands/helpers.h"
#include "common/time_util.h"
#include "replication/replica.h"
#include "scripting/functions.h"
#include "scripting/lua_libs.h"
#include "server/notify.h"
#include "server/worker.h"
#include "server/write_batcher.h"

namespace kvrocks {

namespace {

// redis.call on behalf of one script execution.
class CommandScriptHost : public scripting::ScriptHost {
 public:
  CommandScriptHost(CommandCall& call, bool read_only) : call_(call), read_only_(read_only) {}

  CallResult Call(const std::vector<std::string>& args, int resp, std::string* reply) override {
    const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
    if (spec == nullptr) return Fail(reply, "ERR Unknown Redis command called from script");
    int argc = static_cast<int>(args.size());
    auto sub = CommandTable::CheckSubcommand(*spec, args);
    if (sub == CommandTable::SubcommandCheck::kUnknown) {
      return Fail(reply, "ERR Unknown Redis command called from script");
    }
    if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity) ||
        sub == CommandTable::SubcommandCheck::kWrongArity) {
      return Fail(reply, "ERR Wrong number of args calling Redis command from script");
    }
    const uint32_t flags = CommandTable::FlagsOf(*spec, args);
    if ((flags & kCmdNoScript) &&
        !(call_.server->scripts_deny_disabled() && CallableWhenDenyDisabled(*spec, args))) {
      return Fail(reply, "ERR This Redis command is not allowed from script");
    }
    std::string acl_err = CheckAcl(*spec, args);
    if (!acl_err.empty()) return Fail(reply, acl_err);
    bool write = (flags & kCmdWrite) != 0;
    if (read_only_ && CommandMayReplicate(*spec, args)) {
      return Fail(reply, "ERR Write commands are not allowed from read-only scripts.");
    }
    if (write && ReadOnlyReplica(call_)) return Fail(reply, "READONLY You can't write against a read only replica.");
    // Reachable by scripts that declared no flags; once one has written, Redis lets it finish.
    if (write && !wrote_ && call_.server->NotEnoughGoodReplicas()) {
      return Fail(reply, "NOREPLICAS Not enough good replicas to write.");
    }
    // A SCRIPT DEBUG YES session keeps nothing; what would act beyond its context is refused.
    const bool discarded = call_.ctx->discard_writes();
    if (discarded && ((spec->flags & kCmdExclusive) || std::string_view(spec->name) == "publish" ||
                      std::string_view(spec->name) == "spublish")) {
      return Fail(reply, "ERR " + ToUpper(spec->name) +
                             " can't run in a SCRIPT DEBUG YES session (kvrocks drops the session's writes "
                             "instead of forking)");
    }
    CommandCall nested{call_.server, call_.conn, args, call_.ctx, reply, true, resp, call_.exclusive};
    nested.from_script = true;
    if (!call_.exclusive && !LockFor(*spec, nested)) return CallResult::kAbort;
    if (write) {
      scripting::NoteScriptWrite();
      wrote_ = true;
    }
    CommandCounters* counters = discarded ? nullptr : CommandTable::CountersOf(*spec, args);
    uint64_t start_us = MonotonicUs();
    size_t touched_before = call_.ctx->touched().size();
    size_t reply_start = reply->size();
    if ((spec->flags & kCmdReadOnly) && call_.conn->tracking && !discarded) RememberScriptKeys();
    call_.ctx->set_touch_mark(call_.server->tracking().Stamp(true));
    call_.ctx->ClearLookups();
    try {
      spec->handler(nested);
    } catch (const std::exception& e) {
      reply::Error(reply, std::string("ERR internal error: ") + e.what());
    }
    NoteCommandDirty(*spec, nested, reply_start, touched_before);
    DeleteExpiredFound(*spec, nested);
    if (counters != nullptr) {
      // As Redis' call() from a script: counted with its duration, not in the slowlog.
      uint64_t dur = MonotonicUs() - start_us;
      counters->calls.fetch_add(1, std::memory_order_relaxed);
      counters->usec.fetch_add(dur, std::memory_order_relaxed);
      if (call_.server->config()->latency_tracking) counters->latency.Record(static_cast<int64_t>(dur) * 1000);
      if (reply->size() > reply_start && (*reply)[reply_start] == '-') {
        counters->failed_calls.fetch_add(1, std::memory_order_relaxed);
      }
    }
    CollectCommandEvents(call_.server, call_.conn->db, *spec, args, *call_.ctx, touched_before);
    // As Redis' call(): after the command ran, so the script's own line comes first.
    if (call_.server->HasMonitors() && !(spec->flags & kCmdSkipMonitor) && !discarded) {
      std::vector<std::string> redacted;
      call_.server->FeedMonitors(call_.conn, ShownArgs(args, &redacted), true);
    }
    call_.conn->block.requested = false;  // blocking commands never block inside a script
    return nested.rerun_exclusive ? CallResult::kAbort : CallResult::kRan;
  }

  // DEBUG SET-DISABLE-DENY-SCRIPTS lets Redis' scripts call its noscript
  // commands (a test hook). kvrocks lets them call those that only report or
  // tune (CLIENT LIST, DEBUG PROTOCOL, CONFIG, LATENCY ...), not those that act
  // on the connection or on the script machinery under the running script
  // (transactions, Pub/Sub, AUTH, SCRIPT, FUNCTION, EVAL, blocking pops, saves).
  static bool CallableWhenDenyDisabled(const CommandSpec& spec, const std::vector<std::string>& args) {
    static const std::set<std::string> kCallable = {
        "client|list", "client|info", "client|id", "client|getname", "client|getredir", "client|trackinginfo",
        "debug|protocol", "debug|object", "debug|digest", "debug|digest-value", "debug|log", "debug|error",
        "debug|mallctl", "debug|mallctl-str", "debug|set-active-expire", "debug|pause-cron", "debug|sleep",
        "config|get", "config|set", "config|resetstat", "latency|doctor", "latency|graph", "latency|histogram",
        "latency|history", "latency|latest", "latency|reset", "acl|cat", "acl|getuser", "acl|list", "acl|users",
        "acl|whoami", "acl|genpass", "acl|log", "acl|dryrun", "role", "module|list"};
    std::string name = spec.name;
    if (args.size() > 1 && (!spec.subcommands.empty() || name == "debug")) name += "|" + ToLower(args[1]);
    return kCallable.count(name) > 0;
  }

  // Client-side caching: a read inside a script remembers the keys the script
  // declared (EVAL's, FCALL's), as Redis does.
  void RememberScriptKeys() {
    const CommandSpec* outer = CommandTable::Instance().Find(call_.args[0]);
    if (outer == nullptr) return;
    call_.server->tracking().Remember(call_.conn, CommandKeyFinder(*outer, call_.args).Names(call_.args));
  }

  int AclCheck(const std::vector<std::string>& args) override {
    const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
    if (spec == nullptr || CommandTable::CheckSubcommand(*spec, args) == CommandTable::SubcommandCheck::kUnknown) {
      return -1;
    }
    const AclUser* user = call_.conn->user.get();
    std::string reason, object;
    return user == nullptr || call_.conn->is_master || user->Allows(*spec, args, &reason, &object) ? 1 : 0;
  }

  void WhileBusy() override {
    // Other clients of this worker get -BUSY (or run SCRIPT KILL) meanwhile.
    if (!call_.conn->is_master) call_.conn->worker()->ServeWhileBusy(call_.conn);
  }

  // The script's user may run this call? "" or the script error (logged with context "lua").
  std::string CheckAcl(const CommandSpec& spec, const std::vector<std::string>& args) {
    const AclUser* user = call_.conn->user.get();
    if (user == nullptr || call_.conn->is_master) return "";
    std::string reason, object;
    if (user->Allows(spec, args, &reason, &object)) return "";
    call_.server->acl().Log(reason, "lua", object, user->name, call_.conn->InfoLine());
    if (reason == "command") return "ERR The user executing the script can't run this command or subcommand";
    if (reason == "key") {
      return "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments";
    }
    return "ERR The user executing the script can't publish to the channel mentioned in the command";
  }

  static bool ReadOnlyReplica(const CommandCall& call) {
    Server* srv = call.server;
    return !call.conn->is_master && srv->ReadOnlyReplica();
  }

 private:
  static CallResult Fail(std::string* reply, std::string_view msg) {
    reply::Error(reply, msg);
    return CallResult::kRejected;
  }

  // Takes the locks of a call's keys without waiting; false if the script
  // must run again exclusively.
  bool LockFor(const CommandSpec& spec, const CommandCall& nested) {
    if (spec.flags & kCmdExclusive) return false;
    Storage* st = call_.server->storage();
    uint8_t db = st->PhysicalDb(call_.conn->db);
    std::vector<uint64_t> keys;
    for (size_t i : CommandTable::KeyIndexes(spec, nested.args.size())) {
      keys.push_back(LockManager::KeyHash(db, nested.args[i]));
    }
    if (spec.extra_keys != nullptr) {
      for (auto& [logical, key] : spec.extra_keys(nested)) {
        keys.push_back(LockManager::KeyHash(st->PhysicalDb(logical), key));
      }
    }
    if (keys.empty()) return true;
    return call_.conn->worker()->batcher()->TryLockMore(keys);
  }

  CommandCall& call_;
  bool read_only_;
  bool wrote_ = false;  // a write command ran (Redis' SCRIPT_WRITE_DIRTY)
};

}  // namespace

bool ScriptNumKeys(const std::vector<std::string>& args, int64_t* n, std::string* err, const char* not_integer) {
  if (!ParseInt64(args[2], n)) {
    *err = not_integer;
    return false;
  }
  if (*n < 0) {
    *err = "ERR Number of keys can't be negative";
    return false;
  }
  if (*n > static_cast<int64_t>(args.size()) - 3) {
    *err = "ERR Number of keys can't be greater than number of args";
    return false;
  }
  return true;
}

std::vector<std::pair<int, std::string>> ScriptKeys(const CommandCall& call) {
  std::vector<std::pair<int, std::string>> keys;
  int64_t n;
  std::string err;
  if (!ScriptNumKeys(call.args, &n, &err)) return keys;
  for (int64_t i = 0; i < n; i++) keys.emplace_back(call.conn->db, call.args[3 + static_cast<size_t>(i)]);
  return keys;
}

bool ScriptDeclaresNoWrites(const std::vector<std::string>& args) {
  if (args.size() < 2) return false;
  bool has_flags = false;
  uint32_t flags = 0;
  if (TokenEquals(args[0], "eval")) {
    if (!scripting::ParseEvalShebang(args[1], &has_flags, &flags).empty()) return false;
  } else if (TokenEquals(args[0], "evalsha")) {
    if (!scripting::ScriptCache::Instance().GetFlags(ToLower(args[1]), &has_flags, &flags)) return false;
  } else if (TokenEquals(args[0], "fcall")) {
    scripting::FunctionInfo info;
    has_flags = scripting::FunctionRegistry::Instance().FindFunction(args[1], &info);
    flags = info.flags;
  }
  return has_flags && (flags & scripting::kFlagNoWrites);
}

std::string CheckScriptFlags(const CommandCall& call, uint32_t flags, bool ro_command) {
  bool writes = !(flags & scripting::kFlagNoWrites);
  // Redis refuses a script declared writing before it runs (processCommand).
  if (writes && call.server->NotEnoughGoodReplicas()) return "NOREPLICAS Not enough good replicas to write.";
  if (writes && ro_command) return "ERR Can not execute a script with write flag using *_ro command.";
  if (writes && CommandScriptHost::ReadOnlyReplica(call)) return "READONLY You can't write against a read only replica.";
  return "";
}

void RunScript(CommandCall& call, scripting::EvalRequest* req, bool read_only) {
  CommandScriptHost host(call, read_only);
  req->host = &host;
  req->client_resp = call.resp;
  req->read_only = read_only;
  req->command = &call.args;
  int db = call.conn->db;  // SELECT inside a script does not outlive it
  size_t events_before = PendingEventCount();
  call.ctx->SetSavePoint();
  scripting::EvalOutcome outcome = scripting::LuaEngine::ForThisThread().Eval(*req, call.out);
  call.conn->db = db;
  if (outcome == scripting::EvalOutcome::kAborted) {
    // Undo, and let the dispatcher run the command again exclusively.
    call.ctx->RollbackToSavePoint();
    DropPendingEvents(events_before);
    call.rerun_exclusive = true;
    return;
  }
  call.ctx->PopSavePoint();
}

}  // namespace kvrocks
