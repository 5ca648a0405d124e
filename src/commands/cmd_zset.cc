// Sorted set commands.
#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <random>

#include "commands/cmd_list.h"
#include "commands/helpers.h"
#include "commands/scan_cursor.h"
#include "types/redis_set.h"
#include "types/redis_zset.h"

namespace kvrocks {

namespace {

bool ParseScoreBound(const std::string& s, ScoreBound* b) {
  b->exclusive = !s.empty() && s[0] == '(';
  return ParseStrtod(std::string_view(s).substr(b->exclusive ? 1 : 0), &b->value);
}

// Redis' zslParseLexRangeItem: "-" and "+" are read as C strings ("-\0x" is "-").
bool ParseLexBound(const std::string& s, LexBound* b) {
  if (CString(s) == "-") {
    b->neg_inf = true;
    return true;
  }
  if (CString(s) == "+") {
    b->pos_inf = true;
    return true;
  }
  if (s.empty() || (s[0] != '(' && s[0] != '[')) return false;
  b->exclusive = s[0] == '(';
  b->value = s.substr(1);
  return true;
}

void ReplyMembers(CommandCall& call, const std::vector<ZMember>& ms, bool with_scores) {
  if (with_scores && call.resp == 3) {
    reply::ArrayHeader(call.out, ms.size());
    for (const auto& m : ms) {
      reply::ArrayHeader(call.out, 2);
      reply::Bulk(call.out, m.member);
      reply::Double(call.out, m.score, call.resp);
    }
    return;
  }
  reply::ArrayHeader(call.out, ms.size() * (with_scores ? 2 : 1));
  for (const auto& m : ms) {
    reply::Bulk(call.out, m.member);
    if (with_scores) reply::Double(call.out, m.score, call.resp);
  }
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void ZAdd(CommandCall& call) {
  const auto& a = call.args;
  RedisZSet::AddFlags f;
  size_t i = 2;
  for (; i < a.size(); i++) {
    if (TokenEquals(a[i], "nx")) {
      f.nx = true;
    } else if (TokenEquals(a[i], "xx")) {
      f.xx = true;
    } else if (TokenEquals(a[i], "gt")) {
      f.gt = true;
    } else if (TokenEquals(a[i], "lt")) {
      f.lt = true;
    } else if (TokenEquals(a[i], "ch")) {
      f.ch = true;
    } else if (TokenEquals(a[i], "incr")) {
      f.incr = true;
    } else {
      break;
    }
  }
  size_t pairs = a.size() - i;
  if (pairs == 0 || pairs % 2 != 0) return ReplyError(call, kSyntaxError);
  if (f.nx && f.xx) return ReplyError(call, "ERR XX and NX options at the same time are not compatible");
  if ((f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt)) {
    return ReplyError(call, "ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (f.incr && pairs > 2) return ReplyError(call, "ERR INCR option supports a single increment-element pair");
  std::vector<ZMember> ms;
  for (; i + 1 < a.size(); i += 2) {
    double score;
    if (!ParseDouble(a[i], &score)) return ReplyError(call, kNotFloatError);
    ms.push_back({a[i + 1], score});
  }
  Database db = CurrentDb(call);
  int64_t result, written;
  std::optional<double> incr;
  Status s = RedisZSet(&db).Add(a[1], ms, f, &result, &incr, &written);
  if (!s.ok()) return ReplyStatusError(call, s);
  call.ctx->AddDirty(written);  // Redis counts added and updated members
  if (f.incr) return incr ? reply::Double(call.out, *incr, call.resp) : reply::Null(call.out, call.resp);
  reply::Integer(call.out, result);
}

void ZIncrBy(CommandCall& call) {
  double incr;
  if (!ParseDouble(call.args[2], &incr)) return ReplyError(call, kNotFloatError);
  RedisZSet::AddFlags f;
  f.incr = true;
  Database db = CurrentDb(call);
  int64_t result, written;
  std::optional<double> score;
  Status s = RedisZSet(&db).Add(call.args[1], {{call.args[3], incr}}, f, &result, &score, &written);
  if (!s.ok()) return ReplyStatusError(call, s);
  call.ctx->AddDirty(written);
  reply::Double(call.out, *score, call.resp);
}

void ZRem(CommandCall& call) {
  Database db = CurrentDb(call);
  std::vector<std::string_view> ms(call.args.begin() + 2, call.args.end());
  int64_t n;
  Status s = RedisZSet(&db).Remove(call.args[1], ms, &n);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, n);
}

void ZCard(CommandCall& call) {
  Database db = CurrentDb(call);
  uint64_t n;
  Status s = RedisZSet(&db).Card(call.args[1], &n);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(n));
}

void ZScore(CommandCall& call) {
  Database db = CurrentDb(call);
  std::optional<double> score;
  Status s = RedisZSet(&db).Score(call.args[1], call.args[2], &score);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!score) return reply::Null(call.out, call.resp);
  reply::Double(call.out, *score, call.resp);
}

void ZMScore(CommandCall& call) {
  Database db = CurrentDb(call);
  RedisZSet z(&db);
  std::vector<std::optional<double>> scores;
  for (size_t i = 2; i < call.args.size(); i++) {
    std::optional<double> score;
    Status s = z.Score(call.args[1], call.args[i], &score);
    if (!s.ok()) return ReplyStatusError(call, s);
    scores.push_back(score);
  }
  reply::ArrayHeader(call.out, scores.size());
  for (auto& sc : scores) {
    if (sc) {
      reply::Double(call.out, *sc, call.resp);
    } else {
      reply::Null(call.out, call.resp);
    }
  }
}

void ZCount(CommandCall& call) {
  ScoreBound min, max;
  if (!ParseScoreBound(call.args[2], &min) || !ParseScoreBound(call.args[3], &max)) {
    return ReplyError(call, "ERR min or max is not a float");
  }
  Database db = CurrentDb(call);
  uint64_t n;
  Status s = RedisZSet(&db).CountByScore(call.args[1], min, max, &n);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(n));
}

void ZLexCount(CommandCall& call) {
  LexBound min, max;
  if (!ParseLexBound(call.args[2], &min) || !ParseLexBound(call.args[3], &max)) {
    return ReplyError(call, "ERR min or max not valid string range item");
  }
  Database db = CurrentDb(call);
  uint64_t n;
  Status s = RedisZSet(&db).CountByLex(call.args[1], min, max, &n);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(n));
}

