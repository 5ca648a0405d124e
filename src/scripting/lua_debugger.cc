#include "scripting/lua_debugger.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <lua.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/string_util.h"
#include "common/time_util.h"
#include "scripting/lua_convert.h"

namespace kvrocks::scripting {

namespace {

thread_local LuaDebugger* current_session = nullptr;

// Redis nests table dumps this deep (LUA_MINSTACK / 2).
constexpr int kMaxValueDepth = LUA_MINSTACK / 2;

// C's atoi, as Redis reads the debugger's numbers.
int Atoi(std::string_view s) { return std::atoi(std::string(s).c_str()); }

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return std::string(buf, static_cast<size_t>(std::max(0, std::min(n, static_cast<int>(sizeof(buf)) - 1))));
}

// The Lua value at idx (a negative index: tables are walked with lua_next at
// idx - 1) as Redis' ldbCatStackValueRec shows it.
void CatValue(std::string* s, lua_State* L, int idx, int level) {
  int t = lua_type(L, idx);
  if (level++ == kMaxValueDepth) {
    s->append("<max recursion level reached! Nested table?>");
    return;
  }
  switch (t) {
    case LUA_TSTRING: {
      size_t len;
      const char* p = lua_tolstring(L, idx, &len);
      AppendRepr(s, std::string_view(p, len));
      break;
    }
    case LUA_TBOOLEAN:
      s->append(lua_toboolean(L, idx) ? "true" : "false");
      break;
    case LUA_TNUMBER:
      s->append(Format("%g", static_cast<double>(lua_tonumber(L, idx))));
      break;
    case LUA_TNIL:
      s->append("nil");
      break;
    case LUA_TTABLE: {
      // Both shapes at once; which one applies is known at the end.
      int expected_index = 1;
      bool is_array = true;
      std::string as_array, as_map;
      // Key and value of each level on the stack: make room (a hook gets only LUA_MINSTACK).
      if (!lua_checkstack(L, 3)) {
        s->append("<max recursion level reached! Nested table?>");
        break;
      }
      lua_pushnil(L);
      while (lua_next(L, idx - 1)) {
        if (is_array && (lua_type(L, -2) != LUA_TNUMBER || lua_tonumber(L, -2) != expected_index)) is_array = false;
        CatValue(&as_array, L, -1, level);
        as_array.append("; ");
        as_map.append("[");
        CatValue(&as_map, L, -2, level);
        as_map.append("]=");
        CatValue(&as_map, L, -1, level);
        as_map.append("; ");
        lua_pop(L, 1);
        expected_index++;
      }
      if (!as_array.empty()) as_array.resize(as_array.size() - 2);
      if (!as_map.empty()) as_map.resize(as_map.size() - 2);
      s->append("{").append(is_array ? as_array : as_map).append("}");
      break;
    }
    case LUA_TFUNCTION:
    case LUA_TUSERDATA:
    case LUA_TTHREAD:
    case LUA_TLIGHTUSERDATA: {
      const char* name = t == LUA_TFUNCTION   ? "function"
                         : t == LUA_TUSERDATA ? "userdata"
                         : t == LUA_TTHREAD   ? "thread"
                                              : "light-userdata";
      s->append(Format("\"%s@%p\"", name, lua_topointer(L, idx)));
      break;
    }
    default:
      s->append("\"<unknown-lua-type>\"");
      break;
  }
}

// Appends the RESP reply at r[*pos] as Redis' ldbRedisProtocolToHuman writes
// it, and advances *pos past it (an unknown type is left where it is, as there).
void Human(std::string* o, std::string_view r, size_t* pos) {
  if (*pos >= r.size()) return;
  size_t eol = r.find('\r', *pos);
  if (eol == std::string_view::npos) eol = r.size();
  std::string_view line = r.substr(*pos + 1, eol - *pos - 1);
  const char type = r[*pos];
  auto count = [&] { return std::atoll(std::string(line).c_str()); };
  auto next = [&] { return std::min(r.size(), eol + 2); };
  switch (type) {
    case ':':
      o->append(line);
      *pos = next();
      return;
    case '$': {
      long long len = count();
      if (len == -1) {
        o->append("NULL");
        *pos = next();
        return;
      }
      size_t start = next();
      size_t n = std::min(static_cast<size_t>(std::max(0LL, len)), r.size() - start);
      AppendRepr(o, r.substr(start, n));
      *pos = std::min(r.size(), start + n + 2);
      return;
    }
    case '+':
    case '-':
      AppendRepr(o, r.substr(*pos, eol - *pos));
      *pos = next();
      return;
    case '*':
    case '~':
    case '%': {
      long long n = count();
      *pos = next();
      if (type == '*' && n == -1) {
        o->append("NULL");
        return;
      }
      o->append(type == '*' ? "[" : type == '~' ? "~(" : "{");
      for (long long j = 0; j < n; j++) {
        Human(o, r, pos);
        if (type == '%') {
          o->append(" => ");
          Human(o, r, pos);
        }
        if (j != n - 1) o->append(",");
      }
      o->append(type == '*' ? "]" : type == '~' ? ")" : "}");
      return;
    }
    case '_':
      o->append("(null)");
      *pos = next();
      return;
    case '#':
      o->append(line == "t" ? "#true" : "#false");
      *pos = next();
      return;
    case ',':
      o->append("(double) ").append(line);
      *pos = next();
      return;
    default:
      return;
  }
}

}  // namespace

