// String commands.
#include <climits>
#include <optional>

#include "commands/helpers.h"
#include "common/time_util.h"
#include "types/redis_string.h"

namespace kvrocks {

namespace {

void ReplyValueOrNull(CommandCall& call, const Status& s, const std::string& value) {
  if (s.ok()) {
    reply::Bulk(call.out, value);
  } else if (s.IsNotFound()) {
    reply::Null(call.out, call.resp);
  } else {
    ReplyStatusError(call, s);
  }
}

void Get(CommandCall& call) {
  Database db = CurrentDb(call);
  std::string v;
  Status s = RedisString(&db).Get(call.args[1], &v);
  ReplyValueOrNull(call, s, v);
}

// Converts an EX/PX/EXAT/PXAT argument to absolute ms as Redis'
// getExpireMillisecondsOrReply does. unit_ms is 1000 for seconds.
// The expiry time of SET/SETEX/GETEX from its argument as an absolute time in
// ms; on a bad argument, Redis' error text instead.
std::optional<std::string> ExpireArgError(const std::string& arg, int64_t unit_ms, bool relative, const char* cmd,
                                          uint64_t* out) {
  int64_t v;
  if (!ParseInt64(arg, &v)) return std::string(kNotIntegerError);
  std::string invalid = std::string("ERR invalid expire time in '") + cmd + "' command";
  if (v <= 0 || (unit_ms == 1000 && v > LLONG_MAX / 1000)) return invalid;
  v *= unit_ms;
  if (relative) {
    int64_t now = static_cast<int64_t>(NowMs());
    if (v > LLONG_MAX - now) return invalid;
    v += now;
  }
  *out = static_cast<uint64_t>(v);
  return std::nullopt;
}

bool ParseExpire(CommandCall& call, const std::string& arg, int64_t unit_ms, bool relative, const char* cmd,
                 uint64_t* out) {
  auto err = ExpireArgError(arg, unit_ms, relative, cmd, out);
  if (err) ReplyError(call, *err);
  return !err;
}

// True for EX, PX, EXAT, PXAT; sets the unit (ms per unit) and whether the time is relative.
bool IsExpireOption(const std::string& opt, int64_t* unit_ms, bool* relative) {
  bool ex = TokenEquals(opt, "ex"), px = TokenEquals(opt, "px");
  bool exat = TokenEquals(opt, "exat"), pxat = TokenEquals(opt, "pxat");
  *unit_ms = (ex || exat) ? 1000 : 1;
  *relative = ex || px;
  return ex || px || exat || pxat;
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL]
void Set(CommandCall& call) {
  RedisString::SetOptions opts;
  const auto& a = call.args;
  size_t expire_idx = 0;
  int64_t unit = 1;
  bool relative = false;
  for (size_t i = 3; i < a.size(); i++) {
    const std::string& opt = a[i];
    bool has_next = i + 1 < a.size();
    int64_t u;
    bool rel;
    if (TokenEquals(opt, "nx") && opts.cond != RedisString::SetOptions::kXX) {
      opts.cond = RedisString::SetOptions::kNX;
    } else if (TokenEquals(opt, "xx") && opts.cond != RedisString::SetOptions::kNX) {
      opts.cond = RedisString::SetOptions::kXX;
    } else if (TokenEquals(opt, "get")) {
      opts.get = true;
    } else if (TokenEquals(opt, "keepttl") && expire_idx == 0) {
      opts.keep_ttl = true;
    } else if (has_next && !opts.keep_ttl && expire_idx == 0 && IsExpireOption(opt, &u, &rel)) {
      unit = u;
      relative = rel;
      expire_idx = ++i;
    } else {
      ReplyError(call, kSyntaxError);
      return;
    }
  }
  // The expiry is parsed after all flags, as Redis does.
  if (expire_idx != 0 && !ParseExpire(call, a[expire_idx], unit, relative, "set", &opts.expire_ms)) return;
  Database db = CurrentDb(call);
  bool done;
  std::optional<std::string> old;
  Status s = RedisString(&db).Set(a[1], a[2], opts, &done, &old);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (opts.get) {
    if (old) {
      reply::Bulk(call.out, *old);
    } else {
      reply::Null(call.out, call.resp);
    }
  } else if (done) {
    reply::Ok(call.out);
  } else {
    reply::Null(call.out, call.resp);
  }
}

void SetNx(CommandCall& call) {
  RedisString::SetOptions opts;
  opts.cond = RedisString::SetOptions::kNX;
  Database db = CurrentDb(call);
  bool done;
  std::optional<std::string> old;
  Status s = RedisString(&db).Set(call.args[1], call.args[2], opts, &done, &old);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, done ? 1 : 0);
}

void SetExGeneric(CommandCall& call, int64_t unit_ms, const char* name) {
  RedisString::SetOptions opts;
  if (!ParseExpire(call, call.args[2], unit_ms, true, name, &opts.expire_ms)) return;
  Database db = CurrentDb(call);
  bool done;
  std::optional<std::string> old;
  Status s = RedisString(&db).Set(call.args[1], call.args[3], opts, &done, &old);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Ok(call.out);
}

void SetEx(CommandCall& call) { SetExGeneric(call, 1000, "setex"); }
void PSetEx(CommandCall& call) { SetExGeneric(call, 1, "psetex"); }

void GetSet(CommandCall& call) {
  RedisString::SetOptions opts;
  opts.get = true;
  Database db = CurrentDb(call);
  bool done;
  std::optional<std::string> old;
  Status s = RedisString(&db).Set(call.args[1], call.args[2], opts, &done, &old);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (old) {
    reply::Bulk(call.out, *old);
  } else {
    reply::Null(call.out, call.resp);
  }
}

void GetDel(CommandCall& call) {
  Database db = CurrentDb(call);
  std::string v;
  Status s = RedisString(&db).GetDel(call.args[1], &v);
  if (s.IsNotFound() && call.server->IsReplica()) {
    // A replica's GETDEL reads an expired key as absent, then deletes it as a live one
    // (Redis' lookupKeyRead leaves it to the master there; dbSyncDelete finds it).
    ExpiryTimeIgnore expiry_ignored;
    bool deleted;
    Status d = db.Delete(call.args[1], &deleted);
    if (!d.ok()) return ReplyStatusError(call, d);
  }
  ReplyValueOrNull(call, s, v);
}

// GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST]
void GetEx(CommandCall& call) {
  const auto& a = call.args;
  auto change = RedisString::ExpireChange::kKeep;
  uint64_t expire = 0;
  size_t expire_idx = 0;
  int64_t unit = 1;
  bool relative = false;
  for (size_t i = 2; i < a.size(); i++) {
    bool has_next = i + 1 < a.size();
    bool flag_set = change != RedisString::ExpireChange::kKeep;
    if (TokenEquals(a[i], "persist") && !flag_set) {
      change = RedisString::ExpireChange::kPersist;
    } else if (has_next && !flag_set && IsExpireOption(a[i], &unit, &relative)) {
      change = RedisString::ExpireChange::kSet;
      expire_idx = ++i;
    } else {
      ReplyError(call, kSyntaxError);
      return;
    }
  }
  Database db = CurrentDb(call);
  std::string v;
  if (change == RedisString::ExpireChange::kSet) {
    auto err = ExpireArgError(a[expire_idx], unit, relative, "getex", &expire);
    if (err) {
      // Redis validates the time after the lookup: a missing key or another type answers first.
      Status s = RedisString(&db).Get(a[1], &v);
      return s.ok() ? ReplyError(call, *err) : ReplyValueOrNull(call, s, v);
    }
  }
  Status s = RedisString(&db).GetEx(a[1], change, expire, &v);
  ReplyValueOrNull(call, s, v);
}

void MGet(CommandCall& call) {
  Context::SnapshotScope snapshot(call.ctx);
  Database db = CurrentDb(call);
  RedisString str(&db);
  reply::ArrayHeader(call.out, call.args.size() - 1);
  std::string v;
  for (size_t i = 1; i < call.args.size(); i++) {
    Status s = str.Get(call.args[i], &v);
    if (s.ok()) {
      reply::Bulk(call.out, v);
    } else {
      reply::Null(call.out, call.resp);
    }
  }
}

void MSetGeneric(CommandCall& call, bool nx) {
  if (call.args.size() % 2 == 0) {
    ReplyError(call, "ERR wrong number of arguments for '" + ToLower(call.args[0]) + "' command");
    return;
  }
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (size_t i = 1; i + 1 < call.args.size(); i += 2) pairs.emplace_back(call.args[i], call.args[i + 1]);
  Database db = CurrentDb(call);
  bool done;
  Status s = RedisString(&db).MSet(pairs, nx, &done);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (nx) {
    reply::Integer(call.out, done ? 1 : 0);
  } else {
    reply::Ok(call.out);
  }
}

void MSet(CommandCall& call) { MSetGeneric(call, false); }
void MSetNx(CommandCall& call) { MSetGeneric(call, true); }

void Append(CommandCall& call) {
  Database db = CurrentDb(call);
  size_t len;
  Status s = RedisString(&db).Append(call.args[1], call.args[2], MaxStringLength(call), &len);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(len));
}

