// ACL: SETUSER GETUSER DELUSER LIST USERS WHOAMI CAT LOG GENPASS DRYRUN LOAD
// SAVE HELP. The users and the checks are in server/acl.cc.
#include <algorithm>
#include <fstream>
#include <optional>
#include <random>
#include <string_view>

#include "commands/command_keys.h"
#include "commands/helpers.h"
#include "common/time_util.h"
#include "server/acl.h"
#include "server/pubsub.h"
#include "server/worker.h"

namespace kvrocks {

namespace {

void GetUser(CommandCall& call) {
  auto u = call.server->acl().Find(call.args[2]);
  if (u == nullptr) return reply::Null(call.out, call.resp);
  std::string* out = call.out;
  reply::MapHeader(out, 6, call.resp);
  reply::Bulk(out, "flags");
  std::vector<std::string> flags = {u->enabled ? "on" : "off"};
  if (u->nopass) flags.emplace_back("nopass");
  if (u->skip_sanitize_payload) flags.emplace_back("skip-sanitize-payload");
  if (u->sanitize_payload) flags.emplace_back("sanitize-payload");
  reply::BulkArray(out, flags);
  reply::Bulk(out, "passwords");
  reply::BulkArray(out, u->passwords);
  auto rules = [&](const AclSelector& sel) {
    reply::Bulk(out, "commands");
    reply::Bulk(out, sel.DescribeCommands());
    reply::Bulk(out, "keys");
    reply::Bulk(out, sel.DescribeKeys());
    reply::Bulk(out, "channels");
    reply::Bulk(out, sel.DescribeChannels());
  };
  rules(*u);
  reply::Bulk(out, "selectors");
  reply::ArrayHeader(out, u->selectors.size());
  for (const AclSelector& sel : u->selectors) {
    reply::MapHeader(out, 3, call.resp);
    rules(sel);
  }
}

void Log(CommandCall& call) {
  const auto& a = call.args;
  size_t count = 10;
  if (a.size() == 3) {
    if (TokenEquals(a[2], "reset")) {
      call.server->acl().ResetLog();
      return reply::Ok(call.out);
    }
    int64_t n;
    if (!IntArg(call, 2, &n)) return;
    count = n < 0 ? 0 : static_cast<size_t>(n);
  } else if (a.size() > 3) {
    return ReplySubcommandSyntaxError(call);
  }
  auto entries = call.server->acl().LogEntries(count);
  int64_t now = static_cast<int64_t>(NowMs());
  reply::ArrayHeader(call.out, entries.size());
  for (const auto& e : entries) {
    reply::MapHeader(call.out, 7, call.resp);
    reply::Bulk(call.out, "count");
    reply::Integer(call.out, static_cast<int64_t>(e.count));
    reply::Bulk(call.out, "reason");
    reply::Bulk(call.out, e.reason);
    reply::Bulk(call.out, "context");
    reply::Bulk(call.out, e.context);
    reply::Bulk(call.out, "object");
    reply::Bulk(call.out, e.object);
    reply::Bulk(call.out, "username");
    reply::Bulk(call.out, e.username);
    reply::Bulk(call.out, "age-seconds");
    reply::Double(call.out, static_cast<double>(now - e.created_ms) / 1000.0, call.resp);
    reply::Bulk(call.out, "client-info");
    reply::Bulk(call.out, e.client_info);
  }
}

void DryRun(CommandCall& call) {
  const auto& a = call.args;
  auto u = call.server->acl().Find(a[2]);
  if (u == nullptr) return ReplyError(call, "ERR User '" + CString(a[2]) + "' not found");
  const CommandSpec* spec = CommandTable::Instance().Find(a[3]);
  std::vector<std::string> args(a.begin() + 3, a.end());
  // The command or, for a container, its subcommand (as Redis looks it up).
  std::optional<CommandKeyFinder> command;
  if (spec != nullptr) command.emplace(*spec, args);
  if (!command || !command->valid()) return ReplyError(call, "ERR Command '" + CString(a[3]) + "' not found");
  int argc = static_cast<int>(args.size()), arity = command->arity();
  if ((arity > 0 && argc != arity) || argc < -arity) {
    return ReplyError(call, "ERR wrong number of arguments for '" + command->name() + "' command");
  }
  std::string reason, object;
  if (u->Allows(*spec, args, &reason, &object)) return reply::Ok(call.out);
  if (reason == "command") return reply::Bulk(call.out, "This user has no permissions to run the '" + object + "' command");
  reply::Bulk(call.out, "This user has no permissions to access the '" + object + "' " + (reason == "key" ? "key" : "channel"));
}

// Closes the clients signed in as a user that closes(username) names, but the
// caller, which the caller handles itself.
template <typename Pred>
void CloseClientsSignedInAs(CommandCall& call, Pred closes) {
  std::vector<uint64_t> ids;
  call.server->ForEachClient([&](Connection* c) {
    std::lock_guard<std::mutex> g(c->info_mu);
    if (c != call.conn && closes(c->username)) ids.push_back(c->id());
  });
  for (uint64_t id : ids) call.server->Kill(id);
}

bool AnyAllChannels(const AclUser& u) {
  if (u.all_channels) return true;
  return std::any_of(u.selectors.begin(), u.selectors.end(), [](const AclSelector& s) { return s.all_channels; });
}

// Redis' ACLKillPubsubClientsIfNeeded, after ACL SETUSER changed a user: its
// clients subscribed to a channel, pattern or shard channel that the new rules
// no longer allow are closed. A pattern must be one of the user's literally.
void CloseRevokedSubscribers(Server* srv, const AclUser& before, const AclUser& after) {
  if (AnyAllChannels(after)) return;
  // Redis skips when the new patterns include the old ones, a test that compares
  // the patterns' addresses and so only passes when the user had none.
  bool had_channels = AnyAllChannels(before) || !before.channels.empty() ||
                      std::any_of(before.selectors.begin(), before.selectors.end(),
                                  [](const AclSelector& s) { return !s.channels.empty(); });
  if (!had_channels) return;
  std::vector<std::string> allowed = after.channels;
  for (const AclSelector& s : after.selectors) allowed.insert(allowed.end(), s.channels.begin(), s.channels.end());
  std::vector<std::pair<Worker*, uint64_t>> subscribers;
  srv->ForEachClient([&](Connection* c) {
    std::lock_guard<std::mutex> g(c->info_mu);
    if (c->username == before.name && c->subscribed()) subscribers.emplace_back(c->worker(), c->id());
  });
  for (const auto& target : subscribers) {
    Worker* w = target.first;
    uint64_t id = target.second;
    // The subscriptions belong to the client's own thread: it checks them there.
    w->Post([w, id, allowed] {
      Connection* c = w->Find(id);
      if (c == nullptr) return;
      auto permitted = [&](const std::string& channel, bool is_pattern) {
        return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& p) {
          return is_pattern ? p == channel : StringMatch(p, channel);
        });
      };
      for (auto kind : {PubSubKind::kChannel, PubSubKind::kPattern, PubSubKind::kShard}) {
        for (const auto& ch : c->subscriptions[static_cast<int>(kind)]) {
          if (!permitted(ch, kind == PubSubKind::kPattern)) return c->CloseSoon();
        }
      }
    });
  }
}

