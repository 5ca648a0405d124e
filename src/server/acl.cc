#include "server/acl.h"

#include <algorithm>

#include "commands/command.h"
#include "commands/command_keys.h"
#include "common/sha256.h"
#include "common/string_util.h"
#include "common/time_util.h"

namespace kvrocks {

namespace {

std::string ModifierError(const std::string& rule, const std::string& why) {
  return "ERR Error in ACL SETUSER modifier '" + CString(rule) + "': " + why;
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

AclSelector::Verdict AclSelector::Check(const CommandSpec& spec, const std::vector<std::string>& args, int id,
                                        size_t* pos) const {
  *pos = 0;
  if (!commands.Allows(id, (spec.flags & kCmdNoAuth) != 0, args)) return kDeniedCommand;
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
    std::string name = ToLower(spec.name);
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
  if (commands.allows_all() && all_keys && all_channels) return true;
  // The subcommand's own id for a container call (DEBUG's subcommands are first arguments).
  const AclCommandTable& table = AclCommandTable::Instance();
  int id = -1;
  if (!spec.subcommands.empty() && args.size() > 1) id = table.Find(std::string(spec.name) + "|" + args[1]);
  if (id < 0) id = table.Find(spec.name);
  size_t pos;
  Verdict verdict = Check(spec, args, id, &pos);
  if (verdict == kAllowed) return true;
  // Redis' ACLCheckAllUserCommandPerm: of the selectors' denials, the one with
  // the highest code, then the latest argument.
  for (const AclSelector& s : selectors) {
    size_t p;
    Verdict v = s.Check(spec, args, id, &p);
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
  if (verdict != kDeniedCommand) {
    *object = args[pos];
  } else {
    *object = id >= 0 ? table.entry(id).name : ToLower(spec.name);
  }
  return false;
}

bool AclUser::AnyAllowsEveryKey(bool read, bool write) const {
  if (AllowsEveryKey(read, write)) return true;
  for (const AclSelector& s : selectors) {
    if (s.AllowsEveryKey(read, write)) return true;
  }
  return false;
}

std::string AclSelector::DescribeCommands() const { return commands.Describe(); }

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
  if (skip_sanitize_payload) s += " skip-sanitize-payload";
  if (sanitize_payload) s += " sanitize-payload";
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
  if (r.empty()) {
    return "";  // as Redis: an empty rule changes nothing
  } else if (r == "on") {
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
    u->all_channels = pubsub_default_all_.load();
  } else if (rule.size() >= 2 && rule.front() == '(' && rule.back() == ')') {
    // A selector: its rules separated by spaces, on a selector that allows nothing.
    // (Unbalanced quotes inside add a selector that allows nothing, as Redis'
    // sdssplitargs failure leaves it.)
    AclSelector sel;
    sel.all_channels = pubsub_default_all_.load();
    std::vector<std::string> inner;
    if (!SplitArgs(rule.substr(1, rule.size() - 2), &inner)) inner.clear();
    for (const auto& x : inner) {
      std::string why = ApplySelector(&sel, x);
      if (!why.empty()) return ModifierError(rule, why);
    }
    u->selectors.push_back(std::move(sel));
  } else if (rule[0] == '>' || rule[0] == '<' || rule[0] == '#' || rule[0] == '!') {
    std::string hash;
    if (rule[0] == '>' || rule[0] == '<') {
      hash = Sha256Hex(std::string_view(rule).substr(1));
    } else {
      hash = rule.substr(1);
      bool hex = hash.size() == 64 && std::all_of(hash.begin(), hash.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      });
      if (!hex) return ModifierError(rule, "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters");
    }
    auto it = std::find(u->passwords.begin(), u->passwords.end(), hash);
    if (rule[0] == '>' || rule[0] == '#') {
      if (it == u->passwords.end()) u->passwords.push_back(hash);
      u->nopass = false;
    } else if (it != u->passwords.end()) {
      u->passwords.erase(it);
    } else {
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
  auto has_space = [](std::string_view s) { return s.find_first_of(" \t\r\n\v\f") != std::string_view::npos; };
  if (r == "allkeys" || r == "~*") {
    u->all_keys = true;
    u->keys.clear();
  } else if (r == "resetkeys") {
    u->all_keys = false;
    u->keys.clear();
  } else if (r == "allchannels" || r == "&*") {
    u->all_channels = true;
    u->channels.clear();
  } else if (r == "resetchannels") {
    u->all_channels = false;
    u->channels.clear();
  } else if (!rule.empty() && (rule[0] == '~' || rule[0] == '%')) {
    if (u->all_keys) return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    // As Redis' ACLSetSelector: "%" then each of R and W at most once, up to a
    // '~' or the end ("%R" is read access to the empty pattern).
    AclSelector::KeyPattern k{"", true, true};
    size_t offset = 1;
    if (rule[0] == '%') {
      k.read = k.write = false;
      for (; offset < rule.size(); offset++) {
        char c = static_cast<char>(toupper(static_cast<unsigned char>(rule[offset])));
        if (c == 'R' && !k.read) {
          k.read = true;
        } else if (c == 'W' && !k.write) {
          k.write = true;
        } else if (rule[offset] == '~') {
          offset++;
          break;
        } else {
          return "Syntax error";
        }
      }
      // Redis would take "%~x" (no access at all) and then fail to describe it.
      if (!k.read && !k.write) return "Syntax error";
    }
    k.pattern = rule.substr(std::min(offset, rule.size()));
    if (has_space(k.pattern)) return "Syntax error";
    for (auto& old : u->keys) {
      if (old.pattern == k.pattern) {
        old.read = old.read || k.read;
        old.write = old.write || k.write;
        return "";
      }
    }
    u->keys.push_back(k);
  } else if (!rule.empty() && rule[0] == '&') {
    if (u->all_channels) return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels";
    std::string channel = rule.substr(1);
    if (has_space(channel)) return "Syntax error";
    if (std::find(u->channels.begin(), u->channels.end(), channel) == u->channels.end()) {
      u->channels.push_back(channel);
    }
  } else if (r == "allcommands" || r == "nocommands" || (!rule.empty() && (rule[0] == '+' || rule[0] == '-'))) {
    return u->commands.Apply(rule);
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
    u->all_channels = pubsub_default_all_.load();
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
    u->all_channels = pubsub_default_all_.load();
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
  if (u->nopass) return u;
  std::string hash = Sha256Hex(password);
  if (std::find(u->passwords.begin(), u->passwords.end(), hash) != u->passwords.end()) return u;
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
  while (!log_.empty() && static_cast<int64_t>(log_.size()) > log_max_len_.load()) log_.pop_back();
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

std::vector<std::string> Acl::Categories() { return AclCommandTable::CategoryNames(); }

bool Acl::CategoryCommands(const std::string& category, std::vector<std::string>* names) {
  int cat = AclCommandTable::CategoryIndex(category);
  if (cat < 0) return false;
  // As Redis' ACL CAT: every command and subcommand of its original table in the category.
  const AclCommandTable& table = AclCommandTable::Instance();
  for (size_t id = 0; id < table.size(); id++) {
    const AclCommandTable::Entry& e = table.entry(static_cast<int>(id));
    if (e.categories >> cat & 1) names->push_back(e.name);
  }
  return true;
}

}  // namespace kvrocks
