#include "server/notify.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "commands/command.h"
#include "common/string_util.h"
#include "server/server.h"
#include "storage/context.h"
#include "types/database.h"

namespace kvrocks {

namespace {

using Event = KeyspaceEvent;

thread_local std::vector<Event> pending;

// A key the command changed: where, whether it was created, and whether it
// is gone at the end.
struct Changed {
  int db;
  std::string key;
  bool created = false;
  bool removed = false;
};

struct Rule {
  uint32_t cls;
  const char* event;
};

// Commands whose every changed key gets one event.
const std::unordered_map<std::string_view, Rule>& SimpleRules() {
  static const std::unordered_map<std::string_view, Rule> rules = {
      {"setnx", {kNotifyString, "set"}},
      {"getset", {kNotifyString, "set"}},
      {"mset", {kNotifyString, "set"}},
      {"msetnx", {kNotifyString, "set"}},
      {"append", {kNotifyString, "append"}},
      {"setrange", {kNotifyString, "setrange"}},
      {"incr", {kNotifyString, "incrby"}},
      {"decr", {kNotifyString, "incrby"}},
      {"incrby", {kNotifyString, "incrby"}},
      {"decrby", {kNotifyString, "incrby"}},
      {"incrbyfloat", {kNotifyString, "incrbyfloat"}},
      {"setbit", {kNotifyString, "setbit"}},
      {"bitfield", {kNotifyString, "setbit"}},
      {"pfadd", {kNotifyString, "pfadd"}},
      {"pfmerge", {kNotifyString, "pfadd"}},
      {"hset", {kNotifyHash, "hset"}},
      {"hsetnx", {kNotifyHash, "hset"}},
      {"hmset", {kNotifyHash, "hset"}},
      {"hincrby", {kNotifyHash, "hincrby"}},
      {"hincrbyfloat", {kNotifyHash, "hincrbyfloat"}},
      {"hdel", {kNotifyHash, "hdel"}},
      {"lpush", {kNotifyList, "lpush"}},
      {"lpushx", {kNotifyList, "lpush"}},
      {"rpush", {kNotifyList, "rpush"}},
      {"rpushx", {kNotifyList, "rpush"}},
      {"lpop", {kNotifyList, "lpop"}},
      {"rpop", {kNotifyList, "rpop"}},
      {"blpop", {kNotifyList, "lpop"}},
      {"brpop", {kNotifyList, "rpop"}},
      {"linsert", {kNotifyList, "linsert"}},
      {"lset", {kNotifyList, "lset"}},
      {"lrem", {kNotifyList, "lrem"}},
      {"ltrim", {kNotifyList, "ltrim"}},
      {"sadd", {kNotifySet, "sadd"}},
      {"srem", {kNotifySet, "srem"}},
      {"spop", {kNotifySet, "spop"}},
      {"zincrby", {kNotifyZSet, "zincr"}},
      {"zrem", {kNotifyZSet, "zrem"}},
      {"zremrangebyscore", {kNotifyZSet, "zremrangebyscore"}},
      {"zremrangebyrank", {kNotifyZSet, "zremrangebyrank"}},
      {"zremrangebylex", {kNotifyZSet, "zremrangebylex"}},
      {"zpopmin", {kNotifyZSet, "zpopmin"}},
      {"zpopmax", {kNotifyZSet, "zpopmax"}},
      {"bzpopmin", {kNotifyZSet, "zpopmin"}},
      {"bzpopmax", {kNotifyZSet, "zpopmax"}},
      {"geoadd", {kNotifyZSet, "zadd"}},
      {"xadd", {kNotifyStream, "xadd"}},
      {"xdel", {kNotifyStream, "xdel"}},
      {"xtrim", {kNotifyStream, "xtrim"}},
      {"xsetid", {kNotifyStream, "xsetid"}},
      {"persist", {kNotifyGeneric, "persist"}},
      {"restore", {kNotifyGeneric, "restore"}},
      {"restore-asking", {kNotifyGeneric, "restore"}},
  };
  return rules;
}

// Commands that store a computed value in a destination key (an empty result
// deletes it: then only "del").
const std::unordered_map<std::string_view, Rule>& StoreRules() {
  static const std::unordered_map<std::string_view, Rule> rules = {
      {"sinterstore", {kNotifySet, "sinterstore"}},
      {"sunionstore", {kNotifySet, "sunionstore"}},
      {"sdiffstore", {kNotifySet, "sdiffstore"}},
      {"zunionstore", {kNotifyZSet, "zunionstore"}},
      {"zinterstore", {kNotifyZSet, "zinterstore"}},
      {"zdiffstore", {kNotifyZSet, "zdiffstore"}},
      {"zrangestore", {kNotifyZSet, "zrangestore"}},
      {"georadius", {kNotifyZSet, "georadiusstore"}},
      {"georadiusbymember", {kNotifyZSet, "georadiusstore"}},
      {"geosearchstore", {kNotifyZSet, "geosearchstore"}},
      {"sort", {kNotifyList, "sortstore"}},
      {"bitop", {kNotifyString, "set"}},
  };
  return rules;
}

bool HasArg(const std::vector<std::string>& args, size_t from, std::initializer_list<const char*> names) {
  for (size_t i = from; i < args.size(); i++) {
    for (const char* n : names) {
      if (TokenEquals(args[i], n)) return true;
    }
  }
  return false;
}

class EventList {
 public:
  explicit EventList(std::vector<Changed> changed) : changed_(std::move(changed)) {}

