// List commands (the blocking forms are in cmd_blocking.cc).
#include "commands/cmd_list.h"

#include <climits>
#include <cmath>
#include <cstdint>

#include "commands/helpers.h"
#include "types/redis_list.h"

namespace kvrocks {

namespace {

void PushGeneric(CommandCall& call, bool left, bool only_if_exists) {
  Database db = CurrentDb(call);
  int64_t len;
  Status s = RedisList(&db).Push(call.args[1], ArgsFrom(call, 2), left, only_if_exists, &len);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, len);
}

void LPush(CommandCall& call) { PushGeneric(call, true, false); }
void RPush(CommandCall& call) { PushGeneric(call, false, false); }
void LPushX(CommandCall& call) { PushGeneric(call, true, true); }
void RPushX(CommandCall& call) { PushGeneric(call, false, true); }

// LPOP/RPOP key [count]
void PopGeneric(CommandCall& call, bool left) {
  const auto& a = call.args;
  if (a.size() > 3) {  // Redis' arity error, though the arity (-2) allows it
    return ReplyError(call, std::string("ERR wrong number of arguments for '") + (left ? "lpop" : "rpop") + "' command");
  }
  int64_t count = 1;
  if (a.size() == 3) {
    if (!ParseInt64(a[2], &count) || count < 0) return ReplyError(call, "ERR value is out of range, must be positive");
  }
  Database db = CurrentDb(call);
  std::vector<std::string> elems;
  RedisList list(&db);
  uint64_t size;
  Status s = list.Size(a[1], &size);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (size == 0) return a.size() == 3 ? reply::NullArray(call.out, call.resp) : reply::Null(call.out, call.resp);
  s = list.Pop(a[1], left, static_cast<uint64_t>(count), &elems);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (a.size() == 2) return reply::Bulk(call.out, elems[0]);
  reply::BulkArray(call.out, elems);
}

void LPop(CommandCall& call) { PopGeneric(call, true); }
void RPop(CommandCall& call) { PopGeneric(call, false); }

void LLen(CommandCall& call) {
  Database db = CurrentDb(call);
  uint64_t size;
  Status s = RedisList(&db).Size(call.args[1], &size);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(size));
}

// Redis looks the key up before parsing the index (LINDEX, LSET): a missing key
// or a wrong type is reported first.
bool CheckListKeyFirst(CommandCall& call, Database* db, bool missing_is_null) {
  uint64_t size;
  Status s = RedisList(db).Size(call.args[1], &size);
  if (!s.ok()) {
    ReplyStatusError(call, s);
    return false;
  }
  if (size == 0) {
    if (missing_is_null) {
      reply::Null(call.out, call.resp);
    } else {
      ReplyError(call, "ERR no such key");
    }
    return false;
  }
  return true;
}

void LIndex(CommandCall& call) {
  Database db = CurrentDb(call);
  if (!CheckListKeyFirst(call, &db, true)) return;
  int64_t index;
  if (!IntArg(call, 2, &index)) return;
  std::string e;
  Status s = RedisList(&db).Index(call.args[1], index, &e);
  if (s.IsNotFound()) return reply::Null(call.out, call.resp);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Bulk(call.out, e);
}

void LRange(CommandCall& call) {
  int64_t start, stop;
  if (!IntArg(call, 2, &start) || !IntArg(call, 3, &stop)) return;
  Database db = CurrentDb(call);
  std::vector<std::string> elems;
  Status s = RedisList(&db).Range(call.args[1], start, stop, &elems);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::BulkArray(call.out, elems);
}

void LSet(CommandCall& call) {
  Database db = CurrentDb(call);
  if (!CheckListKeyFirst(call, &db, false)) return;
  int64_t index;
  if (!IntArg(call, 2, &index)) return;
  Status s = RedisList(&db).Set(call.args[1], index, call.args[3]);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Ok(call.out);
}

