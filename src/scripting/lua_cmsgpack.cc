// The `cmsgpack` library of Redis scripts: cmsgpack.pack(...),
// cmsgpack.unpack(s), cmsgpack.unpack_one(s [, offset]) and
// cmsgpack.unpack_limit(s, limit [, offset]), MessagePack with the choices
// of the lua-cmsgpack library that Redis bundles: integral numbers as the
// smallest integer, other numbers as float32 when exact else float64,
// tables with keys 1..n as arrays, other tables as maps, nesting past 16
// levels as nil.
#include <lua.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace kvrocks::scripting {

namespace {

constexpr int kMaxNesting = 16;

void PutBig(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; i--) out->push_back(static_cast<char>(v >> (8 * i)));
}

void EncodeInteger(std::string* out, int64_t n) {
  if (n >= 0) {
    auto u = static_cast<uint64_t>(n);
    if (u <= 127) {
      out->push_back(static_cast<char>(u));
    } else if (u <= 0xff) {
      out->push_back(static_cast<char>(0xcc));
      PutBig(out, u, 1);
    } else if (u <= 0xffff) {
      out->push_back(static_cast<char>(0xcd));
      PutBig(out, u, 2);
    } else if (u <= 0xffffffffULL) {
      out->push_back(static_cast<char>(0xce));
      PutBig(out, u, 4);
    } else {
      out->push_back(static_cast<char>(0xcf));
      PutBig(out, u, 8);
    }
    return;
  }
  auto u = static_cast<uint64_t>(n);
  if (n >= -32) {
    out->push_back(static_cast<char>(n));
  } else if (n >= -128) {
    out->push_back(static_cast<char>(0xd0));
    PutBig(out, u, 1);
  } else if (n >= -32768) {
    out->push_back(static_cast<char>(0xd1));
    PutBig(out, u, 2);
  } else if (n >= -2147483648LL) {
    out->push_back(static_cast<char>(0xd2));
    PutBig(out, u, 4);
  } else {
    out->push_back(static_cast<char>(0xd3));
    PutBig(out, u, 8);
  }
}

void EncodeNumber(std::string* out, lua_Number n) {
  if (!std::isinf(n) && !std::isnan(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
      static_cast<lua_Number>(static_cast<int64_t>(n)) == n) {
    return EncodeInteger(out, static_cast<int64_t>(n));
  }
  auto f = static_cast<float>(n);
  if (static_cast<double>(f) == n) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    out->push_back(static_cast<char>(0xca));
    PutBig(out, bits, 4);
  } else {
    uint64_t bits;
    memcpy(&bits, &n, 8);
    out->push_back(static_cast<char>(0xcb));
    PutBig(out, bits, 8);
  }
}

void EncodeString(std::string* out, const char* s, size_t len) {
  if (len < 32) {
    out->push_back(static_cast<char>(0xa0 | len));
  } else if (len <= 0xff) {
    out->push_back(static_cast<char>(0xd9));
    PutBig(out, len, 1);
  } else if (len <= 0xffff) {
    out->push_back(static_cast<char>(0xda));
    PutBig(out, len, 2);
  } else {
    out->push_back(static_cast<char>(0xdb));
    PutBig(out, len, 4);
  }
  out->append(s, len);
}

void EncodeHeader(std::string* out, size_t n, unsigned char fix, unsigned char c16, unsigned char c32) {
  if (n <= 15) {
    out->push_back(static_cast<char>(fix | n));
  } else if (n <= 0xffff) {
    out->push_back(static_cast<char>(c16));
    PutBig(out, n, 2);
  } else {
    out->push_back(static_cast<char>(c32));
    PutBig(out, n, 4);
  }
}

// True if the table at the top has exactly the keys 1..n.
bool IsArray(lua_State* L) {
  int top = lua_gettop(L);
  lua_Number max = 0;
  long count = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    lua_Number n;
    if (lua_type(L, -1) != LUA_TNUMBER || (n = lua_tonumber(L, -1)) <= 0 ||
        static_cast<lua_Number>(static_cast<long long>(n)) != n) {
      lua_settop(L, top);
      return false;
    }
    if (n > max) max = n;
    count++;
  }
  lua_settop(L, top);
  return max == static_cast<lua_Number>(count);
}

