// Set commands.
#include <algorithm>
#include <random>
#include <set>

#include "commands/cmd_list.h"
#include "commands/helpers.h"
#include "commands/scan_cursor.h"
#include "types/redis_set.h"

namespace kvrocks {

namespace {

std::vector<std::string_view> ArgsFrom(const CommandCall& call, size_t first) {
  return std::vector<std::string_view>(call.args.begin() + static_cast<long>(first), call.args.end());
}

void ReplySet(CommandCall& call, const std::vector<std::string>& members) {
  reply::SetHeader(call.out, members.size(), call.resp);
  for (const auto& m : members) reply::Bulk(call.out, m);
}

void SAdd(CommandCall& call) {
  Database db = CurrentDb(call);
  int64_t n;
  Status s = RedisSet(&db).Add(call.args[1], ArgsFrom(call, 2), &n);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, n);
}

void SRem(CommandCall& call) {
  Database db = CurrentDb(call);
  int64_t n;
  Status s = RedisSet(&db).Remove(call.args[1], ArgsFrom(call, 2), &n);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, n);
}

void SCard(CommandCall& call) {
  Database db = CurrentDb(call);
  uint64_t n;
  Status s = RedisSet(&db).Card(call.args[1], &n);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(n));
}

void SIsMember(CommandCall& call) {
  Database db = CurrentDb(call);
  std::vector<bool> r;
  Status s = RedisSet(&db).IsMember(call.args[1], {call.args[2]}, &r);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, r[0] ? 1 : 0);
}

void SMIsMember(CommandCall& call) {
  Database db = CurrentDb(call);
  std::vector<bool> r;
  Status s = RedisSet(&db).IsMember(call.args[1], ArgsFrom(call, 2), &r);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::ArrayHeader(call.out, r.size());
  for (bool b : r) reply::Integer(call.out, b ? 1 : 0);
}

void SMembers(CommandCall& call) {
  Database db = CurrentDb(call);
  std::vector<std::string> members;
  Status s = RedisSet(&db).Members(call.args[1], &members);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplySet(call, members);
}

// SRANDMEMBER key [count]
void SRandMember(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() > 3) return ReplyError(call, kSyntaxError);
  int64_t count = 1;
  if (a.size() == 3 && !RandomCountArg(call, 2, &count)) return;
  Database db = CurrentDb(call);
  std::vector<std::string> picked;
  // A negative count: |count| independent picks, repetitions allowed.
  const auto n = static_cast<uint64_t>(count < 0 ? -count : count);
  bool refused = false;
  auto fits = [&](uint64_t avg_len) {
    refused = !RepeatedPicksFit(call, n, avg_len);
    return !refused;
  };
  Status s = RedisSet(&db).RandomMembers(a[1], n, count < 0, &picked, fits);
  if (refused) return;
  if (!s.ok()) return ReplyStatusError(call, s);
  if (a.size() == 2) {
    if (picked.empty()) return reply::Null(call.out, call.resp);
    return reply::Bulk(call.out, picked[0]);
  }
  reply::BulkArray(call.out, picked);
}

// SPOP key [count]
void SPop(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() > 3) return ReplyError(call, kSyntaxError);
  int64_t count = 1;
  if (a.size() == 3) {
    if (!IntArg(call, 2, &count)) return;
    if (count < 0) return ReplyError(call, "ERR value is out of range, must be positive");
  }
  Database db = CurrentDb(call);
  std::vector<std::string> members;
  Status s = RedisSet(&db).Pop(a[1], static_cast<uint64_t>(count), &members);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (a.size() == 2) {
    if (members.empty()) return reply::Null(call.out, call.resp);
    return reply::Bulk(call.out, members[0]);
  }
  ReplySet(call, members);
}

void SMove(CommandCall& call) {
  Database db = CurrentDb(call);
  bool moved;
  Status s = RedisSet(&db).Move(call.args[1], call.args[2], call.args[3], &moved);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, moved ? 1 : 0);
}

enum class SetOp { kInter, kUnion, kDiff };