void Strlen(CommandCall& call) {
  Database db = CurrentDb(call);
  uint64_t len;
  Status s = RedisString(&db).Strlen(call.args[1], &len);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(len));
}

void IncrGeneric(CommandCall& call, int64_t delta) {
  Database db = CurrentDb(call);
  int64_t result;
  Status s = RedisString(&db).IncrBy(call.args[1], delta, &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, result);
}

void Incr(CommandCall& call) { IncrGeneric(call, 1); }
void Decr(CommandCall& call) { IncrGeneric(call, -1); }

void IncrBy(CommandCall& call) {
  int64_t d;
  if (!IntArg(call, 2, &d)) return;
  IncrGeneric(call, d);
}

void DecrBy(CommandCall& call) {
  int64_t d;
  if (!IntArg(call, 2, &d)) return;
  if (d == INT64_MIN) return ReplyError(call, "ERR decrement would overflow");
  IncrGeneric(call, -d);
}

void IncrByFloat(CommandCall& call) {
  long double d;
  Database db = CurrentDb(call);
  std::string result;
  if (!ParseLongDouble(call.args[2], &d)) {
    // Redis checks the key's type before the increment.
    Status s = RedisString(&db).Get(call.args[1], &result);
    return s.ok() || s.IsNotFound() ? ReplyError(call, kNotFloatError) : ReplyStatusError(call, s);
  }
  Status s = RedisString(&db).IncrByFloat(call.args[1], d, &result);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Bulk(call.out, result);
}

