// The `struct` library of Redis scripts: struct.pack(fmt, ...),
// struct.unpack(fmt, data [, pos]) and struct.size(fmt), binary packing with
// the format language of Roberto Ierusalimschy's struct library that Redis
// bundles (struct.c 1.4 with Redis' patches): "<" ">" endianness, "!n"
// alignment, "x" padding, b/B h/H l/L T i/In I/In integers, "cn" fixed strings
// (c0: the whole string, or the previous number's length when unpacking), "s"
// zero-terminated strings, "f" float, "d" double. Its corner cases are Redis'
// too: integers of 0 bytes, integers over 8 bytes computed in 64 bits, an
// unpack offset taken as unsigned.
#include <lua.hpp>

#include <cctype>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kvrocks::scripting {

namespace {

constexpr int kMaxIntSize = 32;

struct Header {
  bool little = true;  // x86-64 is little-endian
  size_t align = 1;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The digits of a size or an alignment (Redis' getnum).
int ReadNumber(lua_State* L, const char** fmt, int def) {
  if (!IsDigit(**fmt)) return def;
  int a = 0;
  do {
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - (**fmt - '0')) luaL_error(L, "integral size overflow");
    a = a * 10 + (*((*fmt)++) - '0');
  } while (IsDigit(**fmt));
  return a;
}

size_t IntSize(lua_State* L, const char** fmt) {
  int sz = ReadNumber(L, fmt, sizeof(int));
  if (sz > kMaxIntSize) luaL_error(L, "integral size %d is larger than limit of %d", sz, kMaxIntSize);
  return static_cast<size_t>(sz);
}

// The size of one option (consumes its digits); 0 for variable-size ones.
size_t OptSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B': case 'b': return 1;
    case 'H': case 'h': return sizeof(short);
    case 'L': case 'l': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return static_cast<size_t>(ReadNumber(L, fmt, 1));
    case 'i': case 'I': return IntSize(L, fmt);
    default: return 0;
  }
}

size_t ToAlign(size_t len, const Header& h, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > h.align) size = h.align;
  return (size - (len & (size - 1))) & (size - 1);
}

void ControlOption(lua_State* L, char opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ': return;
    case '>': h->little = false; return;
    case '<': h->little = true; return;
    case '!': {
      struct Probe { char c; double d; };
      int a = ReadNumber(L, fmt, static_cast<int>(offsetof(Probe, d)));
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = static_cast<size_t>(a);
      return;
    }
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
  }
}

// The value's 64 bits, least significant first; bytes past 8 are zero (not a
// sign extension), as Redis' putinteger shifts them out.
void PutInteger(luaL_Buffer* b, lua_Number n, bool little, size_t size) {
  uint64_t v = n < 0 ? static_cast<uint64_t>(static_cast<int64_t>(n)) : static_cast<uint64_t>(n);
  char buf[kMaxIntSize];
  for (size_t i = 0; i < size; i++) {
    buf[little ? i : size - 1 - i] = static_cast<char>(v & 0xff);
    v = i < 7 ? v >> 8 : 0;
  }
  luaL_addlstring(b, buf, size);
}

void PutBytes(luaL_Buffer* b, const void* p, size_t size, bool little) {
  const char* s = static_cast<const char*>(p);
  char buf[16];
  for (size_t i = 0; i < size; i++) buf[little ? i : size - 1 - i] = s[i];  // host is little-endian
  luaL_addlstring(b, buf, size);
}

int StructPack(lua_State* L) {
  luaL_Buffer b;
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  int arg = 2;
  size_t total = 0;
  lua_pushnil(L);  // mark to separate arguments from the buffer
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    size_t toalign = ToAlign(total, h, opt, size);
    total += toalign;
    while (toalign-- > 0) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
        PutInteger(&b, luaL_checknumber(L, arg++), h.little, size);
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(L, arg++));
        PutBytes(&b, &f, size, h.little);
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        PutBytes(&b, &d, size, h.little);
        break;
      }
      case 'c': case 's': {
        size_t l;
        const char* s = luaL_checklstring(L, arg++, &l);
        if (size == 0) size = l;
        luaL_argcheck(L, l >= size, arg, "string too short");  // Redis names the argument after it
        luaL_addlstring(&b, s, size);
        if (opt == 's') {
          luaL_addchar(&b, '\0');
          size++;
        }
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

// Redis' getinteger: the bytes go through a 64-bit value (those beyond 8 are
// shifted out), and the sign mask is shifted by size*8-1 as x86 shifts, modulo
// 64 (Redis' C leaves that undefined for 0 and for more than 8 bytes).
lua_Number GetInteger(const char* buf, bool little, bool is_signed, size_t size) {
  uint64_t v = 0;
  for (size_t k = 0; k < size; k++) {
    v <<= 8;
    v |= static_cast<unsigned char>(buf[little ? size - 1 - k : k]);
  }
  if (!is_signed) return static_cast<lua_Number>(v);
  uint64_t mask = ~uint64_t{0} << ((size * 8 - 1) & 63);
  if (v & mask) v |= mask;  // sign extension
  return static_cast<lua_Number>(static_cast<int64_t>(v));
}

template <typename T>
T GetFloat(const char* p, bool little) {
  char buf[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); i++) buf[little ? i : sizeof(T) - 1 - i] = p[i];  // host is little-endian
  T v;
  memcpy(&v, buf, sizeof(v));
  return v;
}

int StructUnpack(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t ld;
  const char* data = luaL_checklstring(L, 2, &ld);
  // Unsigned, as in Redis: a negative offset is a huge one ("data string too
  // short" at the first option), and one past the data is refused only by an option.
  size_t pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  pos--;
  int n = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    pos += ToAlign(pos, h, opt, size);
    luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I': {
        bool is_signed = std::islower(static_cast<unsigned char>(opt)) != 0;
        lua_pushnumber(L, GetInteger(data + pos, h.little, is_signed, size));
        n++;
        break;
      }
      case 'x':
        break;
      case 'f':
        lua_pushnumber(L, static_cast<lua_Number>(GetFloat<float>(data + pos, h.little)));
        n++;
        break;
      case 'd':
        lua_pushnumber(L, GetFloat<double>(data + pos, h.little));
        n++;
        break;
      case 'c': {
        if (size == 0) {
          if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          lua_Number want = lua_tonumber(L, -1);
          // Out of range (negative, huge, NaN) cannot fit: "data string too short" below.
          size = want >= 0 && want <= static_cast<lua_Number>(ld) ? static_cast<size_t>(want) : ld + 1;
          lua_pop(L, 1);
          n--;
          luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        n++;
        break;
      }
      case 's': {
        const char* e = static_cast<const char*>(memchr(data + pos, '\0', ld - pos));
        if (e == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(e - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        n++;
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return n + 1;
}

int Size(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t pos = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    pos += ToAlign(pos, h, opt, size);
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    // Letters and digits the format does not know count as 0 bytes here (Redis' b_size).
    if (!std::isalnum(static_cast<unsigned char>(opt))) ControlOption(L, opt, &fmt, &h);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int OpenStruct(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, StructPack);
  lua_setfield(L, -2, "pack");
  lua_pushcfunction(L, StructUnpack);
  lua_setfield(L, -2, "unpack");
  lua_pushcfunction(L, Size);
  lua_setfield(L, -2, "size");
  return 1;
}

}  // namespace kvrocks::scripting
