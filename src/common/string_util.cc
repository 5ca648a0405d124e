#include "common/string_util.h"

#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kvrocks {

std::string ToLower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string ToUpper(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool TokenEquals(std::string_view a, std::string_view b) {
  b = b.substr(0, b.find('\0'));
  // a read as a C string equals b when its first b.size() bytes do and it ends there.
  if (a.size() < b.size() || (a.size() > b.size() && a[b.size()] != '\0')) return false;
  return EqualsIgnoreCase(a.substr(0, b.size()), b);
}

std::string CString(std::string_view s) { return std::string(s.substr(0, s.find('\0'))); }

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

bool ParseDouble(std::string_view s, double* out) {
  if (s.empty() || s.size() > 5000 || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return false;
  *out = v;
  return true;
}

bool ParseStrtod(std::string_view s, double* out, bool* range_error) {
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(buf.c_str(), &end);
  if (range_error != nullptr) *range_error = errno == ERANGE;
  return *end == '\0' && !std::isnan(*out);
}

bool ParseLongDouble(std::string_view s, long double* out) {
  if (s.empty() || s.size() > 5000 || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(v) || errno == ERANGE) return false;
  *out = v;
  return true;
}

std::string FormatTrimmedDouble(double v) {
  char buf[512];
  snprintf(buf, sizeof(buf), "%f", v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string FormatLongDoubleHuman(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[5600];
  int len = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return "0";
  if (std::strchr(buf, '.') != nullptr) {
    char* p = buf + len - 1;
    while (*p == '0') {
      p--;
      len--;
    }
    if (*p == '.') len--;
  }
  if (len == 2 && buf[0] == '-' && buf[1] == '0') return "0";
  return std::string(buf, len);
}

// skip_longer: set when the pattern after a '*' matched nowhere in the rest of
// the string; then no earlier '*' can help by matching more (that would only
// start the rest later), so every caller gives up at once, as Redis'
// stringmatchlen does. Without it "a*a*a*...*b" against "aaaa..." is exponential.
static bool MatchImpl(const char* p, size_t plen, const char* s, size_t slen, bool nocase, int nesting,
                      bool* skip_longer) {
  if (nesting > 1000) return false;
  auto fold = [nocase](char c) {
    return nocase ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
  };
  while (plen && slen) {
    switch (p[0]) {
      case '*':
        while (plen > 1 && p[1] == '*') {
          p++;
          plen--;
        }
        if (plen == 1) return true;
        while (slen) {
          if (MatchImpl(p + 1, plen - 1, s, slen, nocase, nesting + 1, skip_longer)) return true;
          if (*skip_longer) return false;
          s++;
          slen--;
        }
        *skip_longer = true;
        return false;
      case '?':
        s++;
        slen--;
        break;
      case '[': {
        p++;
        plen--;
        bool negate = plen && p[0] == '^';
        if (negate) {
          p++;
          plen--;
        }
        bool match = false;
        while (true) {
          if (plen == 0) {
            p--;
            plen++;
            break;
          }
          if (p[0] == '\\' && plen >= 2) {
            p++;
            plen--;
            if (fold(p[0]) == fold(s[0])) match = true;
          } else if (p[0] == ']') {
            break;
          } else if (plen >= 3 && p[1] == '-') {
            char start = fold(p[0]), end = fold(p[2]), c = fold(s[0]);
            if (start > end) std::swap(start, end);
            if (c >= start && c <= end) match = true;
            p += 2;
            plen -= 2;
          } else if (fold(p[0]) == fold(s[0])) {
            match = true;
          }
          p++;
          plen--;
        }
        if (negate) match = !match;
        if (!match) return false;
        s++;
        slen--;
        break;
      }
      case '\\':
        if (plen >= 2) {
          p++;
          plen--;
        }
        [[fallthrough]];
      default:
        if (fold(p[0]) != fold(s[0])) return false;
        s++;
        slen--;
        break;
    }
    p++;
    plen--;
    if (slen == 0) {
      while (plen && *p == '*') {
        p++;
        plen--;
      }
      break;
    }
  }
  return plen == 0 && slen == 0;
}

bool StringMatch(std::string_view pattern, std::string_view str, bool nocase) {
  bool skip_longer = false;
  return MatchImpl(pattern.data(), pattern.size(), str.data(), str.size(), nocase, 0, &skip_longer);
}

// CRC16-CCITT (XMODEM), the hash of Redis Cluster slots.
static uint16_t Crc16(const char* buf, size_t len) {
  static const auto kTable = [] {
    std::array<uint16_t, 256> t{};
    for (int i = 0; i < 256; i++) {
      uint16_t crc = static_cast<uint16_t>(i << 8);
      for (int j = 0; j < 8; j++) crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : static_cast<uint16_t>(crc << 1);
      t[i] = crc;
    }
    return t;
  }();
  uint16_t crc = 0;
  for (size_t i = 0; i < len; i++) {
    crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ static_cast<uint8_t>(buf[i])) & 0xff]);
  }
  return crc;
}

uint16_t KeySlot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close != open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key.data(), key.size()) & 16383;
}

static int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  out->clear();
  size_t i = 0, n = line.size();
  while (true) {
    while (i < n && std::isspace(static_cast<unsigned char>(line[i]))) i++;
    if (i >= n) return true;
    bool inq = false, insq = false, done = false;
    std::string cur;
    while (!done) {
      if (inq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && HexDigit(line[i + 2]) >= 0 && HexDigit(line[i + 3]) >= 0) {
          cur.push_back(static_cast<char>(HexDigit(line[i + 2]) * 16 + HexDigit(line[i + 3])));
          i += 3;
        } else if (line[i] == '\\' && i + 1 < n) {
          i++;
          char c = line[i];
          switch (c) {
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'b': c = '\b'; break;
            case 'a': c = '\a'; break;
            default: break;
          }
          cur.push_back(c);
        } else if (line[i] == '"') {
          if (i + 1 < n && !std::isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          done = true;
        } else {
          cur.push_back(line[i]);
        }
      } else if (insq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
          i++;
          cur.push_back('\'');
        } else if (line[i] == '\'') {
          if (i + 1 < n && !std::isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          done = true;
        } else {
          cur.push_back(line[i]);
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        char c = line[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0') {
          done = true;
        } else if (c == '"') {
          inq = true;
        } else if (c == '\'') {
          insq = true;
        } else {
          cur.push_back(c);
        }
      }
      if (i < n) i++;
    }
    out->push_back(std::move(cur));
  }
}

void AppendRepr(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '"': out->append("\\\""); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\a': out->append("\\a"); break;
      case '\b': out->append("\\b"); break;
      default:
        if (c >= 32 && c < 127) {
          out->push_back(static_cast<char>(c));
        } else {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\x%02x", c);
          out->append(buf);
        }
    }
  }
  out->push_back('"');
}

}  // namespace kvrocks
