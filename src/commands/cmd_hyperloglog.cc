// HyperLogLog commands: PFADD PFCOUNT PFMERGE, and Redis' PFDEBUG and PFSELFTEST.
#include "commands/helpers.h"
#include "types/hll_format.h"
#include "types/redis_hyperloglog.h"

namespace kvrocks {

namespace {

RedisHyperLogLog Hll(CommandCall& call, Database* db) {
  return RedisHyperLogLog(db, static_cast<size_t>(call.server->config()->hll_sparse_max_bytes));
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

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
void PfDebug(CommandCall& call) {
  const std::string& sub = call.args[1];
  bool getreg = TokenEquals(sub, "getreg"), todense = TokenEquals(sub, "todense");
  Database db = CurrentDb(call);
  std::string value;
  bool converted;
  Status s = Hll(call, &db).DebugValue(call.args[2], getreg || todense, &value, &converted);
  if (!s.ok()) return ReplyStatusError(call, s);
  bool sparse = value[4] == static_cast<char>(hll::kSparse);
  if (getreg) {
    reply::ArrayHeader(call.out, hll::kRegisters);
    for (int i = 0; i < hll::kRegisters; i++) reply::Integer(call.out, hll::DenseRegister(value, i));
  } else if (TokenEquals(sub, "decode")) {
    if (!sparse) return ReplyError(call, "ERR HLL encoding is not sparse");
    reply::Bulk(call.out, hll::DecodeSparse(value));
  } else if (TokenEquals(sub, "encoding")) {
    reply::Simple(call.out, sparse ? "sparse" : "dense");
  } else if (todense) {
    reply::Integer(call.out, converted ? 1 : 0);
  } else {
    ReplyError(call, "ERR Unknown PFDEBUG subcommand '" + CString(sub) + "'");
  }
}

void PfSelfTest(CommandCall& call) {
  std::string failed = hll::SelfTest(static_cast<size_t>(call.server->config()->hll_sparse_max_bytes));
  if (!failed.empty()) return ReplyError(call, "ERR " + failed);
  reply::Ok(call.out);
}

}  // namespace

void RegisterHyperLogLogCommands(CommandTable* t) {
  t->Add({"pfadd", -2, kCmdWrite | kCmdDenyOOM | kCmdFast, 1, 1, 1, PfAdd, "hyperloglog", "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", "2.8.9"});
  // PFCOUNT of one key stores a recomputed cached cardinality back, so it takes its key locks.
  t->Add({"pfcount", -2, kCmdReadOnly | kCmdLocksKeys, 1, -1, 1, PfCount, "hyperloglog", "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).", "2.8.9"});
  t->Add({"pfdebug", 3, kCmdWrite | kCmdDenyOOM | kCmdAdmin, 2, 2, 1, PfDebug, "hyperloglog", "Internal commands for debugging HyperLogLog values.", "2.8.9"});
  t->Add({"pfselftest", 1, kCmdAdmin, 0, 0, 0, PfSelfTest, "hyperloglog", "An internal command for testing HyperLogLog values.", "2.8.9"});
  t->Add({"pfmerge", -2, kCmdWrite | kCmdDenyOOM, 1, -1, 1, PfMerge, "hyperloglog", "Merges one or more HyperLogLog values into a single key.", "2.8.9"});
}

}  // namespace kvrocks
