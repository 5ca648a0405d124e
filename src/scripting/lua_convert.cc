#include "scripting/lua_convert.h"

#include <lua.hpp>

#include <cstdlib>
#include <string>

#include "scripting/lua_debugger.h"
#include "server/reply.h"

namespace kvrocks::scripting {

namespace {

// The string field `name` of the table at idx, if it is one.
bool StringField(lua_State* L, int idx, const char* name, std::string* out) {
  lua_pushstring(L, name);
  lua_rawget(L, idx);
  bool ok = lua_type(L, -1) == LUA_TSTRING;
  if (ok) {
    size_t len;
    const char* s = lua_tolstring(L, -1, &len);
    out->assign(s, len);
  }
  lua_pop(L, 1);
  return ok;
}

std::string MapCrLf(std::string s) {
  for (char& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

void TableToResp(lua_State* L, int idx, int resp, int script_resp, std::string* out) {
  std::string s;
  if (StringField(L, idx, "err", &s)) return AppendError(out, s);
  if (StringField(L, idx, "ok", &s)) return reply::Simple(out, MapCrLf(s));
  lua_pushstring(L, "double");
  lua_rawget(L, idx);
  if (lua_type(L, -1) == LUA_TNUMBER) {
    double d = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return reply::Double(out, d, resp);
  }
  lua_pop(L, 1);
  if (StringField(L, idx, "big_number", &s)) {
    s = MapCrLf(s);
    if (resp != 3) return reply::Bulk(out, s);
    out->push_back('(');
    out->append(s);
    out->append("\r\n");
    return;
  }
  lua_pushstring(L, "verbatim_string");
  lua_rawget(L, idx);
  if (lua_type(L, -1) == LUA_TTABLE) {
    int v = lua_gettop(L);
    std::string format, text;
    if (StringField(L, v, "format", &format) && StringField(L, v, "string", &text)) {
      lua_pop(L, 1);
      if (resp != 3) return reply::Bulk(out, text);
      out->push_back('=');
      out->append(std::to_string(text.size() + 4));
      out->append("\r\n");
      out->append(format.substr(0, 3));
      out->push_back(':');
      out->append(text);
      out->append("\r\n");
      return;
    }
  }
  lua_pop(L, 1);
  for (const char* kind : {"map", "set"}) {
    lua_pushstring(L, kind);
    lua_rawget(L, idx);
    if (lua_type(L, -1) != LUA_TTABLE) {
      lua_pop(L, 1);
      continue;
    }
    int t = lua_gettop(L);
    bool is_map = kind[0] == 'm';
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
      n++;
      lua_pop(L, 1);
    }
    if (is_map) {
      reply::MapHeader(out, n, resp);
    } else {
      reply::SetHeader(out, n, resp);
    }
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
      LuaToResp(L, -2, resp, script_resp, out);
      if (is_map) LuaToResp(L, -1, resp, script_resp, out);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  // An array, up to the first nil; its length goes in front.
  std::string items;
  size_t n = 0;
  for (int j = 1;; j++) {
    lua_rawgeti(L, idx, j);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    LuaToResp(L, lua_gettop(L), resp, script_resp, &items);
    lua_pop(L, 1);
    n++;
  }
  reply::ArrayHeader(out, n);
  out->append(items);
}

size_t LineEnd(std::string_view r, size_t pos) {
  size_t e = r.find("\r\n", pos);
  return e == std::string_view::npos ? r.size() : e;
}

}  // namespace

void AppendError(std::string* out, std::string_view msg) {
  if (!msg.empty() && msg[0] == '-') msg.remove_prefix(1);
  reply::Error(out, msg);
}

void PushErrorTable(lua_State* L, std::string_view msg) {
  // Redis' luaPushError logs every error a script gets in a debugging session.
  if (LuaDebugger* d = LuaDebugger::Current(); d != nullptr && d->Logging()) d->LogError(msg);
  std::string code = "ERR", text;
  if (!msg.empty() && msg[0] == '-') {
    msg.remove_prefix(1);
    size_t sp = msg.find(' ');
    if (sp == std::string_view::npos) {
      text = std::string(msg);
    } else {
      code = std::string(msg.substr(0, sp));
      text = std::string(msg.substr(sp + 1));
    }
  } else {
    text = std::string(msg);
  }
  while (!text.empty() && (text.back() == '\r' || text.back() == '\n')) text.pop_back();
  std::string full = code + " " + text;
  lua_newtable(L);
  lua_pushstring(L, "err");
  lua_pushlstring(L, full.data(), full.size());
  lua_rawset(L, -3);
}

void LuaToResp(lua_State* L, int idx, int resp, int script_resp, std::string* out) {
  if (idx < 0) idx = lua_gettop(L) + idx + 1;
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, idx, &len);
      reply::Bulk(out, std::string_view(s, len));
      return;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 3) {  // Redis' addReplyBool: 1 and 0 for a RESP2 client
        if (resp == 3) {
          out->append(lua_toboolean(L, idx) ? "#t\r\n" : "#f\r\n");
        } else {
          out->append(lua_toboolean(L, idx) ? ":1\r\n" : ":0\r\n");
        }
      } else if (lua_toboolean(L, idx)) {
        out->append(":1\r\n");
      } else {
        reply::Null(out, resp);
      }
      return;
    case LUA_TNUMBER:
      reply::Integer(out, static_cast<int64_t>(lua_tonumber(L, idx)));
      return;
    case LUA_TTABLE:
      // A table that contains itself would recurse forever: stop where Lua's stack ends, as Redis does.
      if (!lua_checkstack(L, 4)) return AppendError(out, "ERR reached lua stack limit");
      TableToResp(L, idx, resp, script_resp, out);
      return;
    default:
      reply::Null(out, resp);
  }
}

