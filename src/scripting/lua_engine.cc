#include "scripting/lua_engine.h"

#include <glog/logging.h>
#include <lua.hpp>

#include <mutex>
#include <set>
#include <string>

#include "common/time_util.h"
#include "scripting/functions.h"
#include "scripting/lua_convert.h"
#include "scripting/lua_debugger.h"
#include "scripting/lua_libs.h"

namespace kvrocks::scripting {

// ---- RunningScripts ---------------------------------------------------------

namespace {

// One script in execution.
struct Running {
  ScriptHost* host;
  uint64_t start_ms;
  bool function = false;
  std::string name;                                   // the function's (FCALL)
  const std::vector<std::string>* command = nullptr;  // the client's command
  bool busy = false;  // past the threshold (guarded by running_mu)
  std::atomic<bool> kill{false};
  std::atomic<bool> wrote{false};
};

std::mutex running_mu;
std::set<Running*> running;
std::atomic<int> busy_count{0};
std::atomic<uint64_t> busy_expiry_ms{0};  // RunningScripts::BusyExpiryMs
std::atomic<int64_t> busy_threshold_ms{5000};

// The script of this thread, for the redis.* functions and the hook.
thread_local Running* current = nullptr;
thread_local bool aborting = false;  // the host asked to stop (re-run)

}  // namespace

bool RunningScripts::Busy() { return busy_count.load(std::memory_order_relaxed) > 0; }

uint64_t RunningScripts::BusyExpiryMs() { return Busy() ? busy_expiry_ms.load() : 0; }

void RunningScripts::SetBusyThresholdMs(int64_t ms) { busy_threshold_ms = ms; }

int64_t RunningScripts::BusyThresholdMs() { return busy_threshold_ms.load(); }

namespace {

std::string BusyText(bool function) {
  return std::string("BUSY Redis is busy running a script. You can only call ") +
         (function ? "FUNCTION KILL" : "SCRIPT KILL") + " or SHUTDOWN NOSAVE.";
}

}  // namespace

std::string RunningScripts::BusyError() {
  bool function = false;
  {
    std::lock_guard<std::mutex> g(running_mu);
    for (Running* r : running) {
      if (r->busy) function = r->function;
    }
  }
  return BusyText(function);
}

std::string RunningScripts::KillBusy(bool functions) {
  std::lock_guard<std::mutex> g(running_mu);
  std::vector<Running*> busy;
  for (Running* r : running) {
    if (r->busy) busy.push_back(r);
  }
  if (busy.empty()) return "NOTBUSY No scripts in execution right now.";
  // In Redis' order (scriptKill): a script that wrote cannot be killed at all,
  // and each kind only by its own KILL (the -BUSY error names the right one).
  for (Running* r : busy) {
    if (r->wrote) {
      return "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either "
             "wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
    }
  }
  for (Running* r : busy) {
    if (r->function != functions) return BusyText(r->function);
  }
  for (Running* r : busy) r->kill = true;
  return "";
}

bool RunningScripts::RunningFunction(std::string* name, std::vector<std::string>* args, int64_t* duration_ms) {
  std::lock_guard<std::mutex> g(running_mu);
  for (Running* r : running) {
    if (!r->function) continue;
    *name = r->name;
    if (r->command != nullptr) *args = *r->command;
    *duration_ms = static_cast<int64_t>(NowMs() - r->start_ms);
    return true;
  }
  return false;
}

void NoteScriptWrite() {
  if (current != nullptr) current->wrote = true;
}

// ---- the engine ---------------------------------------------------------------

namespace {

constexpr int kHookInstructions = 100000;
constexpr char kScriptsTable[] = "__kvrocks_scripts";
constexpr char kErrorHandler[] = "__kvrocks_err_handler";
constexpr char kRealGlobals[] = "__kvrocks_globals";
constexpr char kSetApi[] = "__kvrocks_set_api";
constexpr char kLoadApi[] = "__kvrocks_load_api";
constexpr char kFunctionsTable[] = "__kvrocks_functions";

// loadstring that only parses source text, as Redis' patched Lua does: Lua 5.1
// does not verify precompiled chunks, and a crafted one reads and writes memory
// outside the sandbox. A chunk starting with the bytecode signature is parsed as
// text (after a space), which fails with the syntax error Redis gives.
int TextOnlyLoadString(lua_State* L) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  const char* name = luaL_optstring(L, 2, s);
  int status;
  if (len > 0 && s[0] == LUA_SIGNATURE[0]) {
    std::string text(1, ' ');
    text.append(s, len);
    status = luaL_loadbuffer(L, text.data(), text.size(), name);
  } else {
    status = luaL_loadbuffer(L, s, len, name);
  }
  if (status == 0) return 1;
  lua_pushnil(L);
  lua_insert(L, -2);  // nil, message
  return 2;
}

// load(reader [, chunkname]) on top of the text-only loadstring.
constexpr char kTextOnlyLoadCode[] = R"lua(
local loadstring, concat, type = ...
return function(reader, name)
  local parts = {}
  while true do
    local piece = reader()
    if piece == nil or piece == '' then break end
    local t = type(piece)
    if t ~= 'string' and t ~= 'number' then return nil, 'reader function must return a string' end
    parts[#parts + 1] = piece
  end
  return loadstring(concat(parts), name or '=(load)')
end
)lua";

// Raised again on every line once a script must stop, so that a pcall in the
// script cannot swallow the kill.
void StopHook(lua_State* L, lua_Debug*) {
  if (aborting) {
    lua_pushstring(L, "ERR script aborted");
  } else {
    PushErrorTable(L, "Script killed by user with SCRIPT KILL...");
  }
  lua_error(L);
}

// A library's load (FUNCTION LOAD runs its code to learn its functions) may
// take this long, as in Redis: a loop there would otherwise hold the worker
// for good (no FUNCTION KILL reaches a load).
constexpr uint64_t kLoadTimeoutMs = 500;
thread_local uint64_t load_start_ms = 0;

void LoadHook(lua_State* L, lua_Debug*) {
  if (NowMs() - load_start_ms <= kLoadTimeoutMs) return;
  lua_sethook(L, LoadHook, LUA_MASKLINE, 0);  // raise again at every line if the code catches it
  PushErrorTable(L, "FUNCTION LOAD timeout");
  lua_error(L);
}

void CountHook(lua_State* L, lua_Debug*) {
  Running* r = current;
  if (r == nullptr) return;
  uint64_t elapsed = NowMs() - r->start_ms;
  if (!r->busy && static_cast<int64_t>(elapsed) >= busy_threshold_ms.load() && busy_threshold_ms.load() > 0) {
    {
      std::lock_guard<std::mutex> g(running_mu);
      r->busy = true;
    }
    busy_expiry_ms = ExpiryNowMs();  // this thread's, frozen for the script
    busy_count++;
    LOG(WARNING) << "Slow script detected: still in execution after " << elapsed
                 << " milliseconds. You can try killing the script using the SCRIPT KILL command.";
  }
  if (r->busy) r->host->WhileBusy();
  if (r->kill) {
    lua_sethook(L, StopHook, LUA_MASKLINE, 0);
    StopHook(L, nullptr);
  }
}

// The error handler of every script: a table {err=..., source=..., line=...}
// (Redis 7.0's, so error replies carry the same "on @user_script:N").
const char kErrorHandlerCode[] = R"(
local dbg = debug
-- Frames of kvrocks' own protection code (globals, read-only tables) stand
-- for the C code of Redis' patched Lua: the error belongs to their caller.
local internal = {['@globals']=true, ['@readonly']=true}
return function (err)
  local level = 2
  local i = dbg.getinfo(level,'nSl')
  if i and i.what == 'C' then
    level = level + 1
    i = dbg.getinfo(level,'nSl')
  end
  while i and internal[i.source] do
    level = level + 1
    i = dbg.getinfo(level,'nSl')
  end
  if type(err) ~= 'table' then
    err = {err='ERR ' .. tostring(err)}
  end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end
)";

