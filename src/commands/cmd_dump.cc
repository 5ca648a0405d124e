// DUMP and RESTORE in Redis' serialization format (an RDB object, the RDB
// version and a CRC64), so values move between Redis and kvrocks (and kvrocks
// can be the target of a Redis MIGRATE).
#include "commands/helpers.h"
#include "common/time_util.h"
#include "replication/rdb_object.h"

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
  for (size_t j = 4; j < a.size(); j++) {
    bool more = j + 1 < a.size();
    int64_t v;
    if (EqualsIgnoreCase(a[j], "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(a[j], "absttl")) {
      absttl = true;
    } else if (EqualsIgnoreCase(a[j], "idletime") && more && !freq_given) {
      if (!IntArg(call, j + 1, &v)) return;
      if (v < 0) return ReplyError(call, "ERR Invalid IDLETIME value, must be >= 0");
      idle_given = true;
      j++;
    } else if (EqualsIgnoreCase(a[j], "freq") && more && !idle_given) {
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
  if (expire != 0 && expire <= NowMs()) return reply::Ok(call.out);  // already expired: nothing is created
  s = rdb::RestoreObject(&db, a[1], obj, expire);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Ok(call.out);
}

}  // namespace

void RegisterDumpCommands(CommandTable* t) {
  t->Add({"dump", 2, kCmdReadOnly, 1, 1, 1, Dump, "generic", "Returns a serialized representation of the value stored at a key.", "2.6.0"});
  t->Add({"restore", -4, kCmdWrite | kCmdDenyOOM, 1, 1, 1, Restore, "generic", "Creates a key from the serialized representation of a value.", "2.6.0"});
}

}  // namespace kvrocks