// Encodes the value at the top of the stack (and leaves it there).
void Encode(lua_State* L, std::string* out, int level) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      EncodeString(out, s, len);
      return;
    }
    case LUA_TBOOLEAN:
      out->push_back(static_cast<char>(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
      return;
    case LUA_TNUMBER:
      EncodeNumber(out, lua_tonumber(L, -1));
      return;
    case LUA_TTABLE:
      if (level == kMaxNesting) break;
      luaL_checkstack(L, 3, "cmsgpack: too deep");
      if (IsArray(L)) {
        size_t n = lua_objlen(L, -1);
        EncodeHeader(out, n, 0x90, 0xdc, 0xdd);
        for (size_t i = 1; i <= n; i++) {
          lua_rawgeti(L, -1, static_cast<int>(i));
          Encode(L, out, level + 1);
          lua_pop(L, 1);
        }
      } else {
        size_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pop(L, 1);
          n++;
        }
        EncodeHeader(out, n, 0x80, 0xde, 0xdf);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pushvalue(L, -2);
          Encode(L, out, level + 1);  // key
          lua_pop(L, 1);
          Encode(L, out, level + 1);  // value
          lua_pop(L, 1);
        }
      }
      return;
    default:
      break;
  }
  out->push_back(static_cast<char>(0xc0));
}

int Pack(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  // The encoding is built in a Lua-owned buffer: no C++ object may be alive
  // if a Lua error unwinds.
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= argc; i++) {
    {
      std::string out;
      lua_pushvalue(L, i);
      Encode(L, &out, 0);
      lua_pop(L, 1);
      lua_pushlstring(L, out.data(), out.size());
    }
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

enum class DecodeError { kNone, kEof, kBadFormat };

struct Cursor {
  const unsigned char* p;
  size_t left;
  DecodeError err = DecodeError::kNone;
  bool Need(size_t n) {
    if (left >= n) return true;
    err = DecodeError::kEof;
    return false;
  }
  uint64_t Big(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v = (v << 8) | p[i];
    p += n;
    left -= n;
    return v;
  }
};

void Decode(lua_State* L, Cursor* c);

void DecodeArray(lua_State* L, Cursor* c, size_t n) {
  lua_newtable(L);
  for (size_t i = 1; i <= n && c->err == DecodeError::kNone; i++) {
    Decode(L, c);
    lua_rawseti(L, -2, static_cast<int>(i));
  }
}

void DecodeMap(lua_State* L, Cursor* c, size_t n) {
  lua_newtable(L);
  for (size_t i = 0; i < n && c->err == DecodeError::kNone; i++) {
    Decode(L, c);
    Decode(L, c);
    if (c->err != DecodeError::kNone) {
      lua_pop(L, 2);
      continue;
    }
    lua_settable(L, -3);  // a nil or NaN key raises "table index is nil/NaN", as in Redis
  }
}

void DecodeString(lua_State* L, Cursor* c, size_t len) {
  if (!c->Need(len)) return lua_pushnil(L);
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p), len);
  c->p += len;
  c->left -= len;
}