// Redis' Lua is patched with read-only tables: writing to one, through any path
// (assignment, rawset, setmetatable), fails with "Attempt to modify a readonly
// table". Debian's Lua 5.1 has no such tables, so kvrocks hands scripts
// read-only proxies, and must also close the paths around a proxy's
// metatable: without this chunk, rawset(redis, 'call', f) or
// getmetatable('').__index.upper = f would change what every later script on
// the worker runs. It replaces rawset, rawget, setmetatable and getmetatable
// in the globals and returns `protect(proxy, real, meta)`, which registers a
// proxy: `real` is the table behind it (or a function returning it) for rawget,
// `meta` what getmetatable shows (nil if false). Errors are raised at level 0,
// as Redis' come from C functions (no position before the message).
const char kSandboxCode[] = R"(
local G = ...
local raw_setmetatable, raw_getmetatable, raw_rawset, raw_rawget = setmetatable, getmetatable, rawset, rawget
local protected = raw_setmetatable({}, {__mode = 'k'})
local function refuse() error("Attempt to modify a readonly table", 0) end
local function protect(proxy, real, meta) protected[proxy] = {real = real, meta = meta} end
G.setmetatable = function (t, mt)
  if protected[t] then refuse() end
  return raw_setmetatable(t, mt)
end
G.getmetatable = function (t)
  local p = protected[t]
  if p then return p.meta or nil end
  return raw_getmetatable(t)
