// The Lua debugger of SCRIPT DEBUG (Redis' LDB, `redis-cli --ldb`): a session
// stops a script at its lines, talks to the client over the client's own
// socket, and shows what the script does, with Redis 7.0's commands, texts and
// protocol (each answer is an array of status lines; the client sends its
// debugger commands as RESP arrays).
//
// A session is used by one thread: the one running the script. While it
// lasts the socket is in blocking mode and read and written directly, outside
// the server's event loop, as Redis does. Everything about which commands run
// and what happens to their writes belongs to the caller (cmd_script.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct lua_State;
struct lua_Debug;

namespace kvrocks::scripting {

class LuaDebugger {
 public:
  // A session on socket fd for a script whose source is `source` (EVAL's
  // body, whose lines the debugger lists). The socket is put in blocking mode
  // with a 5 s send timeout until the session ends. busy_ms: the script time
  // after which a script that runs without stopping is stopped anyway
  // (busy-reply-threshold, or 5000 when that is 0).
  LuaDebugger(int fd, std::string_view source, int64_t busy_ms);
  ~LuaDebugger();
  LuaDebugger(const LuaDebugger&) = delete;
  LuaDebugger& operator=(const LuaDebugger&) = delete;

  // The session of the script running on this thread, or null.
  static LuaDebugger* Current();

  // Around the script's run (LuaEngine::Eval): installs the line hook on L
  // and makes this session the thread's current one; Leave undoes both.
  void Enter(lua_State* L);
  void Leave(lua_State* L);
  // Ends the session: "<endsession>" and what is still logged, sent to the
  // client (the script's reply follows it).
  void End();

  // Whether redis.call logs its command and reply now (Redis' ldbIsEnabled:
  // after a step, not after continue).
  bool Logging() const { return step_; }
  void LogCommand(const std::vector<std::string>& args);
  void LogReply(std::string_view resp);
  // An error the script gets as a table (Redis' luaPushError), when Logging().
  void LogError(std::string_view msg);
  // redis.debug(...): logs its arguments, shown at the next stop.
  void Debug(lua_State* L);
  // redis.breakpoint(): stops at the next line.
  void BreakAtNextLine() { lua_break_ = true; }

 private:
  static void Hook(lua_State* L, lua_Debug* ar);
  // The hook's work; an error message to raise in the script, or null.
  const char* OnHook(lua_State* L, lua_Debug* ar);
  // Serves debugger commands until one resumes the script. Returns the error
  // to raise in the script (abort, bad protocol), or null; *gone is set when
  // the client went away.
  const char* Repl(lua_State* L, bool* gone);
  // Parses one command from cbuf_ into *argv: 1 parsed, 0 need more, -1 protocol error.
  int ParseCommand(std::vector<std::string>* argv);

  void Log(std::string line) { logs_.push_back(std::move(line)); }
  void LogWithMaxLen(std::string line);
  void SendLogs();
  void LogSourceLine(int line);
  void List(int around, int context);
  void LogValue(lua_State* L, std::string prefix);
  void Print(lua_State* L, const std::string& name);
  void PrintAll(lua_State* L);
  void Break(const std::vector<std::string>& argv);
  void Eval(lua_State* L, const std::vector<std::string>& argv);
  void Redis(lua_State* L, const std::vector<std::string>& argv);
  void Trace(lua_State* L);
  void MaxLen(const std::vector<std::string>& argv);
  void Help();
  bool IsBreakpoint(int line) const;

  int fd_;
  int saved_flags_;
  int64_t busy_ms_;
  uint64_t start_ms_;
  std::vector<std::string> src_;
  std::vector<std::string> logs_;
  std::string cbuf_;
  bool step_ = true;
  bool lua_break_ = false;
  int current_line_ = -1;
  static constexpr int kMaxBreakpoints = 64;
  int32_t bp_[kMaxBreakpoints] = {};
  int bp_count_ = 0;
  int maxlen_ = 256;
  bool maxlen_hint_sent_ = false;
  LuaDebugger* previous_ = nullptr;
};

}  // namespace kvrocks::scripting
