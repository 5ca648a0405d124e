// Lua 5.1 scripting as Redis 7.0 does it (EVAL and friends): one Lua state
// per thread, the script cache shared by all threads, the `redis` library,
// the conversions between Lua values and RESP, and script time limits.
//
// The engine knows nothing about commands or storage: redis.call goes to a
// ScriptHost, which the command layer implements (lookup, permissions, key
// locks) and which answers with the command's RESP reply.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct lua_State;

namespace kvrocks::scripting {

// The command layer's side of a running script.
class ScriptHost {
 public:
  virtual ~ScriptHost() = default;
  // Runs one redis.call / redis.pcall. args[0] is the command name. Appends
  // the reply (RESP of protocol `resp`) to *reply; a command that cannot run
  // from a script replies a Redis error. Returns false if the script must
  // stop at once without a reply (the host wants to re-run it, see Eval).
  virtual bool Call(const std::vector<std::string>& args, int resp, std::string* reply) = 0;
  // Called now and then while a script runs past busy-reply-threshold (the
  // host serves other clients with -BUSY meanwhile).
  virtual void WhileBusy() {}
};

// Script bodies by SHA-1, shared by every thread (SCRIPT LOAD, EVAL).
class ScriptCache {
 public:
  static ScriptCache& Instance();
  // Stores body; returns its sha.
  std::string Add(const std::string& body);
  bool Get(const std::string& sha, std::string* body);
  bool Exists(const std::string& sha);
  // SCRIPT FLUSH: forgets every script; each thread's Lua state is rebuilt.
  void Flush();
  uint64_t generation() const { return generation_.load(); }
  size_t size();

 private:
  struct Impl;
  ScriptCache();
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> generation_{0};
};

// Scripts running now on any thread, for SCRIPT KILL and the -BUSY state.
class RunningScripts {
 public:
  // True while some script has run longer than busy-reply-threshold.
  static bool Busy();
  // SCRIPT KILL: "" if killed, else the error reply text (NOTBUSY, UNKILLABLE).
  static std::string KillBusy();
  // Milliseconds after which a running script makes the server busy.
  static void SetBusyThresholdMs(int64_t ms);
};

enum class EvalOutcome { kDone, kAborted };

struct EvalRequest {
  const std::string* sha;
  const std::string* body;  // may be empty if IsCompiled(sha)
  std::vector<std::string> keys, argv;
  ScriptHost* host;
  int client_resp = 2;  // shape of the final reply
  bool read_only = false;
};

class LuaEngine {
 public:
  // The calling thread's engine.
  static LuaEngine& ForThisThread();
  ~LuaEngine();

  // Compiles body; "" or the compile error reply ("ERR Error compiling script ...").
  std::string Compile(const std::string& sha, const std::string& body);
  // True if this thread has sha compiled (so EVALSHA needs no body).
  bool IsCompiled(const std::string& sha);
  // Runs the script and appends its reply to *out. kAborted: the host stopped
  // it (nothing was appended).
  EvalOutcome Eval(const EvalRequest& req, std::string* out);

 private:
  LuaEngine();
  void Reset();

  lua_State* lua_ = nullptr;
  uint64_t generation_ = 0;
};

}  // namespace kvrocks::scripting