void RankGeneric(CommandCall& call, bool rev) {
  Database db = CurrentDb(call);
  std::optional<int64_t> rank;
  double score;
  Status s = RedisZSet(&db).Rank(call.args[1], call.args[2], rev, &rank, &score);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!rank) return reply::Null(call.out, call.resp);
  reply::Integer(call.out, *rank);
}

void ZRank(CommandCall& call) { RankGeneric(call, false); }
void ZRevRank(CommandCall& call) { RankGeneric(call, true); }

enum class RangeType { kRank, kScore, kLex };

struct RangeSpec {
  RangeType type = RangeType::kRank;
  bool rev = false;
  bool with_scores = false;
  int64_t offset = 0, limit = -1;
};

// An empty result for key, or WRONGTYPE if key holds another type.
Status CheckZSetType(Database* db, const std::string& key, std::vector<ZMember>* out) {
  out->clear();
  uint64_t n;
  return RedisZSet(db).Card(key, &n);
}

// Runs a range query whose bounds are args[lo_idx], args[lo_idx + 1]
// (already swapped by the caller for the REV forms).
bool RunRange(CommandCall& call, const std::string& key, const std::string& lo, const std::string& hi,
              const RangeSpec& r, std::vector<ZMember>* out) {
  Database db = CurrentDb(call);
  RedisZSet z(&db);
  Status s;
  if (r.type == RangeType::kRank) {
    int64_t start, stop;
    if (!ParseInt64(lo, &start) || !ParseInt64(hi, &stop)) {
      ReplyError(call, kNotIntegerError);
      return false;
    }
    s = z.RangeByRank(key, start, stop, r.rev, out);
  } else if (r.type == RangeType::kScore) {
    ScoreBound min, max;
    if (!ParseScoreBound(lo, &min) || !ParseScoreBound(hi, &max)) {
      ReplyError(call, "ERR min or max is not a float");
      return false;
    }
    s = r.offset < 0 ? CheckZSetType(&db, key, out) : z.RangeByScore(key, min, max, r.rev, r.offset, r.limit, out);
  } else {
    LexBound min, max;
    if (!ParseLexBound(lo, &min) || !ParseLexBound(hi, &max)) {
      ReplyError(call, "ERR min or max not valid string range item");
      return false;
    }
    s = r.offset < 0 ? CheckZSetType(&db, key, out) : z.RangeByLex(key, min, max, r.rev, r.offset, r.limit, out);
  }
  if (!s.ok()) {
    ReplyStatusError(call, s);
    return false;
  }
  return true;
}

// Parses ZRANGE-style options from args[first...].
bool ParseRangeOptions(CommandCall& call, size_t first, bool allow_by, bool allow_withscores, RangeSpec* r) {
  const auto& a = call.args;
  // As Redis' zrangeGenericCommand: REV, and BYSCORE or BYLEX, once each (a
  // second is a syntax error).
  bool by_given = false, rev_given = false;
  for (size_t i = first; i < a.size(); i++) {
    if (allow_by && !by_given && TokenEquals(a[i], "byscore")) {
      r->type = RangeType::kScore;
      by_given = true;
    } else if (allow_by && !by_given && TokenEquals(a[i], "bylex")) {
      r->type = RangeType::kLex;
      by_given = true;
    } else if (allow_by && !rev_given && TokenEquals(a[i], "rev")) {
      r->rev = true;
      rev_given = true;
    } else if (allow_withscores && TokenEquals(a[i], "withscores")) {
      r->with_scores = true;
    } else if (TokenEquals(a[i], "limit") && i + 2 < a.size()) {
      if (!ParseInt64(a[i + 1], &r->offset) || !ParseInt64(a[i + 2], &r->limit)) {
        ReplyError(call, kNotIntegerError);
        return false;
      }
      i += 2;
    } else {
      ReplyError(call, kSyntaxError);
      return false;
    }
  }
  return true;
}