// Computes the operation over keys; fails with WRONGTYPE if any key is not a set.
Status Compute(CommandCall& call, SetOp op, const std::vector<std::string_view>& keys, std::vector<std::string>* out) {
  Database db = CurrentDb(call);
  RedisSet set(&db);
  std::vector<std::vector<std::string>> all(keys.size());
  for (size_t i = 0; i < keys.size(); i++) {
    Status s = set.Members(keys[i], &all[i]);
    if (!s.ok()) return s;
  }
  out->clear();
  if (op == SetOp::kUnion) {
    std::set<std::string> u;
    for (auto& v : all) u.insert(v.begin(), v.end());
    out->assign(u.begin(), u.end());
    return Status::OK();
  }
  // Sorted copies for the set algorithms (storage order is hash order).
  for (auto& v : all) std::sort(v.begin(), v.end());
  *out = all[0];
  for (size_t i = 1; i < all.size(); i++) {
    std::vector<std::string> r;
    if (op == SetOp::kInter) {
      std::set_intersection(out->begin(), out->end(), all[i].begin(), all[i].end(), std::back_inserter(r));
    } else {
      std::set_difference(out->begin(), out->end(), all[i].begin(), all[i].end(), std::back_inserter(r));
    }
    out->swap(r);
  }
  return Status::OK();
}

