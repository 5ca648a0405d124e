// redis.register_function, the one call a library makes while FUNCTION LOAD
// runs its code (Redis 7.0's luaRegisterFunction and its argument checks).
#include <lua.hpp>

#include <strings.h>

#include <string>
#include <vector>

#include "scripting/functions.h"
#include "scripting/lua_convert.h"
#include "scripting/lua_libs.h"

namespace kvrocks::scripting {

namespace {

thread_local std::vector<FunctionInfo>* loading = nullptr;

bool ValidFunctionName(const char* s, size_t len) {
  if (len == 0) return false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// The string at index, NULs included (a name with a NUL is not a valid name).
std::string LuaString(lua_State* L, int index) {
  size_t len = 0;
  const char* p = lua_tolstring(L, index, &len);
  return std::string(p, len);
}

// Reads the arguments; returns nullptr or the error text. On success the
// callback is at the top of the stack.
const char* ReadArgs(lua_State* L, FunctionInfo* info) {
  int argc = lua_gettop(L);
  if (argc < 1 || argc > 2) return "wrong number of arguments to redis.register_function";
  if (argc == 2) {
    if (!lua_isstring(L, 1)) return "first argument to redis.register_function must be a string";
    if (!lua_isfunction(L, 2)) return "second argument to redis.register_function must be a function";
    info->name = LuaString(L, 1);
    lua_pushvalue(L, 2);
    return nullptr;
  }
  if (!lua_istable(L, 1)) {
    return "calling redis.register_function with a single argument is only applicable to Lua table (representing "
           "named arguments).";
  }
  bool have_name = false, have_callback = false;
  lua_pushnil(L);  // callback slot, at index 2
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    if (!lua_isstring(L, -2)) return "named argument key given to redis.register_function is not a string";
    const char* key = lua_tostring(L, -2);
    if (strcasecmp(key, "function_name") == 0) {
      if (!lua_isstring(L, -1)) return "function_name argument given to redis.register_function must be a string";
      info->name = LuaString(L, -1);
      have_name = true;
    } else if (strcasecmp(key, "description") == 0) {
      if (!lua_isstring(L, -1)) return "description argument given to redis.register_function must be a string";
      info->description = LuaString(L, -1);
      info->has_description = true;
    } else if (strcasecmp(key, "callback") == 0) {
      if (!lua_isfunction(L, -1)) return "callback argument given to redis.register_function must be a function";
      lua_pushvalue(L, -1);
      lua_replace(L, 2);
      have_callback = true;
    } else if (strcasecmp(key, "flags") == 0) {
      if (!lua_istable(L, -1)) return "flags argument to redis.register_function must be a table representing function flags";
      int t = lua_gettop(L);
      for (int j = 1;; j++) {
        lua_rawgeti(L, t, j);
        if (lua_isnil(L, -1)) {
          lua_pop(L, 1);
          break;
        }
        uint32_t f;
        if (!lua_isstring(L, -1) || !ParseScriptFlag(lua_tostring(L, -1), &f)) return "unknown flag given";
        info->flags |= f;
        lua_pop(L, 1);
      }
    } else {
      return "unknown argument given to redis.register_function";
    }
    lua_pop(L, 1);
  }
  if (!have_name) return "redis.register_function must get a function name argument";
  if (!have_callback) return "redis.register_function must get a callback argument";
  lua_pushvalue(L, 2);
  return nullptr;
}

// Returns nullptr, or an error text to raise (no C++ object is alive then).
const char* Register(lua_State* L) {
  if (loading == nullptr) return "redis.register_function can only be called on FUNCTION LOAD command";
  FunctionInfo info;
  const char* err = ReadArgs(L, &info);
  if (err != nullptr) return err;
  if (!ValidFunctionName(info.name.data(), info.name.size())) {
    return "Library names can only contain letters, numbers, or underscores(_) and must be at least one character "
           "long";
  }
  for (const auto& f : *loading) {
    if (f.name == info.name) return "Function already exists in the library";
  }
  // callbacks[name] = callback (at the top)
  lua_getfield(L, LUA_REGISTRYINDEX, kLoadingFunctionsTable);
  lua_pushlstring(L, info.name.data(), info.name.size());
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 2);
  loading->push_back(std::move(info));
  return nullptr;
}

}  // namespace

int RegisterFunction(lua_State* L) {
  const char* err = Register(L);
  if (err == nullptr) return 0;
  PushErrorTable(L, err);
  return lua_error(L);
}

void SetLoadingFunctions(std::vector<FunctionInfo>* infos) { loading = infos; }

}  // namespace kvrocks::scripting