  const Changed* Find(const std::string& key, int db = -1) const {
    for (const auto& c : changed_) {
      if (c.key == key && (db < 0 || c.db == db)) return &c;
    }
    return nullptr;
  }
  void Add(uint32_t cls, const char* name, const Changed& c) { events_.push_back({cls, name, c.db, c.key}); }
  void New(const Changed* c) {
    if (c != nullptr && c->created && !c->removed) Add(kNotifyNew, "new", *c);
  }
  void Del(const Changed* c) {
    if (c != nullptr && c->removed) Add(kNotifyGeneric, "del", *c);
  }
  // new, the event, del: for every changed key in order.
  void Each(uint32_t cls, const char* name) {
    for (const auto& c : changed_) {
      New(&c);
      Add(cls, name, c);
      Del(&c);
    }
  }
  const std::vector<Changed>& changed() const { return changed_; }
  std::vector<Event>& events() { return events_; }

 private:
  std::vector<Changed> changed_;
  std::vector<Event> events_;
};

// The logical database of a physical one.
int LogicalDb(Server* srv, uint8_t physical, int hint) {
  Storage* st = srv->storage();
  if (st->PhysicalDb(hint) == physical) return hint;
  for (int i = 0; i < srv->config()->databases; i++) {
    if (st->PhysicalDb(i) == physical) return i;
  }
  return hint;
}

// The events of one command (see the header).
void CommandEvents(const std::string& name, const std::vector<std::string>& args, EventList* ev) {
  const auto& changed = ev->changed();
  if (changed.empty()) return;
  if (name == "set" || name == "setex" || name == "psetex") {
    bool ttl = name != "set" || HasArg(args, 3, {"ex", "px", "exat", "pxat"});
    for (const auto& c : changed) {
      ev->New(&c);
      ev->Add(kNotifyString, "set", c);
      if (ttl) ev->Add(kNotifyGeneric, "expire", c);
    }
    return;
  }
  if (name == "mset" || name == "msetnx") {
    // One "set" per pair, as Redis' loop notifies: a key given twice gets two
    // ("new" only with its first).
    std::vector<const Changed*> created;
    for (size_t j = 1; j + 1 < args.size(); j += 2) {
      const Changed* c = ev->Find(args[j]);
      if (c == nullptr) continue;
      if (std::find(created.begin(), created.end(), c) == created.end()) {
        created.push_back(c);
        ev->New(c);
      }
      ev->Add(kNotifyString, "set", *c);
    }
    return;
  }
  if (name == "getex") {
    const char* event = HasArg(args, 2, {"persist"}) ? "persist" : "expire";
    for (const auto& c : changed) ev->Add(kNotifyGeneric, event, c);
    return;
  }
  if (name == "del" || name == "unlink" || name == "getdel" || name == "migrate") {
    for (const auto& c : changed) ev->Del(&c);
    return;
  }
  if (name == "expire" || name == "pexpire" || name == "expireat" || name == "pexpireat") {
    for (const auto& c : changed) {
      if (c.removed) {
        ev->Del(&c);
      } else {
        ev->Add(kNotifyGeneric, "expire", c);
      }
    }
    return;
  }
  if (name == "rename" || name == "renamenx") {
    const Changed* src = ev->Find(args[1]);
    const Changed* dst = ev->Find(args[2]);
    if (src == nullptr || dst == nullptr) return;
    ev->New(dst);
    ev->Add(kNotifyGeneric, "rename_from", *src);
    ev->Add(kNotifyGeneric, "rename_to", *dst);
    return;
  }
  if (name == "move") {
    const Changed* src = nullptr;
    const Changed* dst = nullptr;
    for (const auto& c : changed) (c.removed ? src : dst) = &c;
    if (src == nullptr || dst == nullptr) return;
    ev->New(dst);
    ev->Add(kNotifyGeneric, "move_from", *src);
    ev->Add(kNotifyGeneric, "move_to", *dst);
    return;
  }
  if (name == "copy") {
    for (const auto& c : changed) {
      ev->New(&c);
      ev->Add(kNotifyGeneric, "copy_to", c);
    }
    return;
  }
  if (name == "lmove" || name == "blmove" || name == "rpoplpush" || name == "brpoplpush") {
    bool two_way = name == "lmove" || name == "blmove";
    bool from_left = two_way && TokenEquals(args[3], "left");
    bool to_left = !two_way || TokenEquals(args[4], "left");
    const Changed* src = ev->Find(args[1]);
    const Changed* dst = ev->Find(args[2]);
    if (src == nullptr) return;
    if (dst == nullptr) dst = src;
    // Redis pushes first, then reports the pop (and the source's deletion).
    ev->New(dst);
    ev->Add(kNotifyList, to_left ? "lpush" : "rpush", *dst);
    ev->Add(kNotifyList, from_left ? "lpop" : "rpop", *src);
    ev->Del(src);
    return;
  }
  if (name == "smove") {
    const Changed* src = ev->Find(args[1]);
    const Changed* dst = ev->Find(args[2]);
    if (src == nullptr) return;
    ev->Add(kNotifySet, "srem", *src);
    ev->Del(src);
    if (dst != nullptr && dst != src) {
      ev->New(dst);
      ev->Add(kNotifySet, "sadd", *dst);
    }
    return;
  }
  if (name == "lmpop" || name == "blmpop") {
    return ev->Each(kNotifyList, HasArg(args, 2, {"left"}) ? "lpop" : "rpop");
  }
  if (name == "zmpop" || name == "bzmpop") {
    return ev->Each(kNotifyZSet, HasArg(args, 2, {"min"}) ? "zpopmin" : "zpopmax");
  }
  if (name == "zadd") return ev->Each(kNotifyZSet, HasArg(args, 2, {"incr"}) ? "zincr" : "zadd");
  if (name == "xgroup" && args.size() > 1) {
    std::string sub = "xgroup-" + ToLower(args[1]);
    return ev->Each(kNotifyStream, sub.c_str());
  }
  auto store = StoreRules().find(name);
  if (store != StoreRules().end()) {
    for (const auto& c : changed) {
      if (c.removed) {
        ev->Del(&c);
      } else {
        ev->New(&c);
        ev->Add(store->second.cls, store->second.event, c);
      }
    }
    return;
  }
  auto simple = SimpleRules().find(name);
  if (simple != SimpleRules().end()) ev->Each(simple->second.cls, simple->second.event);
}

// The keys a command looks up for reading, whose absence Redis reports as
// "keymiss": every key of a read-only command, the sources of the commands
// that store a computed value.
std::vector<size_t> ReadKeys(const CommandSpec& spec, const std::string& name, const std::vector<std::string>& args) {
  std::vector<size_t> out;
  auto range = [&](size_t from, size_t to) {
    for (size_t i = from; i < to && i < args.size(); i++) out.push_back(i);
  };
  // XREAD and XREADGROUP look every stream key up twice (to check it, then to
  // serve it), each a lookupKeyRead with its own hit or miss and keymiss.
  auto stream_keys_twice = [&]() {
    for (size_t i = 1; i < args.size(); i++) {
      if (!TokenEquals(args[i], "streams")) continue;
      size_t n = (args.size() - i - 1) / 2;
      range(i + 1, i + 1 + n);
      range(i + 1, i + 1 + n);
      break;
    }
  };
  if (spec.flags & kCmdReadOnly) {
    if (name == "xread") {
      stream_keys_twice();
    } else if (name != "object") {
      out = CommandTable::KeyIndexes(spec, args.size());
    }
  } else if (name == "xreadgroup") {
    stream_keys_twice();
  } else if (name == "xack" || name == "xclaim" || name == "xautoclaim") {
    range(1, 2);
  } else if (name == "bitfield") {
    // Only GETs: Redis reads the key (lookupKeyRead); any SET or INCRBY writes it.
    for (size_t i = 2; i < args.size();) {
      if (TokenEquals(args[i], "set") || TokenEquals(args[i], "incrby")) return out;
      i += TokenEquals(args[i], "get") ? 3 : TokenEquals(args[i], "overflow") ? 2 : 1;
    }
    range(1, 2);
  } else if (name == "sinterstore" || name == "sunionstore" || name == "sdiffstore") {
    range(2, args.size());
  } else if (name == "pfmerge") {
    range(1, args.size());  // the destination is read too
  } else if (name == "zunionstore" || name == "zinterstore" || name == "zdiffstore") {
    int64_t n = 0;
    if (args.size() > 2 && ParseInt64(args[2], &n) && n > 0) range(3, 3 + static_cast<size_t>(n));
  } else if (name == "bitop") {
    range(3, args.size());
  } else if (name == "getdel" || name == "getex") {
    range(1, 2);
  } else if (name == "migrate") {
    if (args.size() > 3 && !args[3].empty()) return {3};
    for (size_t i = 6; i < args.size(); i++) {
      if (TokenEquals(args[i], "keys")) {
        range(i + 1, args.size());
        break;
      }
    }
  } else if (name == "set") {
    for (size_t i = 3; i < args.size(); i++) {
      if (TokenEquals(args[i], "get")) return {1};
    }
  } else if (name == "sort" || name == "copy" || name == "georadius" || name == "georadiusbymember") {
    range(1, 2);
  } else if (name == "zrangestore" || name == "geosearchstore") {
    range(2, 3);
  }
  return out;
}

void Publish(Server* srv, uint32_t flags, const Event& e) {
  if (flags == 0) return;
  if (!(flags & e.cls)) return;
  std::string db = std::to_string(e.db);
  if (flags & kNotifyKeyspace) {
    srv->pubsub().Publish(PubSubKind::kChannel, "__keyspace@" + db + "__:" + e.key, e.name, nullptr);
  }
  if (flags & kNotifyKeyevent) {
    srv->pubsub().Publish(PubSubKind::kChannel, "__keyevent@" + db + "__:" + e.name, e.key, nullptr);
  }
}

// Redis sets an object's LRU clock when a command looks its key up (unless the
// lookup is LOOKUP_NOTOUCH) and when it creates or replaces the object.
void RecordAccesses(Server* srv, const CommandSpec& spec, Context& ctx, size_t from) {
  AccessClock& clock = srv->access_clock();
  if (!(spec.flags & kCmdNoTouch)) {
    for (const auto& l : ctx.lookups()) {
      if (l.found) clock.Touch(l.key);
    }
  }
  const auto& touched = ctx.touched();
  const auto& kinds = ctx.touch_kinds();
  for (size_t i = from; i < touched.size(); i++) {
    if (kinds[i] == Context::TouchKind::kCreated || kinds[i] == Context::TouchKind::kModified) {
      clock.Touch(touched[i].second);
    }
  }
  auto& explicit_times = ctx.access_times();
  for (const auto& [key, lru] : explicit_times) clock.Set(key, lru);
  explicit_times.clear();
}

}  // namespace

bool NeedsPriorKeyState(Server* srv) {
  uint32_t flags = srv->config()->notify_keyspace_events.load(std::memory_order_relaxed);
  return (flags & (kNotifyNew | kNotifyExpired)) && (flags & (kNotifyKeyspace | kNotifyKeyevent));
}

static void CollectEvents(Server* srv, int db, const CommandSpec& spec, const std::vector<std::string>& args,
                          Context& ctx, size_t from) {
  std::vector<Context::NotedEvent> noted = ctx.TakeNotedEvents();
  // A script's calls reported their own lookups and events.
  if (std::string_view(spec.group) == "scripting") return ctx.ClearLookups();
  RecordAccesses(srv, spec, ctx, from);
  uint32_t flags = srv->config()->notify_keyspace_events.load(std::memory_order_relaxed);
  const bool events = flags != 0 && (flags & (kNotifyKeyspace | kNotifyKeyevent));
  const auto& lookups = ctx.lookups();
  const bool read_only = (spec.flags & kCmdReadOnly) != 0;
  Stats& stats = srv->stats();
  if (read_only && !(events && (flags & kNotifyKeyMiss))) {
    // Every lookup of a read-only command is a read (the common case: no key names to match).
    for (const auto& l : lookups) (l.found ? stats.keyspace_hits : stats.keyspace_misses)++;
    ctx.ClearLookups();
    if (!events) return;
  }
  if (!events && lookups.empty()) return;  // (most writes)
  // The read lookups, in order: those of the keys the command reads (Redis'
  // lookupKeyRead; a write command's own lookups of what it writes are not).
  std::string name = ToLower(spec.name);
  std::vector<const Context::Lookup*> reads;
  if (!lookups.empty()) {
    const uint8_t physical = srv->storage()->PhysicalDb(db);
    // Most writes read no other key: no matching (and no allocation) for them.
    std::vector<size_t> read_keys = ReadKeys(spec, name, args);
    std::vector<bool> used(read_keys.empty() ? 0 : lookups.size());
    for (size_t i : read_keys) {
      for (size_t j = 0; j < lookups.size(); j++) {
        if (used[j] || lookups[j].db != physical || lookups[j].key != args[i]) continue;
        used[j] = true;
        reads.push_back(&lookups[j]);
        break;
      }
    }
    if (name == "sort" || name == "sort_ro") {
      // Each is Redis' lookupKeyRead: the key, then each BY and GET pattern's key.
      reads.clear();
      for (const auto& l : lookups) reads.push_back(&l);
    }
    // (A read-only command's lookups that were not counted above: a keymiss is wanted.)
    if (read_only) {
      for (const auto& l : lookups) (l.found ? stats.keyspace_hits : stats.keyspace_misses)++;
    } else {
      for (const auto* l : reads) (l->found ? stats.keyspace_hits : stats.keyspace_misses)++;
    }
  }
  if (!events) return ctx.ClearLookups();
  std::vector<Changed> changed;
  std::vector<Event> expired;  // keys found expired and deleted, in order
  const auto& touched = ctx.touched();
  const auto& kinds = ctx.touch_kinds();
  for (size_t i = from; i < touched.size(); i++) {
    int logical = LogicalDb(srv, touched[i].first, db);
    if (kinds[i] == Context::TouchKind::kExpired) {
      expired.push_back(Event{kNotifyExpired, "expired", logical, touched[i].second});
      continue;
    }
    Changed* c = nullptr;
    for (auto& x : changed) {
      if (x.db == logical && x.key == touched[i].second) c = &x;
    }
    if (c == nullptr) {
      changed.push_back(Changed{logical, touched[i].second});
      c = &changed.back();
      c->created = kinds[i] == Context::TouchKind::kCreated;
    }
    c->removed = kinds[i] == Context::TouchKind::kRemoved;
  }
  // Lookups come first, as in Redis: each read's "expired" (the lookup deleted
  // the key) and "keymiss", then the other keys found expired, then what the
  // command did.
  std::vector<bool> expired_done(expired.size());
  auto emit_expired = [&](size_t k) {
    if (expired_done[k]) return;
    expired_done[k] = true;
    if (flags & kNotifyExpired) pending.push_back(expired[k]);
  };
  if (flags & kNotifyKeyMiss) {
    for (const auto* l : reads) {
      for (size_t k = 0; k < expired.size(); k++) {
        if (expired[k].db == db && expired[k].key == l->key) emit_expired(k);
      }
      if (!l->found) pending.push_back(Event{kNotifyKeyMiss, "keymiss", db, l->key});
    }
  }
  for (size_t k = 0; k < expired.size(); k++) emit_expired(k);
  ctx.ClearLookups();
  EventList ev(std::move(changed));
  CommandEvents(name, args, &ev);
  for (auto& e : ev.events()) {
    if (flags & e.cls) pending.push_back(std::move(e));
  }
  for (const auto& n : noted) {
    if (flags & kNotifyStream) pending.push_back(Event{kNotifyStream, n.event, LogicalDb(srv, n.db, db), n.key});
  }
}

void CollectCommandEvents(Server* srv, int db, const CommandSpec& spec, const std::vector<std::string>& args,
                          Context& ctx, size_t from) {
  CollectEvents(srv, db, spec, args, ctx, from);
  // Redis 7.0 makes these changes without signalModifiedKey: once their events
  // are out, WATCH, client-side caching and blocked clients see nothing of them.
  if (spec.flags & kCmdUnsignaled) ctx.ForgetTouchesFrom(from);
}

size_t PendingEventCount() { return pending.size(); }

void DropPendingEvents(size_t keep) {
  if (pending.size() > keep) pending.resize(keep);
}

std::vector<KeyspaceEvent> TakePendingEvents() {
  std::vector<KeyspaceEvent> out;
  out.swap(pending);
  return out;
}

void PublishEvents(Server* srv, const std::vector<KeyspaceEvent>& events) {
  uint32_t flags = srv->config()->notify_keyspace_events.load(std::memory_order_relaxed);
  for (const auto& e : events) Publish(srv, flags, e);
}

void NotifyExpired(Server* srv, uint8_t physical_db, const std::vector<std::string>& keys) {
  uint32_t flags = srv->config()->notify_keyspace_events.load(std::memory_order_relaxed);
  if (!(flags & kNotifyExpired) || !(flags & (kNotifyKeyspace | kNotifyKeyevent))) return;
  int db = LogicalDb(srv, physical_db, 0);
  for (const auto& k : keys) Publish(srv, flags, Event{kNotifyExpired, "expired", db, k});
}

}  // namespace kvrocks