void LInsert(CommandCall& call) {
  bool before;
  if (TokenEquals(call.args[2], "before")) {
    before = true;
  } else if (TokenEquals(call.args[2], "after")) {
    before = false;
  } else {
    return ReplyError(call, kSyntaxError);
  }
  Database db = CurrentDb(call);
  int64_t len;
  Status s = RedisList(&db).Insert(call.args[1], before, call.args[3], call.args[4], &len);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, len);
}

void LRem(CommandCall& call) {
  int64_t count;
  if (!IntArg(call, 2, &count)) return;
  Database db = CurrentDb(call);
  int64_t removed;
  Status s = RedisList(&db).Rem(call.args[1], count, call.args[3], &removed);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, removed);
}

void LTrim(CommandCall& call) {
  int64_t start, stop;
  if (!IntArg(call, 2, &start) || !IntArg(call, 3, &stop)) return;
  Database db = CurrentDb(call);
  Status s = RedisList(&db).Trim(call.args[1], start, stop);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Ok(call.out);
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void LPos(CommandCall& call) {
  const auto& a = call.args;
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < a.size(); i++) {
    bool has_next = i + 1 < a.size();
    if (TokenEquals(a[i], "rank") && has_next) {
      if (!IntArg(call, i + 1, &rank)) return;
      if (rank == 0) {
        return ReplyError(call,
                          "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
                          "negative to start from the end of the list");
      }
      i++;
    } else if (TokenEquals(a[i], "count") && has_next) {
      if (!ParseInt64(a[i + 1], &count) || count < 0) return ReplyError(call, "ERR COUNT can't be negative");
      i++;
    } else if (TokenEquals(a[i], "maxlen") && has_next) {
      if (!ParseInt64(a[i + 1], &maxlen) || maxlen < 0) return ReplyError(call, "ERR MAXLEN can't be negative");
      i++;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  // Redis negates a negative rank in a long, so RANK LLONG_MIN stays negative and
  // every match from the tail counts, COUNT ignored: the same in wrapping arithmetic.
  uint64_t urank = rank < 0 ? 0 - static_cast<uint64_t>(rank) : static_cast<uint64_t>(rank);
  auto r = static_cast<int64_t>(urank);
  int64_t matches = 0;
  std::vector<int64_t> found;
  Database db = CurrentDb(call);
  Status s = RedisList(&db).Find(a[1], a[2], rank < 0, maxlen, [&](int64_t index) {
    if (++matches < r) return true;
    found.push_back(index);
    if (count < 0) return false;
    return count == 0 || static_cast<int64_t>(static_cast<uint64_t>(matches) - urank + 1) < count;
  });
  if (!s.ok()) return ReplyStatusError(call, s);
  if (count < 0) {
    if (found.empty()) return reply::Null(call.out, call.resp);
    return reply::Integer(call.out, found[0]);
  }
  reply::ArrayHeader(call.out, found.size());
  for (int64_t i : found) reply::Integer(call.out, i);
}

}  // namespace

Status MoveElement(CommandCall& call, const std::string& src, const std::string& dst, bool from_left, bool to_left,
                   std::optional<std::string>* moved) {
  moved->reset();
  Database db = CurrentDb(call);
  RedisList list(&db);
  LoadedKey lk;
  RedisList::ListMeta lm;
  bool src_exists, dst_exists;
  Status s = list.LoadList(src, &lk, &lm, &src_exists);
  // As Redis: a missing source answers nil before the destination's type is checked.
  if (!s.ok() || !src_exists) return s;
  if (src == dst) {
    std::string elem;
    s = list.Rotate(src, from_left, to_left, &elem);
    if (s.ok()) *moved = std::move(elem);
    return s;
  }
  s = list.LoadList(dst, &lk, &lm, &dst_exists);
  if (!s.ok()) return s;
  std::vector<std::string> elems;
  s = list.Pop(src, from_left, 1, &elems);
  if (!s.ok() || elems.empty()) return s;
  int64_t len;
  s = list.Push(dst, {elems[0]}, to_left, false, &len);
  if (!s.ok()) return s;
  *moved = elems[0];
  return Status::OK();
}

bool ParseDirection(const std::string& arg, bool* left) {
  if (TokenEquals(arg, "left")) {
    *left = true;
  } else if (TokenEquals(arg, "right")) {
    *left = false;
  } else {
    return false;
  }
  return true;
}

bool ParseMPop(CommandCall& call, size_t numkeys_idx, MPopArgs* out) {
  const auto& a = call.args;
  int64_t numkeys;
  if (!ParseInt64(a[numkeys_idx], &numkeys) || numkeys <= 0) {
    ReplyError(call, "ERR numkeys should be greater than 0");
    return false;
  }
  size_t where_idx = numkeys_idx + 1 + static_cast<size_t>(numkeys);
  if (numkeys > static_cast<int64_t>(a.size()) || where_idx >= a.size() || !ParseDirection(a[where_idx], &out->left)) {
    ReplyError(call, kSyntaxError);
    return false;
  }
  out->keys.assign(a.begin() + static_cast<long>(numkeys_idx) + 1, a.begin() + static_cast<long>(where_idx));
  out->count = 1;
  out->has_count = false;
  for (size_t i = where_idx + 1; i < a.size(); i++) {
    if (TokenEquals(a[i], "count") && i + 1 < a.size() && !out->has_count) {
      if (!ParseInt64(a[i + 1], &out->count) || out->count <= 0) {
        ReplyError(call, "ERR count should be greater than 0");
        return false;
      }
      out->has_count = true;
      i++;
    } else {
      ReplyError(call, kSyntaxError);
      return false;
    }
  }
  return true;
}

Status PopFirstNonEmpty(CommandCall& call, const MPopArgs& args, std::string* key, std::vector<std::string>* elems) {
  Database db = CurrentDb(call);
  RedisList list(&db);
  for (const auto& k : args.keys) {
    uint64_t size;
    Status s = list.Size(k, &size);
    if (!s.ok()) return s;
    if (size == 0) continue;
    *key = k;
    return list.Pop(k, args.left, static_cast<uint64_t>(args.count), elems);
  }
  return Status::NotFound();
}

void ReplyMPop(CommandCall& call, const std::string& key, const std::vector<std::string>& elems) {
  reply::ArrayHeader(call.out, 2);
  reply::Bulk(call.out, key);
  reply::BulkArray(call.out, elems);
}

// Parses a blocking timeout in seconds (a float, as since Redis 6) into ms.
bool ParseTimeout(CommandCall& call, const std::string& arg, uint64_t* ms) {
  long double v;
  if (!ParseLongDouble(arg, &v)) {
    ReplyError(call, "ERR timeout is not a float or out of range");
    return false;
  }
  // As Redis 7.0: the ms rounded up (so -0.0001 is 0, no timeout), converted to a
  // long long unchecked: past its range (inf too) x86 yields LLONG_MIN, negative.
  long double m = ceill(v * 1000);
  if (m < 0 || m >= 9223372036854775808.0L) {
    ReplyError(call, "ERR timeout is negative");
    return false;
  }
  // Redis adds now to it, wrapping past LLONG_MAX: either way the wait never ends (0).
  *ms = m > static_cast<long double>(INT64_MAX / 2) ? 0 : static_cast<uint64_t>(m);
  return true;
}

void BlockOrNull(CommandCall& call, const std::vector<std::string>& keys, uint64_t timeout_ms, bool null_bulk) {
  if (call.in_exec) return null_bulk ? reply::Null(call.out, call.resp) : reply::NullArray(call.out, call.resp);
  std::vector<std::pair<uint8_t, std::string>> wait;
  for (const auto& k : keys) wait.emplace_back(call.conn->db, k);
  call.conn->RequestBlock(std::move(wait), timeout_ms);
}

namespace {

void RPopLPush(CommandCall& call) {
  std::optional<std::string> moved;
  Status s = MoveElement(call, call.args[1], call.args[2], false, true, &moved);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!moved) return reply::Null(call.out, call.resp);
  reply::Bulk(call.out, *moved);
}

void LMove(CommandCall& call) {
  bool from_left, to_left;
  if (!ParseDirection(call.args[3], &from_left) || !ParseDirection(call.args[4], &to_left)) {
    return ReplyError(call, kSyntaxError);
  }
  std::optional<std::string> moved;
  Status s = MoveElement(call, call.args[1], call.args[2], from_left, to_left, &moved);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!moved) return reply::Null(call.out, call.resp);
  reply::Bulk(call.out, *moved);
}

