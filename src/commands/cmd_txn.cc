// MULTI / EXEC / DISCARD / WATCH / UNWATCH.
#include "commands/helpers.h"
#include "scripting/lua_engine.h"
#include "server/dispatch.h"

namespace kvrocks {

namespace {

void Multi(CommandCall& call) {
  if (call.conn->in_multi) return ReplyError(call, "ERR MULTI calls can not be nested");
  call.conn->in_multi = true;
  call.conn->multi_mem.store(0, std::memory_order_relaxed);
  call.conn->multi_count.store(0, std::memory_order_relaxed);
  call.conn->multi_error = false;
  call.conn->queued.clear();
  reply::Ok(call.out);
}

void Exec(CommandCall& call) {
  Connection* c = call.conn;
  if (!c->in_multi) return ReplyError(call, "ERR EXEC without MULTI");
  if (c->multi_error) {
    c->in_multi = false;
    c->queued.clear();
    call.server->UnwatchAll(c);
    return ReplyError(call, "EXECABORT Transaction discarded because of previous errors.");
  }
  RunTransaction(c, call.out);
}

void Discard(CommandCall& call) {
  Connection* c = call.conn;
  if (!c->in_multi) return ReplyError(call, "ERR DISCARD without MULTI");
  c->in_multi = false;
  c->multi_error = false;
  c->queued.clear();
  call.server->UnwatchAll(c);
  reply::Ok(call.out);
}

void Watch(CommandCall& call) {
  if (call.conn->in_multi) return ReplyError(call, "ERR WATCH inside MULTI is not allowed");
  uint8_t db = call.server->storage()->PhysicalDb(call.conn->db);
  Database d(call.ctx, db);
  // While a script is busy, the WATCH lands in the middle of it, as in Redis: the
  // script's writes so far do not count, those after it do; and it judges expiry
  // by the script's stopped clock.
  const uint64_t since = scripting::RunningScripts::Busy() ? call.server->tracking().Tick() : 0;
  ExpiryTimeAt script_clock(since != 0 ? scripting::RunningScripts::BusyExpiryMs() : 0);
  for (size_t i = 1; i < call.args.size(); i++) {
    LoadedKey lk;
    bool stale = d.Peek(call.args[i], &lk).ok() && lk.on_disk && !lk.live;
    call.server->Watch(call.conn, db, call.args[i], stale, since);
  }
  reply::Ok(call.out);
}

void Unwatch(CommandCall& call) {
  call.server->UnwatchAll(call.conn);
  reply::Ok(call.out);
}

}  // namespace

void RegisterTransactionCommands(CommandTable* t) {
  const uint32_t f = kCmdNoMulti | kCmdNoScript | kCmdFast | kCmdLoading | kCmdStale;
  t->Add({"multi", 1, kCmdAllowBusy | f, 0, 0, 0, Multi, "transactions", "Starts a transaction.", "1.2.0"});
  t->Add({"exec", 1, kCmdNoMulti | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSkipSlowlog, 0, 0, 0, Exec, "transactions",
          "Executes all commands in a transaction.", "1.2.0"});
  t->Add({"discard", 1, kCmdAllowBusy | f, 0, 0, 0, Discard, "transactions", "Discards a transaction.", "2.0.0"});
  // WATCH takes its keys' locks so that a write still pending in another worker's
  // batch commits first: the client's reads after WATCH then see it. Not while a
  // script is busy (RunCall): the script holds them until it ends, and nothing
  // else writes or reads meanwhile.
  t->Add({"watch", -2, f | kCmdLocksKeys | kCmdNoTouch | kCmdAllowBusy, 1, -1, 1, Watch, "transactions",
          "Monitors changes to keys to determine the execution of a transaction.", "2.2.0"});
  // Inside MULTI, UNWATCH is queued like any command (Redis runs only EXEC, DISCARD,
  // MULTI, WATCH, QUIT and RESET at once); EXEC has unwatched everything by then.
  t->Add({"unwatch", 1, (f & ~kCmdNoMulti) | kCmdAllowBusy, 0, 0, 0, Unwatch, "transactions",
          "Forgets about watched keys of a transaction.", "2.2.0"});
}

}  // namespace kvrocks
