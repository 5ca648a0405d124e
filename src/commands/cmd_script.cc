// Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.
//
// A script runs on the client's worker inside the worker's write batch,
// holding the locks of its declared KEYS (taken by the dispatcher, as for
// any write). A redis.call on another key try-locks it; if that key is
// busy, or the call needs the whole database (FLUSHALL ...), the script's
// writes are undone and it runs again under the exclusive lock. Either way
// it is atomic with respect to every key it touches. See docs/scripting.md.
#include "commands/helpers.h"
#include "commands/script_runner.h"
#include "common/sha1.h"
#include "scripting/functions.h"
#include "scripting/lua_engine.h"

namespace kvrocks {

namespace {

using scripting::LuaEngine;
using scripting::RunningScripts;
using scripting::ScriptCache;

void EvalGeneric(CommandCall& call, bool by_sha, bool ro_command) {
  const auto& a = call.args;
  static constexpr const char* kNoScript = "NOSCRIPT No matching script. Please use EVAL.";
  // As Redis' evalShaCommand: a digest of the wrong length cannot match, and says so first.
  if (by_sha && a[1].size() != 40) return ReplyError(call, kNoScript);
  int64_t numkeys;
  std::string err;
  if (!ScriptNumKeys(a, &numkeys, &err)) return ReplyError(call, err);
  std::string sha, body;
  bool has_shebang = false;
  uint32_t flags = 0;
  LuaEngine& engine = LuaEngine::ForThisThread();
  ScriptCache& cache = ScriptCache::Instance();
  if (by_sha) {
    sha = ToLower(a[1]);
    // A script compiled on this thread is known to be in the cache (a flush
    // resets every thread's engine), so only a first use copies the body.
    if (!cache.GetFlags(sha, &has_shebang, &flags) || (!engine.IsCompiled(sha) && !cache.Get(sha, &body))) {
      return ReplyError(call, kNoScript);
    }
  } else {
    body = a[1];
    err = scripting::ParseEvalShebang(body, &has_shebang, &flags);
    if (!err.empty()) return ReplyError(call, err);
    sha = Sha1Hex(body);
    err = engine.Compile(sha, body);
    if (!err.empty()) return ReplyError(call, err);
    cache.Add(sha, body);
  }
  if (has_shebang) {
    err = CheckScriptFlags(call, flags, ro_command);
    if (!err.empty()) return ReplyError(call, err);
  }
  scripting::EvalRequest req;
  req.sha = &sha;
  req.body = &body;
  req.keys.assign(a.begin() + 3, a.begin() + 3 + numkeys);
  req.argv.assign(a.begin() + 3 + numkeys, a.end());
  RunScript(call, &req, ro_command || (flags & scripting::kFlagNoWrites));
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
    if (a.size() != 3) return ReplySubcommandSyntaxError(call);
    bool has_shebang;
    uint32_t flags;
    std::string err = scripting::ParseEvalShebang(a[2], &has_shebang, &flags);
    if (!err.empty()) return ReplyError(call, err);
    std::string sha = Sha1Hex(a[2]);
    err = LuaEngine::ForThisThread().Compile(sha, a[2]);
    if (!err.empty()) return ReplyError(call, err);
    cache.Add(sha, a[2]);
    return reply::Bulk(call.out, sha);
  }
  if (EqualsIgnoreCase(sub, "exists")) {
    if (a.size() < 3) return ReplySubcommandSyntaxError(call);
    reply::ArrayHeader(call.out, a.size() - 2);
    for (size_t i = 2; i < a.size(); i++) reply::Integer(call.out, cache.Exists(ToLower(a[i])) ? 1 : 0);
    return;
  }
  if (EqualsIgnoreCase(sub, "flush")) {
    if (a.size() > 3 || (a.size() == 3 && !EqualsIgnoreCase(a[2], "sync") && !EqualsIgnoreCase(a[2], "async"))) {
      return ReplyError(call, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    cache.Flush();
    LuaEngine::ForThisThread().DropStale();  // a fresh state at once, as Redis' new VM
    return reply::Ok(call.out);
  }
  if (EqualsIgnoreCase(sub, "kill")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    std::string err = RunningScripts::KillBusy(false);
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
  t->Add({"eval", -3, f, 0, 0, 0, Eval, "scripting", "Executes a server-side Lua script.", "2.6.0", ScriptKeys});
  t->Add({"evalsha", -3, f, 0, 0, 0, EvalSha, "scripting", "Executes a server-side Lua script by SHA1 digest.",
          "2.6.0", ScriptKeys});
  t->Add({"eval_ro", -3, f | kCmdReadOnly, 0, 0, 0, EvalRo, "scripting",
          "Executes a read-only server-side Lua script.", "7.0.0", ScriptKeys});
  t->Add({"evalsha_ro", -3, f | kCmdReadOnly, 0, 0, 0, EvalShaRo, "scripting",
          "Executes a read-only server-side Lua script by SHA1 digest.", "7.0.0", ScriptKeys});
  t->Add({"script", -2, kCmdNoScript, 0, 0, 0, Script, "scripting", "A container for Lua scripts management commands.",
          "2.6.0", nullptr,
          {{"script|exists", -3}, {"script|flush", -2}, {"script|help", 2}, {"script|kill", 2}, {"script|load", 3}}});
}

}  // namespace kvrocks
