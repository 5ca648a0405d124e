#include <algorithm>
#include <cstdlib>

#include "commands/command.h"
#include "commands/redis_command_meta.h"
#include "commands/script_runner.h"
#include "common/string_util.h"

namespace kvrocks {

const RedisCommandMeta* FindRedisCommandMeta(std::string_view name) {
  const RedisCommandMeta* end = kRedisCommandMeta + kRedisCommandMetaCount;
  const RedisCommandMeta* it = std::lower_bound(
      kRedisCommandMeta, end, name, [](const RedisCommandMeta& m, std::string_view n) { return std::string_view(m.name) < n; });
  return it != end && std::string_view(it->name) == name ? it : nullptr;
}

namespace {

// Copies one element starting at *pos, rewriting aggregate headers; advances *pos.
void TranscodeElement(std::string_view in, size_t* pos, std::string* out) {
  size_t eol = in.find("\r\n", *pos);
  if (eol == std::string_view::npos) {  // not produced by the generator; copy the rest
    out->append(in.substr(*pos));
    *pos = in.size();
    return;
  }
  char type = in[*pos];
  std::string_view header = in.substr(*pos + 1, eol - *pos - 1);
  long n = std::strtol(std::string(header).c_str(), nullptr, 10);
  *pos = eol + 2;
  switch (type) {
    case '$':
      out->append("$").append(header).append("\r\n");
      if (n >= 0) {
        out->append(in.substr(*pos, static_cast<size_t>(n) + 2));
        *pos += static_cast<size_t>(n) + 2;
      }
      return;
    case '*':
    case '~':
    case '%': {
      long count = type == '%' ? 2 * n : n;
      out->append("*").append(std::to_string(count)).append("\r\n");
      for (long i = 0; i < count; i++) TranscodeElement(in, pos, out);
      return;
    }
    default:  // '+', ':', '-': the same in both protocols
      out->push_back(type);
      out->append(header).append("\r\n");
      return;
  }
}

}  // namespace

void Resp3ToResp2(std::string_view resp3, std::string* out) {
  size_t pos = 0;
  while (pos < resp3.size()) TranscodeElement(resp3, &pos, out);
}

std::vector<std::string> RecordedAclCategories(const RedisCommandMeta& m) {
  std::vector<std::string> out;
  std::string_view cats = m.categories;
  while (!cats.empty()) {
    size_t sp = cats.find(' ');
    out.emplace_back(cats.substr(0, sp));
    cats = sp == std::string_view::npos ? std::string_view() : cats.substr(sp + 1);
  }
  return out;
}

std::vector<std::string> ListedSubcommandNames(const CommandSpec& spec) {
  std::vector<std::string> out;
  for (const SubcommandSpec& s : spec.subcommands) {
    if (s.arity != 0) out.push_back(s.name);
  }
  return out;
}

bool CommandMayReplicate(const CommandSpec& spec, const std::vector<std::string>& args) {
  if (CommandTable::FlagsOf(spec, args) & kCmdWrite) return true;
  std::string name = ToLower(spec.name);
  if (name == "eval" || name == "evalsha" || name == "fcall") return !ScriptDeclaresNoWrites(args);
  if (name == "pfcount" || name == "publish" || name == "spublish") return true;
  return false;
}

namespace {

// COMMAND INFO's names of kvrocks' flag bits, in Redis' order.
const std::pair<uint32_t, const char*> kFlagNames[] = {
    {kCmdWrite, "write"},       {kCmdReadOnly, "readonly"},         {kCmdDenyOOM, "denyoom"},
    {kCmdAdmin, "admin"},       {kCmdNoScript, "noscript"},         {kCmdBlocking, "blocking"},
    {kCmdLoading, "loading"},   {kCmdStale, "stale"},               {kCmdSkipMonitor, "skip_monitor"},
    {kCmdSkipSlowlog, "skip_slowlog"}, {kCmdFast, "fast"},          {kCmdNoAuth, "no_auth"},
    {kCmdDenyMulti, "no_multi"}, {kCmdAllowBusy, "allow_busy"}};

}  // namespace

std::vector<std::string> CommandFlagNames(uint32_t f) {
  std::vector<std::string> out;
  for (auto& [bit, name] : kFlagNames) {
    if (f & bit) out.push_back(name);
  }
  return out;
}

uint32_t RecordedFlags(const RedisCommandMeta& m) {
  // The entry starts "$<n>\r\n<name>\r\n:<arity>\r\n~<count>\r\n", then a "+<flag>\r\n" each.
  std::string_view info = m.info;
  size_t pos = 0;
  auto line = [&] {
    size_t eol = info.find("\r\n", pos);
    std::string_view l = info.substr(pos, eol - pos);
    pos = eol == std::string_view::npos ? info.size() : eol + 2;
    return l;
  };
  line();  // "$<n>"
  line();  // the name
  line();  // ":<arity>"
  int64_t count = 0;
  ParseInt64(line().substr(1), &count);
  uint32_t flags = 0;
  for (int64_t i = 0; i < count; i++) {
    std::string_view name = line().substr(1);
    for (auto& [bit, known] : kFlagNames) {
      if ((bit & kRedisFlagBits) && name == known) flags |= bit;
    }
  }
  return flags;
}

std::vector<std::string> CommandAclCategories(const CommandSpec& c) {
  if (const RedisCommandMeta* m = FindRedisCommandMeta(ToLower(c.name))) return RecordedAclCategories(*m);
  // Commands Redis 7.0 does not have: from the group and the flags, in Redis' order.
  static const std::pair<const char*, const char*> kGroups[] = {
      {"generic", "keyspace"}, {"string", "string"},   {"hash", "hash"},     {"list", "list"},
      {"set", "set"},          {"sorted_set", "sortedset"}, {"bitmap", "bitmap"}, {"hyperloglog", "hyperloglog"},
      {"geo", "geo"},          {"stream", "stream"},   {"pubsub", "pubsub"}, {"scripting", "scripting"},
      {"connection", "connection"}, {"transactions", "transaction"}};
  std::vector<std::string> out;
  if (c.flags & kCmdWrite) out.push_back("write");
  if (c.flags & kCmdReadOnly) out.push_back("read");
  for (auto& [group, cat] : kGroups) {
    if (std::string_view(c.group) == group) out.push_back(cat);
  }
  if (c.flags & kCmdAdmin) out.push_back("admin");
  out.push_back((c.flags & kCmdFast) ? "fast" : "slow");
  if (c.flags & kCmdBlocking) out.push_back("blocking");
  if (c.flags & (kCmdAdmin | kCmdExclusive)) out.push_back("dangerous");
  return out;
}

}  // namespace kvrocks
