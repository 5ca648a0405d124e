// DUMP and RESTORE in Redis' serialization format (an RDB object, the RDB
// version and a CRC64), so values move between Redis and kvrocks (and kvrocks
// can be the target of a Redis MIGRATE), and MIGRATE, which sends keys to
// another server (Redis or kvrocks) as RESTOREs.
#include <cstdlib>
#include <mutex>

#include "commands/helpers.h"
#include "common/time_util.h"
#include "replication/rdb_object.h"
#include "server/migrate_sockets.h"

namespace kvrocks {

namespace {

void Dump(CommandCall& call) {
  Database db = CurrentDb(call);
  std::string payload;
  Status s = rdb::DumpObject(&db, call.args[1], &payload);
  if (s.IsNotFound()) return reply::Null(call.out, call.resp);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Bulk(call.out, payload);
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
void Restore(CommandCall& call) {
  const auto& a = call.args;
  bool replace = false, absttl = false, idle_given = false, freq_given = false;
  int64_t idle_s = 0;
  for (size_t j = 4; j < a.size(); j++) {
    bool more = j + 1 < a.size();
    int64_t v;
    if (TokenEquals(a[j], "replace")) {
      replace = true;
    } else if (TokenEquals(a[j], "absttl")) {
      absttl = true;
    } else if (TokenEquals(a[j], "idletime") && more && !freq_given) {
      if (!IntArg(call, j + 1, &v)) return;
      if (v < 0) return ReplyError(call, "ERR Invalid IDLETIME value, must be >= 0");
      idle_given = true;
      idle_s = v;
      j++;
    } else if (TokenEquals(a[j], "freq") && more && !idle_given) {
      if (!IntArg(call, j + 1, &v)) return;
      if (v < 0 || v > 255) return ReplyError(call, "ERR Invalid FREQ value, must be >= 0 and <= 255");
      freq_given = true;
      j++;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  Database db = CurrentDb(call);
  LoadedKey lk;
  Status s = db.Load(a[1], &lk);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!replace && lk.live) return ReplyError(call, "BUSYKEY Target key name already exists.");
  int64_t ttl;
  if (!IntArg(call, 2, &ttl)) return;
  if (ttl < 0) return ReplyError(call, "ERR Invalid TTL value, must be >= 0");
  rdb::Object obj;
  s = rdb::Reader::ParseDump(a[3], &obj);
  if (!s.ok()) return ReplyStatusError(call, s);
  // An empty collection or a module value cannot be restored.
  if (obj.Empty() || !obj.module_name.empty()) return ReplyError(call, "ERR Bad data format");
  bool deleted = false;
  if (replace) {
    s = db.Delete(a[1], &deleted);
    if (!s.ok()) return ReplyStatusError(call, s);
  }
  uint64_t expire = 0;
  if (ttl > 0) expire = absttl ? static_cast<uint64_t>(ttl) : NowMs() + static_cast<uint64_t>(ttl);
  if (expire != 0 && db.AlreadyExpired(expire)) return reply::Ok(call.out);  // already expired: nothing is created
  s = rdb::RestoreObject(&db, a[1], obj, expire);
  if (!s.ok()) return ReplyStatusError(call, s);
  // (FREQ has no effect: the eviction policy is never an LFU one, as Redis ignores it then.)
  if (idle_given) call.ctx->SetAccessTime(a[1], AccessClock::LruForIdle(idle_s, AccessClock::Now()));
  reply::Ok(call.out);
}

void AppendBulk(std::string* out, std::string_view s) {
  out->append("$").append(std::to_string(s.size())).append("\r\n").append(s).append("\r\n");
}

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
// [AUTH2 username password] [KEYS key ...], as Redis 7.0's migrateCommand: the keys
// travel as RESTORE commands over a cached connection, with one retry on a
// connection that turns out closed; without COPY each key the target accepted is
// deleted here.
void Migrate(CommandCall& call) {
  const auto& a = call.args;
  bool copy = false, replace = false;
  const std::string *username = nullptr, *password = nullptr;
  size_t first_key = 3, num_keys = 1;
  for (size_t j = 6; j < a.size(); j++) {
    size_t more = a.size() - 1 - j;
    if (TokenEquals(a[j], "copy")) {
      copy = true;
    } else if (TokenEquals(a[j], "replace")) {
      replace = true;
    } else if (TokenEquals(a[j], "auth")) {
      if (more == 0) return ReplyError(call, kSyntaxError);
      password = &a[++j];
    } else if (TokenEquals(a[j], "auth2")) {
      if (more < 2) return ReplyError(call, kSyntaxError);
      username = &a[++j];
      password = &a[++j];
    } else if (TokenEquals(a[j], "keys")) {
      if (!a[3].empty()) {
        return ReplyError(call, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
      }
      first_key = j + 1;
      num_keys = a.size() - j - 1;
      break;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  int64_t timeout, dbid;
  if (!IntArg(call, 5, &timeout) || !IntArg(call, 4, &dbid)) return;
  if (timeout <= 0) timeout = 1000;
  const int timeout_ms = static_cast<int>(std::min<int64_t>(timeout, INT32_MAX));
  Database db = CurrentDb(call);
  std::vector<std::string> keys;
  for (size_t j = 0; j < num_keys; j++) {
    bool exists = false;
    Status s = db.Exists(a[first_key + j], &exists);
    if (!s.ok()) return ReplyStatusError(call, s);
    if (exists) keys.push_back(a[first_key + j]);
  }
  if (keys.empty()) return reply::Simple(call.out, "NOKEY");
  const int port = std::atoi(a[2].c_str());  // as Redis reads it
  const std::string name = a[1] + ":" + a[2];
  MigrateSockets& sockets = call.server->migrate_sockets();
  std::lock_guard<std::mutex> g(sockets.mu());
  for (bool may_retry = true;; may_retry = false) {
    Status connected;
    MigrateSockets::Cached* cs = sockets.Get(name, a[1], port, timeout_ms, &connected);
    if (cs == nullptr && (connected.IsNotFound() || connected.IsTimedOut())) {
      return ReplyError(call, "IOERR error or timeout connecting to the client");
    }
    if (cs == nullptr) {
      // Refused (or reset): Redis' blocking connect reports only a timeout, and the
      // error shows when it writes; so does it here, with Redis' one retry.
      if (may_retry) continue;
      return ReplyError(call, "IOERR error or timeout writing to target instance");
    }
    std::string cmd;
    if (password != nullptr) {
      cmd.append(username ? "*3\r\n" : "*2\r\n");
      AppendBulk(&cmd, "AUTH");
      if (username) AppendBulk(&cmd, *username);
      AppendBulk(&cmd, *password);
    }
    const bool select = cs->last_dbid != dbid;
    if (select) {
      cmd.append("*2\r\n");
      AppendBulk(&cmd, "SELECT");
      AppendBulk(&cmd, std::to_string(dbid));
    }
    std::vector<std::string> sent;  // the keys still there when serialized
    for (const auto& key : keys) {
      uint64_t expire_ms = 0;
      Status s = db.GetExpire(key, &expire_ms);
      if (s.IsNotFound()) continue;
      if (!s.ok()) return ReplyStatusError(call, s);
      int64_t ttl = 0;
      if (expire_ms != 0) {
        ttl = static_cast<int64_t>(expire_ms) - static_cast<int64_t>(NowMs());
        if (ttl < 0) continue;
        if (ttl < 1) ttl = 1;
      }
      std::string payload;
      s = rdb::DumpObject(&db, key, &payload);
      if (s.IsNotFound()) continue;
      if (!s.ok()) return ReplyStatusError(call, s);
      cmd.append(replace ? "*5\r\n" : "*4\r\n");
      AppendBulk(&cmd, "RESTORE");
      AppendBulk(&cmd, key);
      AppendBulk(&cmd, std::to_string(ttl));
      AppendBulk(&cmd, payload);
      if (replace) AppendBulk(&cmd, "REPLACE");
      sent.push_back(key);
    }
    MasterLink* link = cs->link.get();
    Status io = link->Send(cmd, timeout_ms);
    bool write_error = !io.ok();
    std::string auth_reply, select_reply;
    if (io.ok() && password != nullptr) io = link->ReadLine(&auth_reply, timeout_ms);
    if (io.ok() && select) io = link->ReadLine(&select_reply, timeout_ms);
    bool error_from_target = false, socket_error = false;
    size_t replied = 0;
    if (io.ok()) {
      for (; replied < sent.size(); replied++) {
        std::string restore_reply;
        io = link->ReadLine(&restore_reply, timeout_ms);
        if (!io.ok()) {
          socket_error = true;
          break;
        }
        auto is_error = [](const std::string& line) { return !line.empty() && line[0] == '-'; };
        const std::string* err = nullptr;
        if (password != nullptr && is_error(auth_reply)) {
          err = &auth_reply;
        } else if (select && is_error(select_reply)) {
          err = &select_reply;
        } else if (is_error(restore_reply)) {
          err = &restore_reply;
        }
        if (err != nullptr) {
          if (!error_from_target) {
            cs->last_dbid = -1;
            error_from_target = true;
            ReplyError(call, "ERR Target instance replied with error: " + err->substr(1));
          }
        } else if (!copy) {
          bool deleted;
          Status s = db.Delete(sent[replied], &deleted);
          if (!s.ok()) return ReplyStatusError(call, s);
          if (deleted) call.ctx->AddDirty(1);  // Redis counts each key it removes
        }
      }
      if (!socket_error) {
        if (!error_from_target) {
          cs->last_dbid = dbid;
          reply::Ok(call.out);
        }
        return;
      }
    }
    // A socket error: the cached connection is dropped. Retried once, unless it timed
    // out or the target may have processed some of the commands.
    bool timed_out = io.IsTimedOut();
    sockets.Close(name);
    if (error_from_target) return;
    if (may_retry && !timed_out && replied == 0) continue;
    return ReplyError(call, std::string("IOERR error or timeout ") + (write_error ? "writing" : "reading") +
                                " to target instance");
  }
}

}  // namespace

void RegisterDumpCommands(CommandTable* t) {
  t->Add({"dump", 2, kCmdReadOnly, 1, 1, 1, Dump, "generic", "Returns a serialized representation of the value stored at a key.", "2.6.0"});
  // Exclusive: it waits on the network while it holds its keys, and deletes them after.
  t->Add({"migrate", -6, kCmdWrite | kCmdExclusive, 3, 3, 1, Migrate, "generic", "Atomically transfers a key from one Redis instance to another.", "2.6.0"});
  t->Add({"restore", -4, kCmdWrite | kCmdDenyOOM, 1, 1, 1, Restore, "generic", "Creates a key from the serialized representation of a value.", "2.6.0"});
  // What Redis Cluster's MIGRATE sends after -ASK; outside a cluster it is RESTORE.
  t->Add({"restore-asking", -4, kCmdWrite | kCmdDenyOOM, 1, 1, 1, Restore, "server",
          "An internal command for migrating keys in a cluster", "3.0.0"});
}

}  // namespace kvrocks