// Conflicts Redis reports after parsing all options (a LIMIT count of -1 is no limit).
bool CheckRangeOptions(CommandCall& call, const RangeSpec& r) {
  if (r.limit != -1 && r.type == RangeType::kRank) {
    ReplyError(call, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return false;
  }
  if (r.with_scores && r.type == RangeType::kLex) {
    ReplyError(call, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return false;
  }
  return true;
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
// ZRANGESTORE dst src start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count]
void ZRangeGeneric(CommandCall& call, bool store) {
  size_t k = store ? 2 : 1;
  RangeSpec r;
  if (!ParseRangeOptions(call, k + 3, true, !store, &r)) return;
  if (!CheckRangeOptions(call, r)) return;
  const std::string& lo = call.args[k + 1];
  const std::string& hi = call.args[k + 2];
  bool swap = r.rev && r.type != RangeType::kRank;  // REV with BYSCORE/BYLEX takes max first
  std::vector<ZMember> ms;
  if (!RunRange(call, call.args[k], swap ? hi : lo, swap ? lo : hi, r, &ms)) return;
  if (store) {
    Database db = CurrentDb(call);
    Status s = RedisZSet(&db).Store(call.args[1], ms);
    if (!s.ok()) return ReplyStatusError(call, s);
    return reply::Integer(call.out, static_cast<int64_t>(ms.size()));
  }
  ReplyMembers(call, ms, r.with_scores);
}

void ZRange(CommandCall& call) { ZRangeGeneric(call, false); }
void ZRangeStore(CommandCall& call) { ZRangeGeneric(call, true); }

// The legacy forms: ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX.
void LegacyRange(CommandCall& call, RangeType type, bool rev) {
  RangeSpec r;
  r.type = type;
  r.rev = rev;
  if (!ParseRangeOptions(call, 4, false, true, &r) || !CheckRangeOptions(call, r)) return;
  const std::string& a = call.args[2];
  const std::string& b = call.args[3];
  bool swap = rev && type != RangeType::kRank;  // the REV forms take max first
  std::vector<ZMember> ms;
  if (!RunRange(call, call.args[1], swap ? b : a, swap ? a : b, r, &ms)) return;
  ReplyMembers(call, ms, r.with_scores);
}

void ZRevRange(CommandCall& call) { LegacyRange(call, RangeType::kRank, true); }
void ZRangeByScore(CommandCall& call) { LegacyRange(call, RangeType::kScore, false); }
void ZRevRangeByScore(CommandCall& call) { LegacyRange(call, RangeType::kScore, true); }
void ZRangeByLex(CommandCall& call) { LegacyRange(call, RangeType::kLex, false); }
void ZRevRangeByLex(CommandCall& call) { LegacyRange(call, RangeType::kLex, true); }

void ZRemRange(CommandCall& call, RangeType type) {
  RangeSpec r;
  r.type = type;
  std::vector<ZMember> ms;
  if (!RunRange(call, call.args[1], call.args[2], call.args[3], r, &ms)) return;
  Database db = CurrentDb(call);
  int64_t n;
  Status s = RedisZSet(&db).RemoveMembers(call.args[1], ms, &n);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, n);
}

void ZRemRangeByRank(CommandCall& call) { ZRemRange(call, RangeType::kRank); }
void ZRemRangeByScore(CommandCall& call) { ZRemRange(call, RangeType::kScore); }
void ZRemRangeByLex(CommandCall& call) { ZRemRange(call, RangeType::kLex); }

// Pops up to count members from the min (or max) end.
Status PopMembers(CommandCall& call, const std::string& key, bool max, int64_t count, std::vector<ZMember>* out) {
  Database db = CurrentDb(call);
  RedisZSet z(&db);
  Status s = z.RangeByRank(key, 0, count - 1, max, out);
  if (!s.ok() || out->empty()) return s;
  int64_t n;
  return z.RemoveMembers(key, *out, &n, max ? RedisZSet::End::kMax : RedisZSet::End::kMin);
}

// ZPOPMIN / ZPOPMAX key [count]
void ZPopGeneric(CommandCall& call, bool max) {
  const auto& a = call.args;
  if (a.size() > 3) return ReplyError(call, kSyntaxError);
  int64_t count = 1;
  if (a.size() == 3) {
    if (!ParseInt64(a[2], &count) || count < 0) return ReplyError(call, "ERR value is out of range, must be positive");
  }
  std::vector<ZMember> ms;
  Database db = CurrentDb(call);
  Status s = count > 0 ? PopMembers(call, a[1], max, count, &ms) : CheckZSetType(&db, a[1], &ms);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (a.size() == 2 || call.resp == 2) {
    reply::ArrayHeader(call.out, ms.size() * 2);
    for (const auto& m : ms) {
      reply::Bulk(call.out, m.member);
      reply::Double(call.out, m.score, call.resp);
    }
    return;
  }
  ReplyMembers(call, ms, true);
}

void ZPopMin(CommandCall& call) { ZPopGeneric(call, false); }
void ZPopMax(CommandCall& call) { ZPopGeneric(call, true); }

struct ZMPopArgs {
  std::vector<std::string> keys;
  bool max = false;
  int64_t count = 1;
};

// "numkeys key... MIN|MAX [COUNT count]" from args[numkeys_idx].
bool ParseZMPop(CommandCall& call, size_t numkeys_idx, ZMPopArgs* out) {
  const auto& a = call.args;
  int64_t numkeys;
  if (!ParseInt64(a[numkeys_idx], &numkeys) || numkeys <= 0) {
    ReplyError(call, "ERR numkeys should be greater than 0");
    return false;
  }
  size_t where = numkeys_idx + 1 + static_cast<size_t>(numkeys);
  if (numkeys > static_cast<int64_t>(a.size()) || where >= a.size()) {
    ReplyError(call, kSyntaxError);
    return false;
  }
  if (TokenEquals(a[where], "min")) {
    out->max = false;
  } else if (TokenEquals(a[where], "max")) {
    out->max = true;
  } else {
    ReplyError(call, kSyntaxError);
    return false;
  }
  out->keys.assign(a.begin() + static_cast<long>(numkeys_idx) + 1, a.begin() + static_cast<long>(where));
  bool has_count = false;
  for (size_t i = where + 1; i < a.size(); i++) {
    if (TokenEquals(a[i], "count") && i + 1 < a.size() && !has_count) {
      if (!ParseInt64(a[i + 1], &out->count) || out->count <= 0) {
        ReplyError(call, "ERR count should be greater than 0");
        return false;
      }
      has_count = true;
      i++;
    } else {
      ReplyError(call, kSyntaxError);
      return false;
    }
  }
  return true;
}

// Pops from the first non-empty sorted set; NotFound if all are empty.
Status ZPopFirst(CommandCall& call, const ZMPopArgs& args, std::string* key, std::vector<ZMember>* ms) {
  Database db = CurrentDb(call);
  RedisZSet z(&db);
  for (const auto& k : args.keys) {
    uint64_t n;
    Status s = z.Card(k, &n);
    if (!s.ok()) return s;
    if (n == 0) continue;
    *key = k;
    return PopMembers(call, k, args.max, args.count, ms);
  }
  return Status::NotFound();
}

void ReplyZMPop(CommandCall& call, const std::string& key, const std::vector<ZMember>& ms) {
  reply::ArrayHeader(call.out, 2);
  reply::Bulk(call.out, key);
  reply::ArrayHeader(call.out, ms.size());
  for (const auto& m : ms) {
    reply::ArrayHeader(call.out, 2);
    reply::Bulk(call.out, m.member);
    reply::Double(call.out, m.score, call.resp);
  }
}

void ZMPop(CommandCall& call) {
  ZMPopArgs args;
  if (!ParseZMPop(call, 1, &args)) return;
  std::string key;
  std::vector<ZMember> ms;
  Status s = ZPopFirst(call, args, &key, &ms);
  if (s.IsNotFound()) return reply::NullArray(call.out, call.resp);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplyZMPop(call, key, ms);
}

// BZPOPMIN / BZPOPMAX key [key ...] timeout
void BZPopGeneric(CommandCall& call, bool max) {
  uint64_t timeout;
  if (!ParseTimeout(call, call.args.back(), &timeout)) return;
  ZMPopArgs args;
  args.keys.assign(call.args.begin() + 1, call.args.end() - 1);
  args.max = max;
  std::string key;
  std::vector<ZMember> ms;
  Status s = ZPopFirst(call, args, &key, &ms);
  if (s.ok()) {
    reply::ArrayHeader(call.out, 3);
    reply::Bulk(call.out, key);
    reply::Bulk(call.out, ms[0].member);
    return reply::Double(call.out, ms[0].score, call.resp);
  }
  if (!s.IsNotFound()) return ReplyStatusError(call, s);
  BlockOrNull(call, args.keys, timeout);
}

void BZPopMin(CommandCall& call) { BZPopGeneric(call, false); }
void BZPopMax(CommandCall& call) { BZPopGeneric(call, true); }

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
void BZMPop(CommandCall& call) {
  uint64_t timeout;
  if (!ParseTimeout(call, call.args[1], &timeout)) return;
  ZMPopArgs args;
  if (!ParseZMPop(call, 2, &args)) return;
  std::string key;
  std::vector<ZMember> ms;
  Status s = ZPopFirst(call, args, &key, &ms);
  if (s.ok()) return ReplyZMPop(call, key, ms);
  if (!s.IsNotFound()) return ReplyStatusError(call, s);
  BlockOrNull(call, args.keys, timeout);
}

// ZRANDMEMBER key [count [WITHSCORES]]
void ZRandMember(CommandCall& call) {
  const auto& a = call.args;
  int64_t count = 1;
  if (a.size() >= 3 && !RandomCountArg(call, 2, &count)) return;
  if (a.size() > 4 || (a.size() == 4 && !TokenEquals(a[3], "withscores"))) return ReplyError(call, kSyntaxError);
  bool with_scores = a.size() == 4;
  if (with_scores && (count < -(INT64_MAX / 2) || count > INT64_MAX / 2)) {
    return ReplyError(call, "ERR value is out of range");
  }
  Database db = CurrentDb(call);
  std::vector<ZMember> picked;
  // A negative count: |count| independent picks, repetitions allowed.
  const auto n = static_cast<uint64_t>(count < 0 ? -count : count);
  bool refused = false;
  auto fits = [&](uint64_t avg_len) {
    refused = !RepeatedPicksFit(call, n, avg_len + (with_scores ? 24 : 0));
    return !refused;
  };
  Status s = RedisZSet(&db).RandomMembers(a[1], a.size() == 2 ? 1 : n, count < 0, &picked, fits);
  if (refused) return;
  if (!s.ok()) return ReplyStatusError(call, s);
  if (a.size() == 2) {
    if (picked.empty()) return reply::Null(call.out, call.resp);
    return reply::Bulk(call.out, picked[0].member);
  }
  ReplyMembers(call, picked, with_scores);
}

enum class Aggregate { kSum, kMin, kMax };

// Loads a source of ZUNION & co: a sorted set, or a set (every score 1).
Status LoadSource(CommandCall& call, const std::string& key, std::vector<ZMember>* out) {
  Database db = CurrentDb(call);
  LoadedKey lk;
  Status s = db.Load(key, &lk);
  out->clear();
  if (!s.ok() || !lk.live) return s;
  if (lk.type == RedisType::kSet) {
    std::vector<std::string> members;
    s = RedisSet(&db).Members(key, &members);
    for (auto& m : members) out->push_back({std::move(m), 1.0});
    return s;
  }
  if (lk.type != RedisType::kZSet) return Status::RedisError(kWrongTypeError);
  return RedisZSet(&db).All(key, out);
}

// Redis reports a source of the wrong type before it reads the options that follow the keys.
template <typename Keys>
bool CheckSourceTypes(CommandCall& call, const Keys& keys) {
  Database db = CurrentDb(call);
  for (const auto& key : keys) {
    LoadedKey lk;
    Status s = db.Load(key, &lk);
    if (s.ok() && lk.live && lk.type != RedisType::kSet && lk.type != RedisType::kZSet) {
      s = Status::RedisError(kWrongTypeError);
    }
    if (!s.ok()) {
      ReplyStatusError(call, s);
      return false;
    }
  }
  return true;
}

enum class SetOp { kUnion, kInter, kDiff };

double Combine(double a, double b, Aggregate agg) {
  switch (agg) {
    case Aggregate::kMin: return std::min(a, b);
    case Aggregate::kMax: return std::max(a, b);
    default: {
      double r = a + b;
      return std::isnan(r) ? 0 : r;  // inf + -inf, as Redis
    }
  }
}

// ZUNION/ZINTER/ZDIFF[STORE]: numkeys at args[idx]; writes sorted result.
bool ComputeSetOp(CommandCall& call, SetOp op, size_t idx, bool allow_withscores, std::vector<ZMember>* result,
                  bool* with_scores) {
  const auto& a = call.args;
  int64_t numkeys;
  std::string name = ToLower(a[0]);
  if (!ParseInt64(a[idx], &numkeys)) {
    ReplyError(call, kNotIntegerError);
    return false;
  }
  if (numkeys < 1) {
    ReplyError(call, "ERR at least 1 input key is needed for '" + name + "' command");
    return false;
  }
  if (numkeys > static_cast<int64_t>(a.size() - idx - 1)) {
    ReplyError(call, kSyntaxError);
    return false;
  }
  std::vector<std::string> keys(a.begin() + static_cast<long>(idx) + 1,
                                a.begin() + static_cast<long>(idx) + 1 + numkeys);
  Context::SnapshotScope snapshot(call.ctx);
  if (!CheckSourceTypes(call, keys)) return false;
  std::vector<double> weights(keys.size(), 1.0);
  Aggregate agg = Aggregate::kSum;
  *with_scores = false;
  for (size_t i = idx + 1 + static_cast<size_t>(numkeys); i < a.size(); i++) {
    size_t left = a.size() - i - 1;
    if (op != SetOp::kDiff && TokenEquals(a[i], "weights") && left >= keys.size()) {
      for (size_t w = 0; w < keys.size(); w++) {
        if (!ParseDouble(a[i + 1 + w], &weights[w])) {
          ReplyError(call, "ERR weight value is not a float");
          return false;
        }
      }
      i += keys.size();
    } else if (op != SetOp::kDiff && TokenEquals(a[i], "aggregate") && left >= 1) {
      const std::string& v = a[i + 1];
      if (TokenEquals(v, "sum")) {
        agg = Aggregate::kSum;
      } else if (TokenEquals(v, "min")) {
        agg = Aggregate::kMin;
      } else if (TokenEquals(v, "max")) {
        agg = Aggregate::kMax;
      } else {
        ReplyError(call, kSyntaxError);
        return false;
      }
      i++;
    } else if (allow_withscores && TokenEquals(a[i], "withscores")) {
      *with_scores = true;
    } else {
      ReplyError(call, kSyntaxError);
      return false;
    }
  }
  std::vector<std::vector<ZMember>> sources(keys.size());
  for (size_t k = 0; k < keys.size(); k++) {
    Status s = LoadSource(call, keys[k], &sources[k]);
    if (!s.ok()) {
      ReplyStatusError(call, s);
      return false;
    }
  }
  // Redis combines the sources from the smallest to the largest (a stable sort
  // of them with their weights), and sums of doubles depend on that order.
  std::vector<size_t> order(keys.size());
  for (size_t k = 0; k < order.size(); k++) order[k] = k;
  if (op != SetOp::kDiff) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return sources[x].size() < sources[y].size(); });
  }
  std::map<std::string, double> acc;
  for (size_t n = 0; n < order.size(); n++) {
    const size_t k = order[n];
    std::vector<ZMember>& src = sources[k];
    if (op == SetOp::kDiff) {
      if (n == 0) {
        for (auto& m : src) acc[m.member] = m.score;
      } else {
        for (auto& m : src) acc.erase(m.member);
      }
      continue;
    }
    std::map<std::string, double> next;
    for (auto& m : src) {
      double w = m.score * weights[k];
      // inf * 0: Redis counts it as 0, except for the later sources of an
      // intersection, whose NaN goes into the aggregate as it is.
      if (std::isnan(w) && (op == SetOp::kUnion || n == 0)) w = 0;
      if (op == SetOp::kUnion) {
        auto it = acc.find(m.member);
        acc[m.member] = it == acc.end() ? w : Combine(it->second, w, agg);
      } else if (n == 0) {
        next[m.member] = w;
      } else {
        auto it = acc.find(m.member);
        if (it != acc.end()) next[m.member] = Combine(it->second, w, agg);
      }
    }
    if (op == SetOp::kInter) acc.swap(next);
    src.clear();
  }
  result->clear();
  for (auto& [m, sc] : acc) result->push_back({m, sc});
  std::sort(result->begin(), result->end(), [](const ZMember& x, const ZMember& y) {
    return x.score != y.score ? x.score < y.score : x.member < y.member;
  });
  return true;
}

