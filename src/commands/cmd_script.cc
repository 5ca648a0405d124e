// Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.
//
// A script runs on the client's worker inside the worker's write batch,
// holding the locks of its declared KEYS (taken by the dispatcher, as for
// any write). A redis.call on another key try-locks it; if that key is
// busy, or the call needs the whole database (FLUSHALL ...), the script's
// writes are undone and it runs again under the exclusive lock. Either way
// it is atomic with respect to every key it touches. See docs/scripting.md.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "commands/helpers.h"
#include "commands/script_runner.h"
#include "common/sha1.h"
#include "scripting/functions.h"
#include "scripting/lua_debugger.h"
#include "scripting/lua_engine.h"
#include "server/connection.h"
#include "server/notify.h"
#include "server/server.h"

namespace kvrocks {

namespace {

using scripting::LuaEngine;
using scripting::RunningScripts;
using scripting::ScriptCache;

constexpr const char* kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

// EVAL* after the checks that come first: numkeys, the script, its flags, then the run
// (in a SCRIPT DEBUG session when debugger is set).
void RunEval(CommandCall& call, bool by_sha, bool ro_command, scripting::LuaDebugger* debugger) {
  const auto& a = call.args;
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
    // A SCRIPT DEBUG YES session is Redis' forked child: its script cache dies with it.
    if (!call.ctx->discard_writes()) cache.Add(sha, body);
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
  req.debugger = debugger;
  RunScript(call, &req, ro_command || (flags & scripting::kFlagNoWrites));
}

int64_t DebugTimeLimitMs() {
  int64_t ms = RunningScripts::BusyThresholdMs();
  return ms > 0 ? ms : 5000;
}

// A SCRIPT DEBUG YES session, on a thread of its own: Redis forks one, so the
// server goes on serving everyone else and the script's writes are dropped at
// the end. The script sees the data as it was when the session began (a
// snapshot) plus its own writes, and runs as the client did (database, protocol,
// user); the client's connection is closed here, as Redis' parent frees it.
void StartForkedSession(CommandCall& call, bool ro_command) {
  Connection* conn = call.conn;
  int fd = ::fcntl(conn->fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    return ReplyError(call, std::string("ERR Fork() failed: can't run EVAL in debugging mode: ") + strerror(errno));
  }
  struct Client {
    Worker* worker;
    uint64_t id;
    std::string peer, local;
    int db, resp;
    std::shared_ptr<const AclUser> user;
  };
  Client client{conn->worker(), conn->id(), conn->peer(), conn->local(), conn->db, conn->resp, conn->user};
  Server* srv = call.server;
  std::vector<std::string> args = call.args;
  srv->detached()->Start(fd, [srv, client, args = std::move(args), ro_command](int fd, std::atomic<bool>*) {
    Connection shadow(client.worker, -1, client.id, client.peer, client.local);
    shadow.db = client.db;
    shadow.resp = client.resp;
    shadow.SetUser(client.user);
    Context ctx(srv->storage());
    ctx.set_discard_writes(true);
    Context::SnapshotScope snapshot(&ctx);
    std::string out;
    CommandCall session{srv, &shadow, args, &ctx, &out, false, client.resp, true};
    {
      scripting::LuaDebugger debugger(fd, args[1], DebugTimeLimitMs());
      RunEval(session, false, ro_command, &debugger);
      debugger.End();
      // The reply, while the socket is still blocking (Redis' child writes it, then exits).
      for (size_t off = 0; off < out.size();) {
        ssize_t n = ::write(fd, out.data() + off, out.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
    }
    ctx.Rollback();
    DropPendingEvents(0);
  });
  conn->CloseSoon();
}

// EVAL / EVAL_RO of a client that asked for SCRIPT DEBUG: the script runs in
// a debugging session, which ends with the client's connection. As Redis
// starts the session before it looks at the script, the script's own errors
// (numkeys, compilation) come after the session's end mark.
void DebugEval(CommandCall& call, bool ro_command) {
  Connection* conn = call.conn;
  const bool sync = conn->lua_debug == Connection::LuaDebug::kSync;
  conn->lua_debug = Connection::LuaDebug::kOff;
  if (!sync && !call.in_exec) return StartForkedSession(call, ro_command);
  // On this worker, holding every key (a SYNC session stops the whole server in Redis).
  if (!call.exclusive) {
    conn->lua_debug = sync ? Connection::LuaDebug::kSync : Connection::LuaDebug::kYes;
    call.rerun_exclusive = true;
    return;
  }
  DetachedSessions::Watch watch(call.server->detached(), conn->fd());
  {
    scripting::LuaDebugger debugger(conn->fd(), call.args[1], DebugTimeLimitMs());
    // A YES session inside EXEC: its writes go, the transaction's stay.
    if (!sync) call.ctx->SetSavePoint();
    RunEval(call, false, ro_command, &debugger);
    if (!sync) call.ctx->RollbackToSavePoint();
    debugger.End();
  }
  conn->CloseAfterReply();
}

void EvalGeneric(CommandCall& call, bool by_sha, bool ro_command) {
  // As Redis' evalShaCommand: a digest of the wrong length cannot match, and says so first.
  if (by_sha && call.args[1].size() != 40) return ReplyError(call, kNoScript);
  if (call.conn->lua_debug != Connection::LuaDebug::kOff) {
    if (by_sha) return ReplyError(call, "ERR Please use EVAL instead of EVALSHA for debugging");
    return DebugEval(call, ro_command);
  }
  RunEval(call, by_sha, ro_command, nullptr);
}

void Eval(CommandCall& call) { EvalGeneric(call, false, false); }
void EvalSha(CommandCall& call) { EvalGeneric(call, true, false); }
void EvalRo(CommandCall& call) { EvalGeneric(call, false, true); }
void EvalShaRo(CommandCall& call) { EvalGeneric(call, true, true); }

void Script(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  ScriptCache& cache = ScriptCache::Instance();
  if (TokenEquals(sub, "help") && a.size() == 2) {
    return ReplyHelp(call, {"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                            "DEBUG (YES|SYNC|NO)",
                            "    Set the debug mode for subsequent scripts executed.",
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
  if (TokenEquals(sub, "load")) {
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
  if (TokenEquals(sub, "exists")) {
    if (a.size() < 3) return ReplySubcommandSyntaxError(call);
    reply::ArrayHeader(call.out, a.size() - 2);
    for (size_t i = 2; i < a.size(); i++) reply::Integer(call.out, cache.Exists(ToLower(a[i])) ? 1 : 0);
    return;
  }
  if (TokenEquals(sub, "flush")) {
    if (a.size() > 3 || (a.size() == 3 && !TokenEquals(a[2], "sync") && !TokenEquals(a[2], "async"))) {
      return ReplyError(call, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    cache.Flush();
    LuaEngine::ForThisThread().DropStale();  // a fresh state at once, as Redis' new VM
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "debug")) {
    if (a.size() != 3) return ReplySubcommandSyntaxError(call);
    // As Redis: the session talks on the socket directly, so nothing may wait in the output.
    if (!call.out->empty()) return ReplyError(call, "ERR SCRIPT DEBUG must be called outside a pipeline");
    if (TokenEquals(a[2], "no")) {
      call.conn->lua_debug = Connection::LuaDebug::kOff;
    } else if (TokenEquals(a[2], "yes")) {
      call.conn->lua_debug = Connection::LuaDebug::kYes;
    } else if (TokenEquals(a[2], "sync")) {
      call.conn->lua_debug = Connection::LuaDebug::kSync;
    } else {
      return ReplyError(call, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
    }
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "kill")) {
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
          {{"script|debug", 3},
           {"script|exists", -3},
           {"script|flush", -2},
           {"script|help", 2},
           {"script|kill", 2},
           {"script|load", 3}}});
}

}  // namespace kvrocks
