// Hash commands.
#include <cmath>

#include "commands/helpers.h"
#include "commands/scan_cursor.h"
#include "types/redis_hash.h"

namespace kvrocks {

namespace {

RedisHash HashOf(Database* db) { return RedisHash(db); }

void HSetGeneric(CommandCall& call, bool reply_ok) {
  if (call.args.size() % 2 != 0) {
    return ReplyError(call, "ERR wrong number of arguments for '" + ToLower(call.args[0]) + "' command");
  }
  std::vector<std::pair<std::string_view, std::string_view>> fvs;
  for (size_t i = 2; i + 1 < call.args.size(); i += 2) fvs.emplace_back(call.args[i], call.args[i + 1]);
  Database db = CurrentDb(call);
  int64_t added;
  Status s = HashOf(&db).Set(call.args[1], fvs, false, &added);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (reply_ok) return reply::Ok(call.out);
  reply::Integer(call.out, added);
}

void HSet(CommandCall& call) { HSetGeneric(call, false); }
void HMSet(CommandCall& call) { HSetGeneric(call, true); }

void HSetNx(CommandCall& call) {
  Database db = CurrentDb(call);
  int64_t added;
  Status s = HashOf(&db).Set(call.args[1], {{call.args[2], call.args[3]}}, true, &added);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, added);
}

void HGet(CommandCall& call) {
  Database db = CurrentDb(call);
  std::string v;
  Status s = HashOf(&db).Get(call.args[1], call.args[2], &v);
  if (s.IsNotFound()) return reply::Null(call.out, call.resp);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Bulk(call.out, v);
}

void HMGet(CommandCall& call) {
  Database db = CurrentDb(call);
  std::vector<std::string_view> fields(call.args.begin() + 2, call.args.end());
  std::vector<std::optional<std::string>> values;
  Status s = HashOf(&db).MGet(call.args[1], fields, &values);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::ArrayHeader(call.out, values.size());
  for (auto& v : values) {
    if (v) {
      reply::Bulk(call.out, *v);
    } else {
      reply::Null(call.out, call.resp);
    }
  }
}

void HDel(CommandCall& call) {
  Database db = CurrentDb(call);
  std::vector<std::string_view> fields(call.args.begin() + 2, call.args.end());
  int64_t deleted;
  Status s = HashOf(&db).Delete(call.args[1], fields, &deleted);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, deleted);
}

void HLen(CommandCall& call) {
  Database db = CurrentDb(call);
  uint64_t size;
  Status s = HashOf(&db).Size(call.args[1], &size);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(size));
}

// HSTRLEN (strlen=true) and HEXISTS.
void FieldProbe(CommandCall& call, bool strlen) {
  Database db = CurrentDb(call);
  std::string v;
  Status s = HashOf(&db).Get(call.args[1], call.args[2], &v);
  if (!s.ok() && !s.IsNotFound()) return ReplyStatusError(call, s);
  if (strlen) return reply::Integer(call.out, s.ok() ? static_cast<int64_t>(v.size()) : 0);
  reply::Integer(call.out, s.ok() ? 1 : 0);
}

void HStrlen(CommandCall& call) { FieldProbe(call, true); }
void HExists(CommandCall& call) { FieldProbe(call, false); }

// HKEYS (what=0), HVALS (1), HGETALL (2).
void GetAllGeneric(CommandCall& call, int what) {
  Database db = CurrentDb(call);
  std::vector<std::pair<std::string, std::string>> fvs;
  Status s = HashOf(&db).GetAll(call.args[1], &fvs);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (what == 2) {
    reply::MapHeader(call.out, fvs.size(), call.resp);
  } else {
    reply::ArrayHeader(call.out, fvs.size());
  }
  for (auto& [f, v] : fvs) {
    if (what != 1) reply::Bulk(call.out, f);
    if (what != 0) reply::Bulk(call.out, v);
  }
}

void HKeys(CommandCall& call) { GetAllGeneric(call, 0); }
void HVals(CommandCall& call) { GetAllGeneric(call, 1); }
void HGetAll(CommandCall& call) { GetAllGeneric(call, 2); }

void HIncrBy(CommandCall& call) {
  int64_t d;
  if (!IntArg(call, 3, &d)) return;
  Database db = CurrentDb(call);
  int64_t result;
  Status s = HashOf(&db).IncrBy(call.args[1], call.args[2], d, &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, result);
}

void HIncrByFloat(CommandCall& call) {
  long double d;
  if (!ParseLongDouble(call.args[3], &d)) return ReplyError(call, kNotFloatError);
  if (std::isnan(d) || std::isinf(d)) return ReplyError(call, "ERR value is NaN or Infinity");
  Database db = CurrentDb(call);
  std::string result;
  Status s = HashOf(&db).IncrByFloat(call.args[1], call.args[2], d, &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Bulk(call.out, result);
}

// HRANDFIELD key [count [WITHVALUES]]
void HRandField(CommandCall& call) {
  const auto& a = call.args;
  bool with_count = a.size() >= 3, with_values = false;
  int64_t count = 1;
  if (with_count && !RandomCountArg(call, 2, &count)) return;
  if (a.size() > 4 || (a.size() == 4 && !TokenEquals(a[3], "withvalues"))) {
    return ReplyError(call, kSyntaxError);
  }
  with_values = a.size() == 4;
  if (with_values && (count < -(INT64_MAX / 2) || count > INT64_MAX / 2)) {
    return ReplyError(call, "ERR value is out of range");
  }
  Database db = CurrentDb(call);
  // A negative count: |count| independent picks, repetitions allowed.
  const auto n = static_cast<uint64_t>(count < 0 ? -count : count);
  bool refused = false;
  auto fits = [&](const RedisHash::FieldValues& sample) {
    uint64_t len = 0;
    for (const auto& [f, v] : sample) len += f.size() + (with_values ? v.size() + 8 : 0);
    refused = !RepeatedPicksFit(call, n, len / sample.size());
    return !refused;
  };
  RedisHash::FieldValues picked;
  Status s = HashOf(&db).RandomFields(a[1], with_count ? n : 1, count < 0, &picked,
                                      count < 0 ? std::function<bool(const RedisHash::FieldValues&)>(fits) : nullptr);
  if (refused) return;
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!with_count) {
    if (picked.empty()) return reply::Null(call.out, call.resp);
    return reply::Bulk(call.out, picked[0].first);
  }
  if (with_values && call.resp == 3) {
    reply::ArrayHeader(call.out, picked.size());
    for (const auto& [field, value] : picked) {
      reply::ArrayHeader(call.out, 2);
      reply::Bulk(call.out, field);
      reply::Bulk(call.out, value);
    }
    return;
  }
  reply::ArrayHeader(call.out, picked.size() * (with_values ? 2 : 1));
  for (const auto& [field, value] : picked) {
    reply::Bulk(call.out, field);
    if (with_values) reply::Bulk(call.out, value);
  }
}