void SetOpCommand(CommandCall& call, SetOp op) {
  std::vector<ZMember> result;
  bool with_scores;
  if (!ComputeSetOp(call, op, 1, true, &result, &with_scores)) return;
  ReplyMembers(call, result, with_scores);
}

void SetOpStore(CommandCall& call, SetOp op) {
  std::vector<ZMember> result;
  bool with_scores;
  if (!ComputeSetOp(call, op, 2, false, &result, &with_scores)) return;
  Database db = CurrentDb(call);
  Status s = RedisZSet(&db).Store(call.args[1], result);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(result.size()));
}

void ZUnion(CommandCall& call) { SetOpCommand(call, SetOp::kUnion); }
void ZInter(CommandCall& call) { SetOpCommand(call, SetOp::kInter); }
void ZDiff(CommandCall& call) { SetOpCommand(call, SetOp::kDiff); }
void ZUnionStore(CommandCall& call) { SetOpStore(call, SetOp::kUnion); }
void ZInterStore(CommandCall& call) { SetOpStore(call, SetOp::kInter); }
void ZDiffStore(CommandCall& call) { SetOpStore(call, SetOp::kDiff); }

// ZINTERCARD numkeys key [key ...] [LIMIT limit]
void ZInterCard(CommandCall& call) {
  const auto& a = call.args;
  int64_t numkeys;
  if (!IntArg(call, 1, &numkeys)) return;
  if (numkeys < 1) return ReplyError(call, "ERR at least 1 input key is needed for 'zintercard' command");
  if (numkeys > static_cast<int64_t>(a.size()) - 2) return ReplyError(call, kSyntaxError);
  Context::SnapshotScope snapshot(call.ctx);
  if (!CheckSourceTypes(call, std::vector<std::string_view>(a.begin() + 2, a.begin() + 2 + numkeys))) return;
  int64_t limit = 0;
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < a.size(); i++) {
    if (TokenEquals(a[i], "limit") && i + 1 < a.size()) {
      if (!ParseInt64(a[i + 1], &limit) || limit < 0) return ReplyError(call, "ERR LIMIT can't be negative");
      i++;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  std::map<std::string, int> seen;
  for (int64_t k = 0; k < numkeys; k++) {
    std::vector<ZMember> src;
    Status s = LoadSource(call, a[2 + static_cast<size_t>(k)], &src);
    if (!s.ok()) return ReplyStatusError(call, s);
    for (auto& m : src) seen[m.member]++;
  }
  int64_t n = 0;
  for (auto& [m, c] : seen) n += c == numkeys;
  if (limit > 0 && n > limit) n = limit;
  reply::Integer(call.out, n);
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]
void ZScan(CommandCall& call) {
  uint64_t cursor;
  if (!ParseCursor(call.args[2], &cursor)) return ReplyError(call, "ERR invalid cursor");
  Database db = CurrentDb(call);
  RedisZSet z(&db);
  LoadedKey lk;
  Metadata meta;
  bool exists;
  Status s = z.LoadZSet(call.args[1], &lk, &meta, &exists);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!exists) return ReplyEmptyScan(call);
  std::string pattern;
  int64_t count;
  if (!ParseScanOptions(call, 3, &pattern, &count)) return;
  // Positions are ranks in score order; a listpack is returned whole, as in Redis.
  bool whole = std::string(RedisZSet::Encoding(meta)) == "listpack";
  int64_t start = 0;
  if (cursor != 0) {
    std::string pos = ScanCursors().Find(cursor);
    ParseInt64(pos, &start);
  }
  std::vector<ZMember> ms;
  int64_t stop = whole ? -1 : start + count - 1;
  s = z.RangeByRank(call.args[1], start, stop, false, &ms);
  if (!s.ok()) return ReplyStatusError(call, s);
  bool done = whole || static_cast<uint64_t>(start + static_cast<int64_t>(ms.size())) >= meta.size;
  std::vector<ZMember> matched;
  for (auto& m : ms) {
    if (pattern == "*" || StringMatch(pattern, m.member)) matched.push_back(m);
  }
  reply::ArrayHeader(call.out, 2);
  reply::Bulk(call.out, done ? "0" : std::to_string(ScanCursors().Save(std::to_string(start + static_cast<int64_t>(ms.size())))));
  reply::ArrayHeader(call.out, matched.size() * 2);
  for (auto& m : matched) {
    reply::Bulk(call.out, m.member);
    // A listpack holds a score that is a whole number as an integer (Redis' d2string),
    // and ZSCAN returns it as stored: 759051314427530240, not 7.5905131442753024e+17.
    constexpr double kLimit = static_cast<double>(LLONG_MAX / 2);
    if (whole && m.score >= -kLimit && m.score <= kLimit && m.score == std::floor(m.score)) {
      reply::Bulk(call.out, std::to_string(static_cast<long long>(m.score)));
    } else {
      reply::Double(call.out, m.score, 2);
    }
  }
}

