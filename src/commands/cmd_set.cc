// Set commands.
#include <algorithm>
#include <random>
#include <unordered_set>

#include "commands/cmd_list.h"
#include "commands/helpers.h"
#include "commands/scan_cursor.h"
#include "types/redis_set.h"

namespace kvrocks {

namespace {

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

// A key of SINTER, SUNION or SDIFF as the lookup found it.
struct SetSource {
  std::string_view key;
  bool exists = false;
  uint64_t size = 0;
};

// What a set operation gives: its members in Redis' reply order where Redis' is
// defined (an intset's numeric order, the iteration order of SINTER's smallest set),
// and what Redis' temporary set had added to build them, when more than the members.
struct SetOpResult {
  std::vector<std::string> members;
  std::vector<std::string> built;
  bool built_more = false;
};

// Keeps the candidates that key holds (keep) or does not hold (!keep): by point
// reads when the set is bigger than the candidates, else by reading it whole.
Status FilterBy(RedisSet* set, const SetSource& source, bool keep, std::vector<std::string>* candidates) {
  if (!source.exists) {
    if (keep) candidates->clear();
    return Status::OK();
  }
  std::vector<bool> in;
  if (source.size > candidates->size()) {
    std::vector<std::string_view> views(candidates->begin(), candidates->end());
    Status s = set->IsMember(source.key, views, &in);
    if (!s.ok()) return s;
  } else {
    std::vector<std::string> members;
    Status s = set->Members(source.key, &members);
    if (!s.ok()) return s;
    std::unordered_set<std::string_view> lookup(members.begin(), members.end());
    for (const auto& c : *candidates) in.push_back(lookup.count(c) != 0);
  }
  size_t kept = 0;
  for (size_t i = 0; i < candidates->size(); i++) {
    if (in[i] != keep) continue;
    if (kept != i) (*candidates)[kept] = std::move((*candidates)[i]);
    kept++;
  }
  candidates->resize(kept);
  return Status::OK();
}

// Computes the operation over keys as Redis' sinterGenericCommand and
// sunionDiffGenericCommand do; WRONGTYPE if any key is not a set.
Status Compute(CommandCall& call, SetOp op, const std::vector<std::string_view>& keys, SetOpResult* r) {
  Database db = CurrentDb(call);
  RedisSet set(&db);
  std::vector<SetSource> sources(keys.size());
  for (size_t i = 0; i < keys.size(); i++) {
    LoadedKey lk;
    Metadata meta;
    sources[i].key = keys[i];
    Status s = set.LoadSet(keys[i], &lk, &meta, &sources[i].exists);
    if (!s.ok()) return s;
    if (sources[i].exists) sources[i].size = meta.size;
  }
  auto& out = r->members;
  out.clear();
  if (op == SetOp::kInter) {
    // Empty if a key is missing; else the members of the smallest set (the first
    // of equal sizes, Redis' sort being stable), in its order, that all others hold.
    for (const auto& src : sources) {
      if (!src.exists) return Status::OK();
    }
    auto smallest = std::min_element(sources.begin(), sources.end(),
                                     [](const SetSource& x, const SetSource& y) { return x.size < y.size; });
    Status s = set.Members(smallest->key, &out);
    for (auto it = sources.begin(); s.ok() && it != sources.end() && !out.empty(); ++it) {
      if (it->key != smallest->key) s = FilterBy(&set, *it, true, &out);
    }
    return s;
  }
  if (op == SetOp::kUnion) {
    for (const auto& src : sources) {
      std::vector<std::string> members;
      Status s = set.Members(src.key, &members);
      if (!s.ok()) return s;
      out.insert(out.end(), std::make_move_iterator(members.begin()), std::make_move_iterator(members.end()));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (RedisSet::FitsIntset(out)) RedisSet::SortIntset(&out);
    return Status::OK();
  }
  // SDIFF: nothing without the first set, or when it is named again.
  if (!sources[0].exists) return Status::OK();
  for (size_t i = 1; i < sources.size(); i++) {
    if (sources[i].key == sources[0].key) return Status::OK();
  }
  Status s = set.Members(sources[0].key, &out);
  if (!s.ok()) return s;
  // Redis picks its first algorithm (add what no other set holds) unless the
  // others are small, then its second (add the first set whole, remove the others).
  uint64_t first_work = 0, all_work = 0;
  for (const auto& src : sources) {
    if (!src.exists) continue;
    first_work += sources[0].size;
    all_work += src.size;
  }
  bool whole_first_added = first_work / 2 > all_work;
  if (whole_first_added) r->built = out;
  for (size_t i = 1; s.ok() && i < sources.size() && !out.empty(); i++) s = FilterBy(&set, sources[i], false, &out);
  if (!s.ok()) return s;
  r->built_more = whole_first_added && r->built.size() > out.size();
  if (RedisSet::FitsIntset(whole_first_added ? r->built : out)) RedisSet::SortIntset(&out);
  return Status::OK();
}

void SetOpCommand(CommandCall& call, SetOp op) {
  Context::SnapshotScope snapshot(call.ctx);
  SetOpResult result;
  Status s = Compute(call, op, ArgsFrom(call, 1), &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplySet(call, result.members);
}

void SetOpStore(CommandCall& call, SetOp op) {
  SetOpResult result;
  Status s = Compute(call, op, ArgsFrom(call, 2), &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  Database db = CurrentDb(call);
  s = RedisSet(&db).Store(call.args[1], result.members, result.built_more ? &result.built : nullptr);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(result.members.size()));
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
  SetOpResult result;
  Status s = Compute(call, SetOp::kInter, keys, &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  int64_t n = static_cast<int64_t>(result.members.size());
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
