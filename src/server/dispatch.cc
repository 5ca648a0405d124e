// Command dispatch: lookup, arity and auth checks, MULTI queuing, key locks,
// one storage context per command (or per EXEC), commit, WATCH signalling,
// statistics, SLOWLOG and MONITOR.
#include "server/dispatch.h"

#include <functional>
#include <set>
#include <string_view>

#include <event2/event.h>
#include <glog/logging.h>

#include "commands/command.h"
#include "commands/command_keys.h"
#include "commands/dirty.h"
#include "commands/expire_on_access.h"
#include "commands/redact.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "replication/replica.h"
#include "scripting/lua_engine.h"
#include "server/connection.h"
#include "server/notify.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/worker.h"
#include "server/write_batcher.h"
#include "storage/context.h"
#include "storage/key_encoding.h"
#include "types/database.h"

namespace kvrocks {

namespace {

// Runs a handler. Handlers report errors as replies; an exception escaping one
// (a bug, or std::bad_alloc) is turned into an error reply instead of ending
// the server.
void Invoke(const CommandSpec& spec, CommandCall& call) {
  call.ctx->set_unread_replace_ok(!NeedsPriorKeyState(call.server));
  // After the command's own RememberReads: its reads are not after its writes.
  call.ctx->set_touch_mark(call.server->tracking().Stamp(false));
  call.ctx->ClearLookups();  // only this command's lookups count
  const size_t reply_start = call.out->size(), touched_before = call.ctx->touched().size();
  try {
    spec.handler(call);
  } catch (const std::exception& e) {
    LOG(ERROR) << "Command '" << spec.name << "' failed: " << e.what();
    reply::Error(call.out, std::string("ERR internal error: ") + e.what());
  }
  NoteCommandDirty(spec, call, reply_start, touched_before);
  DeleteExpiredFound(spec, call);
}

std::vector<uint64_t> LockKeys(Server* srv, Connection* conn, const CommandSpec& spec,
                               const std::vector<std::string>& args, const CommandCall& call) {
  Storage* st = srv->storage();
  std::vector<uint64_t> keys;
  uint8_t db = st->PhysicalDb(conn->db);
  for (size_t i : CommandTable::KeyIndexes(spec, args.size())) keys.push_back(LockManager::KeyHash(db, args[i]));
  if (spec.extra_keys != nullptr) {
    for (auto& [logical, key] : spec.extra_keys(call)) {
      keys.push_back(LockManager::KeyHash(st->PhysicalDb(logical), key));
    }
  }
  return keys;
}

// Client-side caching: a tracking client's read-only command is remembered for
// its keys before it reads them (tracking.h says why before). Read-only scripts
// are not: the reads inside them remember the script's keys.
void RememberReads(Server* srv, Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args) {
  if (!conn->tracking || !(spec.flags & kCmdReadOnly) || std::string_view(spec.group) == "pubsub" ||
      std::string_view(spec.group) == "scripting") {
    return;
  }
  srv->tracking().Remember(conn, CommandKeyFinder(spec, args).Names(args));
}

// MONITOR shows a command once it ran, as Redis 7.0's call() does, except
// scripts (EVAL, FCALL ...), which show themselves before the calls they make,
// and administrative (sub)commands, which it never shows.
void FeedMonitors(Server* srv, Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args,
                  bool before) {
  if (!srv->HasMonitors()) return;
  bool script = (spec.flags & kCmdSkipMonitor) && std::string_view(spec.group) == "scripting";
  if (before) {
    if (script) srv->FeedMonitors(conn, args);
    return;
  }
  std::vector<std::string> redacted;
  if (spec.flags & kCmdSkipMonitor) return;
  CommandKeyFinder finder(spec, args);
  if (finder.valid() && finder.admin()) return;
  srv->FeedMonitors(conn, ShownArgs(args, &redacted));
}

// The error line of a reply (without '-' and CRLF), or empty if it is no error.
std::string_view ErrorOf(const std::string& out, size_t reply_start) {
  if (out.size() <= reply_start || out[reply_start] != '-') return {};
  size_t eol = out.find('\r', reply_start);
  return std::string_view(out).substr(reply_start + 1, (eol == std::string::npos ? out.size() : eol) - reply_start - 1);
}

// Statistics and SLOWLOG for one call whose reply starts at out[reply_start].
// As in Redis, a call that blocked counts once, when it is answered: not when
// it blocks (processed only), nor in a retry that finds nothing (nothing).
void Finish(Server* srv, Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args,
            const std::string& out, size_t reply_start, uint64_t start_us, bool retry = false) {
  if (!retry) srv->stats().total_commands_processed.fetch_add(1, std::memory_order_relaxed);
  if (conn->block.active) return;
  uint64_t dur = MonotonicUs() - start_us;
  std::string_view error = ErrorOf(out, reply_start);
  bool failed = !error.empty() || conn->call_made_error_reply;
  conn->call_made_error_reply = false;
  if (CommandCounters* c = CommandTable::CountersOf(spec, args)) {
    c->calls.fetch_add(1, std::memory_order_relaxed);
    c->usec.fetch_add(dur, std::memory_order_relaxed);
    if (failed) c->failed_calls.fetch_add(1, std::memory_order_relaxed);
    if (srv->config()->latency_tracking) c->latency.Record(static_cast<int64_t>(dur) * 1000);
  }
  if (!error.empty()) srv->stats().RecordError(error);
  int64_t latency_threshold = srv->config()->latency_monitor_threshold;
  if (latency_threshold > 0 && static_cast<int64_t>(dur / 1000) >= latency_threshold) {
    const bool fast = (CommandTable::FlagsOf(spec, args) & kCmdFast) != 0;  // a subcommand's, as Redis' realcmd
    srv->latency().Add(fast ? "fast-command" : "command", static_cast<int64_t>(dur / 1000));
  }
  int64_t threshold = srv->config()->slowlog_log_slower_than;
  if (threshold >= 0 && dur >= static_cast<uint64_t>(threshold) && !(spec.flags & kCmdSkipSlowlog)) {
    std::string name;
    {
      std::lock_guard<std::mutex> g(conn->info_mu);
      name = conn->name;
    }
    std::vector<std::string> redacted;
    srv->slowlog().Add(ShownArgs(args, &redacted), dur, conn->peer(), name, static_cast<size_t>(srv->config()->slowlog_max_len));
  }
}

}  // namespace

std::string CheckAcl(Server* srv, Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args,
                     const char* context) {
  Acl& acl = srv->acl();
  if (conn->acl_generation != acl.generation()) {
    // The user changed (ACL SETUSER / DELUSER / LOAD): look it up again.
    std::string name;
    {
      std::lock_guard<std::mutex> g(conn->info_mu);
      name = conn->username;
    }
    conn->user = conn->authenticated ? acl.Find(name) : nullptr;
    conn->acl_generation = acl.generation();
  }
  const AclUser* user = conn->user.get();
  if (user == nullptr) return conn->is_master ? "" : "NOPERM this user has no permissions to run the '" +
                                                         std::string(spec.name) + "' command";
  std::string reason, object;
  if (user->Allows(spec, args, &reason, &object)) return "";
  acl.Log(reason, context, object, user->name, conn->InfoLine());
  if (reason == "command") return "NOPERM this user has no permissions to run the '" + object + "' command";
  if (reason == "key") return "NOPERM this user has no permissions to access one of the keys used as arguments";
  return "NOPERM this user has no permissions to access one of the channels used as arguments";
}

namespace {

// What CLIENT LIST shows as cmd=: Redis' lastcmd->fullname, the subcommand's
// for a container ("config|get"), none for an unknown command or subcommand.
const char* LastCommandName(const CommandSpec* spec, const std::vector<std::string>& args) {
  if (spec == nullptr || spec->subcommands.empty() || args.size() < 2) return spec ? spec->name : nullptr;
  std::string full = std::string(spec->name) + "|" + ToLower(args[1]);
  for (const auto& s : spec->subcommands) {
    if (s.name == full) return s.name.c_str();
  }
  return nullptr;
}

// Redis' "fullname" of a call: "config|get" for a known subcommand, else the name.
std::string FullName(const CommandSpec& spec, const std::vector<std::string>& args) {
  const char* name = LastCommandName(&spec, args);
  return name != nullptr ? name : spec.name;
}

// Redis' refusal of a container command's call before it runs (or is queued
// by MULTI); "" if none.
std::string SubcommandError(const CommandSpec& spec, const std::vector<std::string>& args) {
  switch (CommandTable::CheckSubcommand(spec, args)) {
    case CommandTable::SubcommandCheck::kWrongArity:
      return "ERR wrong number of arguments for '" + ToLower(args[0]) + "|" + ToLower(args[1]) + "' command";
    case CommandTable::SubcommandCheck::kUnknown:
      return "ERR unknown subcommand '" + CString(args[1]).substr(0, 128) + "'. Try " + ToUpper(args[0]) + " HELP.";
    default:
      return "";
  }
}

// Whether a transaction's queued commands include a write.
bool QueuedWrites(const Connection& conn) {
  for (const auto& args : conn.queued) {
    const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
    if (spec != nullptr && (CommandTable::FlagsOf(*spec, args) & kCmdWrite)) return true;
  }
  return false;
}

// Redis' check of PROTECTED commands: DEBUG runs as enable-debug-command
// allows; MODULE's protected subcommands never run, as in a Redis with
// enable-module-command at its default "no" (kvrocks cannot load Redis modules).
std::string ProtectedError(Server* srv, Connection* conn, const CommandSpec& spec,
                           const std::vector<std::string>& args) {
  if (!(CommandTable::FlagsOf(spec, args) & kCmdProtected)) return "";
  const bool debug = std::string_view(spec.name) == "debug";
  const std::string mode = debug ? srv->config()->enable_debug_command : "no";
  if (mode == "yes" || (mode == "local" && conn->is_local())) return "";
  const char* what = debug ? "DEBUG" : "MODULE";
  return std::string("ERR ") + what + " command not allowed. If the enable-" + (debug ? "debug" : "module") +
         "-command option is set to \"local\", you can run it from a local connection, otherwise you need to set "
         "this option in the configuration file, and then restart the server.";
}

// Publishes the events of what just ran once its writes are durable: at once
// if nothing is pending in the batch, else after the batch commits.
void FlushEvents(Server* srv, WriteBatcher* batcher) {
  if (PendingEventCount() == 0) return;
  std::vector<KeyspaceEvent> events = TakePendingEvents();
  if (batcher != nullptr && batcher->pending()) {
    batcher->AfterCommit([srv, events = std::move(events)] { PublishEvents(srv, events); });
  } else {
    PublishEvents(srv, events);
  }
}

}  // namespace

// Blocks conn on the keys its command asked for.
void StartBlock(Connection* conn, const std::vector<std::string>& args) {
  Connection::BlockState& b = conn->block;
  b.active = true;
  if (b.args.empty()) {
    b.args = args;
  } else {
    b.sent_args = args;
  }
  conn->server()->Block(conn);
  conn->ArmBlockTimer();
}

namespace {

// The type a blocking command of this group pops or reads (kNone: any).
RedisType WaitedType(const CommandSpec& spec) {
  std::string_view group = spec.group;
  if (group == "list") return RedisType::kList;
  if (group == "sorted_set") return RedisType::kZSet;
  if (group == "stream") return RedisType::kStream;
  return RedisType::kNone;
}

bool KeyOfType(Connection* conn, const std::pair<uint8_t, std::string>& key, RedisType type) {
  // The key's lock first, as the command itself takes it: the write that woke
  // the client may still be in another worker's batch, which holds it until it commits.
  WriteBatcher* batcher = conn->worker()->batcher();
  uint8_t db = conn->server()->storage()->PhysicalDb(key.first);
  batcher->Lock({LockManager::KeyHash(db, key.second)});
  Database d(batcher->ctx(), db);
  LoadedKey lk;
  if (!d.Peek(key.second, &lk).ok() || !lk.on_disk) return false;
  // An expired key serves nobody, but the command's own lookup deletes it (and
  // the client blocks on), as Redis' lookup here does.
  return !lk.live || lk.type == type;
}

// The call Redis makes of a blocked command when one of its keys got ready
// (serveClientsBlockedOnListKey and the others): it pops or reads that key
// alone, whatever its other keys hold, and a stream read answers with that
// stream only. The keys of a blocking command are one run of arguments (for
// XREAD, followed by their IDs in the same order).
std::vector<std::string> ServedFromKey(const CommandSpec& spec, const std::vector<std::string>& args,
                                       const std::string& key) {
  std::vector<KeyReference> refs = CommandKeyFinder(spec, args).Find(args);
  if (refs.size() < 2) return args;
  const size_t first = refs.front().pos, last = refs.back().pos;
  if (last - first + 1 != refs.size()) return args;
  size_t j = 0;
  while (j < refs.size() && args[refs[j].pos] != key) j++;
  if (j == refs.size()) return args;
  std::vector<std::string> out(args.begin(), args.begin() + static_cast<long>(first));
  out.push_back(key);
  std::string_view name = spec.name;
  if (name == "xread" || name == "xreadgroup") {
    if (last + 1 + j < args.size()) out.push_back(args[last + 1 + j]);
    return out;
  }
  if (name == "blmpop" || name == "bzmpop") out[first - 1] = "1";  // numkeys
  out.insert(out.end(), args.begin() + static_cast<long>(last + 1), args.end());
  return out;
}

void RunCall(Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args,
             const std::vector<std::string>& logged);

}  // namespace

bool RetryBlockedCommand(Connection* conn, const std::vector<std::string>& args,
                         const std::pair<uint8_t, std::string>& ready) {
  const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
  if (spec == nullptr) return true;
  // As Redis' handleClientsBlockedOnKeys: only a key holding the type the client
  // waits for serves it; a key that became another type leaves it blocked.
  RedisType type = WaitedType(*spec);
  // XREADGROUP runs whatever the key holds: a key deleted or overwritten ends its wait with an error.
  bool group_read = TokenEquals(spec->name, "xreadgroup");
  if (type != RedisType::kNone && !group_read && !KeyOfType(conn, ready, type)) return false;
  std::vector<std::string> restricted;
  if (conn->block.keys.size() > 1) restricted = ServedFromKey(*spec, args, ready.second);
  const std::vector<std::string> sent = conn->block.sent_args;  // the block's end clears it, the slow log comes after
  RunCall(conn, *spec, restricted.empty() ? args : restricted, sent.empty() ? args : sent);
  return true;
}

void FinishBlocked(Connection* conn, const std::string& reply) {
  if (conn->block.args.empty()) return;
  const CommandSpec* spec = CommandTable::Instance().Find(conn->block.args[0]);
  if (spec == nullptr) return;
  spec->counters->calls.fetch_add(1, std::memory_order_relaxed);
  std::string_view error = ErrorOf(reply, 0);
  if (error.empty()) return;
  spec->counters->failed_calls.fetch_add(1, std::memory_order_relaxed);
  conn->server()->stats().RecordError(error);
}

namespace {

// Whether conn's own tracking is told of its own writes, after each command
// (Redis' pending invalidations): default mode without NOLOOP. BCAST messages
// wait for the end of the event-loop pass in Redis too.
bool TellsItself(const Connection* conn) {
  return conn->tracking && !conn->tracking_bcast && !conn->tracking_noloop;
}

// A client's writes on a writable replica: the keys they give an expiry are the
// replica's to expire, and an expiry already past keeps the key until then (Redis'
// checkAlreadyExpired is false wherever a master is set).
void ForWritableReplica(Server* srv, Context* ctx) {
  const bool writable_replica = srv->NotesOwnExpiries();
  ctx->set_note_expiring(writable_replica);
  ctx->set_expiry_left_to_master(writable_replica);
}

// Hands the keys such writes gave an expiry to the replica's cycle, under their locks
// (whether or not the batch committed meanwhile: DBSIZE commits it).
void TakeOwnExpiries(Server* srv, Context* ctx) {
  if (ctx->HasExpiringKeys()) srv->NoteOwnExpiries(ctx->TakeExpiringKeys());
}

// Hands what ctx touched to the batch (WATCH, blocked clients, tracking once
// it commits); a client told of its own writes runs nothing more until then.
void NoteChanges(Server* srv, Connection* conn, WriteBatcher* batcher, Context* ctx) {
  const bool wrote = !ctx->touched().empty();
  if (wrote) conn->wrote = true;
  srv->TouchKeys(*ctx);
  batcher->NoteChanged(ctx, conn->id());
  if (wrote && TellsItself(conn)) batcher->HoldUntilTold(conn);
}

}  // namespace

// Runs a command that needs every key lock, outside any batch.
void RunExclusive(Connection* conn, WriteBatcher* batcher, const std::function<void(Context*)>& fn) {
  Server* srv = conn->server();
  // The batch so far commits first; its BCAST messages and replies follow the
  // command's own (a flush's nulls), merged with what the command changed.
  WriteBatcher::Committed before = batcher->CommitOnly();
  MultiLockGuard guard(srv->storage()->locks());
  Context ctx(srv->storage());
  ctx.set_expired_counter(&srv->stats().expired_keys);
  ctx.set_dirty_counter(&srv->stats().dirty);
  ctx.set_record_lookups(true);
  ForWritableReplica(srv, &ctx);
  fn(&ctx);
  Status s = ctx.Commit();
  TakeOwnExpiries(srv, &ctx);
  if (!s.ok()) {
    std::string err;
    reply::Error(&err, "ERR " + s.message());
    conn->Write(err);
  }
  srv->TouchKeys(ctx);
  const bool wrote = s.ok() && !ctx.touched().empty();
  if (wrote) conn->wrote = true;
  const bool told = wrote && !srv->tracking().idle();
  const Tracking::Changes changes{&ctx.touched(), conn->id(), &ctx.touch_marks()};
  if (told) srv->tracking().Invalidate({changes}, Tracking::Parts::kReaders);
  batcher->Finish(std::move(before), told ? &changes : nullptr);
  if (wrote && TellsItself(conn)) {  // what was posted reaches it first
    conn->awaiting_own_messages++;
    conn->EndOwnMessagesWait();
  }
}

namespace {

// Reads "<prefix><digits>\r\n" at in[*pos]; false if it is not there (yet).
bool PeekNumber(std::string_view in, size_t* pos, char prefix, uint64_t* n) {
  if (*pos >= in.size() || in[*pos] != prefix) return false;
  size_t eol = in.find("\r\n", *pos + 1);
  if (eol == std::string_view::npos || eol == *pos + 1 || eol - *pos > 19) return false;
  uint64_t v = 0;
  for (size_t i = *pos + 1; i < eol; i++) {
    if (in[i] < '0' || in[i] > '9') return false;
    v = v * 10 + static_cast<uint64_t>(in[i] - '0');
  }
  *n = v;
  *pos = eol + 2;
  return true;
}

bool PeekBulk(std::string_view in, size_t* pos, std::string_view* out) {
  uint64_t len;
  if (!PeekNumber(in, pos, '$', &len) || in.size() - *pos < len + 2 || in.compare(*pos + len, 2, "\r\n") != 0) {
    return false;
  }
  *out = in.substr(*pos, len);
  *pos += len + 2;
  return true;
}

}  // namespace

size_t PrefetchGets(Connection* conn, std::string_view input) {
  constexpr size_t kMaxRun = 1024;
  // Not for a client that has yet to authenticate: its GETs only get NOAUTH.
  // Nor for a tracking one: its GETs must be remembered before they read.
  if (conn->in_multi || !conn->authenticated || conn->tracking) return 0;
  std::vector<std::string> keys;
  size_t pos = 0;
  while (keys.size() < kMaxRun) {
    uint64_t argc;
    std::string_view name, key;
    if (!PeekNumber(input, &pos, '*', &argc) || argc != 2 || !PeekBulk(input, &pos, &name) ||
        !EqualsIgnoreCase(name, "get") || !PeekBulk(input, &pos, &key)) {
      break;
    }
    keys.emplace_back(key);
  }
  if (keys.size() < 2) return 0;
  // Only when "get" is GET (rename-command).
  const CommandSpec* spec = CommandTable::Instance().Find("get");
  if (spec == nullptr || std::string_view(spec->name) != "get") return 0;
  Server* srv = conn->server();
  const uint8_t db = srv->storage()->PhysicalDb(conn->db);
  for (std::string& k : keys) {
    srv->access_clock().Prefetch(k);  // each GET will touch its key's slot
    k = EncodeMetaKey(db, k);
  }
  const size_t run = keys.size();
  conn->worker()->batcher()->ctx()->Prefetch(ColumnFamily::kMetadata, std::move(keys));
  return run;
}

namespace {

// Whether a command takes what blocked clients wait for: the blocking commands
// that write and the pops and moves they are the blocking forms of.
bool TakesWaitedData(const CommandSpec& spec) {
  if ((spec.flags & kCmdBlocking) && (spec.flags & kCmdWrite)) return true;
  static const std::set<std::string_view> kTakers = {"lpop",    "rpop",    "lmpop",   "lmove",
                                                      "zpopmin", "zpopmax", "zmpop",   "rpoplpush"};
  return kTakers.count(spec.name) > 0;
}

// The keys (logical db, name) of a call that TakesWaitedData, or of such calls
// queued in the transaction EXEC runs; none for any other call.
std::vector<std::pair<uint8_t, std::string>> TakenKeys(Connection* conn, const CommandSpec& spec,
                                                       const std::vector<std::string>& args) {
  std::vector<std::pair<uint8_t, std::string>> keys;
  auto add = [&](const CommandSpec& s, const std::vector<std::string>& a) {
    if (!TakesWaitedData(s)) return;
    for (std::string& k : CommandKeyFinder(s, a).Names(a)) keys.emplace_back(conn->db, std::move(k));
  };
  if (!conn->in_multi) {
    add(spec, args);
  } else if (std::string_view(spec.name) == "exec") {
    for (const auto& q : conn->queued) {
      if (const CommandSpec* s = CommandTable::Instance().Find(q[0])) add(*s, q);
    }
  }
  return keys;
}

// Parks conn's call (Server::ParkBehindWakes) if it would take from a key whose
// waiters are being served. Called once the call holds its keys' locks: a write
// to them that ran before has posted its wakes by then.
bool ParkedBehindWakes(Server* srv, Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args) {
  if (!srv->ServingWakes() || conn->is_master || scripting::RunningScripts::Busy()) return false;
  auto keys = TakenKeys(conn, spec, args);
  return !keys.empty() && srv->ParkBehindWakes(conn, std::move(keys), args);
}

// RunCommand; `logged` are the arguments the slow log shows.
void RunCall(Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args,
             const std::vector<std::string>& logged) {
  Server* srv = conn->server();
  const bool retry = conn->block.active;  // a blocked command run again: already monitored and counted
  if (!retry) FeedMonitors(srv, conn, spec, args, true);
  WriteBatcher* batcher = conn->worker()->batcher();
  // Replies are written straight into the connection's output buffer.
  std::string* out = conn->output();
  size_t reply_start = out->size();
  uint64_t start = MonotonicUs();
  if ((spec.flags & kCmdWrite) && (spec.flags & kCmdExclusive)) {
    RunExclusive(conn, batcher, [&](Context* ctx) {
      CommandCall call{srv, conn, args, ctx, out, false, conn->resp, true};
      call.served_blocked = retry;
      Invoke(spec, call);
      CollectCommandEvents(srv, conn->db, spec, args, *ctx, 0);
    });
    FlushEvents(srv, nullptr);
  } else {
    Context* ctx = batcher->ctx();
    ForWritableReplica(srv, ctx);
    CommandCall call{srv, conn, args, ctx, out, false, conn->resp};
    call.served_blocked = retry;
    // A busy script holds its keys' locks until it ends: WATCH (the one command that
    // locks and may run meanwhile) does without them then.
    const bool busy_watch = (spec.flags & kCmdAllowBusy) && scripting::RunningScripts::Busy();
    const bool lock = (spec.flags & kCmdWrite) || ((spec.flags & kCmdLocksKeys) && !busy_watch);
    if (lock) batcher->Lock(LockKeys(srv, conn, spec, args, call));
    if (!retry && ParkedBehindWakes(srv, conn, spec, args)) return;
    RememberReads(srv, conn, spec, args);
    Invoke(spec, call);
    if (call.rerun_exclusive) {
      out->resize(reply_start);
      RunExclusive(conn, batcher, [&](Context* ectx) {
        CommandCall again{srv, conn, args, ectx, out, false, conn->resp, true};
        again.served_blocked = retry;
        Invoke(spec, again);
        CollectCommandEvents(srv, conn->db, spec, args, *ectx, 0);
      });
      FlushEvents(srv, nullptr);
      if (!retry) FeedMonitors(srv, conn, spec, args, false);
      Finish(srv, conn, spec, logged, *out, reply_start, start, retry);
      return;
    }
    CollectCommandEvents(srv, conn->db, spec, args, *ctx, 0);
    // While a script is busy on this worker, ctx is the script's: what it touched so
    // far is signalled when it ends (waking a waiter now would stall its worker on
    // the script's key locks), and counts as the script's client's change.
    if (!conn->worker()->serving_while_busy()) {
      if (!ctx->touched().empty() || !ctx->ready_signals().empty()) NoteChanges(srv, conn, batcher, ctx);
      TakeOwnExpiries(srv, ctx);
    }
    if (conn->block.requested) {
      conn->block.requested = false;
      if (!conn->block.active) StartBlock(conn, args);
    } else if (conn->block.active) {
      conn->EndBlock();  // a retry that got its data
    }
    if (batcher->pending() && !conn->worker()->serving_while_busy()) {
      conn->awaiting_commit = true;
      batcher->Defer(conn->id());
    }
    FlushEvents(srv, batcher);
  }
  if (!retry) FeedMonitors(srv, conn, spec, args, false);
  Finish(srv, conn, spec, logged, *out, reply_start, start, retry);
}

}  // namespace

void RunCommand(Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args) {
  RunCall(conn, spec, args, args);
}

namespace {

// Whether a key conn watched while it was live has expired since (Redis'
// isWatchedKeyExpired): EXEC fails then, deleted or not.
bool WatchedKeyExpired(Server* srv, Connection* conn, Context* ctx) {
  if (conn->watched.empty()) return false;
  for (const auto& [db, key] : srv->WatchedLiveBy(conn)) {
    Database d(ctx, db);
    LoadedKey lk;
    if (d.Peek(key, &lk).ok() && lk.on_disk && !lk.live) return true;
  }
  return false;
}

}  // namespace

namespace {

// CLIENT REPLY OFF / SKIP: drops what was written to out from `from` on but the
// pushes (Pub/Sub messages, invalidations), which Redis delivers anyway.
void DropReply(Connection* conn, std::string* out, size_t from) {
  std::string kept;
  std::vector<std::pair<size_t, size_t>> ranges;
  for (auto [start, len] : conn->push_ranges) {
    if (start < from) {
      ranges.emplace_back(start, len);
    } else {
      ranges.emplace_back(from + kept.size(), len);
      kept.append(*out, start, len);
    }
  }
  out->resize(from);
  out->append(kept);
  conn->push_ranges = std::move(ranges);
}

}  // namespace

void RunTransaction(Connection* conn, std::string* out) {
  Server* srv = conn->server();
  Storage* st = srv->storage();
  auto queued = std::move(conn->queued);
  conn->queued.clear();
  conn->in_multi = false;

  std::vector<const CommandSpec*> specs;
  bool exclusive = false;
  for (auto& args : queued) {
    const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
    specs.push_back(spec);
    // Commands that change or span databases lock everything, and so does a
    // script debugging session (SCRIPT DEBUG), which cannot start over.
    if ((CommandTable::FlagsOf(*spec, args) & kCmdExclusive) || spec->extra_keys != nullptr ||
        TokenEquals(args[0], "select") ||
        (conn->lua_debug != Connection::LuaDebug::kOff &&
         (TokenEquals(args[0], "eval") || TokenEquals(args[0], "eval_ro")))) {
      exclusive = true;
    }
  }
  auto run = [&](Context* ctx, bool all_keys) {
    bool dirty = conn->watch_dirty.load() || WatchedKeyExpired(srv, conn, ctx);
    srv->UnwatchAll(conn);
    if (dirty) {
      reply::NullArray(out, conn->resp);
      return;
    }
    reply::ArrayHeader(out, queued.size());
    for (size_t i = 0; i < queued.size(); i++) {
      const CommandSpec& spec = *specs[i];
      FeedMonitors(srv, conn, spec, queued[i], true);
      size_t reply_start = out->size();
      CommandCall call{srv, conn, queued[i], ctx, out, true, conn->resp, all_keys};
      uint64_t start = MonotonicUs();
      size_t touched_before = ctx->touched().size();
      RememberReads(srv, conn, spec, queued[i]);
      const bool was_off = conn->reply_off;
      Invoke(spec, call);
      CollectCommandEvents(srv, conn->db, spec, queued[i], *ctx, touched_before);
      FeedMonitors(srv, conn, spec, queued[i], false);
      Finish(srv, conn, spec, queued[i], *out, reply_start, start);
      // A CLIENT REPLY OFF queued in the transaction silences the replies after it at
      // once, as Redis' flag does (the array header already promised them).
      if (was_off && conn->reply_off) DropReply(conn, out, reply_start);
    }
  };
  WriteBatcher* batcher = conn->worker()->batcher();
  if (exclusive) {
    // The EXEC reply is written by the caller; errors of the commit follow it.
    RunExclusive(conn, batcher, [&](Context* ctx) { run(ctx, true); });
    FlushEvents(srv, nullptr);
    return;
  }
  std::vector<uint64_t> keys;
  uint8_t db = st->PhysicalDb(conn->db);
  // Reads are locked too: EXEC must not see another batch commit between two
  // of its reads.
  for (size_t i = 0; i < queued.size(); i++) {
    for (size_t k : CommandTable::KeyIndexes(*specs[i], queued[i].size())) {
      keys.push_back(LockManager::KeyHash(db, queued[i][k]));
    }
  }
  // Watched keys are locked too, so no writer can slip in between the check and EXEC.
  for (auto& [wdb, key] : srv->WatchedBy(conn)) keys.push_back(LockManager::KeyHash(wdb, key));
  batcher->Lock(keys);
  Context* ctx = batcher->ctx();
  ForWritableReplica(srv, ctx);
  run(ctx, false);
  if (!ctx->touched().empty() || !ctx->ready_signals().empty()) NoteChanges(srv, conn, batcher, ctx);
  TakeOwnExpiries(srv, ctx);
  FlushEvents(srv, batcher);
}

namespace {

void DispatchCommand(Connection* conn, std::vector<std::string>& args);

}  // namespace

void Dispatch(Connection* conn, std::vector<std::string>& args) {
  // CLIENT REPLY OFF / SKIP drop what the command writes (but CLIENT REPLY ON answers).
  bool was_off = conn->reply_off, was_skip = conn->reply_skip;
  std::string* out = conn->output();
  size_t before = out->size();
  conn->push_ranges.clear();
  // CLIENT CACHING applies to the next command, or the next transaction.
  const bool keeps_caching = TokenEquals(args[0], "client");
  size_t argv_bytes = 0;
  for (const auto& a : args) argv_bytes += a.size();
  conn->argv_mem.store(argv_bytes, std::memory_order_relaxed);
  {
    Server::WakeScope wakes(conn);
    ExpiryTimeFreeze frozen;  // for the command, its transaction or script
    DispatchCommand(conn, args);
  }
  // A blocked or paused command keeps its arguments until it runs, as in Redis.
  if (!conn->block.active && !conn->postponed) conn->argv_mem.store(0, std::memory_order_relaxed);
  if (!keeps_caching && !conn->in_multi && !conn->postponed) conn->tracking_caching = false;
  // CLIENT REPLY ON answers even right after SKIP or OFF: it clears them first.
  if (((was_skip && conn->reply_skip) || (was_off && conn->reply_off)) && out->size() >= before) {
    DropReply(conn, out, before);
  }
  conn->push_ranges.clear();
  if (conn->postponed) return;  // runs again after the pause
  if (was_skip) conn->reply_skip = false;
  if (conn->reply_skip_next) {
    conn->reply_skip_next = false;
    conn->reply_skip = true;
  }
}

namespace {

void DispatchCommand(Connection* conn, std::vector<std::string>& args) {
  Server* srv = conn->server();
  const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
  conn->last_command.store(LastCommandName(spec, args), std::memory_order_relaxed);
  const uint32_t flags = spec != nullptr ? CommandTable::FlagsOf(*spec, args) : 0;  // a subcommand's own
  std::string err;
  if (spec == nullptr) {
    std::string shown;
    for (size_t i = 1; i < args.size() && shown.size() < 128; i++) {
      shown += "'" + CString(args[i]).substr(0, 128 - shown.size()) + "' ";
    }
    err = "ERR unknown command '" + CString(args[0]).substr(0, 128) + "', with args beginning with: " + shown;
  } else if ((spec->arity > 0 && static_cast<int>(args.size()) != spec->arity) ||
             (spec->arity < 0 && static_cast<int>(args.size()) < -spec->arity)) {
    err = "ERR wrong number of arguments for '" + std::string(spec->name) + "' command";
  } else if (std::string sub_err = SubcommandError(*spec, args); !sub_err.empty()) {
    err = std::move(sub_err);
  } else if (std::string protected_err = ProtectedError(srv, conn, *spec, args); !protected_err.empty()) {
    err = std::move(protected_err);
  } else if (!conn->authenticated && !(spec->flags & kCmdNoAuth)) {
    err = "NOAUTH Authentication required.";
  } else if (conn->in_multi && (flags & kCmdDenyMulti)) {
    err = "ERR Command not allowed inside a transaction";
  } else if (!(spec->flags & kCmdNoAuth)) {
    err = CheckAcl(srv, conn, *spec, args, conn->in_multi ? "multi" : "toplevel");
  }
  // As Redis' is_write_command: EXEC counts as a write when it would run one.
  const bool write = err.empty() && spec != nullptr &&
                     ((flags & kCmdWrite) ||
                      (conn->in_multi && std::string_view(spec->name) == "exec" && QueuedWrites(*conn)));
  if (write && srv->NotEnoughGoodReplicas()) err = "NOREPLICAS Not enough good replicas to write.";
  if (write && err.empty() && srv->ReadOnlyReplica()) {
    err = "READONLY You can't write against a read only replica.";
  }
  if (err.empty() && spec != nullptr && conn->resp == 2 && conn->subscribed() && !(spec->flags & kCmdSubscribedOk)) {
    err = "ERR Can't execute '" + FullName(*spec, args) +
          "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context";
  }
  if (err.empty() && spec != nullptr && scripting::RunningScripts::Busy() && !(flags & kCmdAllowBusy)) {
    err = scripting::RunningScripts::BusyError();
  }
  if (err.empty() && spec != nullptr && srv->replica()->is_replica()) {
    if (!srv->replica()->link_up() && !srv->config()->replica_serve_stale_data &&
        !(flags & kCmdStale)) {
      err = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    }
  }
  if (err.empty() && spec != nullptr && srv->loading() && !(flags & kCmdLoading)) {
    err = "LOADING Redis is loading the dataset in memory";
  }
  if (!err.empty()) {
    CommandCounters* counters = spec != nullptr ? CommandTable::CountersOf(*spec, args) : nullptr;
    if (counters != nullptr) counters->rejected_calls.fetch_add(1, std::memory_order_relaxed);
    if (conn->in_multi) conn->multi_error = true;
    if (spec != nullptr && std::string_view(spec->name) == "exec") {
      // Redis' rejectCommand: a refused EXEC discards the transaction, if any, and
      // the client's watches, and says why (its own messages without the "ERR "
      // that replies give them), in or out of MULTI.
      conn->in_multi = false;
      conn->multi_error = false;
      conn->queued.clear();
      srv->UnwatchAll(conn);
      if (err.compare(0, 4, "ERR ") == 0) err.erase(0, 4);
      err = "EXECABORT Transaction discarded because of: " + err;
    }
    srv->stats().RecordError(err);
    std::string reply;
    reply::Error(&reply, err);
    conn->Write(reply);
    return;
  }
  if (srv->PausedFor(conn, *spec, args)) {
    srv->Postpone(conn, std::move(args));
    args.clear();
    return;
  }
  // As Redis' processCommand: a lowered tracking-table-max-keys applies before the next command.
  srv->tracking().Trim(conn);
  if (conn->in_multi && !(spec->flags & kCmdNoMulti)) {
    conn->multi_mem.fetch_add(conn->argv_mem.load(std::memory_order_relaxed) + sizeof(void*) * args.size(),
                              std::memory_order_relaxed);
    conn->queued.push_back(std::move(args));
    conn->multi_count.store(conn->queued.size(), std::memory_order_relaxed);
    args.clear();
    conn->Write("+QUEUED\r\n");
    return;
  }
  RunCommand(conn, *spec, args);
}

}  // namespace

void BeginMasterCall(Connection* conn, const CommandSpec* spec, const std::vector<std::string>& args, bool queued) {
  conn->last_command.store(LastCommandName(spec, args), std::memory_order_relaxed);
  if (spec != nullptr && !queued) FeedMonitors(conn->server(), conn, *spec, args, true);
}

void FinishMasterCall(Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args,
                      const std::string& reply, uint64_t start_us) {
  Server* srv = conn->server();
  FeedMonitors(srv, conn, spec, args, false);
  Finish(srv, conn, spec, args, reply, 0, start_us);
}

void RejectMasterCall(Connection* conn, const CommandSpec* spec, const std::vector<std::string>& args,
                      const std::string& error) {
  CommandCounters* counters = spec != nullptr ? CommandTable::CountersOf(*spec, args) : nullptr;
  if (counters != nullptr) counters->rejected_calls.fetch_add(1, std::memory_order_relaxed);
  conn->server()->stats().RecordError(error);
}

}  // namespace kvrocks
