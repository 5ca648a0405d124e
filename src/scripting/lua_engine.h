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
  // What became of a call.
  enum class CallResult {
    kRan,       // the command ran; *reply is its reply
    kRejected,  // refused before it ran (unknown, not from scripts, ACL ...): *reply is the error
    kAbort,     // the script must stop at once without a reply (the host re-runs it, see Eval)
  };
  // Runs one redis.call / redis.pcall. args[0] is the command name. Appends
  // the reply (RESP of protocol `resp`) to *reply.
  virtual CallResult Call(const std::vector<std::string>& args, int resp, std::string* reply) = 0;
  // redis.acl_check_cmd: 1 if the script's user may run args (command, then its
  // arguments), 0 if not, -1 if there is no such command or subcommand.
  virtual int AclCheck(const std::vector<std::string>& args) = 0;
  // Called now and then while a script runs past busy-reply-threshold (the
  // host serves other clients with -BUSY meanwhile).
  virtual void WhileBusy() {}
};

// Script bodies by SHA-1, shared by every thread (SCRIPT LOAD, EVAL).
class ScriptCache {
 public:
  static ScriptCache& Instance();
  // Stores body under sha (Sha1Hex(body); its shebang line, if any, is valid).
  void Add(const std::string& sha, const std::string& body);
  bool Get(const std::string& sha, std::string* body);
  // The script's shebang flags without copying its body; false if unknown.
  bool GetFlags(const std::string& sha, bool* has_shebang, uint32_t* flags);
  bool Exists(const std::string& sha);
  // SCRIPT FLUSH: forgets every script; each thread's Lua state is rebuilt.
  void Flush();
  uint64_t generation() const { return generation_.load(); }
  size_t size();
  // Bytes the cache holds: the scripts' bodies and SHA1s and the entries
  // (INFO used_memory_scripts_eval, MEMORY STATS lua.caches).
  size_t MemoryBytes();

 private:
  struct Impl;
  ScriptCache();
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> generation_{0};
};

struct FunctionInfo;
class LuaDebugger;

// Scripts running now on any thread, for SCRIPT KILL, FUNCTION KILL/STATS
// and the -BUSY state.
class RunningScripts {
 public:
  // True while some script has run longer than busy-reply-threshold.
  static bool Busy();
  // The expiry clock (ExpiryNowMs) the busy script stopped at its start (the
  // last script to turn busy, if several); 0 when none is busy.
  static uint64_t BusyExpiryMs();
  // The -BUSY error text (it names SCRIPT KILL or FUNCTION KILL).
  static std::string BusyError();
  // SCRIPT KILL (functions false) / FUNCTION KILL (true): "" if killed, else
  // the error reply text (NOTBUSY, UNKILLABLE, or BUSY for the other kind).
  static std::string KillBusy(bool functions);
  // FUNCTION STATS' running_script: false if no function runs, else its
  // name, command line and run time.
  static bool RunningFunction(std::string* name, std::vector<std::string>* args, int64_t* duration_ms);
  // Milliseconds after which a running script makes the server busy (0: never).
  static void SetBusyThresholdMs(int64_t ms);
  static int64_t BusyThresholdMs();
};

enum class EvalOutcome { kDone, kAborted };

struct EvalRequest {
  const std::string* sha;   // EVAL: the script's sha; FCALL: the function's name
  const std::string* body;  // EVAL: may be empty if IsCompiled(sha); FCALL: unused
  bool function = false;    // FCALL: call the registered function *sha with (keys, args)
  const std::vector<std::string>* command = nullptr;  // the client's command (FUNCTION STATS)  // may be empty if IsCompiled(sha)
  std::vector<std::string> keys, argv;
  ScriptHost* host;
  int client_resp = 2;  // shape of the final reply
  bool read_only = false;
  LuaDebugger* debugger = nullptr;  // SCRIPT DEBUG: the session that steps through the script
};

class LuaEngine {
 public:
  // The calling thread's engine.
  static LuaEngine& ForThisThread();
  ~LuaEngine();
  // Bytes held by the Lua states of all threads (INFO used_memory_lua); a
  // state SCRIPT FLUSH made stale counts as gone (its thread drops it on its
  // next script), as Redis frees its VM.
  static size_t TotalMemory();
  // Rebuilds this thread's state now if SCRIPT FLUSH made it stale. Not from
  // inside a script.
  void DropStale();

  // Compiles body; "" or the compile error reply ("ERR Error compiling script ...").
  std::string Compile(const std::string& sha, const std::string& body);
  // True if this thread has sha compiled (so EVALSHA needs no body).
  bool IsCompiled(const std::string& sha);
  // Runs a function library's code in the restricted load environment
  // (only redis.register_function, redis.log and constants); *functions
  // gets what it registered. With keep, the callbacks become callable
  // (FCALL) in this thread's state. "" or FUNCTION LOAD's error text.
  std::string LoadLibrary(const std::string& code, std::vector<FunctionInfo>* functions, bool keep);
  // Runs the script and appends its reply to *out. kAborted: the host stopped
  // it (nothing was appended).
  EvalOutcome Eval(const EvalRequest& req, std::string* out);

 private:
  LuaEngine();
  void Reset();
  // Reloads every library if the registry changed since the last load.
  void SyncFunctions();
  // Pushes what the script runs: the compiled EVAL script or the function.
  bool PushCallable(const EvalRequest& req, std::string* out);

  lua_State* lua_ = nullptr;
  // What lua_ has allocated; written by the owning thread only.
  std::atomic<int64_t> lua_bytes_{0};
  std::atomic<uint64_t> generation_{0};  // written by the owning thread only
  uint64_t function_generation_ = 0;
  static constexpr int kGcPeriod = 50;  // Redis' LUA_GC_CYCLE_PERIOD
  int calls_since_gc_ = 0;
  // What lua_ held after its last full collection: a script that leaves much more
  // (a big string it read or returned) gets one at once, not only when later
  // scripts allocate enough to drive the incremental collector.
  int64_t bytes_after_full_gc_ = 0;
  static constexpr int64_t kFullGcGrowth = 8 << 20;
};

}  // namespace kvrocks::scripting
