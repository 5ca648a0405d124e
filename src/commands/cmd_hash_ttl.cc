// Hash field expiry (Redis 7.4): HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL
// HEXPIRETIME HPEXPIRETIME HPERSIST. Each takes `FIELDS numfields field...`
// and answers one integer per field (-2: no such field or key).
#include "commands/helpers.h"
#include "common/time_util.h"
#include "types/redis_hash.h"

namespace kvrocks {

namespace {

// The largest absolute expiry Redis accepts for a field (2^48 - 1 ms).
constexpr int64_t kMaxFieldExpireMs = (1LL << 48) - 1;

// Parses `FIELDS numfields field...` starting at args[at]; replies on error.
bool FieldsArg(CommandCall& call, size_t at, std::vector<std::string_view>* fields) {
  const auto& a = call.args;
  if (at >= a.size() || !TokenEquals(a[at], "fields")) {
    ReplyError(call, "ERR Mandatory argument FIELDS is missing or not at the right position");
    return false;
  }
  int64_t n;
  if (at + 1 >= a.size() || !ParseInt64(a[at + 1], &n) || n <= 0) {
    ReplyError(call, "ERR Parameter `numFields` should be greater than 0");
    return false;
  }
  if (static_cast<uint64_t>(n) != a.size() - at - 2) {
    ReplyError(call, "ERR The `numfields` parameter must match the number of arguments");
    return false;
  }
  fields->assign(a.begin() + static_cast<long>(at + 2), a.end());
  return true;
}

void ReplyResults(CommandCall& call, const std::vector<int64_t>& results) {
  reply::ArrayHeader(call.out, results.size());
  for (int64_t r : results) reply::Integer(call.out, r);
}

// HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field...
void HashExpireGeneric(CommandCall& call, int64_t unit_ms, bool absolute) {
  const auto& a = call.args;
  int64_t t;
  if (!IntArg(call, 2, &t)) return;
  std::string cmd = ToLower(a[0]);
  if (t < 0 || t > kMaxFieldExpireMs / unit_ms) {
    return ReplyError(call, "ERR invalid expire time in '" + cmd + "' command");
  }
  int64_t expire = t * unit_ms;
  if (!absolute) {
    // As the check whether it is past (RedisHash::ExpireFields): 0 seconds always deletes.
    expire += static_cast<int64_t>(CommandNowMs());
    if (expire > kMaxFieldExpireMs) return ReplyError(call, "ERR invalid expire time in '" + cmd + "' command");
  }
  size_t at = 3;
  auto cond = RedisHash::ExpireCond::kAlways;
  if (at < a.size()) {
    if (TokenEquals(a[at], "nx")) {
      cond = RedisHash::ExpireCond::kNX;
    } else if (TokenEquals(a[at], "xx")) {
      cond = RedisHash::ExpireCond::kXX;
    } else if (TokenEquals(a[at], "gt")) {
      cond = RedisHash::ExpireCond::kGT;
    } else if (TokenEquals(a[at], "lt")) {
      cond = RedisHash::ExpireCond::kLT;
    }
    if (cond != RedisHash::ExpireCond::kAlways) at++;
  }
  std::vector<std::string_view> fields;
  if (!FieldsArg(call, at, &fields)) return;
  Database db = CurrentDb(call);
  std::vector<int64_t> results;
  Status s = RedisHash(&db).ExpireFields(a[1], fields, static_cast<uint64_t>(expire), cond, &results);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplyResults(call, results);
}

void HExpire(CommandCall& call) { HashExpireGeneric(call, 1000, false); }
void HPExpire(CommandCall& call) { HashExpireGeneric(call, 1, false); }
void HExpireAt(CommandCall& call) { HashExpireGeneric(call, 1000, true); }
void HPExpireAt(CommandCall& call) { HashExpireGeneric(call, 1, true); }

// HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME key FIELDS numfields field...
void TtlGeneric(CommandCall& call, bool ms, bool absolute) {
  std::vector<std::string_view> fields;
  if (!FieldsArg(call, 2, &fields)) return;
  Database db = CurrentDb(call);
  std::vector<int64_t> results;
  Status s = RedisHash(&db).FieldExpireTimes(call.args[1], fields, &results);
  if (!s.ok()) return ReplyStatusError(call, s);
  const int64_t now = static_cast<int64_t>(NowMs());
  for (auto& r : results) {
    if (r < 0) continue;
    int64_t v = absolute ? r : std::max<int64_t>(0, r - now);
    r = ms ? v : (absolute ? v / 1000 : (v + 500) / 1000);
  }
  ReplyResults(call, results);
}

void HTtl(CommandCall& call) { TtlGeneric(call, false, false); }
void HPTtl(CommandCall& call) { TtlGeneric(call, true, false); }
void HExpireTime(CommandCall& call) { TtlGeneric(call, false, true); }
void HPExpireTime(CommandCall& call) { TtlGeneric(call, true, true); }

void HPersist(CommandCall& call) {
  std::vector<std::string_view> fields;
  if (!FieldsArg(call, 2, &fields)) return;
  Database db = CurrentDb(call);
  std::vector<int64_t> results;
  Status s = RedisHash(&db).PersistFields(call.args[1], fields, &results);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplyResults(call, results);
}

}  // namespace

void RegisterHashTtlCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite | kCmdDenyOOM | kCmdFast, r = kCmdReadOnly | kCmdFast;
  t->Add({"hexpire", -6, w, 1, 1, 1, HExpire, "hash", "Set expiry for hash field using relative time to expire (seconds)", "7.4.0"});
  t->Add({"hpexpire", -6, w, 1, 1, 1, HPExpire, "hash", "Set expiry for hash field using relative time to expire (milliseconds)", "7.4.0"});
  t->Add({"hexpireat", -6, w, 1, 1, 1, HExpireAt, "hash", "Set expiry for hash field using an absolute Unix timestamp (seconds)", "7.4.0"});
  t->Add({"hpexpireat", -6, w, 1, 1, 1, HPExpireAt, "hash", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", "7.4.0"});
  t->Add({"httl", -5, r, 1, 1, 1, HTtl, "hash", "Returns the TTL in seconds of a hash field.", "7.4.0"});
  t->Add({"hpttl", -5, r, 1, 1, 1, HPTtl, "hash", "Returns the TTL in milliseconds of a hash field.", "7.4.0"});
  t->Add({"hexpiretime", -5, r, 1, 1, 1, HExpireTime, "hash", "Returns the expiration time of a hash field as a Unix timestamp, in seconds.", "7.4.0"});
  t->Add({"hpexpiretime", -5, r, 1, 1, 1, HPExpireTime, "hash", "Returns the expiration time of a hash field as a Unix timestamp, in msec.", "7.4.0"});
  t->Add({"hpersist", -5, kCmdWrite | kCmdFast, 1, 1, 1, HPersist, "hash", "Removes the expiration time for each specified field", "7.4.0"});
}

}  // namespace kvrocks
