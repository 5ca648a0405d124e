// ACL: users, their passwords, command / key / channel permissions (with
// Redis 7.0's selectors), and the log of denials, as Redis 7.0 has them.
//
// A user is immutable once published: ACL SETUSER builds a changed copy and
// swaps it in, bumping a generation; a connection keeps a pointer to its
// user and looks it up again only when the generation moved, so the check on
// every command costs one atomic load and a few set lookups.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/acl_commands.h"

namespace kvrocks {

struct CommandSpec;
class Connection;

// One set of permissions: commands, keys and channels. A user has its root
// selector and any number of others ("(...)" rules, Redis 7.0's selectors); a
// call is allowed if one of them allows it whole.
struct AclSelector {
  AclCommandRules commands;
  // Key patterns in the order first given; a pattern given again gains the new access.
  struct KeyPattern {
    std::string pattern;
    bool read, write;
  };
  std::vector<KeyPattern> keys;
  bool all_keys = false;
  std::vector<std::string> channels;  // each once, in the order given
  bool all_channels = false;

  // Redis' ACLSelectorCheckCmd: kAllowed, or why not (Redis' ACL_DENIED_*
  // codes, whose order picks the error among several selectors) with *pos the
  // argument at fault (0 for the command). name and sub are lower case.
  enum Verdict { kAllowed = 0, kDeniedCommand = 1, kDeniedKey = 2, kDeniedChannel = 4 };
  Verdict Check(const CommandSpec& spec, const std::vector<std::string>& args, int id, size_t* pos) const;
  // Whether a pattern grants every access asked for (none asked: any pattern matching the key).
  bool AllowsKey(const std::string& key, bool read, bool write) const;
  bool AllowsChannel(const std::string& channel, bool is_pattern) const;
  // Whether the selector reaches every key with the access asked for ("~*",
  // "%R~*" ...), as SORT's BY and GET patterns need.
  bool AllowsEveryKey(bool read, bool write) const;
  // "[~keys] resetchannels|&* [&channels] +@all|-@all [rules]", as ACL LIST shows it.
  std::string DescribeRules() const;
  std::string DescribeCommands() const;
  std::string DescribeKeys() const;
  std::string DescribeChannels() const;
};

struct AclUser : AclSelector {  // the root selector
  std::string name;
  bool enabled = false;
  bool nopass = false;
  std::vector<std::string> passwords;  // SHA-256 hex, each once, in the order given
  bool sanitize_payload = false, skip_sanitize_payload = false;
  std::vector<AclSelector> selectors;  // beyond the root, in the order they were added

  // Whether the user may run this call (command, keys, channels): the root or
  // another selector allows it. If not, the NOPERM reason ("command", "key" or
  // "channel") and the offending object, picked as Redis picks among selectors.
  bool Allows(const CommandSpec& spec, const std::vector<std::string>& args, std::string* reason,
              std::string* object) const;
  // Whether some selector reaches every key with this access (SORT BY/GET).
  bool AnyAllowsEveryKey(bool read, bool write) const;
  // "user <name> on|off [nopass] [#hash...] <root rules> [(<selector rules>) ...]"
  std::string Describe() const;
};

class Acl {
 public:
  Acl();

  // Applies ACL SETUSER rules to name (creating it); "" or the error reply.
  std::string SetUser(const std::string& name, const std::vector<std::string>& rules);
  // Removes users (never "default"); returns how many existed. Their
  // connections are closed by the caller.
  int DelUsers(const std::vector<std::string>& names, std::string* err);
  std::shared_ptr<const AclUser> Find(const std::string& name) const;
  std::vector<std::shared_ptr<const AclUser>> Users() const;  // by name
  // Replaces all users with those of "user ..." lines (ACL LOAD, the config
  // file); "" or the error text. The default user is kept if not listed.
  std::string LoadLines(const std::vector<std::string>& lines);

  // The user name/password authenticate as, or nullptr (WRONGPASS).
  std::shared_ptr<const AclUser> Authenticate(const std::string& name, const std::string& password) const;
  // requirepass: the default user's only password ("" = nopass).
  void SetDefaultPassword(const std::string& password);
  // acl-pubsub-default: whether a new user or selector, and a user after
  // "reset", starts with every channel (else none). Users already made keep theirs.
  void SetPubsubDefault(bool all_channels) { pubsub_default_all_.store(all_channels); }
  // acllog-max-len: the log is trimmed to it as the next new entry comes.
  void SetLogMaxLen(int64_t n) { log_max_len_.store(n); }
  // The user a new connection starts as authenticated: default, if it is on
  // and needs no password; else nullptr.
  std::shared_ptr<const AclUser> AutoUser() const;
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // ACL LOG.
  struct LogEntry {
    uint64_t count;
    std::string reason, context, object, username, client_info;
    int64_t created_ms, updated_ms;
  };
  void Log(const std::string& reason, const std::string& context, const std::string& object,
           const std::string& username, const std::string& client_info);
  std::vector<LogEntry> LogEntries(size_t count) const;
  void ResetLog();

  // The category names (ACL CAT) and the commands of one (false if unknown).
  static std::vector<std::string> Categories();
  static bool CategoryCommands(const std::string& category, std::vector<std::string>* names);

 private:
  // One ACL SETUSER rule (a "(...)" selector whole, as merged by SetUser);
  // "" or the error reply.
  std::string Apply(AclUser* user, const std::string& rule) const;
  // A rule about commands, keys or channels, for the root or another selector.
  std::string ApplySelector(AclSelector* selector, const std::string& rule) const;
  void Publish(std::shared_ptr<AclUser> user);

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const AclUser>> users_;
  std::atomic<uint64_t> generation_{1};
  std::atomic<bool> pubsub_default_all_{false};
  std::atomic<int64_t> log_max_len_{128};
  std::deque<LogEntry> log_;
};

}  // namespace kvrocks