// HSCAN key cursor [MATCH pattern] [COUNT count]
void HScan(CommandCall& call) {
  uint64_t cursor;
  if (!ParseCursor(call.args[2], &cursor)) return ReplyError(call, "ERR invalid cursor");
  Database db = CurrentDb(call);
  LoadedKey lk;
  Status s = db.Load(call.args[1], &lk);
  if (!s.ok()) return ReplyStatusError(call, s);
  // As in Redis, a missing key answers an empty scan before options are checked.
  if (!lk.live) return ReplyEmptyScan(call);
  if (lk.type != RedisType::kHash) return ReplyError(call, kWrongTypeError);
  std::string pattern;
  int64_t count;
  if (!ParseScanOptions(call, 3, &pattern, &count)) return;
  // A small (listpack) hash is returned whole in one call, as Redis does.
  Metadata meta;
  if (meta.Decode(lk.raw).ok() && std::string(RedisHash::Encoding(meta)) == "listpack") count = INT64_MAX;
  std::string after = cursor == 0 ? std::string() : ScanCursors().Find(cursor);
  std::vector<std::pair<std::string, std::string>> fvs;
  std::string next;
  s = HashOf(&db).Scan(call.args[1], after, static_cast<size_t>(count), pattern, &fvs, &next);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::ArrayHeader(call.out, 2);
  reply::Bulk(call.out, next.empty() ? "0" : std::to_string(ScanCursors().Save(next)));
  reply::ArrayHeader(call.out, fvs.size() * 2);
  for (auto& [f, v] : fvs) {
    reply::Bulk(call.out, f);
    reply::Bulk(call.out, v);
  }
}

}  // namespace

void RegisterHashCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite | kCmdDenyOOM | kCmdFast, r = kCmdReadOnly | kCmdFast;
  t->Add({"hset", -4, w, 1, 1, 1, HSet, "hash", "Creates or modifies the value of a field in a hash.", "2.0.0"});
  t->Add({"hmset", -4, w, 1, 1, 1, HMSet, "hash", "Sets the values of multiple fields.", "2.0.0"});
  t->Add({"hsetnx", 4, w, 1, 1, 1, HSetNx, "hash", "Sets the value of a field in a hash only when the field doesn't exist.", "2.0.0"});
  t->Add({"hget", 3, r, 1, 1, 1, HGet, "hash", "Returns the value of a field in a hash.", "2.0.0"});
  t->Add({"hmget", -3, r, 1, 1, 1, HMGet, "hash", "Returns the values of all fields in a hash.", "2.0.0"});
  t->Add({"hdel", -3, kCmdWrite | kCmdFast, 1, 1, 1, HDel, "hash", "Deletes one or more fields and their values from a hash.", "2.0.0"});
  t->Add({"hlen", 2, r, 1, 1, 1, HLen, "hash", "Returns the number of fields in a hash.", "2.0.0"});
  t->Add({"hstrlen", 3, r, 1, 1, 1, HStrlen, "hash", "Returns the length of the value of a field.", "3.2.0"});
  t->Add({"hexists", 3, r, 1, 1, 1, HExists, "hash", "Determines whether a field exists in a hash.", "2.0.0"});
  t->Add({"hkeys", 2, kCmdReadOnly | kCmdSlow, 1, 1, 1, HKeys, "hash", "Returns all fields in a hash.", "2.0.0"});
  t->Add({"hvals", 2, kCmdReadOnly | kCmdSlow, 1, 1, 1, HVals, "hash", "Returns all values in a hash.", "2.0.0"});
  t->Add({"hgetall", 2, kCmdReadOnly | kCmdSlow, 1, 1, 1, HGetAll, "hash", "Returns all fields and values in a hash.", "2.0.0"});
  t->Add({"hincrby", 4, w, 1, 1, 1, HIncrBy, "hash", "Increments the integer value of a field in a hash by a number.", "2.0.0"});
  t->Add({"hincrbyfloat", 4, w, 1, 1, 1, HIncrByFloat, "hash", "Increments the floating point value of a field by a number.", "2.6.0"});
  t->Add({"hrandfield", -2, kCmdReadOnly | kCmdSlow | kCmdLocksKeys, 1, 1, 1, HRandField, "hash", "Returns one or more random fields from a hash.", "6.2.0"});
  t->Add({"hscan", -3, kCmdReadOnly | kCmdSlow, 1, 1, 1, HScan, "hash", "Iterates over fields and values of a hash.", "2.8.0"});
}

}  // namespace kvrocks
