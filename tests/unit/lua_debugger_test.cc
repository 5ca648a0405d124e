// The Lua debugger's reading of the client's bytes: what a debugging client
// sends (complete, split, malformed or endless) ends in a step, a Redis
// protocol error or the end of input, never a crash or a hang.
#include "scripting/lua_debugger.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "common/sha1.h"
#include "scripting/lua_engine.h"

namespace kvrocks::scripting {
namespace {

class OkHost : public ScriptHost {
 public:
  CallResult Call(const std::vector<std::string>&, int, std::string* out) override {
    out->append("+OK\r\n");
    return CallResult::kRan;
  }
  int AclCheck(const std::vector<std::string>&) override { return 1; }
};

const std::string kScript = "local t = {1, 'a', {b = true}}\nredis.call('set', 'k', 'v')\nredis.debug(t)\nreturn #t\n";

struct Session {
  std::string reply;   // the script's
  std::string output;  // what the debugger sent
};

// Reads one array of status lines (the debugger's every answer) from fd onto *out.
void ReadAnswer(int fd, std::string* out) {
  std::string got;
  char c;
  auto line = [&] {
    std::string l;
    while (read(fd, &c, 1) == 1) {
      l.push_back(c);
      if (l.size() >= 2 && l.compare(l.size() - 2, 2, "\r\n") == 0) break;
    }
    got += l;
    return l;
  };
  std::string head = line();
  if (head.empty() || head[0] != '*') return;
  for (int n = std::atoi(head.c_str() + 1); n > 0; n--) line();
  out->append(got);
}

// Runs kScript in a session whose client reads the first stop, then sends each
// message (in pieces of `chunk` bytes) and reads its answer, then closes its
// side. The last message gets no answer read when `answered_last` is false (a
// command cut short, or bytes the debugger cannot take).
Session RunSession(const std::vector<std::string>& messages, size_t chunk = 1 << 20, bool answered_last = true) {
  signal(SIGPIPE, SIG_IGN);
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::string output;
  std::thread client([&] {
    ReadAnswer(sv[1], &output);
    for (size_t i = 0; i < messages.size(); i++) {
      const std::string& m = messages[i];
      for (size_t off = 0; off < m.size(); off += chunk) {
        std::string piece = m.substr(off, chunk);
        if (write(sv[1], piece.data(), piece.size()) < 0) break;
      }
      if (i + 1 < messages.size() || answered_last) ReadAnswer(sv[1], &output);
    }
    shutdown(sv[1], SHUT_WR);
    char buf[4096];
    ssize_t n;
    while ((n = read(sv[1], buf, sizeof(buf))) > 0) output.append(buf, static_cast<size_t>(n));
  });
  Session s;
  {
    OkHost host;
    LuaDebugger debugger(sv[0], kScript, 5000);
    std::string sha = Sha1Hex(kScript);
    EvalRequest req;
    req.sha = &sha;
    req.body = &kScript;
    req.host = &host;
    req.debugger = &debugger;
    LuaEngine::ForThisThread().Eval(req, &s.reply);
    debugger.End();
  }
  close(sv[0]);
  client.join();
  close(sv[1]);
  s.output = output;
  return s;
}

std::string Cmd(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

TEST(LuaDebugger, StepsThroughAScript) {
  Session s = RunSession({Cmd({"s"}), Cmd({"p", "t"}), Cmd({"c"})});
  EXPECT_EQ(s.reply, ":3\r\n");
  EXPECT_EQ(s.output,
            "*2\r\n+* Stopped at 1, stop reason = step over\r\n+-> 1   local t = {1, 'a', {b = true}}\r\n"
            "*2\r\n+* Stopped at 2, stop reason = step over\r\n+-> 2   redis.call('set', 'k', 'v')\r\n"
            "*1\r\n+<value> {1; \"a\"; {[\"b\"]=true}}\r\n"
            "*2\r\n+<debug> line 3: {1; \"a\"; {[\"b\"]=true}}\r\n+<endsession>\r\n");
}

TEST(LuaDebugger, ACommandSplitAcrossReadsIsWhole) {
  std::vector<std::string> in = {Cmd({"s"}), Cmd({"print", "t"}), Cmd({"c"})};
  EXPECT_EQ(RunSession(in, 3).output, RunSession(in).output);
}

TEST(LuaDebugger, ClosedInputLetsTheScriptFinish) {
  EXPECT_EQ(RunSession({}).reply, ":3\r\n");
  EXPECT_EQ(RunSession({"*2\r\n$1\r\np\r\n$5\r\nabc"}, 1 << 20, false).reply, ":3\r\n");  // cut short, then closed
}

TEST(LuaDebugger, MalformedInputIsAProtocolError) {
  for (const std::string& bad : {std::string("step\r\n"), std::string("*0\r\n"), std::string("*-1\r\n"),
                                 std::string("*1025\r\n"), std::string("*1\r\n:1\r\n"),
                                 std::string("*1\r\n$0\r\n\r\n"), std::string("*1\r\n$-5\r\n"),
                                 std::string("*1\r\n$2000\r\n"), std::string("*1\r\n$1\r\nsXX")}) {
    Session s = RunSession({bad});
    EXPECT_EQ(s.reply.rfind("-ERR protocol error script: ", 0), 0u) << bad << " -> " << s.reply;
    EXPECT_NE(s.output.find("+<endsession>\r\n"), std::string::npos);
  }
}

TEST(LuaDebugger, EndlessInputIsCutOff) {
  // A count line or a length line that never ends: the debugger gives up past 1 MB.
  for (const std::string& endless : {"*1\r\n$" + std::string(2 << 20, '1'), "*" + std::string(2 << 20, '1')}) {
    Session s = RunSession({endless});
    EXPECT_EQ(s.reply.rfind("-ERR max client buffer reached script: ", 0), 0u) << s.reply;
  }
}

TEST(LuaDebugger, EveryCommandAnswers) {
  std::vector<std::string> in;
  for (const auto& c : std::vector<std::vector<std::string>>{
           {"h"}, {"l"}, {"l", "-5", "x"}, {"w"}, {"p"}, {"p", "nosuch"}, {"p", "KEYS"}, {"b"}, {"b", "2", "99", "x"},
           {"b", "-2"}, {"t"}, {"m", "-3"}, {"m"}, {"e", "1 +"}, {"e", "{} .. 1"}, {"r"}, {"r", "get", "k"},
           {"zzz"}, {"s"}, {"a"}}) {
    in.push_back(Cmd(c));
  }
  Session s = RunSession(in);
  EXPECT_EQ(s.reply.rfind("-ERR script aborted for user request script: ", 0), 0u) << s.reply;
  EXPECT_NE(s.output.find("+<reply> \"+OK\"\r\n"), std::string::npos);
  EXPECT_NE(s.output.find("+<value> replies are truncated at 60 bytes.\r\n"), std::string::npos);
  EXPECT_NE(s.output.find("+<endsession>\r\n"), std::string::npos);
}

}  // namespace
}  // namespace kvrocks::scripting