// The keys after a numkeys argument at position 1 or 2: locked by the writers
// (ZMPOP, BZMPOP, ZUNIONSTORE & co), listed by COMMAND GETKEYS for all.
std::vector<std::pair<int, std::string>> KeysAfterNumkeys1(const CommandCall& call) { return NumkeysLockKeys(call, 1); }
std::vector<std::pair<int, std::string>> KeysAfterNumkeys2(const CommandCall& call) { return NumkeysLockKeys(call, 2); }

}  // namespace

void RegisterZSetCommands(CommandTable* t) {
  // The commands that ask for ranks lock their key: they may build the set's
  // rank index (RedisZSet::EnsureRankIndex).
  const uint32_t w = kCmdWrite | kCmdDenyOOM | kCmdFast, r = kCmdReadOnly | kCmdFast, rs = kCmdReadOnly;
  const uint32_t ws = kCmdWrite | kCmdDenyOOM, wd = kCmdWrite, b = kCmdWrite | kCmdBlocking | kCmdNoScript | kCmdFast;
  t->Add({"zadd", -4, w, 1, 1, 1, ZAdd, "sorted_set", "Adds one or more members to a sorted set, or updates their scores.", "1.2.0"});
  t->Add({"zincrby", 4, w, 1, 1, 1, ZIncrBy, "sorted_set", "Increments the score of a member in a sorted set.", "1.2.0"});
  t->Add({"zrem", -3, kCmdWrite | kCmdFast, 1, 1, 1, ZRem, "sorted_set", "Removes one or more members from a sorted set.", "1.2.0"});
  t->Add({"zcard", 2, r, 1, 1, 1, ZCard, "sorted_set", "Returns the number of members in a sorted set.", "1.2.0"});
  t->Add({"zscore", 3, r, 1, 1, 1, ZScore, "sorted_set", "Returns the score of a member in a sorted set.", "1.2.0"});
  t->Add({"zmscore", -3, r, 1, 1, 1, ZMScore, "sorted_set", "Returns the score of one or more members in a sorted set.", "6.2.0"});
  t->Add({"zcount", 4, r | kCmdLocksKeys, 1, 1, 1, ZCount, "sorted_set", "Returns the count of members in a sorted set that have scores within a range.", "2.0.0"});
  t->Add({"zlexcount", 4, r | kCmdLocksKeys, 1, 1, 1, ZLexCount, "sorted_set", "Returns the number of members in a sorted set within a lexicographical range.", "2.8.9"});
  t->Add({"zrank", 3, r | kCmdLocksKeys, 1, 1, 1, ZRank, "sorted_set", "Returns the index of a member in a sorted set ordered by ascending scores.", "2.0.0"});
  t->Add({"zrevrank", 3, r | kCmdLocksKeys, 1, 1, 1, ZRevRank, "sorted_set", "Returns the index of a member in a sorted set ordered by descending scores.", "2.0.0"});
  t->Add({"zrange", -4, rs | kCmdLocksKeys, 1, 1, 1, ZRange, "sorted_set", "Returns members in a sorted set within a range of indexes.", "1.2.0"});
  t->Add({"zrangestore", -5, ws, 1, 2, 1, ZRangeStore, "sorted_set", "Stores a range of members from sorted set in a key.", "6.2.0"});
  t->Add({"zrevrange", -4, rs | kCmdLocksKeys, 1, 1, 1, ZRevRange, "sorted_set", "Returns members in a sorted set within a range of indexes in reverse order.", "1.2.0"});
  t->Add({"zrangebyscore", -4, rs | kCmdLocksKeys, 1, 1, 1, ZRangeByScore, "sorted_set", "Returns members in a sorted set within a range of scores.", "1.0.5"});
  t->Add({"zrevrangebyscore", -4, rs | kCmdLocksKeys, 1, 1, 1, ZRevRangeByScore, "sorted_set", "Returns members in a sorted set within a range of scores in reverse order.", "2.2.0"});
  t->Add({"zrangebylex", -4, rs | kCmdLocksKeys, 1, 1, 1, ZRangeByLex, "sorted_set", "Returns members in a sorted set within a lexicographical range.", "2.8.9"});
  t->Add({"zrevrangebylex", -4, rs | kCmdLocksKeys, 1, 1, 1, ZRevRangeByLex, "sorted_set", "Returns members in a sorted set within a lexicographical range in reverse order.", "2.8.9"});
  t->Add({"zremrangebyrank", 4, wd, 1, 1, 1, ZRemRangeByRank, "sorted_set", "Removes members in a sorted set within a range of indexes.", "2.0.0"});
  t->Add({"zremrangebyscore", 4, wd, 1, 1, 1, ZRemRangeByScore, "sorted_set", "Removes members in a sorted set within a range of scores.", "1.2.0"});
  t->Add({"zremrangebylex", 4, wd, 1, 1, 1, ZRemRangeByLex, "sorted_set", "Removes members in a sorted set within a lexicographical range.", "2.8.9"});
  t->Add({"zpopmin", -2, kCmdWrite | kCmdFast, 1, 1, 1, ZPopMin, "sorted_set", "Returns the lowest-scoring members from a sorted set after removing them.", "5.0.0"});
  t->Add({"zpopmax", -2, kCmdWrite | kCmdFast, 1, 1, 1, ZPopMax, "sorted_set", "Returns the highest-scoring members from a sorted set after removing them.", "5.0.0"});
  t->Add({"zmpop", -4, wd, 0, 0, 0, ZMPop, "sorted_set", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them.", "7.0.0", KeysAfterNumkeys1});
  t->Add({"bzpopmin", -3, b, 1, -2, 1, BZPopMin, "sorted_set", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise.", "5.0.0"});
  t->Add({"bzpopmax", -3, b, 1, -2, 1, BZPopMax, "sorted_set", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.", "5.0.0"});
  t->Add({"bzmpop", -5, b & ~kCmdFast, 0, 0, 0, BZMPop, "sorted_set", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise.", "7.0.0", KeysAfterNumkeys2});
  t->Add({"zrandmember", -2, rs | kCmdLocksKeys, 1, 1, 1, ZRandMember, "sorted_set", "Returns one or more random members from a sorted set.", "6.2.0"});
  t->Add({"zunion", -3, rs, 0, 0, 0, ZUnion, "sorted_set", "Returns the union of multiple sorted sets.", "6.2.0", KeysAfterNumkeys1});
  t->Add({"zinter", -3, rs, 0, 0, 0, ZInter, "sorted_set", "Returns the intersect of multiple sorted sets.", "6.2.0", KeysAfterNumkeys1});
  t->Add({"zdiff", -3, rs, 0, 0, 0, ZDiff, "sorted_set", "Returns the difference between multiple sorted sets.", "6.2.0", KeysAfterNumkeys1});
  t->Add({"zunionstore", -4, ws, 1, 1, 1, ZUnionStore, "sorted_set", "Stores the union of multiple sorted sets in a key.", "2.0.0", KeysAfterNumkeys2});
  t->Add({"zinterstore", -4, ws, 1, 1, 1, ZInterStore, "sorted_set", "Stores the intersect of multiple sorted sets in a key.", "2.0.0", KeysAfterNumkeys2});
  t->Add({"zdiffstore", -4, ws, 1, 1, 1, ZDiffStore, "sorted_set", "Stores the difference of multiple sorted sets in a key.", "6.2.0", KeysAfterNumkeys2});
  t->Add({"zintercard", -3, rs, 0, 0, 0, ZInterCard, "sorted_set", "Returns the number of members of the intersect of multiple sorted sets.", "7.0.0", KeysAfterNumkeys1});
  t->Add({"zscan", -3, rs | kCmdLocksKeys, 1, 1, 1, ZScan, "sorted_set", "Iterates over members and scores of a sorted set.", "2.8.0"});
}

}  // namespace kvrocks