LuaDebugger::LuaDebugger(int fd, std::string_view source, int64_t busy_ms)
    : fd_(fd), busy_ms_(busy_ms), start_ms_(NowMs()) {
  saved_flags_ = fcntl(fd_, F_GETFL);
  if (saved_flags_ >= 0) fcntl(fd_, F_SETFL, saved_flags_ & ~O_NONBLOCK);
  timeval tv{5, 0};
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  while (!source.empty() && (source.back() == '\n' || source.back() == '\r')) source.remove_suffix(1);
  while (!source.empty()) {
    size_t nl = source.find('\n');
    src_.emplace_back(source.substr(0, nl));
    if (nl == std::string_view::npos) break;
    source.remove_prefix(nl + 1);
  }
}

LuaDebugger::~LuaDebugger() {
  if (saved_flags_ >= 0) fcntl(fd_, F_SETFL, saved_flags_);
  timeval tv{0, 0};
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

LuaDebugger* LuaDebugger::Current() { return current_session; }

void LuaDebugger::Enter(lua_State* L) {
  previous_ = current_session;
  current_session = this;
  start_ms_ = NowMs();
  lua_sethook(L, &LuaDebugger::Hook, LUA_MASKLINE | LUA_MASKCOUNT, 100000);
}

void LuaDebugger::Leave(lua_State* L) {
  lua_sethook(L, nullptr, 0, 0);
  current_session = previous_;
}

void LuaDebugger::End() {
  Log("<endsession>");
  SendLogs();
}

void LuaDebugger::Hook(lua_State* L, lua_Debug* ar) {
  LuaDebugger* d = current_session;
  if (d == nullptr) return;
  const char* err = d->OnHook(L, ar);
  if (err == nullptr) return;
  PushErrorTable(L, err);
  lua_error(L);  // no C++ object of this frame is alive: it unwinds by longjmp
}

const char* LuaDebugger::OnHook(lua_State* L, lua_Debug* ar) {
  lua_getstack(L, 0, ar);
  lua_getinfo(L, "Sl", ar);
  // Lines of other chunks (kvrocks' Lua wrappers around the redis library) are
  // not the script's: Redis, whose library is all C, never sees any.
  if (strstr(ar->short_src, "user_script") == nullptr) return nullptr;
  current_line_ = ar->currentline;
  const bool bp = IsBreakpoint(current_line_) || lua_break_;
  bool timeout = false;
  if (ar->event == LUA_HOOKCOUNT && !step_ && !bp) {
    if (static_cast<int64_t>(NowMs() - start_ms_) < busy_ms_) return nullptr;
    timeout = true;
    step_ = true;
  }
  if (!step_ && !bp) return nullptr;
  const char* reason = bp ? (lua_break_ ? "redis.breakpoint() called" : "break point")
                          : (timeout ? "timeout reached, infinite loop?" : "step over");
  step_ = false;
  lua_break_ = false;
  Log(Format("* Stopped at %d, stop reason = %s", current_line_, reason));
  LogSourceLine(current_line_);
  SendLogs();
  bool gone = false;
  const char* err = Repl(L, &gone);
  if (err != nullptr) return err;
  // A script stuck in a loop whose debugging client left would hold the server for good.
  if (gone && timeout) return "timeout during Lua debugging with client closing connection";
  start_ms_ = NowMs();
  return nullptr;
}

int LuaDebugger::ParseCommand(std::vector<std::string>* argv) {
  // As forgiving as Redis' ldbReplParseCommand: an array of bulk strings of 1
  // to 1024 bytes each, found from the first '*' on.
  argv->clear();
  if (cbuf_.empty()) return 0;
  const std::string& b = cbuf_;
  size_t p = b.find('*');
  if (p == std::string::npos) return -1;
  size_t e = b.find("\r\n", p);
  if (e == std::string::npos) return 0;
  int argc = Atoi(std::string_view(b).substr(p + 1, e - p - 1));
  if (argc <= 0 || argc > 1024) return -1;
  p = e + 2;
  while (static_cast<int>(argv->size()) < argc) {
    if (p >= b.size()) return 0;
    if (b[p] != '$') return -1;
    e = b.find("\r\n", p);
    if (e == std::string::npos) return 0;
    int len = Atoi(std::string_view(b).substr(p + 1, e - p - 1));
    if (len <= 0 || len > 1024) return -1;
    p = e + 2;
    if (p + static_cast<size_t>(len) + 2 > b.size()) return 0;
    argv->push_back(b.substr(p, static_cast<size_t>(len)));
    p += static_cast<size_t>(len);
    if (b[p] != '\r' || b[p + 1] != '\n') return -1;
    p += 2;
  }
  return 1;
}

const char* LuaDebugger::Repl(lua_State* L, bool* gone) {
  std::vector<std::string> argv;
  while (true) {
    int parsed;
    while ((parsed = ParseCommand(&argv)) == 0) {
      char buf[1024];
      ssize_t n;
      do {
        n = read(fd_, buf, sizeof(buf));
      } while (n < 0 && errno == EINTR);
      if (n <= 0) {
        // The client is gone: the script runs on without stopping.
        step_ = false;
        bp_count_ = 0;
        *gone = true;
        return nullptr;
      }
      cbuf_.append(buf, static_cast<size_t>(n));
      if (cbuf_.size() > (1 << 20)) {
        cbuf_.clear();
        return "max client buffer reached";
      }
    }
    if (parsed < 0) return "protocol error";
    cbuf_.clear();  // as Redis: what came after the command is dropped
    const std::string& cmd = argv[0];
    auto is = [&](const char* a, const char* b) { return TokenEquals(cmd, a) || TokenEquals(cmd, b); };
    if (is("h", "help")) {
      Help();
    } else if (is("s", "step") || is("n", "next")) {
      step_ = true;
      return nullptr;
    } else if (is("c", "continue")) {
      return nullptr;
    } else if (is("t", "trace")) {
      Trace(L);
    } else if (is("m", "maxlen")) {
      MaxLen(argv);
    } else if (is("b", "break")) {
      Break(argv);
    } else if (is("e", "eval")) {
      Eval(L, argv);
    } else if (is("a", "abort")) {
      return "script aborted for user request";
    } else if (argv.size() > 1 && is("r", "redis")) {
      Redis(L, argv);
    } else if (is("p", "print")) {
      if (argv.size() == 2) {
        Print(L, argv[1]);
      } else {
        PrintAll(L);
      }
    } else if (is("l", "list")) {
      int around = current_line_, context = 5;
      if (argv.size() > 1) {
        int num = Atoi(argv[1]);
        if (num > 0) around = num;
      }
      if (argv.size() > 2) context = Atoi(argv[2]);
      List(around, context);
    } else if (is("w", "whole")) {
      List(1, 1000000);
    } else {
      Log("<error> Unknown Redis Lua debugger command or wrong number of arguments.");
    }
    SendLogs();
  }
}

void LuaDebugger::LogWithMaxLen(std::string line) {
  bool trimmed = false;
  if (maxlen_ != 0 && line.size() > static_cast<size_t>(maxlen_)) {
    line.resize(static_cast<size_t>(maxlen_));
    line.append(" ...");
    trimmed = true;
  }
  Log(std::move(line));
  if (trimmed && !maxlen_hint_sent_) {
    maxlen_hint_sent_ = true;
    Log("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
  }
}

void LuaDebugger::SendLogs() {
  std::string proto = "*" + std::to_string(logs_.size()) + "\r\n";
  for (std::string& line : logs_) {
    for (char& c : line) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    proto.append("+").append(line).append("\r\n");
  }
  logs_.clear();
  // Errors are left to the next read, which ends the session on a dead socket.
  size_t off = 0;
  while (off < proto.size()) {
    ssize_t n = write(fd_, proto.data() + off, proto.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
}

void LuaDebugger::LogSourceLine(int line) {
  const bool bp = IsBreakpoint(line), here = current_line_ == line;
  const char* prefix = here && bp ? "->#" : here ? "-> " : bp ? "  #" : "   ";
  const char* text = line >= 1 && line <= static_cast<int>(src_.size()) ? src_[static_cast<size_t>(line - 1)].c_str()
                                                                        : "<out of range source code line>";
  Log(Format("%s%-3d ", prefix, line) + text);
}

void LuaDebugger::List(int around, int context) {
  for (int j = 1; j <= static_cast<int>(src_.size()); j++) {
    if (around != 0 && std::abs(around - j) > context) continue;
    LogSourceLine(j);
  }
}

void LuaDebugger::LogValue(lua_State* L, std::string prefix) {
  CatValue(&prefix, L, -1, 0);
  LogWithMaxLen(std::move(prefix));
}

void LuaDebugger::Print(lua_State* L, const std::string& name) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar) != 0; level++) {
    const char* local;
    for (int i = 1; (local = lua_getlocal(L, &ar, i)) != nullptr; i++) {
      if (name == local) {
        LogValue(L, "<value> ");
        lua_pop(L, 1);
        return;
      }
      lua_pop(L, 1);
    }
  }
  if (name == "ARGV" || name == "KEYS") {
    lua_getglobal(L, name.c_str());
    LogValue(L, "<value> ");
    lua_pop(L, 1);
  } else {
    Log("No such variable.");
  }
}

void LuaDebugger::PrintAll(lua_State* L) {
  lua_Debug ar;
  int vars = 0;
  if (lua_getstack(L, 0, &ar) != 0) {
    const char* local;
    for (int i = 1; (local = lua_getlocal(L, &ar, i)) != nullptr; i++) {
      if (strstr(local, "(*temporary)") == nullptr) {
        LogValue(L, Format("<value> %s = ", local));
        vars++;
      }
      lua_pop(L, 1);
    }
  }
  if (vars == 0) Log("No local variables in the current context.");
}

bool LuaDebugger::IsBreakpoint(int line) const {
  for (int j = 0; j < bp_count_; j++) {
    if (bp_[j] == line) return true;
  }
  return false;
}

void LuaDebugger::Break(const std::vector<std::string>& argv) {
  if (argv.size() == 1) {
    if (bp_count_ == 0) {
      Log("No breakpoints set. Use 'b <line>' to add one.");
      return;
    }
    Log(Format("%d breakpoints set:", bp_count_));
    for (int j = 0; j < bp_count_; j++) LogSourceLine(bp_[j]);
    return;
  }
  for (size_t j = 1; j < argv.size(); j++) {
    int64_t line;
    // Redis parses a long and hands it on as an int.
    if (!ParseInt64(argv[j], &line)) {
      Log("Invalid argument:'" + argv[j] + "'");
    } else if (line == 0) {
      bp_count_ = 0;
      Log("All breakpoints removed.");
    } else if (line > 0) {
      if (bp_count_ == kMaxBreakpoints) {
        Log("Too many breakpoints set.");
      } else if (const int l = static_cast<int>(line); l > 0 && l <= static_cast<int>(src_.size()) && !IsBreakpoint(l)) {
        bp_[bp_count_++] = l;
        List(l, 1);
      } else {
        Log("Wrong line number.");  // also for a line that already has one, as in Redis
      }
    } else {
      const int l = static_cast<int>(-line);
      int found = -1;
      for (int k = 0; k < bp_count_ && found < 0; k++) {
        if (bp_[k] == l) found = k;
      }
      if (found < 0) {
        Log("No breakpoint in the specified line.");
      } else {
        // Redis' ldbDelBreakpoint moves bp_count - j *bytes*, not entries; the
        // list a later `break` shows follows from that, so it is kept.
        bp_count_--;
        memmove(bp_ + found, bp_ + found + 1, static_cast<size_t>(bp_count_ - found));
        Log("Breakpoint removed.");
      }
    }
  }
}

void LuaDebugger::Eval(lua_State* L, const std::vector<std::string>& argv) {
  std::string code;
  for (size_t j = 1; j < argv.size(); j++) {
    if (j > 1) code.push_back(' ');
    code.append(argv[j]);
  }
  const std::string expr = "return " + code;
  // An expression first, then as a statement.
  if (luaL_loadbuffer(L, expr.data(), expr.size(), "@ldb_eval") != 0) {
    lua_pop(L, 1);
    if (luaL_loadbuffer(L, code.data(), code.size(), "@ldb_eval") != 0) {
      Log(std::string("<error> ") + lua_tostring(L, -1));
      lua_pop(L, 1);
      return;
    }
  }
  if (lua_pcall(L, 0, 1, 0) != 0) {
    std::string err = "<error> ";
    if (lua_istable(L, -1)) {  // a redis.call error: Redis would print a NULL string here
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) err.append(lua_tostring(L, -1));
      lua_pop(L, 1);
    } else if (lua_isstring(L, -1)) {
      err.append(lua_tostring(L, -1));
    }
    Log(std::move(err));
    lua_pop(L, 1);
    return;
  }
  LogValue(L, "<retval> ");
  lua_pop(L, 1);
}

