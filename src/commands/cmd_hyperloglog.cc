// HyperLogLog commands: PFADD PFCOUNT PFMERGE.
#include "commands/helpers.h"
#include "types/redis_hyperloglog.h"

namespace kvrocks {

namespace {

RedisHyperLogLog Hll(CommandCall& call, Database* db) {
  return RedisHyperLogLog(db, static_cast<size_t>(call.server->config()->hll_sparse_max_bytes));
}

std::vector<std::string_view> ArgsFrom(const CommandCall& call, size_t first) {
  return std::vector<std::string_view>(call.args.begin() + static_cast<long>(first), call.args.end());
}

void PfAdd(CommandCall& call) {
  Database db = CurrentDb(call);
  bool updated;
  Status s = Hll(call, &db).Add(call.args[1], ArgsFrom(call, 2), &updated);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, updated ? 1 : 0);
}

void PfCount(CommandCall& call) {
  Database db = CurrentDb(call);
  uint64_t card;
  Status s = Hll(call, &db).Count(ArgsFrom(call, 1), &card);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(card));
}

void PfMerge(CommandCall& call) {
  Database db = CurrentDb(call);
  Status s = Hll(call, &db).Merge(call.args[1], ArgsFrom(call, 2));
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Simple(call.out, "OK");
}

}  // namespace

void RegisterHyperLogLogCommands(CommandTable* t) {
  t->Add({"pfadd", -2, kCmdWrite | kCmdDenyOOM | kCmdFast, 1, 1, 1, PfAdd, "hyperloglog", "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", "2.8.9"});
  // PFCOUNT of one key stores a recomputed cached cardinality back, so it takes its key locks.
  t->Add({"pfcount", -2, kCmdReadOnly | kCmdLocksKeys, 1, -1, 1, PfCount, "hyperloglog", "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).", "2.8.9"});
  t->Add({"pfmerge", -2, kCmdWrite | kCmdDenyOOM, 1, -1, 1, PfMerge, "hyperloglog", "Merges one or more HyperLogLog values into a single key.", "2.8.9"});
}

}  // namespace kvrocks
