#include "replication/stream_applier.h"

#include <glog/logging.h>

#include <chrono>
#include <future>
#include <optional>

#include "commands/command.h"
#include "commands/dirty.h"
#include "common/encoding.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "server/connection.h"
#include "server/dispatch.h"
#include "server/notify.h"
#include "server/resp_parser.h"
#include "server/server.h"
#include "storage/context.h"
#include "storage/lock_manager.h"

namespace kvrocks {

namespace {

constexpr size_t kMaxCommandsPerBatch = 1024;

}  // namespace

std::string StreamApplier::EncodeState(const std::string& replid, Position at) {
  std::string v = replid;
  v.resize(40, '?');
  PutBE64(&v, at.offset);
  PutBE32(&v, static_cast<uint32_t>(at.db));
  PutBE32(&v, at.applied);
  return v;
}

bool StreamApplier::DecodeState(std::string_view record, std::string* replid, Position* at) {
  if (record.size() != 48 && record.size() != 56) return false;
  *replid = std::string(record.substr(0, 40));
  *at = Position{DecodeBE64(record.data() + 40), 0, 0};
  if (record.size() == 56) {
    at->db = static_cast<int>(DecodeBE32(record.data() + 48));
    at->applied = DecodeBE32(record.data() + 52);
  }
  return true;
}

void StreamApplier::Reset(const std::string& replid, uint64_t offset, int db, uint32_t applied) {
  replid_ = replid;
  SetCommitted(Position{offset, db, applied});
  read_offset_ = offset;
  if (master_ != nullptr) master_->db = db;
  EndMulti();
}

void StreamApplier::PersistState(Context* ctx, Position at) {
  ctx->Put(ColumnFamily::kState, state_key_, EncodeState(replid_, at));
}

void StreamApplier::SetCommitted(Position at) {
  offset_ = at.offset;
  db_ = at.db;
  applied_ = at.applied;
}

Status StreamApplier::Apply(std::string_view input, Batch* batch) {
  *batch = Batch{};
  if (input.empty()) return Status::OK();
  RespParser parser;
  RespParser::Limits limits;
  limits.max_bulk_len = INT64_MAX;  // a master's commands have no size limit
  // Parse the complete commands at the front of the input (a partial one waits for more data).
  std::vector<ParsedCommand> cmds;
  size_t p = 0;  // on kNeedMore the parser may have moved p into the partial command
  while (cmds.size() < kMaxCommandsPerBatch && p < input.size()) {
    size_t start = p;
    std::vector<std::string> args;
    std::string error;
    RespParser::Result r = parser.Parse(input, &p, limits, &args, &error);
    if (r == RespParser::Result::kError) return Status::IOError("protocol error in the replication stream: " + error);
    if (r == RespParser::Result::kNeedMore) break;
    cmds.emplace_back(std::move(args), p - start);  // no args: a newline keep-alive, counted like any byte
  }
  if (cmds.empty()) return Status::OK();
  batch->more = cmds.size() == kMaxCommandsPerBatch;

  // Offsets advance in locals and are published only once their batch is committed.
  uint64_t pos = read_offset_.load();                          // stream offset after the last command taken
  const uint64_t first = pos;
  Position safe{offset_.load(), db_.load(), applied_.load()};  // ... after the last one outside MULTI
  std::optional<MultiLockGuard> all;
  all.emplace(server_->storage()->locks());
  Context ctx(server_->storage());
  ctx.set_dirty_counter(&server_->stats().dirty);
  ctx.set_expiry_left_to_master(true);
  Status s = ApplyParsed(&ctx, &cmds, &pos, &safe, batch);
  if (s.ok()) {
    PersistState(&ctx, safe);
    s = ctx.Commit();
  }
  if (!s.ok()) {
    TakePendingEvents();  // keyspace events of writes that were not committed
    return s;
  }
  SetCommitted(safe);
  read_offset_ = pos;
  std::future<void> served;
  if (!ctx.touched().empty() || !ctx.ready_signals().empty()) {
    served = server_->TouchKeysServed(ctx);
  }
  server_->KeysChanged(ctx.touched(), 0);  // the master's writes, as a Redis replica invalidates them
  PublishEvents(server_, TakePendingEvents());
  batch->consumed = static_cast<size_t>(pos - first);  // every parsed command's bytes, unless cut short
  all.reset();                                         // the retries take the key locks
  while (served.valid() && served.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (server_->stopping()) break;
  }
  return Status::OK();
}

Status StreamApplier::ApplyParsed(Context* ctx, std::vector<ParsedCommand>* cmds, uint64_t* pos, Position* safe,
                                  Batch* batch) {
  Status s;
  std::pair<size_t, size_t> waited_from{0, 0};
  for (auto& cmd : *cmds) {
    // A named reference, not a structured binding: lambdas may not capture bindings in C++17.
    std::vector<std::string>& args = cmd.first;
    const size_t size = cmd.second;
    if (!args.empty()) {
      std::string name = ToLower(args[0]);
      const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
      // The commands that only steer the stream count as calls too, as in Redis.
      auto noted = [&](uint64_t start) {
        if (spec != nullptr) FinishMasterCall(master_, *spec, args, "", start);
      };
      if (in_multi_) {
        if (name == "exec") {
          BeginMasterCall(master_, spec, args);
          const uint64_t start = MonotonicUs();
          for (uint32_t i = 0; i < multi_.size(); i++) {
            if (i < safe->applied && !TokenEquals(multi_[i][0], "select")) continue;  // before a restart
            if (!(s = ApplyOne(ctx, multi_[i], true, Position{safe->offset, safe->db, i})).ok()) return s;
          }
          EndMulti();
          master_->last_command.store(spec->name, std::memory_order_relaxed);  // Redis' lastcmd: EXEC's
          noted(start);
        } else if (name == "discard") {
          BeginMasterCall(master_, spec, args);
          EndMulti();
          noted(MonotonicUs());
        } else {
          BeginMasterCall(master_, spec, args, true);  // queued: Redis' lastcmd still changes
          multi_.push_back(std::move(args));
          master_->multi_count.store(multi_.size(), std::memory_order_relaxed);
        }
      } else if (name == "multi") {
        BeginMasterCall(master_, spec, args);
        in_multi_ = true;
        master_->multi_count.store(0, std::memory_order_relaxed);
        master_->in_multi = true;
        noted(MonotonicUs());
      } else if (name == "replconf") {
        BeginMasterCall(master_, spec, args);
        if (args.size() >= 2 && TokenEquals(args[1], "getack")) {
          batch->ack_requested = true;
          batch->ack_offset = safe->offset;
        }
        noted(MonotonicUs());
      } else if (name == "ping") {
        BeginMasterCall(master_, spec, args);
        noted(MonotonicUs());
      } else if (safe->applied == 0 || name == "select") {  // else applied before a restart
        if (!(s = ApplyOne(ctx, args, false, Position{safe->offset, safe->db, 0})).ok()) return s;
      }
    }
    *pos += size;
    if (!in_multi_) {
      *safe = Position{*pos, master_->db, 0};
      // A Redis replica serves its blocked clients after each command: the batch
      // ends after one that may wake some, and the next waits until they are served.
      if (server_->TouchesWaitedKeys(*ctx, &waited_from)) {
        batch->more = true;
        break;
      }
    }
  }
  return Status::OK();
}

void StreamApplier::EndMulti() {
  multi_.clear();
  in_multi_ = false;
  if (master_ != nullptr) master_->in_multi = false;
}

Status StreamApplier::ApplyOne(Context* ctx, const std::vector<std::string>& args, bool in_exec, Position at) {
  const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
  BeginMasterCall(master_, spec, args);
  std::string out;
  bool rejected = true;
  if (spec == nullptr) {
    out = "-ERR unknown command '" + args[0] + "'";
  } else if ((spec->arity > 0 && static_cast<int>(args.size()) != spec->arity) ||
             static_cast<int>(args.size()) < -spec->arity) {
    out = "-ERR wrong number of arguments for '" + std::string(spec->name) + "' command";
  } else {
    rejected = false;
    const uint64_t start = MonotonicUs();
    const bool direct = spec->flags & kCmdExclusive;
    if (direct) {
      // Whole-database commands work on storage directly: commit what is pending
      // first, and give the command the state that counts it applied (see the header).
      PersistState(ctx, at);
      Status s = ctx->Commit();
      if (!s.ok()) return s;
      SetCommitted(at);
      ctx->set_direct_write_state(state_key_, EncodeState(replid_, Position{at.offset, at.db, at.applied + 1}));
    }
    CommandCall call{server_, master_, args, ctx, &out, in_exec, 2, true};
    size_t touched_before = ctx->touched().size();
    ctx->set_unread_replace_ok(!NeedsPriorKeyState(server_));
    // As in Redis (expireIfNeeded), a master's commands never find a key expired:
    // the master decides, by its clock, and sends DEL when it expires one. Judged by
    // this replica's clock instead, a PERSIST or INCR of a key that is still alive
    // on the master (a clock ahead, a stream behind) found nothing here.
    ExpiryTimeIgnore masters_clock;
    try {
      spec->handler(call);
    } catch (const std::exception& e) {
      out = std::string("-ERR internal error: ") + e.what();
    }
    if (direct) {
      // Taken by a write that succeeded: that state is the committed one now.
      if (!ctx->direct_write_state_pending() && (out.empty() || out[0] != '-')) {
        SetCommitted(Position{at.offset, at.db, at.applied + 1});
      }
      ctx->clear_direct_write_state();
    }
    NoteCommandDirty(*spec, call, 0, touched_before);
    CollectCommandEvents(server_, master_->db, *spec, args, *ctx, touched_before);
    master_->block.requested = false;  // a blocking command never blocks the master link
    FinishMasterCall(master_, *spec, args, out, start);
  }
  if (!out.empty() && out[0] == '-') {
    apply_errors_++;
    const std::string error = out.substr(1, out.find('\r') - 1);
    server_->stats().unexpected_error_replies++;
    if (rejected) RejectMasterCall(master_, spec, args, error);
    std::string cmd;
    for (size_t i = 0; i < args.size() && i < 4; i++) cmd += (i ? " " : "") + args[i].substr(0, 64);
    LOG(ERROR) << "Replication: cannot apply '" << cmd << "': " << error;
    if (server_->config()->Value(&Config::replica_apply_errors) == "disconnect") {
      return Status::IOError("command from master failed: " + error);
    }
  }
  return Status::OK();
}

}  // namespace kvrocks
