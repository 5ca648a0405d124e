// The `redis` table of scripts and math.random, as in Redis 7.0's eval.c and
// script_lua.c.
#include <glog/logging.h>
#include <lua.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/sha1.h"
#include "common/version.h"
#include "scripting/lua_convert.h"
#include "scripting/lua_debugger.h"
#include "scripting/lua_engine.h"
#include "scripting/lua_libs.h"

namespace kvrocks::scripting {

namespace {

thread_local ScriptState* state = nullptr;

// Redis' rand48 (rand.c): X(n+1) = (a X(n) + c) mod 2^48, seeded as srand48.
thread_local uint64_t rand48_x = 0;
void Srand48(int32_t seed) { rand48_x = (static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16) | 0x330E; }
int32_t Lrand48() {
  rand48_x = (0x5DEECE66DULL * rand48_x + 0xB) & ((1ULL << 48) - 1);
  return static_cast<int32_t>(rand48_x >> 17);
}
constexpr int32_t kRand48Max = INT32_MAX;

int MathRandom(lua_State* L) {
  lua_Number r = static_cast<lua_Number>(Lrand48() % kRand48Max) / static_cast<lua_Number>(kRand48Max);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      int l = luaL_checkint(L, 1);
      int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomSeed(lua_State* L) {
  Srand48(luaL_checkint(L, 1));
  return 0;
}

// Raises an error table {err="ERR msg"} (returns only through longjmp).
int RaiseError(lua_State* L, const char* msg) {
  PushErrorTable(L, msg);
  return lua_error(L);
}

// The arguments of a redis lib call as command arguments; "" or the error.
std::string CommandArgs(lua_State* L, std::vector<std::string>* args) {
  int argc = lua_gettop(L);
  if (argc == 0) return "Please specify at least one argument for this redis lib call";
  args->reserve(static_cast<size_t>(argc));
  for (int i = 1; i <= argc; i++) {
    int t = lua_type(L, i);
    if (t == LUA_TNUMBER) {
      char buf[64];
      int n = snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(lua_tonumber(L, i)));
      args->emplace_back(buf, static_cast<size_t>(n));
    } else if (t == LUA_TSTRING) {
      size_t len;
      const char* s = lua_tolstring(L, i, &len);
      args->emplace_back(s, len);
    } else {
      return "Lua redis lib command arguments must be strings or integers";
    }
  }
  return "";
}

// redis.call / redis.pcall. Returns 1 with the result pushed, or -1 with an
// error table pushed that the caller raises. No C++ object may be alive when
// lua_error unwinds, hence the split.
int DoCall(lua_State* L, bool raise) {
  std::string err;
  std::vector<std::string> args;
  if (state == nullptr || state->host == nullptr) {
    err = "redis.call() can only be used inside a script";
  } else {
    err = CommandArgs(L, &args);
  }
  if (!err.empty()) {
    PushErrorTable(L, err);
    return raise ? -1 : 1;
  }
  LuaDebugger* debugger = LuaDebugger::Current();
  if (debugger != nullptr && debugger->Logging()) debugger->LogCommand(args);
  std::string reply;
  ScriptHost::CallResult result = state->host->Call(args, state->resp, &reply);
  if (result == ScriptHost::CallResult::kAbort) {
    state->aborted = true;
    RequestAbort(L);
    lua_pushstring(L, "ERR script aborted");
    return -1;
  }
  if (result == ScriptHost::CallResult::kRejected) {
    // As Redis pushes its scriptCall error (and logs it so in a debugging
    // session): "ERR " left out, any other code kept with its '-'.
    std::string_view msg(reply);
    msg.remove_prefix(1);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.remove_suffix(1);
    PushErrorTable(L, msg.substr(0, 4) == "ERR " ? std::string(msg.substr(4)) : "-" + std::string(msg));
    return raise ? -1 : 1;
  }
  size_t pos = 0;
  RespToLua(L, reply, &pos);
  if (debugger != nullptr && debugger->Logging()) debugger->LogReply(reply);
  return raise && !reply.empty() && reply[0] == '-' ? -1 : 1;
}

int RedisCall(lua_State* L) {
  if (DoCall(L, true) < 0) return lua_error(L);
  return 1;
}

int RedisPCall(lua_State* L) {
  if (DoCall(L, false) < 0) return lua_error(L);
  return 1;
}

// redis.acl_check_cmd: pushes the boolean (1) or an error table to raise (-1).
int DoAclCheck(lua_State* L) {
  std::string err;
  std::vector<std::string> args;
  if (state == nullptr || state->host == nullptr) {
    err = "redis.acl_check_cmd can only be called inside a script invocation";
  } else if ((err = CommandArgs(L, &args)).empty()) {
    int allowed = state->host->AclCheck(args);
    if (allowed >= 0) {
      lua_pushboolean(L, allowed);
      return 1;
    }
    err = "Invalid command passed to redis.acl_check_cmd()";
  }
  PushErrorTable(L, err);
  return -1;
}

int RedisAclCheckCmd(lua_State* L) {
  if (DoAclCheck(L) < 0) return lua_error(L);
  return 1;
}

int RedisSha1Hex(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "wrong number of arguments");
  size_t len;
  const char* s = lua_tolstring(L, 1, &len);
  if (s == nullptr) {
    s = "";
    len = 0;
  }
  char hex[41];
  {
    std::string h = Sha1Hex(std::string_view(s, len));
    memcpy(hex, h.data(), 41);
  }
  lua_pushstring(L, hex);
  return 1;
}

int RedisErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  size_t len;
  const char* s = lua_tolstring(L, 1, &len);
  std::string_view msg(s, len);
  if (!msg.empty() && msg[0] == '-') {
    PushErrorTable(L, msg);
  } else {
    PushErrorTable(L, "-" + std::string(msg));
  }
  return 1;
}

int RedisStatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, 1);
  lua_rawset(L, -3);
  return 1;
}

int RedisLog(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) return RaiseError(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return RaiseError(L, "First argument must be a number (log level).");
  int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) return RaiseError(L, "Invalid debug level.");
  {
    std::string msg;
    for (int i = 2; i <= argc; i++) {
      size_t len;
      const char* s = lua_tolstring(L, i, &len);
      if (s == nullptr) continue;
      if (i > 2) msg.push_back(' ');
      msg.append(s, len);
    }
    if (level == 3) {
      LOG(WARNING) << msg;
    } else if (level == 2) {
      LOG(INFO) << msg;
    } else {
      VLOG(2 - level) << msg;  // verbose (1) and debug (0): see server/logging.h
    }
  }
  return 0;
}

int RedisSetResp(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "redis.setresp() requires one argument.");
  int resp = static_cast<int>(lua_tonumber(L, 1));
  if (resp != 2 && resp != 3) return RaiseError(L, "RESP version must be 2 or 3.");
  if (state != nullptr) state->resp = resp;
  return 0;
}

int RedisSetRepl(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "redis.set_repl() requires one argument.");
  int flags = static_cast<int>(lua_tonumber(L, 1));
  if (flags < 0 || flags > 3) {
    return RaiseError(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  }
  return 0;  // kvrocks replicates data, not script effects: nothing to select
}

int RedisReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

// redis.breakpoint(): true, and a stop at the next line, in a SCRIPT DEBUG session.
int RedisBreakpoint(lua_State* L) {
  LuaDebugger* debugger = LuaDebugger::Current();
  if (debugger != nullptr) debugger->BreakAtNextLine();
  lua_pushboolean(L, debugger != nullptr);
  return 1;
}

// redis.debug(...): a line in the SCRIPT DEBUG session's log, else nothing.
int RedisDebug(lua_State* L) {
  if (LuaDebugger* debugger = LuaDebugger::Current(); debugger != nullptr) debugger->Debug(L);
  return 0;
}

// The global pcall of scripts: Lua's, except that an error table
// ({err=...}, as redis.call raises) is returned as its message string.
int ScriptPCall(lua_State* L) {
  int argc = lua_gettop(L);
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

void SetNumber(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

}  // namespace

void ResetScriptState(lua_State*, ScriptState* s) { state = s; }

void OpenRedisLib(lua_State* L) {
  Srand48(0);
  lua_newtable(L);
  const luaL_Reg fns[] = {{"call", RedisCall},
                          {"pcall", RedisPCall},
                          {"sha1hex", RedisSha1Hex},
                          {"acl_check_cmd", RedisAclCheckCmd},
                          {"error_reply", RedisErrorReply},
                          {"status_reply", RedisStatusReply},
                          {"log", RedisLog},
                          {"setresp", RedisSetResp},
                          {"set_repl", RedisSetRepl},
                          {"replicate_commands", RedisReplicateCommands},
                          {"breakpoint", RedisBreakpoint},
                          {"debug", RedisDebug},
                          {nullptr, nullptr}};
  for (const luaL_Reg* f = fns; f->name != nullptr; f++) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", 1);
  SetNumber(L, "REPL_SLAVE", 2);
  SetNumber(L, "REPL_REPLICA", 2);
  SetNumber(L, "REPL_ALL", 3);
  lua_pushstring(L, kRedisVersion);
  lua_setfield(L, -2, "REDIS_VERSION");
  int major = 0, minor = 0, patch = 0;
  sscanf(kRedisVersion, "%d.%d.%d", &major, &minor, &patch);
  SetNumber(L, "REDIS_VERSION_NUM", (major << 16) | (minor << 8) | patch);
  lua_setglobal(L, "redis");

  lua_pushcfunction(L, ScriptPCall);
  lua_setglobal(L, "pcall");

  lua_getglobal(L, "math");
  lua_pushcfunction(L, MathRandom);
  lua_setfield(L, -2, "random");
  lua_pushcfunction(L, MathRandomSeed);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
}

}  // namespace kvrocks::scripting
