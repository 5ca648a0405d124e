#include "server/acl_commands.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "commands/command.h"
#include "commands/redis_command_meta.h"
#include "common/string_util.h"

namespace kvrocks {

namespace {

const char kUnknown[] = "Unknown command or category name in ACL";
const char kSyntax[] = "Syntax error";

uint32_t CategoryBits(const std::vector<std::string>& names) {
  uint32_t bits = 0;
  for (const auto& n : names) {
    int i = AclCommandTable::CategoryIndex(n);
    if (i >= 0) bits |= 1u << i;
  }
  return bits;
}

}  // namespace

const std::vector<std::string>& AclCommandTable::CategoryNames() {
  static const std::vector<std::string> kNames = {
      "keyspace", "read",  "write", "set",    "sortedset", "list",     "hash",      "string",     "bitmap",
      "hyperloglog", "geo", "stream", "pubsub", "admin",    "fast",     "slow",      "blocking",   "dangerous",
      "connection", "transaction", "scripting"};
  return kNames;
}

int AclCommandTable::CategoryIndex(std::string_view name) {
  const auto& names = CategoryNames();
  for (size_t i = 0; i < names.size(); i++) {
    if (TokenEquals(names[i], name)) return static_cast<int>(i);
  }
  return -1;
}

AclCommandTable::AclCommandTable() {
  std::map<std::string, std::pair<uint32_t, bool>> cats;  // every name, in name order
  for (size_t i = 0; i < kRedisCommandMetaCount; i++) {
    const RedisCommandMeta& m = kRedisCommandMeta[i];
    cats[m.name] = {CategoryBits(RecordedAclCategories(m)), true};
  }
  for (const auto& [key, spec] : CommandTable::Instance().all()) {
    std::string name = ToLower(spec.name);
    if (!cats.count(name)) cats[name] = {CategoryBits(CommandAclCategories(spec)), false};
    for (const auto& sub : ListedSubcommandNames(spec)) {
      if (!cats.count(sub)) cats[sub] = {cats[name].first, false};
    }
  }
  for (const auto& [name, info] : cats) {
    int id = static_cast<int>(entries_.size());
    Entry e;
    e.name = name;
    e.categories = info.first;
    e.in_redis = info.second;
    size_t bar = name.find('|');
    if (bar != std::string::npos) {
      auto parent = ids_.find(std::string_view(name).substr(0, bar));
      if (parent != ids_.end()) {  // a container sorts before its "container|sub" names
        e.parent = parent->second;
        entries_[static_cast<size_t>(e.parent)].subcommands.push_back(id);
      }
    }
    if (e.parent < 0) top_level_.push_back(id);
    ids_.emplace(name, id);
    entries_.push_back(std::move(e));
  }
}

const AclCommandTable& AclCommandTable::Instance() {
  static const AclCommandTable table;
  return table;
}

int AclCommandTable::Find(std::string_view name) const {
  auto it = ids_.find(ToLower(name));
  return it == ids_.end() ? -1 : it->second;
}

bool AclCommandRules::Bit(int id) const {
  size_t word = static_cast<size_t>(id) / 64;
  return word < bits_.size() && (bits_[word] >> (id % 64) & 1) != 0;
}

void AclCommandRules::SetBit(int id, bool on) {
  size_t word = static_cast<size_t>(id) / 64;
  if (word >= bits_.size()) bits_.resize((AclCommandTable::Instance().size() + 63) / 64, 0);
  if (on) {
    bits_[word] |= uint64_t{1} << (id % 64);
  } else {
    bits_[word] &= ~(uint64_t{1} << (id % 64));
    all_flag_ = false;
  }
}

void AclCommandRules::ChangePerm(int id, bool allow) {
  SetBit(id, allow);
  first_args_.erase(id);
  for (int sub : AclCommandTable::Instance().entry(id).subcommands) SetBit(sub, allow);
}

void AclCommandRules::ApplyCategory(int category, bool allow) {
  const AclCommandTable& table = AclCommandTable::Instance();
  for (size_t id = 0; id < table.size(); id++) {
    if (table.entry(static_cast<int>(id)).categories >> category & 1) ChangePerm(static_cast<int>(id), allow);
  }
}

std::string AclCommandRules::Apply(const std::string& rule) {
  const AclCommandTable& table = AclCommandTable::Instance();
  if (TokenEquals(rule, "allcommands") || TokenEquals(rule, "+@all")) {
    bits_.assign((table.size() + 63) / 64, ~uint64_t{0});
    future_ = all_flag_ = true;
    first_args_.clear();
    return "";
  }
  if (TokenEquals(rule, "nocommands") || TokenEquals(rule, "-@all")) {
    bits_.assign((table.size() + 63) / 64, 0);
    future_ = all_flag_ = false;
    first_args_.clear();
    return "";
  }
  if (rule.size() < 1 || (rule[0] != '+' && rule[0] != '-')) return kSyntax;
  bool allow = rule[0] == '+';
  std::string_view what = std::string_view(rule).substr(1);
  if (!what.empty() && what[0] == '@') {
    int category = AclCommandTable::CategoryIndex(what.substr(1));
    if (category < 0) return kUnknown;
    ApplyCategory(category, allow);
    return "";
  }
  size_t bar = what.rfind('|');
  if (!allow || bar == std::string_view::npos) {
    // "-config|get" names a subcommand; "-get|x" names nothing.
    int id = table.Find(what);
    if (id < 0 || std::count(what.begin(), what.end(), '|') > 1) return kUnknown;
    ChangePerm(id, allow);
    return "";
  }
  int id = table.Find(what.substr(0, bar));
  if (id < 0) return kUnknown;
  if (table.entry(id).parent >= 0) return "Allowing first-arg of a subcommand is not supported";
  std::string_view arg = what.substr(bar + 1);
  if (arg.empty()) return kSyntax;
  if (!table.entry(id).subcommands.empty()) {
    int sub = table.Find(what);
    if (sub < 0) return kUnknown;
    ChangePerm(sub, true);
    return "";
  }
  // A first argument of a command without subcommands (SELECT 0, DEBUG OBJECT):
  // allowed even while the command is not, as Redis' allowed_firstargs.
  auto& args = first_args_[id];
  for (const auto& a : args) {
    if (TokenEquals(a, arg)) return "";
  }
  args.emplace_back(arg);
  return "";
}

bool AclCommandRules::Allows(int id, bool no_auth, const std::vector<std::string>& args) const {
  if (all_flag_ || no_auth) return true;
  if (id < 0) return false;
  if (Bit(id)) return true;
  auto it = first_args_.find(id);
  size_t idx = AclCommandTable::Instance().entry(id).parent >= 0 ? 2 : 1;
  if (it == first_args_.end() || args.size() <= idx) return false;
  for (const auto& a : it->second) {
    if (TokenEquals(a, args[idx])) return true;
  }
  return false;
}

std::string AclCommandRules::Describe() const {
  const AclCommandTable& table = AclCommandTable::Instance();
  const auto& categories = AclCommandTable::CategoryNames();
  // As Redis: the rules found so far are applied to a fake selector, so that the
  // bits still to be explained are known at each step; temp holds the user's
  // bits with each chosen category undone, so that later categories are
  // counted on what is left. Categories are counted on Redis' own commands, so
  // that the same ones are picked as Redis picks; kvrocks' own commands are
  // then explained one by one where they still differ.
  bool additive = !future_;
  std::string rules = additive ? "-@all " : "+@all ";
  AclCommandRules fake, temp;
  fake.Apply(additive ? "-@all" : "+@all");
  temp.bits_ = bits_;
  std::vector<bool> applied(categories.size(), false);
  while (true) {
    int best = -1;
    unsigned long mindiff = INT_MAX, maxsame = 0;
    for (size_t j = 0; j < categories.size(); j++) {
      if (applied[j]) continue;
      unsigned long on = 0, off = 0;
      for (size_t id = 0; id < table.size(); id++) {
        const AclCommandTable::Entry& e = table.entry(static_cast<int>(id));
        if (e.in_redis && (e.categories >> j & 1)) (temp.Bit(static_cast<int>(id)) ? on : off)++;
      }
      unsigned long diff = additive ? off : on, same = additive ? on : off;
      if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
        best = static_cast<int>(j);
        mindiff = diff;
        maxsame = same;
      }
    }
    if (best < 0) break;
    fake.ApplyCategory(best, additive);
    temp.ApplyCategory(best, !additive);
    rules += (additive ? "+@" : "-@") + categories[static_cast<size_t>(best)] + " ";
    applied[static_cast<size_t>(best)] = true;
  }
  // Then each command whose bit still differs, a container before its subcommands.
  auto single = [&](int id) {
    bool bit = Bit(id);
    if (bit != fake.Bit(id)) {
      rules += (bit ? "+" : "-") + table.entry(id).name + " ";
      fake.ChangePerm(id, bit);
    }
  };
  for (int id : table.top_level()) {
    single(id);
    for (int sub : table.entry(id).subcommands) single(sub);
    auto it = first_args_.find(id);
    if (!Bit(id) && it != first_args_.end()) {
      for (const auto& a : it->second) rules += "+" + table.entry(id).name + "|" + a + " ";
    }
  }
  rules.pop_back();
  return rules;
}

}  // namespace kvrocks