end
G.rawset = function (t, k, v)
  if protected[t] then refuse() end
  return raw_rawset(t, k, v)
end
G.rawget = function (t, k)
  local p = protected[t]
  if p then
    local real = p.real
    if type(real) == 'function' then real = real() end
    return raw_rawget(real, k)
  end
  return raw_rawget(t, k)
end
-- A read-only view of a table, as Redis' read-only tables behave.
local function readonly(real, meta)
  local proxy = raw_setmetatable({}, {
    __index = real,
    __newindex = function () error("Attempt to modify a readonly table", 2) end,
    __metatable = false,
  })
  protect(proxy, real, meta)
  return proxy
end
return protect, readonly
)";

// A read-only view of the globals (or of the load API), as Redis 7.0's
// read-only globals behave: reading a missing name and writing anything fail
// with Redis' errors. `real` is the table behind it (or a function returning
// it); getmetatable shows a read-only table holding the __index function, as
// Redis' globals have one.
const char kStrictProxyCode[] = R"(
local protect, readonly = ...
return function (lookup, real)
  local index = function (t, n)
    local v = lookup(n)
    if v == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(n) .. "'", 2)
    end
    return v
  end
  local proxy = setmetatable({}, {
    __index = index,
    __newindex = function () error("Attempt to modify a readonly table", 2) end,
    __metatable = false,
  })
  protect(proxy, real, readonly({__index = index}, false))
  return proxy
end
)";

// The globals scripts see: a strict proxy of the real table (kept in the
// registry; KEYS and ARGV are set there), whose target FUNCTION LOAD can
// switch to the library API while library code runs.
const char kProtectGlobalsCode[] = R"(
local real, strict = ...
local api = real
local proxy = strict(function (n) return api[n] end, function () return api end)
real._G = proxy
local function set_api(t) api = t or real end
return proxy, set_api
)";

// The globals a function library's code sees while it loads: a `redis` with
// register_function, log and the constants only (Redis 7.0's library API).
const char kLoadApiCode[] = R"(
local r, register, strict = ...
local lr = {register_function = register, log = r.log, LOG_DEBUG = r.LOG_DEBUG, LOG_VERBOSE = r.LOG_VERBOSE,
            LOG_NOTICE = r.LOG_NOTICE, LOG_WARNING = r.LOG_WARNING, REDIS_VERSION = r.REDIS_VERSION,
            REDIS_VERSION_NUM = r.REDIS_VERSION_NUM}
local api = {redis = strict(function (n) return lr[n] end, lr)}
return api
)";

// Wraps each library table in a read-only proxy; strings' methods go through
// the string library's proxy, and their metatable is shown read-only (as Redis').
const char kReadOnlyLibsCode[] = R"(
local G, readonly, names = ...
for _, name in ipairs(names) do
  if G[name] ~= nil then G[name] = readonly(G[name], false) end
end
local smt = getmetatable('')
smt.__index = G.string
smt.__metatable = readonly(smt, false)
)";

void RunChunk(lua_State* L, const char* code, const char* name, int nargs, int nresults) {
  if (luaL_loadbuffer(L, code, strlen(code), name) != 0) {
    LOG(FATAL) << "Lua setup chunk " << name << ": " << lua_tostring(L, -1);
  }
  lua_insert(L, -(nargs + 1));
  lua_call(L, nargs, nresults);
}

void OpenLib(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

// Every thread's engine, for TotalMemory().
std::mutex engines_mu;
std::set<const LuaEngine*> engines;

// luaL_newstate's allocator, counting into the engine's lua_bytes_ (only its
// own thread runs the state, so a load and a store suffice).
void* CountingAlloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* bytes = static_cast<std::atomic<int64_t>*>(ud);
  int64_t was = ptr == nullptr ? 0 : static_cast<int64_t>(osize);
  if (nsize == 0) {
    free(ptr);
    bytes->store(bytes->load(std::memory_order_relaxed) - was, std::memory_order_relaxed);
    return nullptr;
  }
  void* p = realloc(ptr, nsize);
  if (p != nullptr) {
    bytes->store(bytes->load(std::memory_order_relaxed) - was + static_cast<int64_t>(nsize),
                 std::memory_order_relaxed);
  }
  return p;
}