void LMPop(CommandCall& call) {
  MPopArgs args;
  if (!ParseMPop(call, 1, &args)) return;
  std::string key;
  std::vector<std::string> elems;
  Status s = PopFirstNonEmpty(call, args, &key, &elems);
  if (s.IsNotFound()) return reply::NullArray(call.out, call.resp);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplyMPop(call, key, elems);
}

}  // namespace

std::vector<std::pair<int, std::string>> NumkeysLockKeys(const CommandCall& call, size_t numkeys_idx) {
  std::vector<std::pair<int, std::string>> out;
  int64_t n;
  if (numkeys_idx >= call.args.size() || !ParseInt64(call.args[numkeys_idx], &n) || n <= 0) return out;
  for (int64_t i = 0; i < n && numkeys_idx + 1 + static_cast<size_t>(i) < call.args.size(); i++) {
    out.emplace_back(call.conn->db, call.args[numkeys_idx + 1 + static_cast<size_t>(i)]);
  }
  return out;
}

static std::vector<std::pair<int, std::string>> LMPopLockKeys(const CommandCall& call) {
  return NumkeysLockKeys(call, 1);
}

static std::vector<std::pair<int, std::string>> BLMPopLockKeys(const CommandCall& call) {
  return NumkeysLockKeys(call, 2);
}