// Pushes one decoded value (nil on error, with c->err set).
void Decode(lua_State* L, Cursor* c) {
  luaL_checkstack(L, 3, "cmsgpack: too deep");
  if (!c->Need(1)) return lua_pushnil(L);
  unsigned char t = *c->p;
  c->p++;
  c->left--;
  auto sized = [&](size_t n, uint64_t* v) {
    if (!c->Need(n)) return false;
    *v = c->Big(n);
    return true;
  };
  uint64_t v;
  if (t <= 0x7f) return lua_pushnumber(L, t);
  if (t >= 0xe0) return lua_pushnumber(L, static_cast<int8_t>(t));
  if ((t & 0xe0) == 0xa0) return DecodeString(L, c, t & 0x1f);
  if ((t & 0xf0) == 0x90) return DecodeArray(L, c, t & 0x0f);
  if ((t & 0xf0) == 0x80) return DecodeMap(L, c, t & 0x0f);
  switch (t) {
    case 0xc0: return lua_pushnil(L);
    case 0xc2: return lua_pushboolean(L, 0);
    case 0xc3: return lua_pushboolean(L, 1);
    case 0xcc: case 0xcd: case 0xce: case 0xcf:
      if (!sized(size_t{1} << (t - 0xcc), &v)) return lua_pushnil(L);
      return lua_pushnumber(L, static_cast<lua_Number>(v));
    case 0xd0: return sized(1, &v) ? lua_pushnumber(L, static_cast<int8_t>(v)) : lua_pushnil(L);
    case 0xd1: return sized(2, &v) ? lua_pushnumber(L, static_cast<int16_t>(v)) : lua_pushnil(L);
    case 0xd2: return sized(4, &v) ? lua_pushnumber(L, static_cast<int32_t>(v)) : lua_pushnil(L);
    case 0xd3:
      return sized(8, &v) ? lua_pushnumber(L, static_cast<lua_Number>(static_cast<int64_t>(v))) : lua_pushnil(L);
    case 0xca: {
      if (!sized(4, &v)) return lua_pushnil(L);
      auto bits = static_cast<uint32_t>(v);
      float f;
      memcpy(&f, &bits, 4);
      return lua_pushnumber(L, f);
    }
    case 0xcb: {
      if (!sized(8, &v)) return lua_pushnil(L);
      double d;
      memcpy(&d, &v, 8);
      return lua_pushnumber(L, d);
    }
    case 0xd9: return sized(1, &v) ? DecodeString(L, c, v) : lua_pushnil(L);
    case 0xda: return sized(2, &v) ? DecodeString(L, c, v) : lua_pushnil(L);
    case 0xdb: return sized(4, &v) ? DecodeString(L, c, v) : lua_pushnil(L);
    case 0xdc: return sized(2, &v) ? DecodeArray(L, c, v) : lua_pushnil(L);
    case 0xdd: return sized(4, &v) ? DecodeArray(L, c, v) : lua_pushnil(L);
    case 0xde: return sized(2, &v) ? DecodeMap(L, c, v) : lua_pushnil(L);
    case 0xdf: return sized(4, &v) ? DecodeMap(L, c, v) : lua_pushnil(L);
    default:
      c->err = DecodeError::kBadFormat;
      return lua_pushnil(L);
  }
}

int UnpackFull(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  bool all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (all) limit = INT_MAX;
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - static_cast<size_t>(offset)};
  int count = 0;
  for (; c.left > 0 && count < limit; count++) {
    Decode(L, &c);
    if (c.err == DecodeError::kEof) return luaL_error(L, "Missing bytes in input.");
    if (c.err == DecodeError::kBadFormat) return luaL_error(L, "Bad data format in input.");
  }
  if (all) return count;
  lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
  lua_insert(L, 2);
  return count + 1;
}

int Unpack(lua_State* L) { return UnpackFull(L, 0, 0); }

int UnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_pop(L, lua_gettop(L) - 1);
  return UnpackFull(L, 1, offset);
}

int UnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_pop(L, lua_gettop(L) - 1);
  return UnpackFull(L, limit, offset);
}

}  // namespace

int OpenCmsgpack(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg fns[] = {{"pack", Pack},
                          {"unpack", Unpack},
                          {"unpack_one", UnpackOne},
                          {"unpack_limit", UnpackLimit},
                          {nullptr, nullptr}};
  for (const luaL_Reg* f = fns; f->name != nullptr; f++) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  lua_pushstring(L, "lua-cmsgpack");
  lua_setfield(L, -2, "_NAME");
  return 1;
}

}  // namespace kvrocks::scripting
