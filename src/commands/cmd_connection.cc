// Connection commands: PING ECHO QUIT AUTH HELLO SELECT CLIENT.
#include <unordered_map>

#include "commands/cmd_client.h"
#include "commands/helpers.h"

namespace kvrocks {

namespace {

void Ping(CommandCall& call) {
  if (call.args.size() > 2) return ReplyError(call, "ERR wrong number of arguments for 'ping' command");
  if (call.resp == 2 && call.conn->subscribed()) {
    // A RESP2 subscriber can only read push-shaped replies.
    reply::ArrayHeader(call.out, 2);
    reply::Bulk(call.out, "pong");
    return reply::Bulk(call.out, call.args.size() == 2 ? call.args[1] : std::string());
  }
  if (call.args.size() == 2) return reply::Bulk(call.out, call.args[1]);
  reply::Simple(call.out, "PONG");
}

void Echo(CommandCall& call) { reply::Bulk(call.out, call.args[1]); }

void Quit(CommandCall& call) {
  reply::Ok(call.out);
  call.conn->CloseAfterReply();
}

// RESET: the connection's state as a new connection has it.
void Reset(CommandCall& call) {
  Connection* c = call.conn;
  Server* srv = call.server;
  if (c->monitor) {
    srv->RemoveMonitor(c);
    c->monitor = false;
  }
  c->db = 0;
  c->resp = 2;
  c->SetUser(srv->acl().AutoUser());
  c->in_multi = false;
  c->multi_error = false;
  c->queued.clear();
  // As Redis' clearClientConnectionState: OFF and a SKIP still to come end, but a
  // SKIP that applies to this very command (CLIENT REPLY SKIP; RESET) drops its reply.
  c->reply_off = c->reply_skip_next = false;
  srv->UnwatchAll(c);
  srv->UnsubscribeAll(c);
  srv->tracking().Disable(c);
  {
    std::lock_guard<std::mutex> g(c->info_mu);
    c->name.clear();
  }
  reply::Simple(call.out, "RESET");
}

// Signs conn in as user/pass; returns an error text or "". A failure is
// logged in ACL LOG.
std::string Authenticate(CommandCall& call, const std::string* user, const std::string& pass) {
  Acl& acl = call.server->acl();
  if (user == nullptr) {
    auto def = acl.Find("default");
    if (def != nullptr && def->nopass) {
      return "ERR AUTH <password> called without any password configured for the default user. Are you sure your "
             "configuration is correct?";
    }
  }
  const std::string& name = user == nullptr ? std::string("default") : *user;
  auto u = acl.Authenticate(name, pass);
  if (u == nullptr) {
    acl.Log("auth", "toplevel", "AUTH", name, call.conn->InfoLine());
    return "WRONGPASS invalid username-password pair or user is disabled.";
  }
  call.conn->SetUser(std::move(u));
  return "";
}

void Auth(CommandCall& call) {
  if (call.args.size() > 3) return ReplyError(call, kSyntaxError);
  std::string err = call.args.size() == 3 ? Authenticate(call, &call.args[1], call.args[2])
                                          : Authenticate(call, nullptr, call.args[1]);
  if (!err.empty()) return ReplyError(call, err);
  reply::Ok(call.out);
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
void Hello(CommandCall& call) {
  const auto& a = call.args;
  int64_t ver = call.conn->resp;
  if (a.size() >= 2) {
    if (!ParseInt64(a[1], &ver)) return ReplyError(call, "ERR Protocol version is not an integer or out of range");
    if (ver < 2 || ver > 3) return ReplyError(call, "NOPROTO unsupported protocol version");
  }
  std::string setname;
  bool has_setname = false;
  for (size_t i = 2; i < a.size(); i++) {
    size_t left = a.size() - i - 1;
    if (TokenEquals(a[i], "auth") && left >= 2) {
      std::string err = Authenticate(call, &a[i + 1], a[i + 2]);
      if (!err.empty()) return ReplyError(call, err);
      i += 2;
    } else if (TokenEquals(a[i], "setname") && left >= 1) {
      setname = a[++i];
      has_setname = true;
    } else {
      return ReplyError(call, "ERR Syntax error in HELLO option '" + CString(a[i]) + "'");
    }
  }
  if (!call.conn->authenticated) {
    return ReplyError(call,
                      "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> "
                      "AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol "
                      "version at the same time");
  }
  if (has_setname) {
    for (char c : setname) {
      if (c < '!' || c > '~') {
        return ReplyError(call, "ERR Client names cannot contain spaces, newlines or special characters.");
      }
    }
    std::lock_guard<std::mutex> g(call.conn->info_mu);
    call.conn->name = setname;
  }
  call.conn->resp = static_cast<int>(ver);
  call.server->tracking().SetResp(call.conn);
  call.resp = call.conn->resp;
  reply::MapHeader(call.out, 7, call.resp);
  reply::Bulk(call.out, "server");
  reply::Bulk(call.out, "redis");
  reply::Bulk(call.out, "version");
  reply::Bulk(call.out, kRedisVersion);
  reply::Bulk(call.out, "proto");
  reply::Integer(call.out, ver);
  reply::Bulk(call.out, "id");
  reply::Integer(call.out, static_cast<int64_t>(call.conn->id()));
  reply::Bulk(call.out, "mode");
  reply::Bulk(call.out, "standalone");
  reply::Bulk(call.out, "role");
  reply::Bulk(call.out, "master");
  reply::Bulk(call.out, "modules");
  reply::ArrayHeader(call.out, 0);
}

void Select(CommandCall& call) {
  int db;
  if (!DbIndexArg(call, 1, &db)) return;
  call.conn->db = db;
  reply::Ok(call.out);
}

bool ValidClientName(const std::string& name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

// Redis' client types (getClientType): the replica's master client is of type
// master, kvrocks' own clients are normal, or pubsub while subscribed (it has no
// replicas).
enum class ClientType { kNormal, kPubSub, kMaster, kReplica };

bool ParseClientType(CommandCall& call, const std::string& name, ClientType* type) {
  if (TokenEquals(name, "normal")) {
    *type = ClientType::kNormal;
  } else if (TokenEquals(name, "pubsub")) {
    *type = ClientType::kPubSub;
  } else if (TokenEquals(name, "master")) {
    *type = ClientType::kMaster;
  } else if (TokenEquals(name, "replica") || TokenEquals(name, "slave")) {
    *type = ClientType::kReplica;
  } else {
    ReplyError(call, "ERR Unknown client type '" + CString(name) + "'");
    return false;
  }
  return true;
}

ClientType TypeOf(Connection* c) {
  if (c->is_master) return ClientType::kMaster;
  return c->subscribed() ? ClientType::kPubSub : ClientType::kNormal;
}

// CLIENT LIST [TYPE type | ID id [id ...]]: clients with IDs in the order given.
void ClientList(CommandCall& call) {
  const auto& a = call.args;
  std::string text;
  if (a.size() > 3 && TokenEquals(a[2], "id")) {
    std::vector<uint64_t> ids;
    for (size_t i = 3; i < a.size(); i++) {
      int64_t id;
      if (!ParseInt64(a[i], &id)) return ReplyError(call, "ERR Invalid client ID");
      ids.push_back(static_cast<uint64_t>(id));
    }
    std::unordered_map<uint64_t, std::string> lines;
    call.server->ForEachClient([&](Connection* c) {
      if (std::find(ids.begin(), ids.end(), c->id()) != ids.end()) lines[c->id()] = c->InfoLine() + "\n";
    });
    for (uint64_t id : ids) {
      auto it = lines.find(id);
      if (it != lines.end()) text += it->second;
    }
    return reply::Verbatim(call.out, text, call.resp);
  }
  ClientType type = ClientType::kNormal;
  const bool typed = a.size() == 4 && TokenEquals(a[2], "type");
  if (a.size() != 2 && !typed) return ReplyError(call, kSyntaxError);
  if (typed && !ParseClientType(call, a[3], &type)) return;
  call.server->ForEachClient([&](Connection* c) {
    if (!typed || TypeOf(c) == type) text += c->InfoLine() + "\n";
  });
  reply::Verbatim(call.out, text, call.resp);
}

void ClientKill(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() == 3) {  // old form: CLIENT KILL addr:port
    uint64_t target = 0;
    call.server->ForEachClient([&](Connection* c) {
      if (c->peer() == a[2]) target = c->id();
    });
    if (target == 0) return ReplyError(call, "ERR No such client");
    if (target == call.conn->id()) {
      call.conn->CloseAfterReply();
    } else {
      call.server->Kill(target);
    }
    return reply::Ok(call.out);
  }
  uint64_t id = 0;
  std::string addr, laddr, user;
  bool skipme = true, has_type = false;
  ClientType type = ClientType::kNormal;
  for (size_t i = 2; i < a.size(); i += 2) {
    const std::string& k = a[i];
    if (i + 1 == a.size()) return ReplyError(call, kSyntaxError);  // an option without its value
    const std::string& v = a[i + 1];
    if (TokenEquals(k, "id")) {
      int64_t n;
      if (!ParseInt64(v, &n) || n <= 0) return ReplyError(call, "ERR client-id should be greater than 0");
      id = static_cast<uint64_t>(n);
    } else if (TokenEquals(k, "addr")) {
      addr = v;
    } else if (TokenEquals(k, "laddr")) {
      laddr = v;
    } else if (TokenEquals(k, "type")) {
      if (!ParseClientType(call, v, &type)) return;
      has_type = true;
    } else if (TokenEquals(k, "user")) {
      if (call.server->acl().Find(v) == nullptr) return ReplyError(call, "ERR No such user '" + CString(v) + "'");
      user = v;
    } else if (TokenEquals(k, "skipme")) {
      if (TokenEquals(v, "yes")) {
        skipme = true;
      } else if (TokenEquals(v, "no")) {
        skipme = false;
      } else {
        return ReplyError(call, kSyntaxError);
      }
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  std::vector<uint64_t> victims;
  call.server->ForEachClient([&](Connection* c) {
    if (id != 0 && c->id() != id) return;
    if (!addr.empty() && c->peer() != addr) return;
    if (!laddr.empty() && c->local() != laddr) return;
    if (has_type && TypeOf(c) != type) return;
    if (!user.empty()) {
      std::lock_guard<std::mutex> g(c->info_mu);
      if (c->username != user) return;
    }
    if (skipme && c == call.conn) return;
    victims.push_back(c->id());
  });
  for (uint64_t v : victims) {
    if (v == call.conn->id()) {
      call.conn->CloseAfterReply();
    } else {
      call.server->Kill(v);
    }
  }
  reply::Integer(call.out, static_cast<int64_t>(victims.size()));
}

void Client(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  if (ClientControl(call)) return;
  if (TokenEquals(sub, "id") && a.size() == 2) return reply::Integer(call.out, static_cast<int64_t>(call.conn->id()));
  if (TokenEquals(sub, "info") && a.size() == 2) return reply::Verbatim(call.out, call.conn->InfoLine() + "\n", call.resp);
  if (TokenEquals(sub, "list")) return ClientList(call);
  if (TokenEquals(sub, "kill")) {
    if (a.size() < 3) return ReplySubcommandSyntaxError(call);
    return ClientKill(call);
  }
  if (TokenEquals(sub, "setname")) {
    if (a.size() != 3) return ReplySubcommandSyntaxError(call);
    if (!ValidClientName(a[2])) {
      return ReplyError(call, "ERR Client names cannot contain spaces, newlines or special characters.");
    }
    std::lock_guard<std::mutex> g(call.conn->info_mu);
    call.conn->name = a[2];
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "getname")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    std::lock_guard<std::mutex> g(call.conn->info_mu);
    if (call.conn->name.empty()) return reply::Null(call.out, call.resp);
    return reply::Bulk(call.out, call.conn->name);
  }
  if (TokenEquals(sub, "help") && a.size() == 2) {
    static const std::vector<std::string> kHelp = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CACHING (YES|NO)",
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR",
        "    Return the client ID we are redirecting to when tracking is enabled.",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes).",
        "LIST [options ...]",
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Return clients of specified type.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching.",
        "TRACKINGINFO",
        "    Report tracking status for the current connection.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "HELP",
        "    Prints this help."};
    return ReplyHelp(call, kHelp);
  }
  if (TokenEquals(sub, "id") || TokenEquals(sub, "info") || TokenEquals(sub, "help")) {
    return ReplySubcommandSyntaxError(call);
  }
  ReplyUnknownSubcommand(call, "CLIENT");
}

}  // namespace

void RegisterConnectionCommands(CommandTable* t) {
  const uint32_t f = kCmdFast | kCmdLoading | kCmdStale;
  // No "stale" flag: on a replica whose link is down with replica-serve-stale-data no, Redis answers
  // -MASTERDOWN to PING too. (kvrocks serves the previous data set while it loads, so no -LOADING.)
  t->Add({"ping", -1, kCmdFast | kCmdSubscribedOk, 0, 0, 0, Ping, "connection", "Returns the server's liveliness response.", "1.0.0"});
  t->Add({"echo", 2, f, 0, 0, 0, Echo, "connection", "Returns the given string.", "1.0.0"});
  t->Add({"quit", -1, kCmdAllowBusy | f | kCmdNoAuth | kCmdNoMulti | kCmdNoScript | kCmdSubscribedOk, 0, 0, 0, Quit, "connection", "Closes the connection.", "1.0.0"});
  t->Add({"auth", -2, kCmdAllowBusy | f | kCmdNoAuth | kCmdNoScript, 0, 0, 0, Auth, "connection",
          "Authenticates the connection.", "1.0.0"});
  t->Add({"hello", -1, kCmdAllowBusy | f | kCmdNoAuth | kCmdNoScript, 0, 0, 0, Hello,
          "connection", "Handshakes with the Redis server.", "6.0.0"});
  t->Add({"reset", 1, kCmdAllowBusy | f | kCmdNoAuth | kCmdNoMulti | kCmdNoScript | kCmdSubscribedOk, 0, 0, 0, Reset, "connection",
          "Resets the connection.", "6.2.0"});
  t->Add({"select", 2, f, 0, 0, 0, Select, "connection", "Changes the selected database.", "1.0.0"});
  t->Add({"client", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0, Client, "connection",
          "A container for client connection commands.", "2.4.0", nullptr,
          {{"client|id", 2}, {"client|info", 2}, {"client|list", -2}, {"client|kill", -3}, {"client|setname", 3},
           {"client|getname", 2}, {"client|help", 2}, {"client|pause", -3}, {"client|unpause", 2}, {"client|reply", 3},
           {"client|unblock", -3}, {"client|no-evict", 3}, {"client|tracking", -3}, {"client|caching", 3},
           {"client|getredir", 2}, {"client|trackinginfo", 2}}});
}

}  // namespace kvrocks