void LuaDebugger::Redis(lua_State* L, const std::vector<std::string>& argv) {
  if (!lua_checkstack(L, static_cast<int>(argv.size()) + 1)) {
    LogReply("max lua stack reached");
    return;
  }
  // redis.call itself, made to log the command and its reply.
  lua_getglobal(L, "redis");
  lua_pushstring(L, "call");
  lua_gettable(L, -2);
  for (size_t j = 1; j < argv.size(); j++) lua_pushlstring(L, argv[j].data(), argv[j].size());
  step_ = true;
  lua_pcall(L, static_cast<int>(argv.size()) - 1, 1, 0);
  step_ = false;
  lua_pop(L, 2);
}

void LuaDebugger::Trace(lua_State* L) {
  lua_Debug ar;
  int level = 0;
  for (; lua_getstack(L, level, &ar) != 0; level++) {
    lua_getinfo(L, "Snl", &ar);
    if (strstr(ar.short_src, "user_script") == nullptr) continue;
    Log(Format("%s %s:", level == 0 ? "In" : "From", ar.name != nullptr ? ar.name : "top level"));
    LogSourceLine(ar.currentline);
  }
  if (level == 0) Log("<error> Can't retrieve Lua stack.");
}

void LuaDebugger::MaxLen(const std::vector<std::string>& argv) {
  if (argv.size() == 2) {
    int len = Atoi(argv[1]);
    maxlen_hint_sent_ = true;  // the user knows the command
    if (len != 0 && len <= 60) len = 60;
    maxlen_ = len;
  }
  if (maxlen_ != 0) {
    Log(Format("<value> replies are truncated at %d bytes.", maxlen_));
  } else {
    Log("<value> replies are unlimited.");
  }
}

