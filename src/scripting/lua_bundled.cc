// cjson and bit come from Debian (lua-cjson, lua-bitop); struct and cmsgpack
// are kvrocks' own implementations of the same interfaces (lua_struct.cc,
// lua_cmsgpack.cc).
#include <lua.hpp>

extern "C" {
#include <lua-bitop.h>
#include <lua-cjson.h>
}

#include "scripting/lua_libs.h"

namespace kvrocks::scripting {

int OpenStruct(lua_State* L);
int OpenCmsgpack(lua_State* L);

namespace {

// Opens a library as a global of the given name (the openers register it).
void Load(lua_State* L, const char* name, lua_CFunction open) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  lua_setglobal(L, name);
}

}  // namespace

void OpenBundledLibs(lua_State* L) {
  Load(L, "cjson", luaopen_cjson);
  Load(L, "bit", luaopen_bit);
  Load(L, "struct", OpenStruct);
  Load(L, "cmsgpack", OpenCmsgpack);
}

}  // namespace kvrocks::scripting
