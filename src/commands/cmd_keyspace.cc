// Generic keyspace commands.
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <unordered_map>

#include "commands/blocked_signals.h"
#include "commands/helpers.h"
#include "commands/scan_cursor.h"
#include "commands/watched_changes.h"
#include "common/time_util.h"
#include "types/redis_hash.h"
#include "types/redis_set.h"
#include "types/redis_zset.h"

namespace kvrocks {

namespace {

void Del(CommandCall& call) {
  Database db = CurrentDb(call);
  // A replica's DEL deletes a key that has expired but awaits its master's DEL as a
  // live one (Redis' expireIfNeeded there leaves it, then dbSyncDelete finds it).
  std::optional<ExpiryTimeIgnore> expiry_ignored;
  if (call.server->IsReplica()) expiry_ignored.emplace();
  int64_t n = 0;
  for (size_t i = 1; i < call.args.size(); i++) {
    bool deleted;
    Status s = db.Delete(call.args[i], &deleted);
    if (!s.ok()) return ReplyStatusError(call, s);
    n += deleted;
  }
  reply::Integer(call.out, n);
}

void CountExisting(CommandCall& call) {
  Context::SnapshotScope snapshot(call.ctx);
  Database db = CurrentDb(call);
  int64_t n = 0;
  for (size_t i = 1; i < call.args.size(); i++) {
    bool exists;
    Status s = db.Exists(call.args[i], &exists);
    if (!s.ok()) return ReplyStatusError(call, s);
    n += exists;
  }
  reply::Integer(call.out, n);
}

void Type(CommandCall& call) {
  Database db = CurrentDb(call);
  RedisType t;
  Status s = db.Type(call.args[1], &t);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Simple(call.out, RedisTypeName(t));
}

// EXPIRE family. unit_ms: 1000 for seconds; relative: EXPIRE/PEXPIRE.
void ExpireGeneric(CommandCall& call, int64_t unit_ms, bool relative) {
  int flags = 0;
  for (size_t i = 3; i < call.args.size(); i++) {
    const std::string& o = call.args[i];
    if (TokenEquals(o, "nx")) {
      flags |= Database::kExpireNX;
    } else if (TokenEquals(o, "xx")) {
      flags |= Database::kExpireXX;
    } else if (TokenEquals(o, "gt")) {
      flags |= Database::kExpireGT;
    } else if (TokenEquals(o, "lt")) {
      flags |= Database::kExpireLT;
    } else {
      return ReplyError(call, "ERR Unsupported option " + CString(o));
    }
  }
  if ((flags & Database::kExpireNX) && (flags & ~Database::kExpireNX)) {
    return ReplyError(call, "ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if ((flags & Database::kExpireGT) && (flags & Database::kExpireLT)) {
    return ReplyError(call, "ERR GT and LT options at the same time are not compatible");
  }
  int64_t when;
  if (!IntArg(call, 2, &when)) return;
  std::string invalid = "ERR invalid expire time in '" + ToLower(call.args[0]) + "' command";
  if (unit_ms == 1000) {
    if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) return ReplyError(call, invalid);
    when *= 1000;
  }
  if (relative) {
    int64_t now = static_cast<int64_t>(NowMs());
    if (when > LLONG_MAX - now) return ReplyError(call, invalid);
    when += now;
  }
  Database db = CurrentDb(call);
  bool applied;
  // Times at or before the epoch behave as "already expired".
  Status s = db.SetExpire(call.args[1], when <= 0 ? 1 : static_cast<uint64_t>(when), flags, &applied);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, applied ? 1 : 0);
}

void Expire(CommandCall& call) { ExpireGeneric(call, 1000, true); }
void PExpire(CommandCall& call) { ExpireGeneric(call, 1, true); }
void ExpireAt(CommandCall& call) { ExpireGeneric(call, 1000, false); }
void PExpireAt(CommandCall& call) { ExpireGeneric(call, 1, false); }

// TTL family: mode 0 TTL, 1 PTTL, 2 EXPIRETIME, 3 PEXPIRETIME.
void TtlGeneric(CommandCall& call, int mode) {
  Database db = CurrentDb(call);
  uint64_t expire;
  Status s = db.GetExpire(call.args[1], &expire);
  if (s.IsNotFound()) return reply::Integer(call.out, -2);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (expire == 0) return reply::Integer(call.out, -1);
  int64_t e = static_cast<int64_t>(expire);
  int64_t ttl = std::max<int64_t>(0, e - static_cast<int64_t>(NowMs()));
  switch (mode) {
    case 0: return reply::Integer(call.out, (ttl + 500) / 1000);
    case 1: return reply::Integer(call.out, ttl);
    case 2: return reply::Integer(call.out, e / 1000);
    default: return reply::Integer(call.out, e);
  }
}

void Ttl(CommandCall& call) { TtlGeneric(call, 0); }
void PTtl(CommandCall& call) { TtlGeneric(call, 1); }
void ExpireTime(CommandCall& call) { TtlGeneric(call, 2); }
void PExpireTime(CommandCall& call) { TtlGeneric(call, 3); }

void Persist(CommandCall& call) {
  Database db = CurrentDb(call);
  bool removed;
  Status s = db.Persist(call.args[1], &removed);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, removed ? 1 : 0);
}