void RespToLua(lua_State* L, std::string_view r, size_t* pos) {
  lua_checkstack(L, 8);
  char type = r[*pos];
  size_t eol = LineEnd(r, *pos);
  std::string_view line = r.substr(*pos + 1, eol - *pos - 1);
  *pos = eol + 2;
  auto number = [&]() { return std::strtoll(std::string(line).c_str(), nullptr, 10); };
  switch (type) {
    case ':':
      lua_pushnumber(L, static_cast<lua_Number>(number()));
      return;
    case '$':
    case '=': {
      long long n = number();
      if (n < 0) {
        lua_pushboolean(L, 0);
        return;
      }
      std::string_view s = r.substr(*pos, static_cast<size_t>(n));
      *pos += static_cast<size_t>(n) + 2;
      if (type == '$') {
        lua_pushlstring(L, s.data(), s.size());
        return;
      }
      lua_newtable(L);
      lua_pushstring(L, "verbatim_string");
      lua_newtable(L);
      lua_pushstring(L, "format");
      lua_pushlstring(L, s.data(), std::min<size_t>(3, s.size()));
      lua_rawset(L, -3);
      lua_pushstring(L, "string");
      if (s.size() >= 4) s.remove_prefix(4);
      lua_pushlstring(L, s.data(), s.size());
      lua_rawset(L, -3);
      lua_rawset(L, -3);
      return;
    }
    case '+':
      lua_newtable(L);
      lua_pushstring(L, "ok");
      lua_pushlstring(L, line.data(), line.size());
      lua_rawset(L, -3);
      return;
    case '-':
      PushErrorTable(L, std::string("-") + std::string(line));
      return;
    case '*':
    case '>':
    case '~':
    case '%': {
      long long n = number();
      if (n < 0) {
        lua_pushboolean(L, 0);
        return;
      }
      if (type == '*' || type == '>') {
        lua_createtable(L, static_cast<int>(n), 0);
        for (long long i = 1; i <= n; i++) {
          RespToLua(L, r, pos);
          lua_rawseti(L, -2, static_cast<int>(i));
        }
        return;
      }
      lua_newtable(L);
      lua_pushstring(L, type == '%' ? "map" : "set");
      lua_newtable(L);
      for (long long i = 0; i < n; i++) {
        RespToLua(L, r, pos);
        if (type == '%') {
          RespToLua(L, r, pos);
        } else {
          lua_pushboolean(L, 1);
        }
        lua_rawset(L, -3);
      }
      lua_rawset(L, -3);
      return;
    }
    case '|': {
      // Attributes are not shown to scripts (as in Redis): skip the map, then
      // the reply it annotates is the value.
      long long n = number();
      for (long long i = 0; i < 2 * n; i++) {
        RespToLua(L, r, pos);
        lua_pop(L, 1);
      }
      RespToLua(L, r, pos);
      return;
    }
    case '_':
      lua_pushnil(L);
      return;
    case '#':
      lua_pushboolean(L, !line.empty() && line[0] == 't');
      return;
    case ',':
      lua_newtable(L);
      lua_pushstring(L, "double");
      lua_pushnumber(L, std::strtod(std::string(line).c_str(), nullptr));
      lua_rawset(L, -3);
      return;
    case '(':
      lua_newtable(L);
      lua_pushstring(L, "big_number");
      lua_pushlstring(L, line.data(), line.size());
      lua_rawset(L, -3);
      return;
    default:
      lua_pushnil(L);
  }
}

}  // namespace kvrocks::scripting
