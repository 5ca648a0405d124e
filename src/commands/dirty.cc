#include "commands/dirty.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "common/string_util.h"

namespace kvrocks {

namespace {

// How a command's changes are counted (Redis 7.0's server.dirty increments).
enum class Rule {
  kOne,           // 1 unless the reply is an error or nil
  kNotError,      // 1 unless the reply is an error
  kIntIsOne,      // 1 if the reply is :1
  kInt,           // the integer reply
  kSet,           // SET: 1 unless NX/XX aborted it
  kArgPairs,      // (argc - 1) / 2 unless an error (MSET)
  kArgPairsIfOne, // MSETNX: (argc - 1) / 2 if the reply is :1
  kFieldPairs,    // HSET/HMSET: (argc - 2) / 2 unless an error
  kPush,          // LPUSH/RPUSH: argc - 2 unless an error
  kPushx,         // LPUSHX/RPUSHX: argc - 2 unless the reply is :0 or an error
  kPositive,      // 1 if the integer reply is > 0 (LINSERT)
  kSetrange,      // 1 unless an error or an empty value
  kPopped,        // a bulk counts 1, an array its length (LPOP, RPOP, SPOP)
  kMpopped,       // [key, [elements]]: the elements (LMPOP, ZMPOP and blocking forms)
  kZpopped,       // ZPOPMIN/ZPOPMAX: pairs, flat (RESP2) or nested (RESP3)
  kStreamsServed, // XREADGROUP: the streams it replied with
  kAutoclaimed,   // XAUTOCLAIM: claimed and deleted entries
  kWrote,         // 1 if the call wrote anything (a store that may delete its destination, GETEX, SETBIT ...)
  kStoreCount,    // SORT/GEO* STORE: the stored count, or 1 if an empty result deleted the destination
  kFieldCodes,    // HEXPIRE family: fields set (1) or deleted (2)
  kFieldOnes,     // HPERSIST: fields whose TTL was removed (1)
  kFunction,      // FUNCTION LOAD/DELETE/FLUSH/RESTORE: 1 unless an error
  kXgroup,        // XGROUP CREATE/SETID/DESTROY/DELCONSUMER (CREATECONSUMER counts where it creates)
};

const std::unordered_map<std::string_view, Rule>& Rules() {
  static const std::unordered_map<std::string_view, Rule> rules = {
      {"set", Rule::kSet},
      {"setnx", Rule::kIntIsOne},
      {"setex", Rule::kOne},
      {"psetex", Rule::kOne},
      {"getset", Rule::kNotError},
      {"getdel", Rule::kOne},
      {"getex", Rule::kWrote},
      {"setrange", Rule::kSetrange},
      {"mset", Rule::kArgPairs},
      {"msetnx", Rule::kArgPairsIfOne},
      {"incr", Rule::kOne},
      {"decr", Rule::kOne},
      {"incrby", Rule::kOne},
      {"decrby", Rule::kOne},
      {"incrbyfloat", Rule::kOne},
      {"append", Rule::kOne},
      {"del", Rule::kInt},
      {"unlink", Rule::kInt},
      {"expire", Rule::kIntIsOne},
      {"pexpire", Rule::kIntIsOne},
      {"expireat", Rule::kIntIsOne},
      {"pexpireat", Rule::kIntIsOne},
      {"persist", Rule::kIntIsOne},
      {"rename", Rule::kWrote},  // RENAME k k changes nothing
      {"renamenx", Rule::kIntIsOne},
      {"move", Rule::kIntIsOne},
      {"copy", Rule::kIntIsOne},
      {"swapdb", Rule::kOne},
      {"restore", Rule::kWrote},  // an already expired TTL creates nothing
      {"restore-asking", Rule::kWrote},
      {"sort", Rule::kStoreCount},
      {"hset", Rule::kFieldPairs},
      {"hmset", Rule::kFieldPairs},
      {"hsetnx", Rule::kIntIsOne},
      {"hincrby", Rule::kOne},
      {"hincrbyfloat", Rule::kOne},
      {"hdel", Rule::kInt},
      {"hexpire", Rule::kFieldCodes},
      {"hpexpire", Rule::kFieldCodes},
      {"hexpireat", Rule::kFieldCodes},
      {"hpexpireat", Rule::kFieldCodes},
      {"hpersist", Rule::kFieldOnes},
      {"lpush", Rule::kPush},
      {"rpush", Rule::kPush},
      {"lpushx", Rule::kPushx},
      {"rpushx", Rule::kPushx},
      {"linsert", Rule::kPositive},
      {"lset", Rule::kOne},
      {"lpop", Rule::kPopped},
      {"rpop", Rule::kPopped},
      {"lmpop", Rule::kMpopped},
      {"blmpop", Rule::kMpopped},
      {"blpop", Rule::kOne},
      {"brpop", Rule::kOne},
      {"lrem", Rule::kInt},
      {"lmove", Rule::kOne},
      {"blmove", Rule::kOne},
      {"rpoplpush", Rule::kOne},
      {"brpoplpush", Rule::kOne},
      {"sadd", Rule::kInt},
      {"srem", Rule::kInt},
      {"spop", Rule::kPopped},
      {"sinterstore", Rule::kWrote},
      {"sunionstore", Rule::kWrote},
      {"sdiffstore", Rule::kWrote},
      {"zrem", Rule::kInt},
      {"zremrangebyscore", Rule::kInt},
      {"zremrangebyrank", Rule::kInt},
      {"zremrangebylex", Rule::kInt},
      {"zpopmin", Rule::kZpopped},
      {"zpopmax", Rule::kZpopped},
      {"bzpopmin", Rule::kOne},
      {"bzpopmax", Rule::kOne},
      {"zmpop", Rule::kMpopped},
      {"bzmpop", Rule::kMpopped},
      {"zunionstore", Rule::kWrote},
      {"zinterstore", Rule::kWrote},
      {"zdiffstore", Rule::kWrote},
      {"zrangestore", Rule::kWrote},
      {"georadius", Rule::kStoreCount},
      {"georadiusbymember", Rule::kStoreCount},
      {"geosearchstore", Rule::kStoreCount},
      {"bitop", Rule::kWrote},
      {"pfcount", Rule::kWrote},
      {"pfmerge", Rule::kOne},
      {"xadd", Rule::kOne},
      {"xdel", Rule::kInt},
      {"xtrim", Rule::kInt},
      {"xsetid", Rule::kOne},
      {"xack", Rule::kInt},
      {"xreadgroup", Rule::kStreamsServed},
      {"xautoclaim", Rule::kAutoclaimed},
      {"xgroup", Rule::kXgroup},
      {"function", Rule::kFunction},
  };
  return rules;
}

bool IsError(std::string_view r) { return !r.empty() && r[0] == '-'; }

bool IsNil(std::string_view r) {
  return r.empty() || r.compare(0, 4, "$-1\r") == 0 || r.compare(0, 4, "*-1\r") == 0 || r.compare(0, 2, "_\r") == 0;
}

// The number after the type byte of the value at *pos (an integer reply or an
// aggregate's length); moves *pos past its line.
int64_t HeaderNumber(std::string_view r, size_t* pos) {
  size_t end = r.find("\r\n", *pos);
  if (end == std::string_view::npos || end <= *pos + 1) return 0;
  int64_t v = 0;
  ParseInt64(r.substr(*pos + 1, end - *pos - 1), &v);
  *pos = end + 2;
  return v;
}

int64_t Int(std::string_view r) {
  size_t pos = 0;
  return !r.empty() && r[0] == ':' ? HeaderNumber(r, &pos) : 0;
}

// Moves *pos past one RESP2/RESP3 value.
void SkipValue(std::string_view r, size_t* pos) {
  if (*pos >= r.size()) return;
  char t = r[*pos];
  int64_t n = HeaderNumber(r, pos);
  if (t == '$' || t == '=' || t == '!') {
    *pos += static_cast<size_t>(n > 0 ? n : 0) + (n >= 0 ? 2 : 0);
  } else if (t == '*' || t == '~' || t == '>' || t == '%' || t == '|') {
    int64_t items = (t == '%' || t == '|') ? 2 * n : n;
    for (int64_t i = 0; i < items && *pos < r.size(); i++) SkipValue(r, pos);
  }
}

int64_t Popped(std::string_view r) {
  if (IsNil(r) || IsError(r)) return 0;
  if (r[0] == '*' || r[0] == '~') {
    size_t pos = 0;
    return HeaderNumber(r, &pos);
  }
  return 1;
}

int64_t Mpopped(std::string_view r) {
  if (IsNil(r) || IsError(r) || r[0] != '*') return 0;
  size_t pos = 0;
  HeaderNumber(r, &pos);
  SkipValue(r, &pos);  // the key
  return pos < r.size() ? HeaderNumber(r, &pos) : 0;
}

int64_t Zpopped(std::string_view r) {
  if (IsNil(r) || IsError(r) || r[0] != '*') return 0;
  size_t pos = 0;
  int64_t n = HeaderNumber(r, &pos);
  if (n == 0) return 0;
  return pos < r.size() && r[pos] == '*' ? n : n / 2;  // nested pairs, or member, score, ...
}

// XAUTOCLAIM's reply: [next id, [claimed], [deleted ids]].
int64_t Autoclaimed(std::string_view r) {
  if (IsError(r) || r.empty() || r[0] != '*') return 0;
  size_t pos = 0;
  HeaderNumber(r, &pos);
  SkipValue(r, &pos);  // the next id
  if (pos >= r.size()) return 0;
  size_t claimed_at = pos;
  int64_t claimed = HeaderNumber(r, &pos);
  pos = claimed_at;
  SkipValue(r, &pos);
  int64_t deleted = pos < r.size() ? HeaderNumber(r, &pos) : 0;
  return claimed + deleted;
}

// Entries of an integer array reply equal to one of the wanted codes.
int64_t CountCodes(std::string_view r, bool twos) {
  if (r.empty() || r[0] != '*') return 0;
  size_t pos = 0;
  int64_t n = HeaderNumber(r, &pos), count = 0;
  for (int64_t i = 0; i < n && pos < r.size(); i++) {
    int64_t v = HeaderNumber(r, &pos);
    if (v == 1 || (twos && v == 2)) count++;
  }
  return count;
}

int64_t SetDirty(const std::vector<std::string>& args, std::string_view r) {
  if (IsError(r)) return 0;
  bool nx = false, xx = false, get = false;
  for (size_t i = 3; i < args.size(); i++) {
    nx = nx || TokenEquals(args[i], "nx");
    xx = xx || TokenEquals(args[i], "xx");
    get = get || TokenEquals(args[i], "get");
  }
  if (!get) return IsNil(r) ? 0 : 1;
  // With GET the reply is the old value: NX aborts when there was one, XX when there was none.
  bool had = !IsNil(r);
  return (nx && had) || (xx && !had) ? 0 : 1;
}

int64_t Dirty(Rule rule, const std::vector<std::string>& args, std::string_view r, bool wrote) {
  const auto argc = static_cast<int64_t>(args.size());
  switch (rule) {
    case Rule::kOne: return IsError(r) || IsNil(r) ? 0 : 1;
    case Rule::kNotError: return IsError(r) || r.empty() ? 0 : 1;
    case Rule::kIntIsOne: return Int(r) == 1 ? 1 : 0;
    case Rule::kInt: return Int(r);
    case Rule::kSet: return SetDirty(args, r);
    case Rule::kArgPairs: return IsError(r) ? 0 : (argc - 1) / 2;
    case Rule::kArgPairsIfOne: return Int(r) == 1 ? (argc - 1) / 2 : 0;
    case Rule::kFieldPairs: return IsError(r) ? 0 : (argc - 2) / 2;
    case Rule::kPush: return IsError(r) ? 0 : argc - 2;
    case Rule::kPushx: return IsError(r) || Int(r) == 0 ? 0 : argc - 2;
    case Rule::kPositive: return Int(r) > 0 ? 1 : 0;
    case Rule::kSetrange: return IsError(r) || args.size() < 4 || args[3].empty() ? 0 : 1;
    case Rule::kPopped: return Popped(r);
    case Rule::kMpopped: return Mpopped(r);
    case Rule::kZpopped: return Zpopped(r);
    case Rule::kStreamsServed: {
      if (IsNil(r) || IsError(r) || (r[0] != '*' && r[0] != '%')) return 0;
      size_t pos = 0;
      return HeaderNumber(r, &pos);
    }
    case Rule::kAutoclaimed: return Autoclaimed(r);
    case Rule::kWrote: return wrote ? 1 : 0;
    case Rule::kStoreCount: {
      if (r.empty() || r[0] != ':') return 0;  // without STORE: a read
      int64_t n = Int(r);
      return n > 0 ? n : (wrote ? 1 : 0);
    }
    case Rule::kFieldCodes: return CountCodes(r, true);
    case Rule::kFieldOnes: return CountCodes(r, false);
    case Rule::kFunction: {
      if (IsError(r) || args.size() < 2) return 0;
      const std::string& sub = args[1];
      return TokenEquals(sub, "load") || TokenEquals(sub, "delete") || TokenEquals(sub, "flush") ||
                     TokenEquals(sub, "restore")
                 ? 1
                 : 0;
    }
    case Rule::kXgroup: {
      if (IsError(r) || args.size() < 2) return 0;
      const std::string& sub = args[1];
      if (TokenEquals(sub, "create") || TokenEquals(sub, "setid") ||
          TokenEquals(sub, "delconsumer")) {
        return 1;
      }
      return TokenEquals(sub, "destroy") && Int(r) == 1 ? 1 : 0;
    }
  }
  return 0;
}

}  // namespace

void NoteCommandDirty(const CommandSpec& spec, CommandCall& call, size_t reply_start, size_t touched_before) {
  const auto& rules = Rules();
  auto it = rules.find(spec.name);
  if (it == rules.end()) return;
  // Redis serves a blocked BLPOP, BRPOP, BLMOVE, BRPOPLPUSH or XREADGROUP
  // without counting the pop or the read (BLMPOP and the sorted set pops count).
  if (call.served_blocked) {
    const std::string_view name = spec.name;
    if (name == "blpop" || name == "brpop" || name == "blmove" || name == "brpoplpush" || name == "xreadgroup") return;
  }
  std::string_view reply(*call.out);
  reply.remove_prefix(std::min(reply_start, reply.size()));
  const bool wrote = call.ctx->touched().size() > touched_before;
  int64_t n = Dirty(it->second, call.args, reply, wrote);
  if (n > 0) call.ctx->AddDirty(n);
}

}  // namespace kvrocks
