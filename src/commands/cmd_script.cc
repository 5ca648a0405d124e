// Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.
//
// A script runs on the client's worker inside the worker's write batch,
// holding the locks of its declared KEYS (taken by the dispatcher, as for
// any write). A redis.call on another key try-locks it; if that key is
// busy, or the call needs the whole database (FLUSHALL ...), the script's
// writes are undone and it runs again under the exclusive lock. Either way
// it is atomic with respect to every key it touches. See docs/scripting.md.
#include "commands/helpers.h"
#include "common/sha1.h"
#include "replication/replica.h"
#include "scripting/lua_engine.h"
#include "scripting/lua_libs.h"
#include "server/worker.h"
#include "server/write_batcher.h"

namespace kvrocks {

namespace {

using scripting::EvalOutcome;
using scripting::EvalRequest;
using scripting::LuaEngine;
using scripting::RunningScripts;
using scripting::ScriptCache;

// redis.call on behalf of one script execution.
class CommandScriptHost : public scripting::ScriptHost {
 public:
  CommandScriptHost(CommandCall& call, bool read_only) : call_(call), read_only_(read_only) {}

  bool Call(const std::vector<std::string>& args, int resp, std::string* reply) override {
    const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
    if (spec == nullptr) return Fail(reply, "ERR Unknown Redis command called from script");
    int argc = static_cast<int>(args.size());
    if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
      return Fail(reply, "ERR Wrong number of args calling Redis command from script");
    }
    if (spec->flags & kCmdNoScript) return Fail(reply, "ERR This Redis command is not allowed from script");
    bool write = (spec->flags & kCmdWrite) != 0;
    if (write && read_only_) return Fail(reply, "ERR Write commands are not allowed from read-only scripts.");
    Server* srv = call_.server;
    if (write && !call_.conn->is_master && srv->replica()->is_replica() && srv->config()->replica_read_only) {
      return Fail(reply, "READONLY You can't write against a read only replica.");
    }
    CommandCall nested{srv, call_.conn, args, call_.ctx, reply, true, resp, call_.exclusive};
    if (!call_.exclusive && !LockFor(*spec, nested)) return false;
    if (write) scripting::NoteScriptWrite();
    spec->counters->calls.fetch_add(1, std::memory_order_relaxed);
    try {
      spec->handler(nested);
    } catch (const std::exception& e) {
      reply::Error(reply, std::string("ERR internal error: ") + e.what());
    }
    call_.conn->block.requested = false;  // blocking commands never block inside a script
    if (nested.rerun_exclusive) return false;
    return true;
  }

  void WhileBusy() override {
    // Other clients of this worker get -BUSY (or run SCRIPT KILL) meanwhile.
    if (!call_.conn->is_master) call_.conn->worker()->ServeWhileBusy(call_.conn);
  }

 private:
  static bool Fail(std::string* reply, std::string_view msg) {
    reply::Error(reply, msg);
    return true;
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
      for (auto& [logical, key] : spec.extra_keys(nested)) keys.push_back(LockManager::KeyHash(st->PhysicalDb(logical), key));
    }
    if (keys.empty()) return true;
    return call_.conn->worker()->batcher()->TryLockMore(keys);
  }

  CommandCall& call_;
  bool read_only_;
};