constexpr char kNoAclFile[] =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER "
    "command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store "
    "users in the Redis configuration.";

void Load(CommandCall& call) {
  const std::string& path = call.server->config()->aclfile;
  if (path.empty()) return ReplyError(call, kNoAclFile);
  std::ifstream in(path);
  if (!in) return ReplyError(call, "ERR Error loading ACLs, opening file '" + path + "': No such file or directory");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  std::string err = call.server->acl().LoadLines(lines);
  if (!err.empty()) return ReplyError(call, "ERR Error loading ACLs: " + err);
  // As Redis, which frees every user but default (kept, with its new rules):
  // the clients signed in as any other user are closed, the caller after this reply.
  CloseClientsSignedInAs(call, [](const std::string& user) { return user != "default"; });
  if (call.conn->username != "default") call.conn->CloseAfterReply();
  reply::Ok(call.out);
}

void Save(CommandCall& call) {
  const std::string& path = call.server->config()->aclfile;
  if (path.empty()) return ReplyError(call, kNoAclFile);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& u : call.server->acl().Users()) out << u->Describe() << "\n";
    if (!out) return ReplyError(call, "ERR There was an error trying to save the ACLs. Please check the server logs for more information");
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return ReplyError(call, "ERR There was an error trying to save the ACLs. Please check the server logs for more information");
  }
  reply::Ok(call.out);
}