void SetRange(CommandCall& call) {
  int64_t offset;
  if (!IntArg(call, 2, &offset)) return;
  if (offset < 0) return ReplyError(call, "ERR offset is out of range");
  Database db = CurrentDb(call);
  size_t len;
  Status s = RedisString(&db).SetRange(call.args[1], offset, call.args[3], MaxStringLength(call), &len);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(len));
}

void GetRange(CommandCall& call) {
  int64_t start, end;
  if (!IntArg(call, 2, &start) || !IntArg(call, 3, &end)) return;
  Database db = CurrentDb(call);
  RedisString str(&db);
  std::string raw;
  uint64_t size = 0;
  Status s = str.LoadForRead(call.args[1], &raw);
  if (s.ok()) s = RedisString::ValueSize(raw, &size);
  if (!s.ok() && !s.IsNotFound()) return ReplyStatusError(call, s);
  int64_t len = static_cast<int64_t>(size);
  if (start < 0 && end < 0 && start > end) return reply::Bulk(call.out, "");
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return reply::Bulk(call.out, "");
  // Only the requested range is read: a GETRANGE of a big bitmap touches its covering fragments.
  std::string v;
  s = str.ReadRange(call.args[1], raw, static_cast<uint64_t>(start), static_cast<uint64_t>(end - start + 1), &v);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Bulk(call.out, v);
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]
void Lcs(CommandCall& call) {
  const auto& a = call.args;
  // As Redis, the keys' types are checked before the options.
  Context::SnapshotScope snapshot(call.ctx);
  Database db = CurrentDb(call);
  RedisString str(&db);
  std::string sa, sb;
  Status s1 = str.Get(a[1], &sa);
  Status s2 = str.Get(a[2], &sb);
  if ((!s1.ok() && !s1.IsNotFound()) || (!s2.ok() && !s2.IsNotFound())) {
    if (s1.IsRedisError() || s2.IsRedisError()) {
      return ReplyError(call, "ERR The specified keys must contain string values");
    }
    return ReplyStatusError(call, s1.ok() ? s2 : s1);
  }
  bool get_len = false, get_idx = false, with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t i = 3; i < a.size(); i++) {
    bool has_next = i + 1 < a.size();
    if (TokenEquals(a[i], "idx")) {
      get_idx = true;
    } else if (TokenEquals(a[i], "len")) {
      get_len = true;
    } else if (TokenEquals(a[i], "withmatchlen")) {
      with_match_len = true;
    } else if (TokenEquals(a[i], "minmatchlen") && has_next) {
      if (!IntArg(call, i + 1, &min_match_len)) return;
      if (min_match_len < 0) min_match_len = 0;
      i++;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  if (get_idx && get_len) {
    return ReplyError(call, "ERR If you want both the length and indexes, please just use IDX.");
  }
  uint64_t alen = sa.size(), blen = sb.size();
  if ((alen + 1) * (blen + 1) * sizeof(uint32_t) >= static_cast<uint64_t>(call.server->config()->proto_max_bulk_len)) {
    return ReplyError(call, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  std::vector<uint32_t> dp((alen + 1) * (blen + 1), 0);
  auto at = [&](uint64_t i, uint64_t j) -> uint32_t& { return dp[j + i * (blen + 1)]; };
  for (uint64_t i = 1; i <= alen; i++) {
    for (uint64_t j = 1; j <= blen; j++) {
      at(i, j) = sa[i - 1] == sb[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
    }
  }
  uint32_t idx = at(alen, blen);
  if (get_len && !get_idx) return reply::Integer(call.out, idx);
  std::string result(idx, '\0');
  std::string matches;
  int64_t nmatches = 0;
  uint64_t i = alen, j = blen;
  uint64_t a_start = alen, a_end = 0, b_start = 0, b_end = 0;
  while (i > 0 && j > 0) {
    bool emit = false;
    if (sa[i - 1] == sb[j - 1]) {
      result[idx - 1] = sa[i - 1];
      if (a_start == alen) {
        a_start = a_end = i - 1;
        b_start = b_end = j - 1;
      } else if (a_start == i && b_start == j) {
        a_start--;
        b_start--;
      } else {
        emit = true;
      }
      if (a_start == 0 || b_start == 0) emit = true;
      idx--;
      i--;
      j--;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        i--;
      } else {
        j--;
      }
      if (a_start != alen) emit = true;
    }
    if (emit) {
      uint64_t match_len = a_end - a_start + 1;
      if (get_idx && (min_match_len == 0 || match_len >= static_cast<uint64_t>(min_match_len))) {
        reply::ArrayHeader(&matches, with_match_len ? 3 : 2);
        reply::ArrayHeader(&matches, 2);
        reply::Integer(&matches, static_cast<int64_t>(a_start));
        reply::Integer(&matches, static_cast<int64_t>(a_end));
        reply::ArrayHeader(&matches, 2);
        reply::Integer(&matches, static_cast<int64_t>(b_start));
        reply::Integer(&matches, static_cast<int64_t>(b_end));
        if (with_match_len) reply::Integer(&matches, static_cast<int64_t>(match_len));
        nmatches++;
      }
      a_start = alen;
    }
  }
  if (!get_idx) return reply::Bulk(call.out, result);
  reply::MapHeader(call.out, 2, call.resp);
  reply::Bulk(call.out, "matches");
  reply::ArrayHeader(call.out, static_cast<size_t>(nmatches));
  call.out->append(matches);
  reply::Bulk(call.out, "len");
  reply::Integer(call.out, static_cast<int64_t>(result.size()));
}

}  // namespace

void RegisterStringCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite | kCmdDenyOOM, r = kCmdReadOnly;
  t->Add({"get", 2, r | kCmdFast, 1, 1, 1, Get, "string", "Returns the string value of a key.", "1.0.0"});
  t->Add({"set", -3, w, 1, 1, 1, Set, "string", "Sets the string value of a key.", "1.0.0"});
  t->Add({"setnx", 3, w | kCmdFast, 1, 1, 1, SetNx, "string", "Set the value of a key only if it doesn't exist.", "1.0.0"});
  t->Add({"setex", 4, w, 1, 1, 1, SetEx, "string", "Sets the value and expiration time of a key.", "2.0.0"});
  t->Add({"psetex", 4, w, 1, 1, 1, PSetEx, "string", "Sets the value and expiration in milliseconds of a key.", "2.6.0"});
  t->Add({"getset", 3, w | kCmdFast, 1, 1, 1, GetSet, "string", "Returns the previous value of a key after setting it.", "1.0.0"});
  t->Add({"getdel", 2, kCmdWrite | kCmdFast, 1, 1, 1, GetDel, "string", "Returns the value of a key after deleting it.", "6.2.0"});
  t->Add({"getex", -2, kCmdWrite | kCmdFast, 1, 1, 1, GetEx, "string", "Returns the value of a key after setting its expiration time.", "6.2.0"});
  t->Add({"mget", -2, r | kCmdFast, 1, -1, 1, MGet, "string", "Atomically returns the values of one or more keys.", "1.0.0"});
  t->Add({"mset", -3, w, 1, -1, 2, MSet, "string", "Atomically creates or modifies the values of one or more keys.", "1.0.1"});
  t->Add({"msetnx", -3, w, 1, -1, 2, MSetNx, "string", "Atomically sets the values of keys only when none exist.", "1.0.1"});
  t->Add({"append", 3, w | kCmdFast, 1, 1, 1, Append, "string", "Appends a string to the value of a key.", "2.0.0"});
  t->Add({"strlen", 2, r | kCmdFast, 1, 1, 1, Strlen, "string", "Returns the length of a string value.", "2.2.0"});
  t->Add({"incr", 2, w | kCmdFast, 1, 1, 1, Incr, "string", "Increments the integer value of a key by one.", "1.0.0"});
  t->Add({"decr", 2, w | kCmdFast, 1, 1, 1, Decr, "string", "Decrements the integer value of a key by one.", "1.0.0"});
  t->Add({"incrby", 3, w | kCmdFast, 1, 1, 1, IncrBy, "string", "Increments the integer value of a key by a number.", "1.0.0"});
  t->Add({"decrby", 3, w | kCmdFast, 1, 1, 1, DecrBy, "string", "Decrements a number from the integer value of a key.", "1.0.0"});
  t->Add({"incrbyfloat", 3, w | kCmdFast, 1, 1, 1, IncrByFloat, "string", "Increment the floating point value of a key by a number.", "2.6.0"});
  t->Add({"setrange", 4, w, 1, 1, 1, SetRange, "string", "Overwrites a part of a string value with another by an offset.", "2.2.0"});
  t->Add({"getrange", 4, r, 1, 1, 1, GetRange, "string", "Returns a substring of the string stored at a key.", "2.4.0"});
  t->Add({"substr", 4, r, 1, 1, 1, GetRange, "string", "Returns a substring from a string value.", "1.0.0"});
  t->Add({"lcs", -3, r, 1, 2, 1, Lcs, "string", "Finds the longest common substring.", "7.0.0"});
}

}  // namespace kvrocks
