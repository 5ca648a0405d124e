// Replication commands: REPLICAOF / SLAVEOF, ROLE, WAIT, FAILOVER, and the
// master side of the handshake: REPLCONF, SYNC and PSYNC.
#include <fcntl.h>
#include <glog/logging.h>

#include "commands/helpers.h"
#include "replication/native_frames.h"
#include "replication/rdb_snapshot_sender.h"
#include "replication/replica.h"
#include "replication/wal_sender.h"
#include "scripting/functions.h"
#include "server/connection.h"
#include "server/server.h"

namespace kvrocks {

namespace {

// The address part of "ip:port" ("[v6]:port" too).
std::string IpOf(const std::string& peer) {
  size_t colon = peer.rfind(':');
  std::string ip = colon == std::string::npos ? peer : peer.substr(0, colon);
  if (ip.size() >= 2 && ip.front() == '[') ip = ip.substr(1, ip.size() - 2);
  return ip;
}

// REPLICAOF / KSLAVEOF host port.
void FollowMaster(CommandCall& call, bool kvrocks) {
  const auto& a = call.args;
  Replica* rep = call.server->replica();
  int64_t port;
  if (!IntArg(call, 2, &port)) return;
  if (port <= 0 || port > 65535) return ReplyError(call, "ERR Invalid master port");
  Replica::Info info = rep->GetInfo();
  if (rep->is_replica() && rep->kvrocks_requested() == kvrocks && info.host == a[1] && info.port == port) {
    return reply::Simple(call.out, "OK Already connected to specified master");
  }
  const std::string master = a[1] + " " + std::to_string(port);
  LOG(INFO) << (kvrocks ? "KSLAVEOF " : "REPLICAOF ") << a[1] << ":" << port << " enabled (user request)";
  call.server->config()->SetValue(&Config::replicaof, kvrocks ? "" : master);
  call.server->config()->SetValue(&Config::kslaveof, kvrocks ? master : "");
  rep->Follow(a[1], static_cast<int>(port), kvrocks);
  reply::Ok(call.out);
}

// REPLICAOF host port | NO ONE
void ReplicaOf(CommandCall& call) {
  const auto& a = call.args;
  Replica* rep = call.server->replica();
  if (TokenEquals(a[1], "no") && TokenEquals(a[2], "one")) {
    if (rep->is_replica()) {
      LOG(INFO) << "MASTER MODE enabled (user request)";
      rep->Unfollow();
      call.server->config()->SetValue(&Config::replicaof, "");
      call.server->config()->SetValue(&Config::kslaveof, "");
    }
    return reply::Ok(call.out);
  }
  FollowMaster(call, false);
}

// KSLAVEOF host port | NO ONE: replicaof for a kvrocks master (native_follower.h).
void KSlaveOf(CommandCall& call) {
  const auto& a = call.args;
  Replica* rep = call.server->replica();
  if (TokenEquals(a[1], "no") && TokenEquals(a[2], "one")) {
    if (rep->follows_kvrocks()) {
      LOG(INFO) << "MASTER MODE enabled (user request: KSLAVEOF NO ONE)";
      rep->Unfollow();
      call.server->config()->SetValue(&Config::kslaveof, "");
    }
    return reply::Ok(call.out);
  }
  FollowMaster(call, true);
}

// KPSYNC wal-id seq: a kvrocks replica asks for the stream (wal_sender.h).
void KPSync(CommandCall& call) {
  const auto& a = call.args;
  int64_t seq;
  if (!ParseInt64(a[2], &seq) || seq < 0) return ReplyError(call, kNotIntegerError);
  if (!call.out->empty()) return ReplyError(call, "ERR SYNC and PSYNC are invalid with pending output");
  if (call.server->config()->rocksdb_wal_compression != "no") {
    // RocksDB 7.8's log reader misreads compressed records now and then (skipped
    // batches, a failed assertion): the stream would be wrong, or end the master.
    return ReplyError(call,
                      "ERR kvrocks replicas need rocksdb.wal-compression no on their master: RocksDB 7.8 misreads "
                      "compressed write-ahead logs");
  }
  WalSender::Request req;
  req.fd = ::fcntl(call.conn->fd(), F_DUPFD_CLOEXEC, 0);
  if (req.fd < 0) return ReplyError(call, "ERR can't hand the connection to the stream");
  const Connection::ReplConf& rc = call.conn->replconf;
  req.ip = rc.ip.empty() ? IpOf(call.conn->peer()) : rc.ip;
  req.port = rc.port;
  req.wal_id = a[1];
  req.seq = static_cast<uint64_t>(seq);
  req.timeout_s = call.server->config()->repl_timeout;
  LOG(INFO) << "kvrocks replica " << call.conn->peer() << " asks for the stream from sequence " << seq;
  // The stream owns the socket from here; the worker lets go of its copy.
  call.server->wal_sender()->Start(std::move(req));
  call.conn->CloseSoon();
}

void Role(CommandCall& call) {
  Replica* rep = call.server->replica();
  if (!rep->is_replica()) {
    reply::ArrayHeader(call.out, 3);
    reply::Bulk(call.out, "master");
    reply::Integer(call.out, static_cast<int64_t>(rep->offset()));
    // kvrocks replicas, their offsets sequence numbers of this server's write-ahead log.
    std::vector<WalSender::ReplicaInfo> replicas = call.server->wal_sender()->Replicas();
    reply::ArrayHeader(call.out, replicas.size());
    for (const auto& r : replicas) {
      reply::ArrayHeader(call.out, 3);
      reply::Bulk(call.out, r.ip);
      reply::Bulk(call.out, std::to_string(r.port));
      reply::Bulk(call.out, std::to_string(r.acked));
    }
    return;
  }
  Replica::Info info = rep->GetInfo();
  reply::ArrayHeader(call.out, 5);
  reply::Bulk(call.out, "slave");
  reply::Bulk(call.out, info.host);
  reply::Integer(call.out, info.port);
  reply::Bulk(call.out, info.state);
  reply::Integer(call.out, info.link_up ? static_cast<int64_t>(info.offset) : -1);
}

// WAIT numreplicas timeout: Redis' waitCommand over kvrocks replicas
// (KSLAVEOF). A Redis master waits for the offset of the client's last write;
// here it is the sequence number of the last write of any client when WAIT
// runs (at least as late), or none for a client that never wrote (every
// streaming replica counts, as Redis counts them for a woff of 0). Replicas are
// asked to acknowledge at once. The reply is the count of replicas that
// acknowledged it: as soon as there are numreplicas, else when the timeout
// expires (never with timeout 0, as in Redis), or on CLIENT UNBLOCK. In MULTI
// it answers the count at once.
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
  const uint64_t seq = call.conn->wrote ? call.server->storage()->LatestSequence() : 0;
  const int64_t acked = call.server->ReplicasAcked(seq);
  if (wanted <= acked || call.in_exec) return reply::Integer(call.out, acked);
  call.server->WaitForReplicaAcks(call.conn, seq, wanted, static_cast<uint64_t>(timeout));
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]. Redis' checks in its
// order; no Redis replica connects to kvrocks, and a failover does not hand
// over to kvrocks replicas (KSLAVEOF NO ONE on one does), so none ever starts:
// a valid call ends at "requires connected replicas", as on a Redis master
// without replicas.
void Failover(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() == 2 && TokenEquals(a[1], "abort")) return ReplyError(call, "ERR No failover in progress.");
  int64_t timeout_ms = 0;
  bool force = false, to = false;
  for (size_t j = 1; j < a.size(); j++) {
    if (TokenEquals(a[j], "timeout") && j + 1 < a.size() && timeout_ms == 0) {
      if (!IntArg(call, j + 1, &timeout_ms)) return;
      if (timeout_ms <= 0) return ReplyError(call, "ERR FAILOVER timeout must be greater than 0");
      j++;
    } else if (TokenEquals(a[j], "to") && j + 2 < a.size() && !to) {
      int64_t port;
      if (!IntArg(call, j + 2, &port)) return;
      to = true;
      j += 2;
    } else if (TokenEquals(a[j], "force") && !force) {
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

// REPLCONF option value ... : Redis' replconfCommand. Options are applied in
// order until one fails. ACK from a client that is not a replica and GETACK
// end the command without a reply, as in Redis (kvrocks' replica sends its
// ACKs on its own link every second; a GETACK from a client adds none).
void ReplConf(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() % 2 == 0) return ReplyError(call, kSyntaxError);
  Connection::ReplConf& rc = call.conn->replconf;
  for (size_t j = 1; j < a.size(); j += 2) {
    const std::string& opt = a[j];
    const std::string& v = a[j + 1];
    // The port and address are checked as Redis checks them, not kept: Redis
    // shows them in INFO replication's replica lines, which list no snapshot
    // clients here.
    if (TokenEquals(opt, "listening-port")) {
      int64_t port;
      if (!IntArg(call, j + 1, &port)) return;
      rc.port_announced = true;
      rc.port = static_cast<int>(port);
    } else if (TokenEquals(opt, "ip-address")) {
      if (v.size() >= 256) {  // NET_HOST_STR_LEN
        return ReplyError(call, "ERR REPLCONF ip-address provided by replica instance is too long: " +
                                    std::to_string(v.size()) + " bytes");
      }
      rc.ip = v;
    } else if (TokenEquals(opt, "capa")) {
      if (TokenEquals(v, "eof")) rc.capa_eof = true;  // others (psync2) change nothing here
      if (TokenEquals(v, "kvrocks")) rc.capa_kvrocks = true;
    } else if (TokenEquals(opt, "ack") || TokenEquals(opt, "getack")) {
      return;  // the clients that may send these are never served a stream here
    } else if (TokenEquals(opt, "rdb-only")) {
      int64_t n;
      if (!IntArg(call, j + 1, &n)) return;
      if (n < 0 || n > 1) return ReplyError(call, "ERR value is out of range, value must between 0 and 1");
      rc.rdb_only = n == 1;
    } else if (TokenEquals(opt, "rdb-filter-only")) {
      std::vector<std::string> filters;
      if (!SplitArgs(v, &filters)) return ReplyError(call, "ERR Missing rdb-filter-only values");
      rc.exclude_data = true;
      rc.exclude_functions = true;
      for (const auto& f : filters) {
        if (!TokenEquals(f, "functions")) {
          return ReplyError(call, "ERR Unsupported rdb-filter-only option: " + CString(f));
        }
        rc.exclude_functions = false;
      }
    } else {
      return ReplyError(call, "ERR Unrecognized REPLCONF option: " + CString(opt));
    }
  }
  reply::Ok(call.out);
}

// How long a replica waits for its refusal (below): the period of Redis' replicationCron.
constexpr uint64_t kReplicaRefusalDelayMs = 1000;

// SYNC, and PSYNC replid offset [FAILOVER]: Redis' syncCommand. kvrocks keeps
// no replication backlog and does not stream its writes to replicas, so what
// it serves is an RDB snapshot: the client gets +FULLRESYNC (PSYNC), the RDB,
// and the connection closes, as Redis closes a replica that sent REPLCONF
// rdb-only 1 (RdbSnapshotSender). A replica (Redis' or kvrocks') would load
// the snapshot, see the link close, and fetch another on every reconnection,
// never getting the writes in between: one that did not ask for rdb-only is
// refused. Replicas announce their port (REPLCONF listening-port) and send
// PSYNC, then SYNC once PSYNC fails; redis-cli does neither, so a plain SYNC
// from a client that announced no port gets the snapshot (`redis-cli --rdb`
// before 7.0 sends only capa eof and SYNC). A PSYNC FAILOVER with this replica's replid would make Redis a master that
// then serves the old one as a replica; kvrocks cannot serve it, so it is
// refused in the same way and kvrocks stays a replica (the failover aborts).
// A kvrocks replica (REPLCONF capa kvrocks) gets KVROCKS to its PSYNC at once and
// follows this server with KPSYNC instead (native_frames.h).
void Sync(CommandCall& call) {
  const auto& a = call.args;
  const bool psync = TokenEquals(a[0], "psync");
  Replica* rep = call.server->replica();
  if (psync && a.size() > 3 && TokenEquals(a[3], "failover")) {
    if (!rep->is_replica()) return ReplyError(call, "ERR PSYNC FAILOVER can't be sent to a master.");
    if (a[1] != rep->replid()) return ReplyError(call, "ERR PSYNC FAILOVER replid must match my replid.");
  }
  if (psync && call.conn->replconf.capa_kvrocks && !call.conn->replconf.rdb_only) {
    // A kvrocks replica (REPLICAOF): it follows this master by its write-ahead log.
    return ReplyError(call, native::kUseKpsync);
  }
  if (rep->is_replica() && !rep->link_up()) {
    return ReplyError(call, "NOMASTERLINK Can't SYNC while not connected with my master");
  }
  if (!call.out->empty()) return ReplyError(call, "ERR SYNC and PSYNC are invalid with pending output");
  const Connection::ReplConf& rc = call.conn->replconf;
  if ((rc.exclude_data || rc.exclude_functions) && !rc.capa_eof) {
    return ReplyError(call, "ERR Filtered replica requires EOF capability");
  }
  LOG(INFO) << "Replica " << call.conn->peer() << " asks for synchronization";
  if (psync) {
    int64_t offset;
    if (!ParseInt64(a[2], &offset)) {
      LOG(WARNING) << "Replica " << call.conn->peer() << " asks for synchronization but with a wrong offset";
      return ReplyError(call, kNotIntegerError);
    }
    // No backlog: every PSYNC needs a full sync. "?" asks for one on purpose.
    if (a[1] != "?") call.server->stats().sync_partial_err.fetch_add(1);
  }
  if (!rc.rdb_only && (psync || rc.port_announced)) {
    // A Redis replica answered -ERR to SYNC reconnects at once (its
    // cancelReplicationHandshake), thousands of times a second, each attempt
    // a log line here and there. The refusal comes after a second, the pace
    // of Redis' replicationCron, the connection blocked meanwhile as WAIT's.
    call.conn->RequestBlock({}, kReplicaRefusalDelayMs, {},
                            "-ERR kvrocks streams no commands to replicas: it serves replicas that ask for an "
                            "RDB snapshot only (REPLCONF rdb-only 1)\r\n");
    return;
  }
  RdbSnapshotSender::Request req;
  req.fd = ::fcntl(call.conn->fd(), F_DUPFD_CLOEXEC, 0);
  if (req.fd < 0) return ReplyError(call, "ERR BGSAVE failed, replication can't continue");
  req.peer = call.conn->peer();
  if (psync) req.preamble = "+FULLRESYNC " + rep->replid() + " " + std::to_string(rep->offset()) + "\r\n";
  req.include_data = !rc.exclude_data;
  if (!rc.exclude_functions) {
    for (const auto& lib : scripting::FunctionRegistry::Instance().Libraries()) req.function_codes.push_back(lib.code);
  }
  req.dir = call.server->config()->dir;
  req.timeout_s = call.server->config()->repl_timeout;
  // The transfer owns the socket from here; the worker lets go of its copy.
  call.server->rdb_sender()->Start(std::move(req));
  call.conn->CloseSoon();
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
  t->Add({"replconf", -1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy, 0, 0, 0, ReplConf,
          "server", "An internal command for configuring the replication stream", "3.0.0"});
  t->Add({"sync", 1, kCmdAdmin | kCmdNoScript | kCmdDenyMulti, 0, 0, 0, Sync, "server",
          "Internal command used for replication", "1.0.0"});
  t->Add({"psync", -3, kCmdAdmin | kCmdNoScript | kCmdDenyMulti, 0, 0, 0, Sync, "server",
          "Internal command used for replication", "2.8.0"});
  t->Add({"kslaveof", 3, adm, 0, 0, 0, KSlaveOf, "server",
          "Makes the server a replica of a kvrocks master (its storage and write-ahead log), or promotes it.",
          "7.0.0"});
  t->Add({"kpsync", 3, kCmdAdmin | kCmdNoScript | kCmdDenyMulti, 0, 0, 0, KPSync, "server",
          "Internal command of kvrocks replicas: the master's write-ahead log from a sequence number", "7.0.0"});
  t->Add({"role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, Role, "server", "Returns the replication role.", "2.8.12"});
}

}  // namespace kvrocks