void AclCmd(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  Acl& acl = call.server->acl();
  auto arity = [&](size_t min, size_t max) {
    if (a.size() >= min && a.size() <= max) return true;
    ReplySubcommandSyntaxError(call);
    return false;
  };
  if (TokenEquals(sub, "setuser")) {
    if (!arity(3, SIZE_MAX)) return;
    // Redis' ACLStringHasSpaces: isspace() or NUL.
    if (a[2].find_first_of(std::string_view(" \t\n\v\f\r\0", 7)) != std::string::npos) {
      return ReplyError(call, "ERR Usernames can't contain spaces or null characters");
    }
    auto before = acl.Find(a[2]);
    std::string err = acl.SetUser(a[2], std::vector<std::string>(a.begin() + 3, a.end()));
    if (!err.empty()) return ReplyError(call, err);
    auto after = acl.Find(a[2]);
    if (before != nullptr && after != nullptr) CloseRevokedSubscribers(call.server, *before, *after);
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "getuser")) return arity(3, 3) ? GetUser(call) : void();
  if (TokenEquals(sub, "deluser")) {
    if (!arity(3, SIZE_MAX)) return;
    std::vector<std::string> names(a.begin() + 2, a.end());
    std::string err;
    int n = acl.DelUsers(names, &err);
    if (!err.empty()) return ReplyError(call, err);
    // Connections authenticated as a removed user are closed, as in Redis.
    CloseClientsSignedInAs(call, [&](const std::string& user) {
      return std::find(names.begin(), names.end(), user) != names.end();
    });
    return reply::Integer(call.out, n);
  }
  if (TokenEquals(sub, "list") || TokenEquals(sub, "users")) {
    if (!arity(2, 2)) return;
    bool list = TokenEquals(sub, "list");
    auto users = acl.Users();
    reply::ArrayHeader(call.out, users.size());
    for (const auto& u : users) reply::Bulk(call.out, list ? u->Describe() : u->name);
    return;
  }
  if (TokenEquals(sub, "whoami")) {
    if (!arity(2, 2)) return;
    std::lock_guard<std::mutex> g(call.conn->info_mu);
    return reply::Bulk(call.out, call.conn->username);
  }
  if (TokenEquals(sub, "cat")) {
    if (!arity(2, 3)) return;
    if (a.size() == 2) return reply::BulkArray(call.out, Acl::Categories());
    std::vector<std::string> names;
    if (!Acl::CategoryCommands(a[2], &names)) {
      return ReplyError(call, "ERR Unknown category '" + CString(a[2]).substr(0, 128) + "'");  // Redis' %.128s
    }
    return reply::BulkArray(call.out, names);
  }
  if (TokenEquals(sub, "log")) return Log(call);
  if (TokenEquals(sub, "genpass")) {
    if (!arity(2, 3)) return;
    int64_t bits = 256;
    if (a.size() == 3 && !IntArg(call, 2, &bits)) return;
    if (bits <= 0 || bits > 4096) {
      return ReplyError(call, "ERR ACL GENPASS argument must be the number of bits for the output password, a "
                              "positive number up to 4096");
    }
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char kHex[] = "0123456789abcdef";
    std::string pass;
    for (int64_t i = 0; i < (bits + 3) / 4; i++) pass.push_back(kHex[rng() & 15]);
    return reply::Bulk(call.out, pass);
  }
  if (TokenEquals(sub, "dryrun")) return arity(4, SIZE_MAX) ? DryRun(call) : void();
  if (TokenEquals(sub, "load")) return arity(2, 2) ? Load(call) : void();
  if (TokenEquals(sub, "save")) return arity(2, 2) ? Save(call) : void();
  if (TokenEquals(sub, "help") && a.size() == 2) {
    return ReplyHelp(call, {"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                            "CAT [<category>]",
                            "    List all commands that belong to <category>, or all command categories",
                            "    when no category is specified.",
                            "DELUSER <username> [<username> ...]",
                            "    Delete a list of users.",
                            "DRYRUN <username> <command> [<arg> ...]",
                            "    Returns whether the user can execute the given command without executing the command.",
                            "GETUSER <username>",
                            "    Get the user's details.",
                            "GENPASS [<bits>]",
                            "    Generate a secure 256-bit user password. The optional `bits` argument can",
                            "    be used to specify a different size.",
                            "LIST",
                            "    Show users details in config file format.",
                            "LOAD",
                            "    Reload users from the ACL file.",
                            "LOG [<count> | RESET]",
                            "    Show the ACL log entries.",
                            "SAVE",
                            "    Save the current config to the ACL file.",
                            "SETUSER <username> <attribute> [<attribute> ...]",
                            "    Create or modify a user with the specified attributes.",
                            "USERS",
                            "    List all the registered usernames.",
                            "WHOAMI",
                            "    Return the current connection username.",
                            "HELP",
                            "    Prints this help."});
  }
  ReplyUnknownSubcommand(call, "ACL");
}

}  // namespace

void RegisterAclCommands(CommandTable* t) {
  t->Add({"acl", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0, AclCmd, "server",
          "A container for Access List Control commands.", "6.0.0", nullptr,
          {{"acl|cat", -2}, {"acl|deluser", -3}, {"acl|dryrun", -4}, {"acl|genpass", -2}, {"acl|getuser", 3},
           {"acl|help", 2}, {"acl|list", 2}, {"acl|load", 2}, {"acl|log", -2}, {"acl|save", 2}, {"acl|setuser", -3},
           {"acl|users", 2}, {"acl|whoami", 2}}});
}

}  // namespace kvrocks