void LuaDebugger::Help() {
  static const char* const kLines[] = {
      "Redis Lua debugger help:",
      "[h]elp               Show this help.",
      "[s]tep               Run current line and stop again.",
      "[n]ext               Alias for step.",
      "[c]ontinue           Run till next breakpoint.",
      "[l]ist               List source code around current line.",
      "[l]ist [line]        List source code around [line].",
      "                     line = 0 means: current position.",
      "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
      "                     to show before/after [line].",
      "[w]hole              List all source code. Alias for 'list 1 1000000'.",
      "[p]rint              Show all the local variables.",
      "[p]rint <var>        Show the value of the specified variable.",
      "                     Can also show global vars KEYS and ARGV.",
      "[b]reak              Show all breakpoints.",
      "[b]reak <line>       Add a breakpoint to the specified line.",
      "[b]reak -<line>      Remove breakpoint from the specified line.",
      "[b]reak 0            Remove all breakpoints.",
      "[t]race              Show a backtrace.",
      "[e]val <code>        Execute some Lua code (in a different callframe).",
      "[r]edis <cmd>        Execute a Redis command.",
      "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
      "                     Specifying zero as <len> means unlimited.",
      "[a]bort              Stop the execution of the script. In sync",
      "                     mode dataset changes will be retained.",
      "",
      "Debugger functions you can call from Lua scripts:",
      "redis.debug()        Produce logs in the debugger console.",
      "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
      "                     next line of code.",
  };
  for (const char* line : kLines) Log(line);
}

void LuaDebugger::LogCommand(const std::vector<std::string>& args) {
  std::string line = "<redis>";
  for (size_t j = 0; j < args.size(); j++) {
    if (j == 10) {
      line.append(Format(" ... (%d more)", static_cast<int>(args.size() - j - 1)));  // Redis' count
      break;
    }
    line.append(" ").append(args[j]);
  }
  Log(std::move(line));
}

void LuaDebugger::LogReply(std::string_view resp) {
  std::string line = "<reply> ";
  size_t pos = 0;
  Human(&line, resp, &pos);
  LogWithMaxLen(std::move(line));
}

void LuaDebugger::LogError(std::string_view msg) { Log("<error> " + std::string(msg)); }

void LuaDebugger::Debug(lua_State* L) {
  std::string line = Format("<debug> line %d: ", current_line_);
  int argc = lua_gettop(L);
  while (argc--) {
    CatValue(&line, L, -1 - argc, 0);
    if (argc != 0) line.append(", ");
  }
  Log(std::move(line));
}

}  // namespace kvrocks::scripting
