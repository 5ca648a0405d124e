#include "server/acl.h"

#include <algorithm>

#include "commands/command.h"
#include "commands/command_keys.h"
#include "commands/redis_command_meta.h"
#include "common/sha256.h"
#include "common/string_util.h"
#include "common/time_util.h"

namespace kvrocks {

namespace {

const char* const kCategories[] = {"keyspace", "read",      "write",     "set",        "sortedset",   "list",
                                   "hash",     "string",    "bitmap",    "hyperloglog", "geo",         "stream",
                                   "pubsub",   "admin",     "fast",      "slow",        "blocking",    "dangerous",
                                   "connection", "transaction", "scripting"};

bool HasCategory(const std::vector<std::string>& cats, const std::string& cat) {
  return std::find(cats.begin(), cats.end(), cat) != cats.end();
}

// Allows or denies a command with all its subcommands.
void SetWholeCommand(AclSelector* u, const std::string& name, bool allow) {
  for (auto it = u->commands.begin(); it != u->commands.end();) {
    it = it->rfind(name + "|", 0) == 0 ? u->commands.erase(it) : std::next(it);
  }
  if (allow) {
    u->commands.insert(name);
  } else {
    u->commands.erase(name);
  }
}

// Denies one subcommand ("config|get") of container; a container allowed whole
// until now keeps all its other subcommands.
void DenySubcommand(AclSelector* u, const std::string& container, const std::string& full) {
  if (u->commands.erase(container)) {
    if (const CommandSpec* spec = CommandTable::Instance().Find(container)) {
      for (const auto& sub : ListedSubcommandNames(*spec)) u->commands.insert(sub);
    }
  }
  u->commands.erase(full);
}

bool IsCategory(const std::string& c) {
  for (const char* k : kCategories) {
    if (c == k) return true;
  }
  return false;
}

std::string ModifierError(const std::string& rule, const std::string& why) {
  return "ERR Error in ACL SETUSER modifier '" + rule + "': " + why;
}

// A rule about a command replaces an earlier rule about the same command in
// its place, else it goes last (Redis' ACLUpdateCommandRules).
void ReplaceCommandRule(AclSelector* u, const std::string& rule) {
  std::string target = rule.substr(1);
  for (auto& r : u->command_rules) {
    if (r.substr(1) == target) {
      r = rule;
      return;
    }
  }
  u->command_rules.push_back(rule);
}

// Redis' ACLMergeSelectorArguments: a selector's rules given as several
// arguments ("(~a*", "+get)") become one ("(~a* +get)"). False, with the
// opening argument, if a selector is not closed.
bool MergeSelectorArgs(const std::vector<std::string>& in, std::vector<std::string>* out, std::string* unmatched) {
  bool open = false;
  for (const auto& arg : in) {
    if (!arg.empty() && arg.front() == '(' && arg.back() != ')') {
      if (open) out->pop_back();  // as Redis: a selector opened again drops the unclosed one
      out->push_back(arg);
      *unmatched = arg;
      open = true;
    } else if (open) {
      out->back() += " " + arg;
      if (!arg.empty() && arg.back() == ')') open = false;
    } else {
      out->push_back(arg);
    }
  }
  return !open;
}

}  // namespace

bool AclSelector::AllowsCommand(const std::string& name, const std::string& sub) const {
  if (commands.count(name)) return true;
  return !sub.empty() && commands.count(name + "|" + sub) > 0;
}

bool AclSelector::AllowsKey(const std::string& key, bool read, bool write) const {
  if (all_keys) return true;
  for (const auto& k : keys) {
    if ((!read || k.read) && (!write || k.write) && StringMatch(k.pattern, key)) return true;
  }
  return false;
}

bool AclSelector::AllowsEveryKey(bool read, bool write) const {
  if (all_keys) return true;
  for (const auto& k : keys) {
    if ((!read || k.read) && (!write || k.write) && k.pattern == "*") return true;
  }
  return false;
}

bool AclSelector::AllowsChannel(const std::string& channel, bool is_pattern) const {
  if (all_channels) return true;
  for (const auto& c : channels) {
    // A subscription pattern must be one of the user's patterns literally.
    if (is_pattern ? c == channel : StringMatch(c, channel)) return true;
  }
  return false;
}

AclSelector::Verdict AclSelector::Check(const CommandSpec& spec, const std::vector<std::string>& args,
                                        const std::string& name, const std::string& sub, size_t* pos) const {
  *pos = 0;
  if (!AllowsCommand(name, sub)) return kDeniedCommand;
  if (!all_keys) {
    // Each key needs what its flags imply (Redis' ACLSelectorCheckKey): read to
    // access it, write to insert, delete or update.
    CommandKeyFinder finder(spec, args);
    if (finder.valid()) {
      for (const KeyReference& k : finder.Find(args)) {
        bool read = (k.flags & kKeyAccess) != 0;
        bool write = (k.flags & (kKeyInsert | kKeyDelete | kKeyUpdate)) != 0;
        if (!AllowsKey(args[k.pos], read, write)) {
          *pos = k.pos;
          return kDeniedKey;
        }
      }
    }
  }
  if (!all_channels) {
    bool publish = name == "publish" || name == "spublish";
    bool subscribe = name == "subscribe" || name == "ssubscribe" || name == "psubscribe";
    if (publish || subscribe) {
      size_t last = publish ? 2 : args.size();
      for (size_t i = 1; i < last; i++) {
        if (!AllowsChannel(args[i], name == "psubscribe")) {
          *pos = i;
          return kDeniedChannel;
        }
      }
    }
  }
  return kAllowed;
}

bool AclUser::Allows(const CommandSpec& spec, const std::vector<std::string>& args, std::string* reason,
                     std::string* object) const {
  // The common case (the default user): nothing to look up on the hot path.
  if (all_commands && command_rules.empty() && all_keys && all_channels) return true;
  std::string name = ToLower(spec.name);
  std::string sub = !spec.subcommands.empty() && args.size() > 1 ? ToLower(args[1]) : "";
  size_t pos;
  Verdict verdict = Check(spec, args, name, sub, &pos);
  if (verdict == kAllowed) return true;
  // Redis' ACLCheckAllUserCommandPerm: of the selectors' denials, the one with
  // the highest code, then the latest argument.
  for (const AclSelector& s : selectors) {
    size_t p;
    Verdict v = s.Check(spec, args, name, sub, &p);
    if (v == kAllowed) return true;
    if (v > verdict || (v == verdict && p > pos)) {
      verdict = v;
      pos = p;
    }
  }
  switch (verdict) {
    case kDeniedKey: *reason = "key"; break;
    case kDeniedChannel: *reason = "channel"; break;
    default: *reason = "command"; break;
  }
  *object = verdict == kDeniedCommand ? (sub.empty() ? name : name + "|" + sub) : args[pos];
  return false;
}

bool AclUser::AnyAllowsEveryKey(bool read, bool write) const {
  if (AllowsEveryKey(read, write)) return true;
  for (const AclSelector& s : selectors) {
    if (s.AllowsEveryKey(read, write)) return true;
  }
  return false;
}

std::string AclSelector::DescribeCommands() const {
  std::string s = all_commands ? "+@all" : "-@all";
  for (const auto& r : command_rules) s += " " + r;
  return s;
}

std::string AclSelector::DescribeKeys() const {
  std::string s;
  if (all_keys) s = "~*";
  for (const auto& k : keys) {
    if (!s.empty()) s += " ";
    s += std::string(k.read && k.write ? "~" : k.read ? "%R~" : "%W~") + k.pattern;
  }
  return s;
}

std::string AclSelector::DescribeChannels() const {
  std::string s;
  if (all_channels) s = "&*";
  for (const auto& c : channels) s += (s.empty() ? "&" : " &") + c;
  return s;
}

std::string AclSelector::DescribeRules() const {
  std::string s = DescribeKeys();
  if (!s.empty()) s += " ";
  if (all_channels) {
    s += "&*";
  } else {
    s += "resetchannels";
    if (!channels.empty()) s += " " + DescribeChannels();
  }
  return s + " " + DescribeCommands();
}

std::string AclUser::Describe() const {
  std::string s = "user " + name + (enabled ? " on" : " off");
  if (nopass) s += " nopass";
  if (sanitize_payload) s += " sanitize-payload";
  if (skip_sanitize_payload) s += " skip-sanitize-payload";
  for (const auto& p : passwords) s += " #" + p;
  s += " " + DescribeRules();
  for (const AclSelector& sel : selectors) s += " (" + sel.DescribeRules() + ")";
  return s;
}

Acl::Acl() {
  auto def = std::make_shared<AclUser>();
  def->name = "default";
  for (const char* rule : {"on", "nopass", "~*", "&*", "+@all"}) Apply(def.get(), rule);
  users_["default"] = def;
}

std::string Acl::Apply(AclUser* u, const std::string& rule) const {
  std::string r = ToLower(rule);
  if (r == "on") {
    u->enabled = true;
  } else if (r == "off") {
    u->enabled = false;
  } else if (r == "nopass") {
    u->nopass = true;
    u->passwords.clear();
  } else if (r == "resetpass") {
    u->nopass = false;
    u->passwords.clear();
  } else if (r == "sanitize-payload") {
    u->sanitize_payload = true;
    u->skip_sanitize_payload = false;
  } else if (r == "skip-sanitize-payload") {
    u->skip_sanitize_payload = true;
    u->sanitize_payload = false;
  } else if (r == "clearselectors") {
    u->selectors.clear();
  } else if (r == "reset") {
    // As Redis 7.0: the payload sanitized too (a user created without it is not).
    for (const char* x : {"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "clearselectors",
                          "-@all"}) {
      Apply(u, x);
    }
  } else if (rule.size() >= 2 && rule.front() == '(' && rule.back() == ')') {
    // A selector: its rules separated by spaces, on a selector that allows nothing.
    AclSelector sel;
    std::vector<std::string> inner;
    if (!SplitArgs(rule.substr(1, rule.size() - 2), &inner)) return ModifierError(rule, "Syntax error");
    for (const auto& x : inner) {
      std::string why = ApplySelector(&sel, x);
      if (!why.empty()) return ModifierError(rule, why);
    }
    u->selectors.push_back(std::move(sel));
  } else if (!rule.empty() && (rule[0] == '>' || rule[0] == '<')) {
    std::string hash = Sha256Hex(std::string_view(rule).substr(1));
    if (rule[0] == '>') {
      u->passwords.insert(hash);
      u->nopass = false;
    } else if (u->passwords.erase(hash) == 0) {
      return ModifierError(rule, "The password you are trying to remove from the user does not exist");
    }
  } else if (!rule.empty() && (rule[0] == '#' || rule[0] == '!')) {
    std::string hash = ToLower(rule.substr(1));
    bool hex = hash.size() == 64 && std::all_of(hash.begin(), hash.end(), [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
    if (!hex) return ModifierError(rule, "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters");
    if (rule[0] == '#') {
      u->passwords.insert(hash);
      u->nopass = false;
    } else if (u->passwords.erase(hash) == 0) {
      return ModifierError(rule, "The password you are trying to remove from the user does not exist");
    }
  } else {
    std::string why = ApplySelector(u, rule);
    if (!why.empty()) return ModifierError(rule, why);
  }
  return "";
}

std::string Acl::ApplySelector(AclSelector* u, const std::string& rule) const {
  std::string r = ToLower(rule);
  if (r == "allkeys" || rule == "~*") {
    u->all_keys = true;
    u->keys.clear();
  } else if (r == "resetkeys") {
    u->all_keys = false;
    u->keys.clear();
  } else if (r == "allchannels" || rule == "&*") {
    u->all_channels = true;
    u->channels.clear();
  } else if (r == "resetchannels") {
    u->all_channels = false;
    u->channels.clear();
  } else if (r == "allcommands" || r == "+@all") {
    u->all_commands = true;
    u->command_rules.clear();
    u->commands.clear();
    for (const auto& [key, spec] : CommandTable::Instance().all()) u->commands.insert(ToLower(spec.name));
  } else if (r == "nocommands" || r == "-@all") {
    u->all_commands = false;
    u->command_rules.clear();
    u->commands.clear();
  } else if (!rule.empty() && (rule[0] == '~' || rule[0] == '%')) {
    AclSelector::KeyPattern k{"", true, true};
    if (rule[0] == '%') {
      size_t tilde = rule.find('~');
      std::string perms = tilde == std::string::npos ? "" : ToLower(rule.substr(1, tilde - 1));
      if (tilde == std::string::npos || perms.empty() ||
          perms.find_first_not_of("rw") != std::string::npos) {
        return "Syntax error";
      }
      k.read = perms.find('r') != std::string::npos;
      k.write = perms.find('w') != std::string::npos;
      k.pattern = rule.substr(tilde + 1);
    } else {
      k.pattern = rule.substr(1);
    }
    if (u->all_keys) return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    if (k.read && k.write && k.pattern == "*") return ApplySelector(u, "allkeys");
    u->keys.push_back(k);
  } else if (!rule.empty() && rule[0] == '&') {
    if (u->all_channels) return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels";
    u->channels.push_back(rule.substr(1));
  } else if (!rule.empty() && (rule[0] == '+' || rule[0] == '-')) {
    bool add = rule[0] == '+';
    std::string what = ToLower(rule.substr(1));
    if (!what.empty() && what[0] == '@') {
      std::vector<std::string> names;
      if (!CategoryCommands(what.substr(1), &names)) return "Unknown command or category name in ACL";
      for (const auto& n : names) {
        size_t nbar = n.find('|');
        if (nbar == std::string::npos) {
          SetWholeCommand(u, n, add);  // subcommands included (Redis' ACLChangeSelectorPerm)
          continue;
        }
        std::string container = n.substr(0, nbar);
        if (add) {
          if (!u->commands.count(container)) u->commands.insert(n);
          continue;
        }
        DenySubcommand(u, container, n);
      }
      u->command_rules.push_back(std::string(1, rule[0]) + what);
      return "";
    }
    size_t bar = what.find('|');
    std::string cmd = what.substr(0, bar);
    const CommandSpec* spec = CommandTable::Instance().Find(cmd);
    if (spec == nullptr) return "Unknown command or category name in ACL";
    std::string name = ToLower(spec->name);
    if (bar == std::string::npos) {
      SetWholeCommand(u, name, add);
    } else {
      std::string full = name + "|" + what.substr(bar + 1);
      if (!add) {
        // Only a real subcommand: Redis looks "cmd|sub" up as a command.
        std::vector<std::string> subs = ListedSubcommandNames(*spec);
        if (std::find(subs.begin(), subs.end(), full) == subs.end()) {
          return "Unknown command or category name in ACL";
        }
        DenySubcommand(u, name, full);
      } else {
        if (spec->subcommands.empty()) return "Unknown command or category name in ACL";
        if (u->commands.count(name)) return "";  // the whole command is allowed already
        u->commands.insert(full);
      }
    }
    ReplaceCommandRule(u, std::string(1, rule[0]) + what);
  } else {
    return "Syntax error";
  }
  return "";
}

void Acl::Publish(std::shared_ptr<AclUser> user) {
  users_[user->name] = std::move(user);
  generation_.fetch_add(1, std::memory_order_release);
}

std::string Acl::SetUser(const std::string& name, const std::vector<std::string>& rules) {
  std::vector<std::string> merged;
  std::string unmatched;
  if (!MergeSelectorArgs(rules, &merged, &unmatched)) {
    return "ERR Unmatched parenthesis in acl selector starting at '" + unmatched + "'.";
  }
  std::lock_guard<std::mutex> g(mu_);
  auto it = users_.find(name);
  auto u = std::make_shared<AclUser>();
  if (it != users_.end()) {
    *u = *it->second;
  } else {
    u->name = name;  // off, no password, nothing allowed (not "reset": no sanitize-payload)
  }
  for (const auto& r : merged) {
    std::string err = Apply(u.get(), r);
    if (!err.empty()) return err;
  }
  Publish(std::move(u));
  return "";
}

int Acl::DelUsers(const std::vector<std::string>& names, std::string* err) {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& n : names) {
    if (n == "default") {
      *err = "ERR The 'default' user cannot be removed";
      return 0;
    }
  }
  int n = 0;
  for (const auto& name : names) n += static_cast<int>(users_.erase(name));
  generation_.fetch_add(1, std::memory_order_release);
  return n;
}

std::shared_ptr<const AclUser> Acl::Find(const std::string& name) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const AclUser>> Acl::Users() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::shared_ptr<const AclUser>> out;
  for (const auto& [name, u] : users_) out.push_back(u);
  return out;
}

std::string Acl::LoadLines(const std::vector<std::string>& lines) {
  std::map<std::string, std::shared_ptr<const AclUser>> fresh;
  int lineno = 0;
  for (const auto& line : lines) {
    lineno++;
    std::vector<std::string> args;
    if (!SplitArgs(line, &args)) return "Unbalanced quotes in configuration line " + std::to_string(lineno);
    if (args.empty()) continue;
    if (args[0] != "user" || args.size() < 2) {
      return "/ACL file contains an invalid line " + std::to_string(lineno) + ": line should start with user keyword";
    }
    auto u = std::make_shared<AclUser>();
    u->name = args[1];
    std::vector<std::string> merged, rules(args.begin() + 2, args.end());
    std::string unmatched;
    if (!MergeSelectorArgs(rules, &merged, &unmatched)) {
      return "Error in user declaration at line " + std::to_string(lineno) +
             ": Unmatched parenthesis in acl selector starting at '" + unmatched + "'.";
    }
    for (const auto& r : merged) {
      std::string err = Apply(u.get(), r);
      if (!err.empty()) return "Error in user declaration at line " + std::to_string(lineno) + ": " + err;
    }
    fresh[u->name] = u;
  }
  std::lock_guard<std::mutex> g(mu_);
  if (!fresh.count("default")) fresh["default"] = users_["default"];
  users_.swap(fresh);
  generation_.fetch_add(1, std::memory_order_release);
  return "";
}

std::shared_ptr<const AclUser> Acl::Authenticate(const std::string& name, const std::string& password) const {
  auto u = Find(name);
  if (u == nullptr || !u->enabled) return nullptr;
  if (u->nopass || u->passwords.count(Sha256Hex(password))) return u;
  return nullptr;
}

void Acl::SetDefaultPassword(const std::string& password) {
  std::lock_guard<std::mutex> g(mu_);
  auto u = std::make_shared<AclUser>(*users_["default"]);
  Apply(u.get(), "resetpass");
  Apply(u.get(), password.empty() ? "nopass" : ">" + password);
  Publish(std::move(u));
}

std::shared_ptr<const AclUser> Acl::AutoUser() const {
  auto u = Find("default");
  return u != nullptr && u->enabled && u->nopass ? u : nullptr;
}

void Acl::Log(const std::string& reason, const std::string& context, const std::string& object,
              const std::string& username, const std::string& client_info) {
  int64_t now = static_cast<int64_t>(NowMs());
  std::lock_guard<std::mutex> g(mu_);
  // Repeats of a recent identical denial are counted in its entry, which moves to the front.
  for (auto it = log_.begin(); it != log_.end(); ++it) {
    if (it->reason == reason && it->context == context && it->object == object && it->username == username &&
        now - it->updated_ms < 60000) {
      LogEntry e = *it;
      e.count++;
      e.updated_ms = now;
      e.client_info = client_info;
      log_.erase(it);
      log_.push_front(std::move(e));
      return;
    }
  }
  log_.push_front(LogEntry{1, reason, context, object, username, client_info, now, now});
  if (log_.size() > 128) log_.pop_back();
}

std::vector<Acl::LogEntry> Acl::LogEntries(size_t count) const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<LogEntry> out;
  for (const auto& e : log_) {
    if (out.size() >= count) break;
    out.push_back(e);
  }
  return out;
}

void Acl::ResetLog() {
  std::lock_guard<std::mutex> g(mu_);
  log_.clear();
}

std::vector<std::string> Acl::Categories() { return std::vector<std::string>(std::begin(kCategories), std::end(kCategories)); }

bool Acl::CategoryCommands(const std::string& category, std::vector<std::string>* names) {
  std::string cat = ToLower(category);
  if (cat == "all") {
    for (const auto& [key, spec] : CommandTable::Instance().all()) names->push_back(ToLower(spec.name));
    return true;
  }
  if (!IsCategory(cat)) return false;
  // As Redis does: a command of the category with all its subcommands, then
  // each subcommand of the category (a container's own category is usually
  // just "slow").
  for (const auto& [key, spec] : CommandTable::Instance().all()) {
    if (HasCategory(CommandAclCategories(spec), cat)) names->push_back(ToLower(spec.name));
    for (const auto& sub : ListedSubcommandNames(spec)) {
      const RedisCommandMeta* m = FindRedisCommandMeta(sub);
      if (m != nullptr && HasCategory(RecordedAclCategories(*m), cat)) names->push_back(sub);
    }
  }
  return true;
}

}  // namespace kvrocks
