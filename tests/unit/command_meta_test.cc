#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "commands/command.h"
#include "commands/redis_command_meta.h"
#include "common/string_util.h"

namespace kvrocks {
namespace {

// The leading fields of a recorded COMMAND INFO entry (RESP3).
struct RecordedInfo {
  std::string name;
  int64_t arity = 0, first = 0, last = 0, step = 0;
  std::set<std::string> flags;
};

RecordedInfo ParseInfo(std::string_view s) {
  RecordedInfo r;
  size_t pos = 0;
  auto line = [&] {
    size_t eol = s.find("\r\n", pos);
    std::string l(s.substr(pos, eol - pos));
    pos = eol + 2;
    return l;
  };
  int64_t n = std::stoll(line().substr(1));
  r.name = std::string(s.substr(pos, static_cast<size_t>(n)));
  pos += static_cast<size_t>(n) + 2;
  r.arity = std::stoll(line().substr(1));
  int64_t flags = std::stoll(line().substr(1));
  for (int64_t i = 0; i < flags; i++) r.flags.insert(line().substr(1));
  r.first = std::stoll(line().substr(1));
  r.last = std::stoll(line().substr(1));
  r.step = std::stoll(line().substr(1));
  return r;
}

TEST(CommandMeta, SortedForLookupAndFound) {
  for (size_t i = 1; i < kRedisCommandMetaCount; i++) {
    ASSERT_LT(std::string(kRedisCommandMeta[i - 1].name), std::string(kRedisCommandMeta[i].name));
  }
  ASSERT_NE(FindRedisCommandMeta("get"), nullptr);
  ASSERT_NE(FindRedisCommandMeta("config|get"), nullptr);
  EXPECT_EQ(FindRedisCommandMeta("no-such-command"), nullptr);
  EXPECT_EQ(ParseInfo(FindRedisCommandMeta("config|get")->info).arity, -3);
}

TEST(CommandMeta, Resp3ToResp2FlattensMapsAndSets) {
  std::string out;
  Resp3ToResp2("%1\r\n$1\r\nk\r\n~2\r\n+a\r\n:5\r\n*1\r\n$0\r\n\r\n", &out);
  EXPECT_EQ(out, "*2\r\n$1\r\nk\r\n*2\r\n+a\r\n:5\r\n*1\r\n$0\r\n\r\n");
}

// COMMAND INFO shows Redis' data for the commands kvrocks shares with it, so
// kvrocks' own table, which dispatch runs by, must say the same.
TEST(CommandMeta, KvrocksTableAgreesWithRedis) {
  // Flags whose meaning kvrocks' table shares with Redis (its skip_monitor and
  // skip_slowlog bits are its own mechanisms).
  const std::vector<std::string> names = CommandFlagNames(kRedisFlagBits);
  const std::set<std::string> modeled(names.begin(), names.end());
  for (const auto& [key, spec] : CommandTable::Instance().all()) {
    std::string name = ToLower(spec.name);
    const RedisCommandMeta* m = FindRedisCommandMeta(name);
    if (m == nullptr) continue;  // a command Redis 7.0 does not have
    RecordedInfo r = ParseInfo(m->info);
    EXPECT_EQ(spec.arity, r.arity) << name;
    for (const SubcommandSpec& s : spec.subcommands) {
      if (s.arity == 0) continue;
      const RedisCommandMeta* sm = FindRedisCommandMeta(s.name);
      ASSERT_NE(sm, nullptr) << s.name;
      RecordedInfo sr = ParseInfo(sm->info);
      EXPECT_EQ(s.arity, sr.arity) << s.name;
      std::set<std::string> ours, theirs;  // a subcommand runs with Redis' flags for it
      for (const auto& f : CommandFlagNames(s.own_flags ? s.flags : spec.flags)) {
        if (modeled.count(f)) ours.insert(f);
      }
      for (const auto& f : sr.flags) {
        if (modeled.count(f)) theirs.insert(f);
      }
      EXPECT_EQ(ours, theirs) << s.name;
    }
    // Redis keeps the key positions and flags of a container command on its
    // subcommands; kvrocks dispatches (and locks) a container by its own row.
    if (!spec.subcommands.empty()) continue;
    EXPECT_EQ(spec.first_key, r.first) << name;
    EXPECT_EQ(spec.last_key, r.last) << name;
    EXPECT_EQ(spec.key_step, r.step) << name;
    // Where kvrocks knowingly differs (docs/design.md): BLMPOP and BZMPOP are
    // refused in scripts (Redis 7.0 runs them there without blocking), WAIT is
    // marked blocking for kvrocks' own dispatch, and WATCH, which would take key
    // locks inside a busy script's write batch on its worker, is refused while
    // the script runs.
    static const std::map<std::string, std::string> kOwnFlag = {{"blmpop", "noscript"},
                                                                {"bzmpop", "noscript"},
                                                                {"wait", "blocking"},
                                                                {"watch", "allow_busy"}};
    std::set<std::string> ours;
    for (const auto& f : CommandFlagNames(spec.flags)) {
      if (modeled.count(f)) ours.insert(f);
    }
    std::set<std::string> theirs;
    for (const auto& f : r.flags) {
      if (modeled.count(f)) theirs.insert(f);
    }
    if (auto own = kOwnFlag.find(name); own != kOwnFlag.end()) {
      ours.erase(own->second);
      theirs.erase(own->second);
    }
    EXPECT_EQ(ours, theirs) << name;
  }
}

}  // namespace
}  // namespace kvrocks
