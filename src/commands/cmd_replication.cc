// Replication commands: REPLICAOF / SLAVEOF, ROLE, WAIT and FAILOVER.
#include <glog/logging.h>

#include "commands/helpers.h"
#include "replication/replica.h"

namespace kvrocks {

namespace {

// REPLICAOF host port | NO ONE
void ReplicaOf(CommandCall& call) {
  const auto& a = call.args;
  Replica* rep = call.server->replica();
  if (EqualsIgnoreCase(a[1], "no") && EqualsIgnoreCase(a[2], "one")) {
    if (rep->is_replica()) {
      LOG(INFO) << "MASTER MODE enabled (user request)";
      rep->Unfollow();
      call.server->config()->replicaof.clear();
    }
    return reply::Ok(call.out);
  }
  int64_t port;
  if (!IntArg(call, 2, &port)) return;
  if (port <= 0 || port > 65535) return ReplyError(call, "ERR Invalid master port");
  Replica::Info info = rep->GetInfo();
  if (rep->is_replica() && info.host == a[1] && info.port == port) {
    return reply::Simple(call.out, "OK Already connected to specified master");
  }
  LOG(INFO) << "REPLICAOF " << a[1] << ":" << port << " enabled (user request)";
  call.server->config()->replicaof = a[1] + " " + std::to_string(port);
  rep->Follow(a[1], static_cast<int>(port));
  reply::Ok(call.out);
}

void Role(CommandCall& call) {
  Replica* rep = call.server->replica();
  if (!rep->is_replica()) {
    reply::ArrayHeader(call.out, 3);
    reply::Bulk(call.out, "master");
    reply::Integer(call.out, static_cast<int64_t>(rep->offset()));
    return reply::ArrayHeader(call.out, 0);
  }
  Replica::Info info = rep->GetInfo();
  reply::ArrayHeader(call.out, 5);
  reply::Bulk(call.out, "slave");
  reply::Bulk(call.out, info.host);
  reply::Integer(call.out, info.port);
  reply::Bulk(call.out, info.state);
  reply::Integer(call.out, info.link_up ? static_cast<int64_t>(info.offset) : -1);
}

// WAIT numreplicas timeout. kvrocks has no replicas of its own yet (nothing
// connects to it as a Redis replica), so the count is always 0: WAIT returns
// at once when 0 replicas are wanted, else when the timeout expires (never
// with timeout 0, as in Redis), or on CLIENT UNBLOCK.
void Wait(CommandCall& call) {
  if (call.server->replica()->is_replica()) {
    return ReplyError(call,
                      "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
                      "replica is configured to be writable (which is not the default) writes to replicas are just "
                      "local and are not propagated.");
  }
  int64_t wanted, timeout;
  if (!IntArg(call, 1, &wanted)) return;
  if (!ParseInt64(call.args[2], &timeout)) return ReplyError(call, "ERR timeout is not an integer or out of range");
  if (timeout < 0) return ReplyError(call, "ERR timeout is negative");
  const int64_t acked = 0;
  if (wanted <= acked || call.in_exec) return reply::Integer(call.out, acked);
  call.conn->RequestBlock({}, static_cast<uint64_t>(timeout), {}, ":" + std::to_string(acked) + "\r\n");
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]. Redis' checks in its
// order; kvrocks has no replicas of its own (nothing connects to it as a Redis
// replica), so no failover ever starts: a valid call ends at "requires
// connected replicas", as on a Redis master without replicas.
void Failover(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() == 2 && EqualsIgnoreCase(a[1], "abort")) return ReplyError(call, "ERR No failover in progress.");
  int64_t timeout_ms = 0;
  bool force = false, to = false;
  for (size_t j = 1; j < a.size(); j++) {
    if (EqualsIgnoreCase(a[j], "timeout") && j + 1 < a.size() && timeout_ms == 0) {
      if (!IntArg(call, j + 1, &timeout_ms)) return;
      if (timeout_ms <= 0) return ReplyError(call, "ERR FAILOVER timeout must be greater than 0");
      j++;
    } else if (EqualsIgnoreCase(a[j], "to") && j + 2 < a.size() && !to) {
      int64_t port;
      if (!IntArg(call, j + 2, &port)) return;
      to = true;
      j += 2;
    } else if (EqualsIgnoreCase(a[j], "force") && !force) {
      force = true;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  if (call.server->replica()->is_replica()) {
    return ReplyError(call, "ERR FAILOVER is not valid when server is a replica.");
  }
  ReplyError(call, "ERR FAILOVER requires connected replicas.");
}

}  // namespace

void RegisterReplicationCommands(CommandTable* t) {
  const uint32_t adm = kCmdAdmin | kCmdNoScript | kCmdStale;
  t->Add({"replicaof", 3, adm, 0, 0, 0, ReplicaOf, "server", "Configures a server as replica of another, or promotes it to a master.", "5.0.0"});
  t->Add({"slaveof", 3, adm, 0, 0, 0, ReplicaOf, "server", "Sets a Redis server as a replica of another, or promotes it to being a master.", "1.0.0"});
  t->Add({"wait", 3, kCmdNoScript | kCmdBlocking, 0, 0, 0, Wait, "generic",
          "Blocks until the asynchronous replication of all preceding write commands sent by the connection is "
          "completed.", "3.0.0"});
  t->Add({"failover", -1, adm, 0, 0, 0, Failover, "server",
          "Start a coordinated failover between this server and one of its replicas.", "6.2.0"});
  t->Add({"role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, Role, "server", "Returns the replication role.", "2.8.12"});
}

}  // namespace kvrocks
