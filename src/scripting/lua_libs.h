// The libraries a script sees besides Lua's own: the `redis` table, Redis'
// deterministic math.random, and cjson, bit, struct and cmsgpack.
#pragma once

#include <string>
#include <vector>

struct lua_State;

namespace kvrocks::scripting {

class ScriptHost;
struct FunctionInfo;

// Registry table of the callbacks registered by the library being loaded.
inline constexpr char kLoadingFunctionsTable[] = "__kvrocks_loading";

// Per-execution state the redis.* functions work with.
struct ScriptState {
  ScriptHost* host = nullptr;
  bool read_only = false;
  int resp = 2;          // redis.setresp
  bool aborted = false;  // the host stopped the script
};

// Makes state the current script's (nullptr after it ends). math.random's
// sequence continues from script to script, as in Redis 7 (seed 0 at start).
void ResetScriptState(lua_State* L, ScriptState* state);

// Installs the global `redis` table and replaces math.random/randomseed.
void OpenRedisLib(lua_State* L);
// cjson and bit (Debian's lua-cjson and lua-bitop), struct and cmsgpack.
void OpenBundledLibs(lua_State* L);

// redis.register_function; registrations go to infos (and their callbacks to
// kLoadingFunctionsTable) while a library loads, infos == nullptr otherwise.
int RegisterFunction(lua_State* L);
void SetLoadingFunctions(std::vector<FunctionInfo>* infos);

// Stops the running script at the next line (see lua_engine.cc).
void RequestAbort(lua_State* L);
// Records that the running script wrote (it can no longer be killed).
void NoteScriptWrite();

}  // namespace kvrocks::scripting