void Keys(CommandCall& call) {
  Database db = CurrentDb(call);
  std::vector<std::string> keys;
  Status s = db.Keys(call.args[1], &keys);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::BulkArray(call.out, keys);
}

RedisType TypeFromName(const std::string& name) {
  for (auto t : {RedisType::kString, RedisType::kHash, RedisType::kList, RedisType::kSet, RedisType::kZSet,
                 RedisType::kStream}) {
    if (TokenEquals(name, RedisTypeName(t))) return t;
  }
  return RedisType::kNone;
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
void Scan(CommandCall& call) {
  uint64_t cursor;
  if (!ParseCursor(call.args[1], &cursor)) return ReplyError(call, "ERR invalid cursor");
  std::string pattern = "*";
  int64_t count = 10;
  RedisType type = RedisType::kNone;
  bool unknown_type = false;
  for (size_t i = 2; i < call.args.size(); i++) {
    bool has_next = i + 1 < call.args.size();
    const std::string& o = call.args[i];
    if (TokenEquals(o, "count") && has_next) {
      if (!IntArg(call, i + 1, &count)) return;
      if (count < 1) return ReplyError(call, kSyntaxError);
      i++;
    } else if (TokenEquals(o, "match") && has_next) {
      pattern = call.args[++i];
    } else if (TokenEquals(o, "type") && has_next) {
      type = TypeFromName(call.args[++i]);
      unknown_type = type == RedisType::kNone;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  std::string after = cursor == 0 ? std::string() : ScanCursors().Find(cursor);
  Database db = CurrentDb(call);
  std::vector<std::string> keys;
  std::string next;
  Status s = db.Scan(after, static_cast<size_t>(count), pattern, type, &keys, &next);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (unknown_type) keys.clear();
  reply::ArrayHeader(call.out, 2);
  reply::Bulk(call.out, next.empty() ? "0" : std::to_string(ScanCursors().Save(next)));
  reply::BulkArray(call.out, keys);
}

void RandomKey(CommandCall& call) {
  Database db = CurrentDb(call);
  std::string key;
  Status s = db.RandomKey(&key);
  if (s.IsNotFound()) return reply::Null(call.out, call.resp);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Bulk(call.out, key);
}

void RenameGeneric(CommandCall& call, bool nx) {
  Database db = CurrentDb(call);
  bool renamed;
  Status s = db.Rename(call.args[1], call.args[2], nx, &renamed);
  if (s.IsNotFound()) return ReplyError(call, "ERR no such key");
  if (s.ok() && renamed && call.args[1] != call.args[2]) s = RedisHash(&db).ScheduleFieldExpiry(call.args[2]);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (nx) {
    reply::Integer(call.out, renamed ? 1 : 0);
  } else {
    reply::Ok(call.out);
  }
}

void Rename(CommandCall& call) { RenameGeneric(call, false); }
void RenameNx(CommandCall& call) { RenameGeneric(call, true); }

// COPY's destination database (the source db when absent); -1 if invalid.
int CopyTargetDb(const CommandCall& call) {
  for (size_t i = 3; i + 1 < call.args.size(); i++) {
    if (TokenEquals(call.args[i], "db")) {
      int64_t v;
      if (!ParseInt64(call.args[i + 1], &v) || v < 0 || v >= call.server->config()->databases) return -1;
      return static_cast<int>(v);
    }
  }
  return call.conn->db;
}

std::vector<std::pair<int, std::string>> CopyLockKeys(const CommandCall& call) {
  // In the current database the key spec (source, destination) covers it.
  int db = CopyTargetDb(call);
  if (db < 0 || db == call.conn->db) return {};
  return {{db, call.args[2]}};
}

// COPY source destination [DB destination-db] [REPLACE]
void Copy(CommandCall& call) {
  bool replace = false;
  int dst_db = call.conn->db;
  for (size_t i = 3; i < call.args.size(); i++) {
    if (TokenEquals(call.args[i], "replace")) {
      replace = true;
    } else if (TokenEquals(call.args[i], "db") && i + 1 < call.args.size()) {
      if (!DbIndexArg(call, i + 1, &dst_db)) return;
      i++;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  if (dst_db == call.conn->db && call.args[1] == call.args[2]) {
    return ReplyError(call, "ERR source and destination objects are the same");
  }
  Database src = CurrentDb(call);
  Database dst(call.ctx, call.server->storage()->PhysicalDb(dst_db));
  bool copied;
  Status s = src.Copy(call.args[1], &dst, call.args[2], replace, &copied);
  if (s.ok() && copied) s = RedisHash(&dst).ScheduleFieldExpiry(call.args[2]);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, copied ? 1 : 0);
}

std::vector<std::pair<int, std::string>> MoveLockKeys(const CommandCall& call) {
  int64_t v;
  if (!ParseInt64(call.args[2], &v) || v < 0 || v >= call.server->config()->databases) return {};
  return {{static_cast<int>(v), call.args[1]}};
}

void Move(CommandCall& call) {
  int v;
  if (!DbIndexArg(call, 2, &v)) return;
  if (v == call.conn->db) return ReplyError(call, "ERR source and destination objects are the same");
  Database src = CurrentDb(call);
  Database dst(call.ctx, call.server->storage()->PhysicalDb(v));
  bool moved;
  Status s = src.Move(call.args[1], &dst, &moved);
  if (s.ok() && moved) s = RedisHash(&dst).ScheduleFieldExpiry(call.args[1]);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, moved ? 1 : 0);
}

void SwapDb(CommandCall& call) {
  int a, b;
  if (!IntArgOfInt(call, 1, &a, "ERR invalid first DB index")) return;
  if (!IntArgOfInt(call, 2, &b, "ERR invalid second DB index")) return;
  int dbs = call.server->config()->databases;
  if (a < 0 || a >= dbs || b < 0 || b >= dbs) return ReplyError(call, "ERR DB index is out of range");
  // Pending writes of an EXEC go first so that they land in the right database.
  Status s = call.ctx->Commit();
  if (s.ok() && a != b) {
    uint8_t pa = call.server->storage()->PhysicalDb(a);
    uint8_t pb = call.server->storage()->PhysicalDb(b);
    std::vector<WatchedChange> changes;
    AddWatchedChanges(call, pa, &pb, &changes);
    AddWatchedChanges(call, pb, &pa, &changes);
    std::vector<WaitedKey> waited = WaitedKeysBefore(call, {a, b});
    s = call.server->storage()->SwapDb(a, b, call.ctx->TakeDirectWriteState());
    if (s.ok()) {
      call.ctx->NoteDbSwap(a, b);  // the transaction's earlier touches stay in their db
      ApplyWatchedChanges(call, changes);
      call.server->SwapWatchedDbs(pa, pb);
      // Blocked clients stay in their database, which now holds the other's keys.
      SignalWaitedKeys(call, waited, DbChange::kSwapped);
    }
  }
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Ok(call.out);
}

void DbSize(CommandCall& call) {
  // Counters move when a batch commits: commit this worker's pending writes first.
  Status s = call.ctx->Commit();
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, call.server->storage()->KeyCount(call.server->storage()->PhysicalDb(call.conn->db)));
}

bool FlushOptions(CommandCall& call) {
  if (call.args.size() > 2 ||
      (call.args.size() == 2 && !TokenEquals(call.args[1], "sync") && !TokenEquals(call.args[1], "async"))) {
    ReplyError(call, kSyntaxError);
    return false;
  }
  return true;
}

// Client-side caching after a flush: what the command wrote before it (in a
// transaction or script, committed by now), then everything.
void InvalidateTracking(CommandCall& call) {
  Tracking& tracking = call.server->tracking();
  if (!call.ctx->touched().empty() && !tracking.idle()) {
    tracking.InvalidateBeforeFlush(call.ctx->touched(), call.conn->id(), call.ctx->touch_marks(), call.conn);
  }
  tracking.InvalidateAll(call.conn);
}

void FlushDb(CommandCall& call) {
  if (!FlushOptions(call)) return;
  Status s = call.ctx->Commit();
  uint8_t db = call.server->storage()->PhysicalDb(call.conn->db);
  std::vector<WatchedChange> changes;
  AddWatchedChanges(call, db, nullptr, &changes);
  std::vector<WaitedKey> waited = WaitedKeysBefore(call, {call.conn->db});
  const int64_t removed = call.server->storage()->KeyCount(db);
  if (s.ok()) s = Database::CopyOutMovedSubkeys(call.ctx, db);
  if (s.ok()) s = call.ctx->Commit();
  if (s.ok()) s = call.server->storage()->FlushDb(db);
  if (!s.ok()) return ReplyStatusError(call, s);
  call.ctx->AddDirty(removed);  // Redis counts each removed key
  ApplyWatchedChanges(call, changes);
  InvalidateTracking(call);
  SignalWaitedKeys(call, waited, DbChange::kEmptied);
  reply::Ok(call.out);
}

void FlushAll(CommandCall& call) {
  if (!FlushOptions(call)) return;
  Status s = call.ctx->Commit();
  std::vector<WaitedKey> waited = WaitedKeysBefore(call);
  std::vector<WatchedChange> changes;
  for (int i = 0; i < Storage::kMaxDatabases && s.ok(); i++) {
    auto db = static_cast<uint8_t>(i);
    const int64_t removed = call.server->storage()->KeyCount(db);
    if (removed == 0) continue;
    AddWatchedChanges(call, db, nullptr, &changes);
    s = call.server->storage()->FlushDb(db);
    if (s.ok()) call.ctx->AddDirty(removed);  // Redis counts each removed key
  }
  if (!s.ok()) return ReplyStatusError(call, s);
  // As Redis' emptyData of every database: a writable replica forgets the keys its
  // clients gave a TTL, even when the master's FLUSHALL emptied it.
  call.ctx->TakeExpiringKeys();
  call.server->ForgetOwnExpiries();
  ApplyWatchedChanges(call, changes);
  InvalidateTracking(call);
  SignalWaitedKeys(call, waited, DbChange::kEmptied);
  reply::Ok(call.out);
}

// The encoding Redis would report for a string value.
const char* StringEncoding(std::string_view v) {
  int64_t n;
  if (v.size() <= 20 && ParseInt64(v, &n)) return "int";
  return v.size() <= 44 ? "embstr" : "raw";
}

}  // namespace

int64_t KeyRefcount(const LoadedKey& lk) {
  // Redis keeps one shared object for each integer 0..9999 (OBJ_SHARED_INTEGERS)
  // and answers INT_MAX for it; every other value has one reference.
  int64_t v = 0;
  bool shared = lk.type == RedisType::kString && !(static_cast<uint8_t>(lk.raw[0]) & kUnsharedFlag) &&
                KeyEncoding(lk) == "int" && ParseInt64(std::string_view(lk.raw).substr(9), &v) && v >= 0 && v < 10000;
  return shared ? 2147483647 : 1;
}

std::string KeyEncoding(const LoadedKey& lk) {
  if (lk.type == RedisType::kString) {
    auto flags = static_cast<uint8_t>(lk.raw[0]);
    std::string_view value = std::string_view(lk.raw).substr(9);
    if (flags & (kOutOfLineFlag | kRawEncodingFlag)) return "raw";
    if (flags & kNotIntEncodingFlag) return value.size() <= 44 ? "embstr" : "raw";
    return StringEncoding(value);
  }
  Metadata meta;
  if (lk.type == RedisType::kHash && meta.Decode(lk.raw).ok()) return RedisHash::Encoding(meta);
  if (lk.type == RedisType::kSet && meta.Decode(lk.raw).ok()) return RedisSet::Encoding(meta);
  if (lk.type == RedisType::kList) return "quicklist";
  if (lk.type == RedisType::kStream) return "stream";
  if (lk.type == RedisType::kZSet && meta.Decode(lk.raw).ok()) return RedisZSet::Encoding(meta);
  return "unknown";
}

namespace {

void Object(CommandCall& call) {
  const std::string& sub = call.args[1];
  if (TokenEquals(sub, "help")) {
    if (call.args.size() != 2) return ReplySubcommandSyntaxError(call);
    static const std::vector<std::string> kHelp = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help."};
    return ReplyHelp(call, kHelp);
  }
  bool encoding = TokenEquals(sub, "encoding"), freq = TokenEquals(sub, "freq");
  bool refcount = TokenEquals(sub, "refcount"), idletime = TokenEquals(sub, "idletime");
  if (encoding || freq || refcount || idletime) {
    if (call.args.size() != 3) return ReplySubcommandSyntaxError(call);
    Database db = CurrentDb(call);
    LoadedKey lk;
    Status s = db.Load(call.args[2], &lk);
    if (!s.ok()) return ReplyStatusError(call, s);
    if (!lk.live) return reply::Null(call.out, call.resp);
    // The eviction policy is always noeviction, so no access frequency exists: Redis' answer for that policy.
    if (freq) {
      return reply::Error(call.out,
                          "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
                          "that when switching between policies at runtime LRU and LFU data will take some time to "
                          "adjust.");
    }
    if (idletime) {
      uint32_t lru = call.server->access_clock().Get(call.args[2]);
      return reply::Integer(call.out, static_cast<int64_t>(AccessClock::IdleMs(lru, AccessClock::Now()) / 1000));
    }
    if (refcount) return reply::Integer(call.out, KeyRefcount(lk));
    return reply::Bulk(call.out, KeyEncoding(lk));
  }
  ReplyUnknownSubcommand(call, "OBJECT");
}

}  // namespace

void RegisterKeyspaceCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite, r = kCmdReadOnly;
  t->Add({"del", -2, w, 1, -1, 1, Del, "generic", "Deletes one or more keys.", "1.0.0"});
  t->Add({"unlink", -2, w | kCmdFast, 1, -1, 1, Del, "generic", "Asynchronously deletes one or more keys.", "4.0.0"});
  t->Add({"exists", -2, r | kCmdNoTouch | kCmdFast, 1, -1, 1, CountExisting, "generic", "Determines whether one or more keys exist.", "1.0.0"});
  t->Add({"touch", -2, r | kCmdFast, 1, -1, 1, CountExisting, "generic", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", "3.2.1"});
  t->Add({"type", 2, r | kCmdNoTouch | kCmdFast, 1, 1, 1, Type, "generic", "Determines the type of value stored at a key.", "1.0.0"});
  t->Add({"expire", -3, w | kCmdFast, 1, 1, 1, Expire, "generic", "Sets the expiration time of a key in seconds.", "1.0.0"});
  t->Add({"pexpire", -3, w | kCmdFast, 1, 1, 1, PExpire, "generic", "Sets the expiration time of a key in milliseconds.", "2.6.0"});
  t->Add({"expireat", -3, w | kCmdFast, 1, 1, 1, ExpireAt, "generic", "Sets the expiration time of a key to a Unix timestamp.", "1.2.0"});
  t->Add({"pexpireat", -3, w | kCmdFast, 1, 1, 1, PExpireAt, "generic", "Sets the expiration time of a key to a Unix milliseconds timestamp.", "2.6.0"});
  t->Add({"ttl", 2, r | kCmdNoTouch | kCmdFast, 1, 1, 1, Ttl, "generic", "Returns the expiration time in seconds of a key.", "1.0.0"});
  t->Add({"pttl", 2, r | kCmdNoTouch | kCmdFast, 1, 1, 1, PTtl, "generic", "Returns the expiration time in milliseconds of a key.", "2.6.0"});
  t->Add({"expiretime", 2, r | kCmdNoTouch | kCmdFast, 1, 1, 1, ExpireTime, "generic", "Returns the expiration time of a key as a Unix timestamp.", "7.0.0"});
  t->Add({"pexpiretime", 2, r | kCmdNoTouch | kCmdFast, 1, 1, 1, PExpireTime, "generic", "Returns the expiration time of a key as a Unix milliseconds timestamp.", "7.0.0"});
  t->Add({"persist", 2, w | kCmdFast, 1, 1, 1, Persist, "generic", "Removes the expiration time of a key.", "2.2.0"});
  t->Add({"keys", 2, r | kCmdNoTouch | kCmdSlow, 0, 0, 0, Keys, "generic", "Returns all key names that match a pattern.", "1.0.0"});
  t->Add({"scan", -2, r | kCmdNoTouch | kCmdSlow, 0, 0, 0, Scan, "generic", "Iterates over the key names in the database.", "2.8.0"});
  t->Add({"randomkey", 1, r | kCmdNoTouch, 0, 0, 0, RandomKey, "generic", "Returns a random key name from the database.", "1.0.0"});
  t->Add({"rename", 3, w, 1, 2, 1, Rename, "generic", "Renames a key and overwrites the destination.", "1.0.0"});
  t->Add({"renamenx", 3, w | kCmdFast, 1, 2, 1, RenameNx, "generic", "Renames a key only when the target key name doesn't exist.", "1.0.0"});
  t->Add({"copy", -3, w | kCmdDenyOOM, 1, 2, 1, Copy, "generic", "Copies the value of a key to a new key.", "6.2.0", CopyLockKeys});
  t->Add({"move", 3, w | kCmdFast, 1, 1, 1, Move, "generic", "Moves a key to another database.", "1.0.0", MoveLockKeys});
  t->Add({"swapdb", 3, w | kCmdExclusive | kCmdFast, 0, 0, 0, SwapDb, "server", "Swaps two Redis databases.", "4.0.0"});
  t->Add({"dbsize", 1, r | kCmdFast, 0, 0, 0, DbSize, "server", "Returns the number of keys in the database.", "1.0.0"});
  t->Add({"flushdb", -1, w | kCmdExclusive, 0, 0, 0, FlushDb, "server", "Remove all keys from the current database.", "1.0.0"});
  t->Add({"flushall", -1, w | kCmdExclusive, 0, 0, 0, FlushAll, "server", "Removes all keys from all databases.", "1.0.0"});
  t->Add({"object", -2, r | kCmdNoTouch | kCmdSlow, 2, 2, 1, Object, "generic", "A container for object introspection commands.",
          "2.2.3", nullptr, {{"object|encoding", 3}, {"object|freq", 3}, {"object|help", 2}, {"object|idletime", 3},
                                 {"object|refcount", 3}}});
}

}  // namespace kvrocks
