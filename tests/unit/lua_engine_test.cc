// The Lua engine without a server: a fake host answers redis.call.
#include <gtest/gtest.h>

#include "common/sha1.h"
#include "scripting/lua_engine.h"

namespace kvrocks::scripting {
namespace {

// Answers every call with a fixed reply and records the calls.
class FakeHost : public ScriptHost {
 public:
  std::string reply = "+OK\r\n";
  std::vector<std::vector<std::string>> calls;
  bool stop = false;
  CallResult Call(const std::vector<std::string>& args, int, std::string* out) override {
    calls.push_back(args);
    if (stop) return CallResult::kAbort;
    out->append(reply);
    return CallResult::kRan;
  }
  // "nosuch" is no command; the user may not run FLUSHALL.
  int AclCheck(const std::vector<std::string>& args) override {
    if (args[0] == "nosuch") return -1;
    return args[0] == "flushall" ? 0 : 1;
  }
};

std::string RunScript(const std::string& body, FakeHost* host, int resp = 2, EvalOutcome* outcome = nullptr,
                std::vector<std::string> keys = {}, std::vector<std::string> argv = {}) {
  std::string sha = Sha1Hex(body), out;
  EvalRequest req;
  req.sha = &sha;
  req.body = &body;
  req.keys = std::move(keys);
  req.argv = std::move(argv);
  req.host = host;
  req.client_resp = resp;
  EvalOutcome o = LuaEngine::ForThisThread().Eval(req, &out);
  if (outcome != nullptr) *outcome = o;
  return out;
}

TEST(LuaEngine, ConvertsReturnValues) {
  FakeHost h;
  EXPECT_EQ(RunScript("return 1", &h), ":1\r\n");
  EXPECT_EQ(RunScript("return 3.99", &h), ":3\r\n");
  EXPECT_EQ(RunScript("return 'x'", &h), "$1\r\nx\r\n");
  EXPECT_EQ(RunScript("return {1, 'a', nil, 2}", &h), "*2\r\n:1\r\n$1\r\na\r\n");
  EXPECT_EQ(RunScript("return false", &h), "$-1\r\n");
  EXPECT_EQ(RunScript("return false", &h, 3), "_\r\n");
  EXPECT_EQ(RunScript("return {ok='fine'}", &h), "+fine\r\n");
  EXPECT_EQ(RunScript("return {err='BAD thing'}", &h), "-BAD thing\r\n");
  EXPECT_EQ(RunScript("return {double=1.5}", &h, 3), ",1.5\r\n");
  EXPECT_EQ(RunScript("return {map={a=1}}", &h, 3), "%1\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(RunScript("return {KEYS[1], ARGV[1]}", &h, 2, nullptr, {"k"}, {"v"}), "*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
}

TEST(LuaEngine, AclCheckCmd) {
  FakeHost h;
  EXPECT_EQ(RunScript("return {redis.acl_check_cmd('get', 'k') and 1 or 0, redis.acl_check_cmd('flushall') and 1 or 0}",
                      &h),
            "*2\r\n:1\r\n:0\r\n");
  EXPECT_EQ(RunScript("return redis.acl_check_cmd('nosuch')", &h).substr(0, 52),
            "-ERR Invalid command passed to redis.acl_check_cmd()");
  EXPECT_EQ(RunScript("return redis.acl_check_cmd()", &h).substr(0, 65),
            "-ERR Please specify at least one argument for this redis lib call");
  EXPECT_TRUE(h.calls.empty());  // nothing ran
}

TEST(LuaEngine, ConvertsCallReplies) {
  FakeHost h;
  h.reply = "*3\r\n:5\r\n$-1\r\n+st\r\n";
  EXPECT_EQ(RunScript("local r = redis.call('x', 1, 2.5) return {r[1], type(r[2]), r[3]['ok']}", &h),
            "*3\r\n:5\r\n$7\r\nboolean\r\n$2\r\nst\r\n");
  ASSERT_EQ(h.calls.size(), 1u);
  EXPECT_EQ(h.calls[0], (std::vector<std::string>{"x", "1", "2.5"}));
  h.reply = "-WRONGTYPE Operation against a key\r\n";
  EXPECT_EQ(RunScript("return redis.pcall('x')['err']", &h), "$33\r\nWRONGTYPE Operation against a key\r\n");
  std::string err = RunScript("return redis.call('x')", &h);
  EXPECT_EQ(err.rfind("-WRONGTYPE Operation against a key script: ", 0), 0u) << err;
  h.reply = "%1\r\n$1\r\nf\r\n,2.5\r\n";
  EXPECT_EQ(RunScript("redis.setresp(3) local r = redis.call('x') return r['map']['f']['double'] * 2", &h), ":5\r\n");
}

TEST(LuaEngine, ErrorsAndSandbox) {
  FakeHost h;
  EXPECT_EQ(RunScript("syntax error", &h).rfind("-ERR Error compiling script (new function): user_script:1:", 0), 0u);
  std::string e = RunScript("return undefined_global", &h);
  EXPECT_NE(e.find("Script attempted to access nonexistent global variable 'undefined_global'"), std::string::npos);
  EXPECT_NE(e.find("on @user_script:1."), std::string::npos);
  EXPECT_NE(RunScript("x = 1", &h).find("Attempt to modify a readonly table"), std::string::npos);
  EXPECT_NE(RunScript("return os", &h).find("nonexistent global variable 'os'"), std::string::npos);
}

TEST(LuaEngine, HostCanStopAScript) {
  FakeHost h;
  h.stop = true;
  EvalOutcome o;
  // pcall in the script cannot swallow the stop.
  std::string out = RunScript("pcall(redis.call, 'x') return 1", &h, 2, &o);
  EXPECT_EQ(o, EvalOutcome::kAborted);
  EXPECT_EQ(out, "");
  h.stop = false;
  EXPECT_EQ(RunScript("return 2", &h, 2, &o), ":2\r\n");
  EXPECT_EQ(o, EvalOutcome::kDone);
}

TEST(LuaLibs, StructAndCmsgpackRoundTrip) {
  FakeHost h;
  EXPECT_EQ(RunScript("return {struct.unpack('>i2 <I4 c2', struct.pack('>i2 <I4 c2', -3, 70000, 'ab'))}", &h),
            "*4\r\n:-3\r\n:70000\r\n$2\r\nab\r\n:9\r\n");
  EXPECT_EQ(RunScript("local t = cmsgpack.unpack(cmsgpack.pack({1, {a=-70000}, 'z'})) return {t[1], t[2].a, t[3]}", &h),
            "*3\r\n:1\r\n:-70000\r\n$1\r\nz\r\n");
  EXPECT_EQ(RunScript("return cmsgpack.pack(1.5)", &h), std::string("$5\r\n\xca\x3f\xc0\x00\x00\r\n", 11));
  EXPECT_EQ(RunScript("return bit.bxor(5, 3)", &h), ":6\r\n");
  EXPECT_EQ(RunScript("return cjson.encode({1, 2})", &h), "$5\r\n[1,2]\r\n");
}

TEST(ScriptCache, AddGetFlush) {
  ScriptCache& c = ScriptCache::Instance();
  std::string sha = Sha1Hex("return 'cached'");
  c.Add(sha, "return 'cached'");
  std::string body;
  EXPECT_TRUE(c.Get(sha, &body));
  EXPECT_EQ(body, "return 'cached'");
  uint64_t gen = c.generation();
  c.Flush();
  EXPECT_FALSE(c.Exists(sha));
  EXPECT_EQ(c.generation(), gen + 1);
}

}  // namespace
}  // namespace kvrocks::scripting