void SetOpCommand(CommandCall& call, SetOp op) {
  Context::SnapshotScope snapshot(call.ctx);
  std::vector<std::string> result;
  Status s = Compute(call, op, ArgsFrom(call, 1), &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplySet(call, result);
}

void SetOpStore(CommandCall& call, SetOp op) {
  std::vector<std::string> result;
  Status s = Compute(call, op, ArgsFrom(call, 2), &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  Database db = CurrentDb(call);
  s = RedisSet(&db).Store(call.args[1], result);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(result.size()));
}

void SInter(CommandCall& call) { SetOpCommand(call, SetOp::kInter); }
void SUnion(CommandCall& call) { SetOpCommand(call, SetOp::kUnion); }
void SDiff(CommandCall& call) { SetOpCommand(call, SetOp::kDiff); }
void SInterStore(CommandCall& call) { SetOpStore(call, SetOp::kInter); }
void SUnionStore(CommandCall& call) { SetOpStore(call, SetOp::kUnion); }
void SDiffStore(CommandCall& call) { SetOpStore(call, SetOp::kDiff); }

// SINTERCARD numkeys key [key ...] [LIMIT limit]
void SInterCard(CommandCall& call) {
  const auto& a = call.args;
  int64_t numkeys;
  if (!ParseInt64(a[1], &numkeys) || numkeys <= 0) return ReplyError(call, "ERR numkeys should be greater than 0");
  if (numkeys > static_cast<int64_t>(a.size()) - 2) {
    return ReplyError(call, "ERR Number of keys can't be greater than number of args");
  }
  int64_t limit = 0;
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < a.size(); i++) {
    if (TokenEquals(a[i], "limit") && i + 1 < a.size()) {
      if (!ParseInt64(a[i + 1], &limit) || limit < 0) return ReplyError(call, "ERR LIMIT can't be negative");
      i++;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  Context::SnapshotScope snapshot(call.ctx);
  std::vector<std::string_view> keys(a.begin() + 2, a.begin() + 2 + numkeys);
  std::vector<std::string> result;
  Status s = Compute(call, SetOp::kInter, keys, &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  int64_t n = static_cast<int64_t>(result.size());
  if (limit > 0 && n > limit) n = limit;
  reply::Integer(call.out, n);
}

// SSCAN key cursor [MATCH pattern] [COUNT count]
void SScan(CommandCall& call) {
  uint64_t cursor;
  if (!ParseCursor(call.args[2], &cursor)) return ReplyError(call, "ERR invalid cursor");
  Database db = CurrentDb(call);
  RedisSet set(&db);
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = set.LoadSet(call.args[1], &lk, &meta, &exists);
  if (!s.ok()) return ReplyStatusError(call, s);
  // As in Redis, a missing key answers an empty scan before options are checked.
  if (!exists) return ReplyEmptyScan(call);
  std::string pattern;
  int64_t count;
  if (!ParseScanOptions(call, 3, &pattern, &count)) return;
  // An intset is returned whole in one call, in numeric order, as Redis does.
  bool intset = std::string(RedisSet::Encoding(meta)) == "intset";
  if (intset) count = INT64_MAX;
  std::string after = cursor == 0 ? std::string() : ScanCursors().Find(cursor);
  std::vector<std::string> members;
  std::string next;
  s = set.Scan(call.args[1], after, static_cast<size_t>(count), pattern, &members, &next);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (intset) RedisSet::SortIntset(&members);
  reply::ArrayHeader(call.out, 2);
  reply::Bulk(call.out, next.empty() ? "0" : std::to_string(ScanCursors().Save(next)));
  reply::BulkArray(call.out, members);
}

}  // namespace

void RegisterSetCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite | kCmdDenyOOM | kCmdFast, r = kCmdReadOnly | kCmdFast, rs = kCmdReadOnly | kCmdSlow;
  t->Add({"sadd", -3, w, 1, 1, 1, SAdd, "set", "Adds one or more members to a set.", "1.0.0"});
  t->Add({"srem", -3, kCmdWrite | kCmdFast, 1, 1, 1, SRem, "set", "Removes one or more members from a set.", "1.0.0"});
  t->Add({"scard", 2, r, 1, 1, 1, SCard, "set", "Returns the number of members in a set.", "1.0.0"});
  t->Add({"sismember", 3, r, 1, 1, 1, SIsMember, "set", "Determines whether a member belongs to a set.", "1.0.0"});
  t->Add({"smismember", -3, r, 1, 1, 1, SMIsMember, "set", "Determines whether multiple members belong to a set.", "6.2.0"});
  t->Add({"smembers", 2, rs, 1, 1, 1, SMembers, "set", "Returns all members of a set.", "1.0.0"});
  t->Add({"srandmember", -2, rs, 1, 1, 1, SRandMember, "set", "Get one or multiple random members from a set.", "1.0.0"});
  t->Add({"spop", -2, kCmdWrite | kCmdFast, 1, 1, 1, SPop, "set", "Returns one or more random members from a set after removing them.", "1.0.0"});
  t->Add({"smove", 4, w & ~kCmdDenyOOM, 1, 2, 1, SMove, "set", "Moves a member from one set to another.", "1.0.0"});
  t->Add({"sinter", -2, rs, 1, -1, 1, SInter, "set", "Returns the intersect of multiple sets.", "1.0.0"});
  t->Add({"sunion", -2, rs, 1, -1, 1, SUnion, "set", "Returns the union of multiple sets.", "1.0.0"});
  t->Add({"sdiff", -2, rs, 1, -1, 1, SDiff, "set", "Returns the difference of multiple sets.", "1.0.0"});
  t->Add({"sinterstore", -3, kCmdWrite | kCmdDenyOOM, 1, -1, 1, SInterStore, "set", "Stores the intersect of multiple sets in a key.", "1.0.0"});
  t->Add({"sunionstore", -3, kCmdWrite | kCmdDenyOOM, 1, -1, 1, SUnionStore, "set", "Stores the union of multiple sets in a key.", "1.0.0"});
  t->Add({"sdiffstore", -3, kCmdWrite | kCmdDenyOOM, 1, -1, 1, SDiffStore, "set", "Stores the difference of multiple sets in a key.", "1.0.0"});
  t->Add({"sintercard", -3, rs, 0, 0, 0, SInterCard, "set", "Returns the number of members of the intersect of multiple sets.", "7.0.0",
          [](const CommandCall& call) { return NumkeysLockKeys(call, 1); }});
  t->Add({"sscan", -3, rs, 1, 1, 1, SScan, "set", "Iterates over members of a set.", "2.8.0"});
}

}  // namespace kvrocks