// luaL_newstate's panic handler.
int Panic(lua_State* L) {
  LOG(ERROR) << "PANIC: unprotected error in call to Lua API (" << lua_tostring(L, -1) << ")";
  return 0;
}

}  // namespace

LuaEngine& LuaEngine::ForThisThread() {
  thread_local std::unique_ptr<LuaEngine> engine(new LuaEngine());
  return *engine;
}

size_t LuaEngine::TotalMemory() {
  const uint64_t current = ScriptCache::Instance().generation();
  std::lock_guard<std::mutex> g(engines_mu);
  int64_t n = 0;
  for (const LuaEngine* e : engines) {
    if (e->generation_.load() == current) n += e->lua_bytes_.load(std::memory_order_relaxed);
  }
  return n > 0 ? static_cast<size_t>(n) : 0;
}

void LuaEngine::DropStale() {
  if (generation_ != ScriptCache::Instance().generation()) Reset();
}

LuaEngine::LuaEngine() {
  Reset();
  std::lock_guard<std::mutex> g(engines_mu);
  engines.insert(this);
}

LuaEngine::~LuaEngine() {
  {
    std::lock_guard<std::mutex> g(engines_mu);
    engines.erase(this);
  }
  if (lua_ != nullptr) lua_close(lua_);
}

void LuaEngine::Reset() {
  if (lua_ != nullptr) lua_close(lua_);
  generation_ = ScriptCache::Instance().generation();
  lua_State* L = lua_newstate(CountingAlloc, &lua_bytes_);
  lua_atpanic(L, Panic);
  lua_ = L;
  bytes_after_full_gc_ = 0;
  OpenLib(L, "", luaopen_base);
  OpenLib(L, LUA_TABLIBNAME, luaopen_table);
  OpenLib(L, LUA_STRLIBNAME, luaopen_string);
  OpenLib(L, LUA_MATHLIBNAME, luaopen_math);
  OpenLib(L, LUA_DBLIBNAME, luaopen_debug);
  OpenBundledLibs(L);  // cjson, bit, struct, cmsgpack
  OpenRedisLib(L);

  RunChunk(L, kErrorHandlerCode, "@error_handler", 0, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, kErrorHandler);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kScriptsTable);

  // What Redis 7.0 does not let scripts see.
  for (const char* name : {"debug", "setfenv", "getfenv", "dofile", "loadfile", "require", "module", "newproxy",
                           "package", "io", "os", "print"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_pushcfunction(L, TextOnlyLoadString);
  lua_setglobal(L, "loadstring");
  lua_getglobal(L, "loadstring");
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "concat");
  lua_remove(L, -2);
  lua_getglobal(L, "type");
  RunChunk(L, kTextOnlyLoadCode, "@load", 3, 1);
  lua_setglobal(L, "load");
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  RunChunk(L, kSandboxCode, "@readonly", 1, 2);  // protect, readonly
  int readonly = lua_gettop(L);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_pushvalue(L, readonly);
  lua_newtable(L);
  int i = 1;
  for (const char* name : {"redis", "string", "math", "table", "coroutine", "cjson", "bit", "struct", "cmsgpack"}) {
    lua_pushstring(L, name);
    lua_rawseti(L, -2, i++);
  }
  RunChunk(L, kReadOnlyLibsCode, "@readonly", 3, 0);
  lua_pushvalue(L, readonly - 1);
  lua_pushvalue(L, readonly);
  RunChunk(L, kStrictProxyCode, "@globals", 2, 1);
  lua_replace(L, readonly - 1);  // protect -> strict
  lua_pop(L, 1);                 // readonly
  int strict = lua_gettop(L);
  lua_getglobal(L, "redis");
  lua_pushcfunction(L, RegisterFunction);
  lua_pushvalue(L, strict);
  RunChunk(L, kLoadApiCode, "@globals", 3, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadApi);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionsTable);
  function_generation_ = 0;
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kRealGlobals);
  lua_pushvalue(L, strict);
  RunChunk(L, kProtectGlobalsCode, "@globals", 2, 2);
  lua_setfield(L, LUA_REGISTRYINDEX, kSetApi);
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_pop(L, 1);  // strict
  // What building the sandbox left behind (used_memory_lua starts near Redis').
  lua_gc(L, LUA_GCCOLLECT, 0);
}

