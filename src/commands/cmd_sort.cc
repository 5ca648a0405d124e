// SORT and SORT_RO.
#include <algorithm>
#include <cstring>

#include "commands/helpers.h"
#include "types/redis_hash.h"
#include "types/redis_list.h"
#include "types/redis_set.h"
#include "types/redis_string.h"
#include "types/redis_zset.h"

namespace kvrocks {

namespace {

// Looks up a BY/GET pattern for an element: "*" is replaced by the element; a
// "->field" suffix reads a hash field. Missing values are empty optionals.
std::optional<std::string> LookupPattern(Database* db, const std::string& pattern, const std::string& elem) {
  if (pattern == "#") return elem;
  size_t star = pattern.find('*');
  if (star == std::string::npos) return std::nullopt;
  std::string field;
  std::string key_pattern = pattern;
  size_t arrow = pattern.find("->", star);
  if (arrow != std::string::npos && arrow + 2 < pattern.size()) {
    field = pattern.substr(arrow + 2);
    key_pattern = pattern.substr(0, arrow);
  }
  std::string key = key_pattern.substr(0, star) + elem + key_pattern.substr(star + 1);
  std::string value;
  Status s = field.empty() ? RedisString(db).Get(key, &value) : RedisHash(db).Get(key, field, &value);
  if (!s.ok()) return std::nullopt;
  return value;
}

struct SortItem {
  std::string elem;
  double score = 0;
  std::optional<std::string> by;
};

// Whether the caller's ACL user may read any key (SORT's BY and GET patterns).
bool ReadsEveryKey(const CommandCall& call) {
  const AclUser* user = call.conn != nullptr ? call.conn->user.get() : nullptr;
  return user == nullptr || call.conn->is_master || user->AnyAllowsEveryKey(true, false);
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE destination]
void SortGeneric(CommandCall& call, bool read_only) {
  const auto& a = call.args;
  std::string by;
  bool has_by = false, desc = false, alpha = false, has_limit = false;
  int64_t offset = 0, count = -1;
  std::vector<std::string> gets;
  std::string store;
  bool has_store = false;
  for (size_t i = 2; i < a.size(); i++) {
    size_t left = a.size() - i - 1;
    if (TokenEquals(a[i], "asc")) {
      desc = false;
    } else if (TokenEquals(a[i], "desc")) {
      desc = true;
    } else if (TokenEquals(a[i], "alpha")) {
      alpha = true;
    } else if (TokenEquals(a[i], "limit") && left >= 2) {
      if (!IntArg(call, i + 1, &offset) || !IntArg(call, i + 2, &count)) return;
      has_limit = true;
      i += 2;
    } else if (!read_only && TokenEquals(a[i], "store") && left >= 1) {
      store = a[++i];
      has_store = true;
    } else if (TokenEquals(a[i], "by") && left >= 1) {
      by = a[++i];
      has_by = true;
      // A pattern reads keys the user's key patterns were not checked against.
      if (by.find('*') != std::string::npos && !ReadsEveryKey(call)) {
        return ReplyError(call, "ERR BY option of SORT denied due to insufficient ACL permissions.");
      }
    } else if (TokenEquals(a[i], "get") && left >= 1) {
      gets.push_back(a[++i]);
      if (!ReadsEveryKey(call)) {
        return ReplyError(call, "ERR GET option of SORT denied due to insufficient ACL permissions.");
      }
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  Context::SnapshotScope snapshot(call.ctx);
  Database db = CurrentDb(call);
  LoadedKey lk;
  Status s = db.Load(a[1], &lk);
  if (!s.ok()) return ReplyStatusError(call, s);
  std::vector<std::string> elems;
  bool natural_order = false;  // the source's own order is meaningful (lists, sorted sets)
  if (lk.live) {
    UnrecordedLookups elements_of_the_key_just_looked_up(call.ctx);
    if (lk.type == RedisType::kList) {
      s = RedisList(&db).Range(a[1], 0, -1, &elems);
      natural_order = true;
    } else if (lk.type == RedisType::kSet) {
      s = RedisSet(&db).Members(a[1], &elems);
    } else if (lk.type == RedisType::kZSet) {
      std::vector<ZMember> ms;
      s = RedisZSet(&db).All(a[1], &ms);
      if (s.ok()) s = RedisZSet(&db).MarkSkiplist(lk);
      for (auto& m : ms) elems.push_back(std::move(m.member));
      natural_order = true;
    } else {
      return ReplyError(call, kWrongTypeError);
    }
    if (!s.ok()) return ReplyStatusError(call, s);
  }
  // "BY nosort" (a pattern without '*') skips sorting, as in Redis.
  bool dont_sort = has_by && by.find('*') == std::string::npos;
  if (dont_sort && lk.live && lk.type == RedisType::kSet && (has_store || call.from_script)) {
    // As Redis: a set's order is made deterministic (ALPHA) for what is stored or
    // given to a script, so that replicas and script effects agree.
    dont_sort = false;
    has_by = false;
    alpha = true;
  }
  std::vector<SortItem> items;
  for (auto& e : elems) items.push_back({std::move(e), 0, std::nullopt});
  if (!dont_sort) {
    for (auto& it : items) {
      if (has_by) it.by = LookupPattern(&db, by, it.elem);
      if (!alpha) {
        const std::string& v = has_by ? (it.by ? *it.by : std::string()) : it.elem;
        if (has_by && !it.by) {
          it.score = 0;
        } else if (bool range_error; !ParseStrtod(v, &it.score, &range_error) || range_error) {
          return ReplyError(call, "ERR One or more scores can't be converted into double");
        }
      }
    }
    // ALPHA compares as Redis does: with strcoll in the LC_COLLATE of the
    // environment (main sets it, as Redis' does), so up to the first NUL, unless
    // the result is stored (then binary-safe, so that replicas agree).
    auto alpha_compare = [has_store](const std::string& x, const std::string& y) {
      return has_store ? x.compare(y) : std::strcoll(x.c_str(), y.c_str());
    };
    std::stable_sort(items.begin(), items.end(), [&](const SortItem& x, const SortItem& y) {
      int cmp;
      if (!alpha) {
        cmp = x.score < y.score ? -1 : (x.score > y.score ? 1 : x.elem.compare(y.elem));
      } else if (has_by) {
        if (!x.by || !y.by) {
          cmp = x.by == y.by ? 0 : (!x.by ? -1 : 1);
        } else {
          cmp = alpha_compare(*x.by, *y.by);
        }
      } else {
        cmp = alpha_compare(x.elem, y.elem);
      }
      return desc ? cmp > 0 : cmp < 0;
    });
  } else if (desc && natural_order) {
    // Unsorted, a list or sorted set comes from its tail with DESC, as in Redis.
    std::reverse(items.begin(), items.end());
  }
  // LIMIT, clamped as Redis clamps it: to the number of elements first, so that
  // offset + count cannot overflow.
  auto n = static_cast<int64_t>(items.size());
  int64_t start = has_limit ? std::min(std::max<int64_t>(0, offset), n) : 0;
  int64_t end = has_limit && count >= 0 ? std::min(n, start + std::min(count, n)) : n;
  std::vector<std::optional<std::string>> out;
  for (int64_t i = start; i < end; i++) {
    if (gets.empty()) {
      out.emplace_back(items[static_cast<size_t>(i)].elem);
      continue;
    }
    for (const auto& g : gets) out.push_back(LookupPattern(&db, g, items[static_cast<size_t>(i)].elem));
  }
  if (has_store) {
    // The result replaces the destination as a list (missing values become "").
    // Writing it looks the destination up as Redis' setKey does (lookupKeyWrite:
    // an expired one is deleted), not as a read.
    UnrecordedLookups destination_is_written(call.ctx);
    std::vector<std::string> values;
    for (auto& v : out) values.push_back(v ? *v : std::string());
    if (values.empty()) {  // an empty result deletes the destination as Redis' dbDelete
      LoadedKey lk;
      s = db.Load(store, &lk);
      if (!s.ok()) return ReplyStatusError(call, s);
      db.RemoveDestination(store, &lk);
    } else {
      bool deleted;
      s = db.Delete(store, &deleted);
      if (!s.ok()) return ReplyStatusError(call, s);
      std::vector<std::string_view> views(values.begin(), values.end());
      int64_t len;
      s = RedisList(&db).Push(store, views, false, false, &len);
      if (!s.ok()) return ReplyStatusError(call, s);
    }
    return reply::Integer(call.out, static_cast<int64_t>(values.size()));
  }
  reply::ArrayHeader(call.out, out.size());
  for (auto& v : out) {
    if (v) {
      reply::Bulk(call.out, *v);
    } else {
      reply::Null(call.out, call.resp);
    }
  }
}

void Sort(CommandCall& call) { SortGeneric(call, false); }
void SortRo(CommandCall& call) { SortGeneric(call, true); }

// SORT's STORE destination, for locking.
// The destination: the last STORE, as SORT itself takes it (Redis' sortGetKeys).
std::vector<std::pair<int, std::string>> SortStoreKey(const CommandCall& call) {
  std::vector<std::pair<int, std::string>> out;
  for (size_t i = 2; i < call.args.size(); i++) {
    if (TokenEquals(call.args[i], "limit")) {
      i += 2;
    } else if (TokenEquals(call.args[i], "by") || TokenEquals(call.args[i], "get")) {
      i++;
    } else if (TokenEquals(call.args[i], "store") && i + 1 < call.args.size()) {
      out.assign(1, {call.conn->db, call.args[i + 1]});
    }
  }
  return out;
}

}  // namespace

void RegisterSortCommands(CommandTable* t) {
  t->Add({"sort", -2, kCmdWrite | kCmdDenyOOM | kCmdSlow, 1, 1, 1, Sort, "generic",
          "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", "1.0.0",
          SortStoreKey});
  // SORT_RO locks its key: it may record a sorted set's conversion (RedisZSet::MarkSkiplist).
  t->Add({"sort_ro", -2, kCmdReadOnly | kCmdSlow | kCmdLocksKeys, 1, 1, 1, SortRo, "generic",
          "Returns the sorted elements of a list, a set, or a sorted set.", "7.0.0"});
}

}  // namespace kvrocks
