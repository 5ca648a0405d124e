// libFuzzer target: the binary decoders scripts run on client-supplied bytes,
// cmsgpack.unpack/unpack_one/unpack_limit and struct.unpack/size (kvrocks' own
// implementations). Bad input must end in a Lua error, never a crash.
#include <lua.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace kvrocks::scripting {
int OpenStruct(lua_State* L);
int OpenCmsgpack(lua_State* L);
}  // namespace kvrocks::scripting

namespace {

lua_State* NewState() {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  for (auto [name, open] : {std::pair<const char*, lua_CFunction>{"struct", kvrocks::scripting::OpenStruct},
                            {"cmsgpack", kvrocks::scripting::OpenCmsgpack}}) {
    lua_pushcfunction(L, open);
    lua_call(L, 0, 1);
    lua_setglobal(L, name);
  }
  return L;
}

// Calls lib.fn(args...) protected; the results are dropped.
void Call(lua_State* L, const char* lib, const char* fn, const char* a, size_t alen, const char* b, size_t blen,
          int nargs, lua_Integer extra) {
  int top = lua_gettop(L);
  lua_getglobal(L, lib);
  lua_getfield(L, -1, fn);
  lua_pushlstring(L, a, alen);
  if (nargs >= 2) lua_pushlstring(L, b, blen);
  if (nargs >= 3) lua_pushinteger(L, extra);
  lua_pcall(L, nargs, LUA_MULTRET, 0);
  lua_settop(L, top);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static lua_State* L = NewState();
  if (size < 1) return 0;
  const char* p = reinterpret_cast<const char*>(data) + 1;
  size_t n = size - 1;
  switch (data[0] % 5) {
    case 0:
      Call(L, "cmsgpack", "unpack", p, n, nullptr, 0, 1, 0);
      break;
    case 1:
      Call(L, "cmsgpack", "unpack_limit", p, n, "", 0, 1, 0);
      lua_getglobal(L, "cmsgpack");
      lua_getfield(L, -1, "unpack_limit");
      lua_pushlstring(L, p, n);
      lua_pushinteger(L, n > 0 ? static_cast<unsigned char>(p[0]) % 4 : 1);
      lua_pushinteger(L, n > 1 ? static_cast<unsigned char>(p[1]) % 8 : 0);
      lua_pcall(L, 3, LUA_MULTRET, 0);
      lua_settop(L, 0);
      break;
    case 2:
    case 3: {
      // "format\0data": struct.unpack(format, data [, pos])
      const char* zero = static_cast<const char*>(memchr(p, '\0', n));
      size_t flen = zero ? static_cast<size_t>(zero - p) : n;
      const char* rest = zero ? zero + 1 : p + n;
      size_t rlen = zero ? n - flen - 1 : 0;
      Call(L, "struct", "unpack", p, flen, rest, rlen, data[0] % 5 == 3 ? 3 : 2, 1 + static_cast<lua_Integer>(rlen % 3));
      break;
    }
    default:
      Call(L, "struct", "size", p, n, nullptr, 0, 1, 0);
  }
  lua_gc(L, LUA_GCSTEP, 0);
  return 0;
}