namespace {

// Selects the globals scripts see: the load API (FUNCTION LOAD) or the normal ones.
void SetApi(lua_State* L, bool load) {
  lua_getfield(L, LUA_REGISTRYINDEX, kSetApi);
  if (load) {
    lua_getfield(L, LUA_REGISTRYINDEX, kLoadApi);
  } else {
    lua_pushnil(L);
  }
  lua_call(L, 1, 0);
}

// Lua 5.1 does not skip a "#!" line: make it a comment, keeping line numbers.
std::string WithoutShebang(const std::string& code) {
  if (code.compare(0, 2, "#!") != 0) return code;
  std::string c = code;
  c[0] = '-';
  c[1] = '-';
  return c;
}

}  // namespace

std::string LuaEngine::LoadLibrary(const std::string& code, std::vector<FunctionInfo>* functions, bool keep) {
  DropStale();
  lua_State* L = lua_;
  std::string body = WithoutShebang(code);
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_function") != 0) {
    std::string err = std::string("ERR Error compiling function: ") + lua_tostring(L, -1);
    lua_pop(L, 1);
    return err;
  }
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadingFunctionsTable);
  functions->clear();
  SetLoadingFunctions(functions);
  SetApi(L, true);
  load_start_ms = NowMs();
  lua_sethook(L, LoadHook, LUA_MASKCOUNT, 100000);
  int rc = lua_pcall(L, 0, 0, 0);
  lua_sethook(L, nullptr, 0, 0);
  SetApi(L, false);
  SetLoadingFunctions(nullptr);
  std::string err;
  if (rc != 0) {
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      err = lua_isstring(L, -1) ? lua_tostring(L, -1) : "ERR unknown error";
      lua_pop(L, 1);
    } else {
      err = std::string("ERR ") + (lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error");
    }
    lua_pop(L, 1);
    functions->clear();
    return "ERR Error registering functions: " + err;
  }
  if (keep) {
    // functions[name] = callback for everything the library registered.
    lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsTable);
    lua_getfield(L, LUA_REGISTRYINDEX, kLoadingFunctionsTable);
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -5);
    }
    lua_pop(L, 2);
  }
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadingFunctionsTable);
  return "";
}

void LuaEngine::SyncFunctions() {
  DropStale();
  FunctionRegistry& registry = FunctionRegistry::Instance();
  uint64_t gen = registry.generation();
  if (gen == function_generation_) return;
  lua_newtable(lua_);
  lua_setfield(lua_, LUA_REGISTRYINDEX, kFunctionsTable);
  for (const Library& lib : registry.Libraries()) {
    std::vector<FunctionInfo> infos;
    std::string err = LoadLibrary(lib.code, &infos, true);
    if (!err.empty()) LOG(ERROR) << "Function library " << lib.name << " failed to load: " << err;
  }
  function_generation_ = gen;
}

bool LuaEngine::IsCompiled(const std::string& sha) {
  DropStale();
  lua_State* L = lua_;
  lua_getfield(L, LUA_REGISTRYINDEX, kScriptsTable);
  lua_getfield(L, -1, sha.c_str());
  bool have = !lua_isnil(L, -1);
  lua_pop(L, 2);
  return have;
}

std::string LuaEngine::Compile(const std::string& sha, const std::string& body) {
  if (IsCompiled(sha)) return "";
  lua_State* L = lua_;
  lua_getfield(L, LUA_REGISTRYINDEX, kScriptsTable);
  std::string code = WithoutShebang(body);
  if (luaL_loadbuffer(L, code.data(), code.size(), "@user_script") != 0) {
    std::string err = std::string("ERR Error compiling script (new function): ") + lua_tostring(L, -1);
    lua_pop(L, 2);
    return err;
  }
  lua_setfield(L, -2, sha.c_str());
  lua_pop(L, 1);
  return "";
}

namespace {

void SetStringArray(lua_State* L, const char* name, const std::vector<std::string>& items) {
  lua_getfield(L, LUA_REGISTRYINDEX, kRealGlobals);
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); i++) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