namespace {

// BLPOP / BRPOP key [key ...] timeout
void BPopGeneric(CommandCall& call, bool left) {
  uint64_t timeout;
  if (!ParseTimeout(call, call.args.back(), &timeout)) return;
  std::vector<std::string> keys(call.args.begin() + 1, call.args.end() - 1);
  MPopArgs args{keys, left, 1, false};
  std::string key;
  std::vector<std::string> elems;
  Status s = PopFirstNonEmpty(call, args, &key, &elems);
  if (s.ok()) {
    reply::ArrayHeader(call.out, 2);
    reply::Bulk(call.out, key);
    reply::Bulk(call.out, elems[0]);
    return;
  }
  if (!s.IsNotFound()) return ReplyStatusError(call, s);
  BlockOrNull(call, keys, timeout);
}

void BLPop(CommandCall& call) { BPopGeneric(call, true); }
void BRPop(CommandCall& call) { BPopGeneric(call, false); }

void BMoveGeneric(CommandCall& call, bool from_left, bool to_left, const std::string& timeout_arg) {
  uint64_t timeout;
  if (!ParseTimeout(call, timeout_arg, &timeout)) return;
  std::optional<std::string> moved;
  Status s = MoveElement(call, call.args[1], call.args[2], from_left, to_left, &moved);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (moved) return reply::Bulk(call.out, *moved);
  BlockOrNull(call, {call.args[1]}, timeout, true);
}

void BRPopLPush(CommandCall& call) { BMoveGeneric(call, false, true, call.args[3]); }

void BLMove(CommandCall& call) {
  bool from_left, to_left;
  if (!ParseDirection(call.args[3], &from_left) || !ParseDirection(call.args[4], &to_left)) {
    return ReplyError(call, kSyntaxError);
  }
  BMoveGeneric(call, from_left, to_left, call.args[5]);
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
void BLMPop(CommandCall& call) {
  uint64_t timeout;
  if (!ParseTimeout(call, call.args[1], &timeout)) return;
  MPopArgs args;
  if (!ParseMPop(call, 2, &args)) return;
  std::string key;
  std::vector<std::string> elems;
  Status s = PopFirstNonEmpty(call, args, &key, &elems);
  if (s.ok()) return ReplyMPop(call, key, elems);
  if (!s.IsNotFound()) return ReplyStatusError(call, s);
  BlockOrNull(call, args.keys, timeout);
}

}  // namespace

void RegisterListCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite | kCmdDenyOOM | kCmdFast, r = kCmdReadOnly;
  t->Add({"lpush", -3, w, 1, 1, 1, LPush, "list", "Prepends one or more elements to a list.", "1.0.0"});
  t->Add({"rpush", -3, w, 1, 1, 1, RPush, "list", "Appends one or more elements to a list.", "1.0.0"});
  t->Add({"lpushx", -3, w, 1, 1, 1, LPushX, "list", "Prepends one or more elements to a list only when the list exists.", "2.2.0"});
  t->Add({"rpushx", -3, w, 1, 1, 1, RPushX, "list", "Appends an element to a list only when the list exists.", "2.2.0"});
  t->Add({"lpop", -2, kCmdWrite | kCmdFast, 1, 1, 1, LPop, "list", "Returns the first elements in a list after removing it.", "1.0.0"});
  t->Add({"rpop", -2, kCmdWrite | kCmdFast, 1, 1, 1, RPop, "list", "Returns and removes the last elements of a list.", "1.0.0"});
  t->Add({"llen", 2, r | kCmdFast, 1, 1, 1, LLen, "list", "Returns the length of a list.", "1.0.0"});
  t->Add({"lindex", 3, r, 1, 1, 1, LIndex, "list", "Returns an element from a list by its index.", "1.0.0"});
  t->Add({"lrange", 4, r, 1, 1, 1, LRange, "list", "Returns a range of elements from a list.", "1.0.0"});
  t->Add({"lset", 4, kCmdWrite | kCmdDenyOOM, 1, 1, 1, LSet, "list", "Sets the value of an element in a list by its index.", "1.0.0"});
  t->Add({"linsert", 5, kCmdWrite | kCmdDenyOOM, 1, 1, 1, LInsert, "list", "Inserts an element before or after another element in a list.", "2.2.0"});
  t->Add({"lrem", 4, kCmdWrite, 1, 1, 1, LRem, "list", "Removes elements from a list.", "1.0.0"});
  t->Add({"ltrim", 4, kCmdWrite, 1, 1, 1, LTrim, "list", "Removes elements from both ends a list.", "1.0.0"});
  t->Add({"lpos", -3, r, 1, 1, 1, LPos, "list", "Returns the index of matching elements in a list.", "6.0.6"});
  t->Add({"rpoplpush", 3, kCmdWrite | kCmdDenyOOM, 1, 2, 1, RPopLPush, "list", "Returns the last element of a list after removing and pushing it to another list.", "1.2.0"});
  t->Add({"lmove", 5, kCmdWrite | kCmdDenyOOM, 1, 2, 1, LMove, "list", "Returns an element after popping it from one list and pushing it to another.", "6.2.0"});
  t->Add({"lmpop", -4, kCmdWrite, 0, 0, 0, LMPop, "list", "Returns multiple elements from a list after removing them.", "7.0.0", LMPopLockKeys});
  const uint32_t b = kCmdWrite | kCmdBlocking | kCmdNoScript;
  t->Add({"blpop", -3, b, 1, -2, 1, BLPop, "list", "Removes and returns the first element in a list. Blocks until an element is available otherwise.", "2.0.0"});
  t->Add({"brpop", -3, b, 1, -2, 1, BRPop, "list", "Removes and returns the last element in a list. Blocks until an element is available otherwise.", "2.0.0"});
  t->Add({"brpoplpush", 4, b | kCmdDenyOOM, 1, 2, 1, BRPopLPush, "list", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise.", "2.2.0"});
  t->Add({"blmove", 6, b | kCmdDenyOOM, 1, 2, 1, BLMove, "list", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise.", "6.2.0"});
  t->Add({"blmpop", -5, b, 0, 0, 0, BLMPop, "list", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise.", "7.0.0", BLMPopLockKeys});
}

}  // namespace kvrocks