// The declared keys of EVAL-style args: "name script numkeys key... arg...".
bool NumKeys(const std::vector<std::string>& args, int64_t* n, std::string* err) {
  if (!ParseInt64(args[2], n)) {
    *err = kNotIntegerError;
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

std::vector<std::pair<int, std::string>> EvalKeys(const CommandCall& call) {
  std::vector<std::pair<int, std::string>> keys;
  int64_t n;
  std::string err;
  if (!NumKeys(call.args, &n, &err)) return keys;
  for (int64_t i = 0; i < n; i++) keys.emplace_back(call.conn->db, call.args[3 + static_cast<size_t>(i)]);
  return keys;
}

void EvalGeneric(CommandCall& call, bool by_sha, bool read_only) {
  const auto& a = call.args;
  int64_t numkeys;
  std::string err;
  if (!NumKeys(a, &numkeys, &err)) return ReplyError(call, err);
  std::string sha, body;
  LuaEngine& engine = LuaEngine::ForThisThread();
  if (by_sha) {
    sha = ToLower(a[1]);
    // A script compiled on this thread is known to be in the cache (a flush
    // resets every thread's engine), so only a first use copies the body.
    if (sha.size() != 40 || (!engine.IsCompiled(sha) && !ScriptCache::Instance().Get(sha, &body))) {
      return ReplyError(call, "NOSCRIPT No matching script. Please use EVAL.");
    }
  } else {
    body = a[1];
    sha = Sha1Hex(body);
    std::string compile_err = engine.Compile(sha, body);
    if (!compile_err.empty()) return ReplyError(call, compile_err);
    ScriptCache::Instance().Add(body);
  }
  CommandScriptHost host(call, read_only);
  EvalRequest req;
  req.sha = &sha;
  req.body = &body;
  req.keys.assign(a.begin() + 3, a.begin() + 3 + numkeys);
  req.argv.assign(a.begin() + 3 + numkeys, a.end());
  req.host = &host;
  req.client_resp = call.resp;
  req.read_only = read_only;
  int db = call.conn->db;  // SELECT inside a script does not outlive it
  call.ctx->SetSavePoint();
  EvalOutcome outcome = engine.Eval(req, call.out);
  call.conn->db = db;
  if (outcome == EvalOutcome::kAborted) {
    call.ctx->RollbackToSavePoint();
    call.rerun_exclusive = true;
    return;
  }
  call.ctx->PopSavePoint();
}

void Eval(CommandCall& call) { EvalGeneric(call, false, false); }
void EvalSha(CommandCall& call) { EvalGeneric(call, true, false); }
void EvalRo(CommandCall& call) { EvalGeneric(call, false, true); }
void EvalShaRo(CommandCall& call) { EvalGeneric(call, true, true); }

void Script(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  ScriptCache& cache = ScriptCache::Instance();
  if (EqualsIgnoreCase(sub, "help") && a.size() == 2) {
    return ReplyHelp(call, {"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                            "EXISTS <sha1> [<sha1> ...]",
                            "    Return information about the existence of the scripts in the script cache.",
                            "FLUSH [ASYNC|SYNC]",
                            "    Flush the Lua scripts cache. Very dangerous on replicas.",
                            "    When called without the optional mode argument, the behavior is determined by the",
                            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                            "    * ASYNC: Asynchronously flush the scripts cache.",
                            "    * SYNC: Synchronously flush the scripts cache.",
                            "KILL",
                            "    Kill the currently executing Lua script.",
                            "LOAD <script>",
                            "    Load a script into the scripts cache without executing it.",
                            "HELP",
                            "    Prints this help."});
  }
  if (EqualsIgnoreCase(sub, "load")) {
    if (a.size() != 3) return ReplySubcommandArity(call);
    std::string sha = Sha1Hex(a[2]);
    std::string err = LuaEngine::ForThisThread().Compile(sha, a[2]);
    if (!err.empty()) return ReplyError(call, err);
    cache.Add(a[2]);
    return reply::Bulk(call.out, sha);
  }
  if (EqualsIgnoreCase(sub, "exists")) {
    if (a.size() < 3) return ReplySubcommandArity(call);
    reply::ArrayHeader(call.out, a.size() - 2);
    for (size_t i = 2; i < a.size(); i++) reply::Integer(call.out, cache.Exists(ToLower(a[i])) ? 1 : 0);
    return;
  }
  if (EqualsIgnoreCase(sub, "flush")) {
    if (a.size() > 3) return ReplySubcommandArity(call);
    if (a.size() == 3 && !EqualsIgnoreCase(a[2], "sync") && !EqualsIgnoreCase(a[2], "async")) {
      return ReplyError(call, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    cache.Flush();
    return reply::Ok(call.out);
  }
  if (EqualsIgnoreCase(sub, "kill")) {
    if (a.size() != 2) return ReplySubcommandArity(call);
    std::string err = RunningScripts::KillBusy();
    if (!err.empty()) return ReplyError(call, err);
    return reply::Ok(call.out);
  }
  ReplyUnknownSubcommand(call, "SCRIPT");
}

}  // namespace

void RegisterScriptCommands(CommandTable* t) {
  // Declared keys are locked like a write's; the dispatcher's read-only
  // replica check is left to redis.call (a read-only script runs anywhere).
  const uint32_t f = kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdLocksKeys | kCmdSlow;
  t->Add({"eval", -3, f, 0, 0, 0, Eval, "scripting", "Executes a server-side Lua script.", "2.6.0", EvalKeys});
  t->Add({"evalsha", -3, f, 0, 0, 0, EvalSha, "scripting", "Executes a server-side Lua script by SHA1 digest.",
          "2.6.0", EvalKeys});
  t->Add({"eval_ro", -3, f | kCmdReadOnly, 0, 0, 0, EvalRo, "scripting",
          "Executes a read-only server-side Lua script.", "7.0.0", EvalKeys});
  t->Add({"evalsha_ro", -3, f | kCmdReadOnly, 0, 0, 0, EvalShaRo, "scripting",
          "Executes a read-only server-side Lua script by SHA1 digest.", "7.0.0", EvalKeys});
  t->Add({"script", -2, kCmdNoScript, 0, 0, 0, Script, "scripting", "A container for Lua scripts management commands.",
          "2.6.0", nullptr,
          {"script|exists", "script|flush", "script|help", "script|kill", "script|load"}});
}

}  // namespace kvrocks