// The error reply of a failed script from the handler's table (or a string).
std::string ErrorReplyText(lua_State* L, const std::string& sha) {
  std::string msg, source, line;
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "err");
    if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, -1, "source");
    if (lua_isstring(L, -1)) source = lua_tostring(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, -1, "line");
    if (lua_isstring(L, -1)) line = lua_tostring(L, -1);
    lua_pop(L, 1);
  } else if (lua_isstring(L, -1)) {
    msg = std::string("ERR ") + lua_tostring(L, -1);
  } else {
    msg = "ERR unknown error";
  }
  if (!source.empty() && !line.empty()) return msg + " script: " + sha + ", on " + source + ":" + line + ".";
  return msg + " script: " + sha;
}

}  // namespace

namespace {

void PushStringArray(lua_State* L, const std::vector<std::string>& items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); i++) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

}  // namespace

bool LuaEngine::PushCallable(const EvalRequest& req, std::string* out) {
  lua_State* L = lua_;
  if (req.function) {
    SyncFunctions();
    // A function sees (keys, args) as parameters; KEYS and ARGV do not exist.
    lua_getfield(L, LUA_REGISTRYINDEX, kRealGlobals);
    lua_pushnil(L);
    lua_setfield(L, -2, "KEYS");
    lua_pushnil(L);
    lua_setfield(L, -2, "ARGV");
    lua_pop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsTable);
    lua_getfield(L, -1, req.sha->c_str());
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      AppendError(out, "ERR Function not found");
      return false;
    }
    PushStringArray(L, req.keys);
    PushStringArray(L, req.argv);
    return true;
  }
  std::string err = Compile(*req.sha, *req.body);
  if (!err.empty()) {
    AppendError(out, err);
    return false;
  }
  SetStringArray(L, "KEYS", req.keys);
  SetStringArray(L, "ARGV", req.argv);
  lua_getfield(L, LUA_REGISTRYINDEX, kScriptsTable);
  lua_getfield(L, -1, req.sha->c_str());
  lua_remove(L, -2);
  return true;
}

EvalOutcome LuaEngine::Eval(const EvalRequest& req, std::string* out) {
  DropStale();  // before taking stack positions
  lua_State* L = lua_;
  lua_settop(L, 0);
  lua_getfield(L, LUA_REGISTRYINDEX, kErrorHandler);
  int handler = lua_gettop(L);
  if (!PushCallable(req, out)) {
    lua_settop(L, 0);
    return EvalOutcome::kDone;
  }
  ScriptState state;
  state.host = req.host;
  state.read_only = req.read_only;
  ResetScriptState(L, &state);

  Running run;
  run.host = req.host;
  run.start_ms = NowMs();
  run.function = req.function;
  if (req.function) run.name = *req.sha;
  run.command = req.command;
  {
    std::lock_guard<std::mutex> g(running_mu);
    running.insert(&run);
  }
  current = &run;
  aborting = false;
  // A debugged script has the debugger's hook instead: it is never busy, as in
  // Redis, whose debugger replaces the time-limit hook.
  if (req.debugger != nullptr) {
    req.debugger->Enter(L);
  } else {
    lua_sethook(L, CountHook, LUA_MASKCOUNT, kHookInstructions);
  }
  int rc = lua_pcall(L, req.function ? 2 : 0, 1, handler);
  if (req.debugger != nullptr) {
    req.debugger->Leave(L);
  } else {
    lua_sethook(L, nullptr, 0, 0);
  }
  // As Redis: a few incremental collection steps every 50 scripts, so that
  // garbage never waits for a full cycle (the latency of one) to go.
  if (++calls_since_gc_ == kGcPeriod) {
    lua_gc(L, LUA_GCSTEP, kGcPeriod);
    calls_since_gc_ = 0;
  }
  current = nullptr;
  {
    std::lock_guard<std::mutex> g(running_mu);
    running.erase(&run);
    if (run.busy) busy_count--;
  }
  EvalOutcome outcome = EvalOutcome::kDone;
  if (state.aborted || aborting) {
    outcome = EvalOutcome::kAborted;
  } else if (rc != 0) {
    AppendError(out, ErrorReplyText(L, *req.sha));
  } else {
    LuaToResp(L, -1, req.client_resp, state.resp, out);
  }
  aborting = false;
  ResetScriptState(L, nullptr);
  lua_settop(L, 0);
  if (lua_bytes_.load(std::memory_order_relaxed) > bytes_after_full_gc_ + kFullGcGrowth) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    bytes_after_full_gc_ = lua_bytes_.load(std::memory_order_relaxed);
  }
  return outcome;
}

void RequestAbort(lua_State* L) {
  aborting = true;
  lua_sethook(L, StopHook, LUA_MASKLINE, 0);
}

}  // namespace kvrocks::scripting
