// Consumer groups of the stream type (XGROUP, XREADGROUP, XACK, XPENDING,
// XCLAIM, XAUTOCLAIM, XINFO GROUPS/CONSUMERS), after Redis' t_stream.c.
#include "common/time_util.h"
#include "types/redis_stream.h"
#include "types/stream_encoding.h"

namespace kvrocks {

using stream::Keys;

namespace {

Status LoadGroup(Database* db, const Keys& keys, std::string_view name, stream::Group* g) {
  std::string v;
  Status s = db->ctx()->Get(ColumnFamily::kSubkey, keys.GroupKey(name), &v);
  if (!s.ok()) return s;
  return g->Decode(v) ? Status::OK() : Status::Corruption("bad stream group");
}

Status LoadConsumer(Database* db, const Keys& keys, std::string_view group, std::string_view name,
                    stream::Consumer* c) {
  std::string v;
  Status s = db->ctx()->Get(ColumnFamily::kSubkey, keys.ConsumerKey(group, name), &v);
  if (!s.ok()) return s;
  return c->Decode(v) ? Status::OK() : Status::Corruption("bad stream consumer");
}

void PutConsumer(Database* db, const Keys& keys, std::string_view group, std::string_view name,
                 const stream::Consumer& c) {
  db->ctx()->Put(ColumnFamily::kSubkey, keys.ConsumerKey(group, name), c.Encode());
}

Status LoadNack(Database* db, const Keys& keys, std::string_view group, const StreamID& id, stream::Nack* n) {
  std::string v;
  Status s = db->ctx()->Get(ColumnFamily::kSubkey, keys.PelKey(group, id), &v);
  if (!s.ok()) return s;
  return n->Decode(v) ? Status::OK() : Status::Corruption("bad stream pending entry");
}

// An iterator over the subkeys under prefix (group-scoped records); prefix must
// outlive it (RocksDB keeps the bound it points to).
class PrefixIterator {
 public:
  PrefixIterator(Database* db, const std::string& prefix)
      : upper_(prefix + std::string(64, '\xff')), lower_slice_(prefix), upper_slice_(upper_) {
    rocksdb::ReadOptions ro;
    ro.iterate_lower_bound = &lower_slice_;
    ro.iterate_upper_bound = &upper_slice_;
    it_ = db->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
  }
  rocksdb::Iterator* operator->() const { return it_.get(); }
  const rocksdb::Iterator& operator*() const { return *it_; }

 private:
  std::string upper_;
  rocksdb::Slice lower_slice_, upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

// Calls fn(key, value) for subkeys under prefix starting at `from` (>= prefix); fn returns false to stop.
template <typename Fn>
Status Scan(Database* db, const std::string& prefix, const std::string& from, Fn fn) {
  PrefixIterator it(db, prefix);
  for (it->Seek(from); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (!fn(std::string_view(it->key().data(), it->key().size()).substr(prefix.size()),
            std::string_view(it->value().data(), it->value().size()))) {
      break;
    }
  }
  return stream::IterStatus(*it);
}

// Where a walk of group's PEL from start begins: not below the floor.
std::string PelSeek(const Keys& keys, std::string_view group, const StreamID& floor, const StreamID& start) {
  return keys.PelKey(group, std::max(floor, start));
}

// Removals since the floor was last the first pending id, past which the
// floor is found again (one seek, amortized over as many removals).
constexpr uint32_t kMaxPelStale = 32;

// Writes the group record, first moving a stale floor up to the first pending id.
Status PutGroup(Database* db, const Keys& keys, std::string_view name, stream::Group* g) {
  if (g->pel_stale > kMaxPelStale) {
    if (g->pending > 0) {
      std::string pel = keys.PelPrefix(name);
      Status s = Scan(db, pel, keys.PelKey(name, g->pel_floor), [&](std::string_view rest, std::string_view) {
        if (rest.size() == 16) g->pel_floor = stream::GetId(rest.data());
        return rest.size() != 16;
      });
      if (!s.ok()) return s;
    }
    g->pel_stale = 0;
  }
  db->ctx()->Put(ColumnFamily::kSubkey, keys.GroupKey(name), g->Encode());
  return Status::OK();
}

// Redis' streamRangeHasTombstones: whether an XDEL'd id may lie in [start, end].
bool RangeHasTombstones(const StreamMeta& m, const StreamID& start, const StreamID& end) {
  if (m.length == 0 || m.max_deleted.IsZero()) return false;
  if (m.first_id > m.max_deleted) return false;
  return start <= m.max_deleted && m.max_deleted <= end;
}

int64_t EstimateDistance(const StreamMeta& m, const StreamID& id) {
  return StreamEstimateEntriesRead(m.entries_added, m.length, m.first_id, m.last_id, m.max_deleted, id);
}

// Moves the group's delivery point to id (a delivered entry), keeping the read counter.
void AdvanceGroup(const StreamMeta& m, stream::Group* g, const StreamID& id) {
  if (id <= g->last_id) return;
  if (g->entries_read != -1 && !RangeHasTombstones(m, id, StreamID::Max())) {
    g->entries_read++;
  } else if (m.entries_added) {
    g->entries_read = EstimateDistance(m, id);
  }
  g->last_id = id;
}

// A loaded stream with one of its groups.
struct GroupCtx {
  LoadedKey lk;
  StreamMeta meta;
  Keys keys;
  stream::Group group;
};

// Loads key and group: NotFound if either is absent.
Status OpenGroup(RedisStream* rs, Database* db, std::string_view key, std::string_view group, GroupCtx* g) {
  bool exists;
  Status s = rs->Load(key, &g->lk, &g->meta, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::NotFound();
  g->keys = stream::KeysOf(db, key, g->meta);
  return LoadGroup(db, g->keys, group, &g->group);
}

// Finds or creates a consumer (refreshing its seen time, as Redis' lookups do).
Status TouchConsumer(Database* db, std::string_view key, GroupCtx* g, std::string_view group, std::string_view name,
                     stream::Consumer* c) {
  Status s = LoadConsumer(db, g->keys, group, name, c);
  if (s.IsNotFound()) {
    *c = stream::Consumer{};
    g->group.consumers++;
    db->ctx()->NoteEvent(db->id(), key, "xgroup-createconsumer");
    db->ctx()->AddDirty(1);  // Redis' streamCreateConsumer counts a change
  } else if (!s.ok()) {
    return s;
  }
  c->seen_time = NowMs();
  return Status::OK();
}

// Moves the pending entry id to consumer `to` (whose record the caller writes).
Status Reassign(Database* db, GroupCtx* g, std::string_view group, const StreamID& id, const std::string& from,
                std::string_view to, stream::Consumer* to_rec) {
  if (from == to) return Status::OK();
  if (!from.empty()) {
    stream::Consumer old;
    Status s = LoadConsumer(db, g->keys, group, from, &old);
    if (s.ok()) {
      if (old.pending > 0) old.pending--;
      PutConsumer(db, g->keys, group, from, old);
    } else if (!s.IsNotFound()) {
      return s;
    }
  } else {
    g->group.NotePelInsert(id);  // a new PEL entry (XCLAIM FORCE)
    g->group.pending++;
  }
  to_rec->pending++;
  return Status::OK();
}

// Drops the PEL entry id (owned by `owner`) of an entry the stream no longer has,
// as XCLAIM and XAUTOCLAIM do. *me is the claiming consumer's record if loaded
// (the caller writes it last, so its count is the one to lower).
Status DropPending(Database* db, GroupCtx* g, std::string_view group, const StreamID& id, const std::string& owner,
                   std::string_view claimer, std::optional<stream::Consumer>* me) {
  db->ctx()->Delete(ColumnFamily::kSubkey, g->keys.PelKey(group, id));
  if (*me && owner == claimer) {
    if ((*me)->pending > 0) (*me)->pending--;
  } else {
    stream::Consumer old;
    Status s = LoadConsumer(db, g->keys, group, owner, &old);
    if (s.ok() && old.pending > 0) {
      old.pending--;
      PutConsumer(db, g->keys, group, owner, old);
    } else if (!s.ok() && !s.IsNotFound()) {
      return s;
    }
  }
  if (g->group.pending > 0) g->group.pending--;
  g->group.pel_stale++;
  return Status::OK();
}

}  // namespace

Status RedisStream::GetGroup(std::string_view key, const StreamMeta& meta, std::string_view group,
                             StreamGroupInfo* info) {
  stream::Group g;
  Status s = LoadGroup(db_, stream::KeysOf(db_, key, meta), group, &g);
  if (!s.ok()) return s;
  info->name = std::string(group);
  info->last_id = g.last_id;
  info->entries_read = g.entries_read;
  info->pending = g.pending;
  info->consumers = g.consumers;
  info->pel_floor = g.pel_floor;
  return Status::OK();
}

std::optional<int64_t> RedisStream::Lag(const StreamMeta& meta, const StreamGroupInfo& group) {
  if (meta.entries_added == 0) return 0;
  if (group.entries_read != -1 && !RangeHasTombstones(meta, group.last_id, StreamID::Max())) {
    return static_cast<int64_t>(meta.entries_added) - group.entries_read;
  }
  int64_t read = EstimateDistance(meta, group.last_id);
  if (read == -1) return std::nullopt;
  return static_cast<int64_t>(meta.entries_added) - read;
}

Status RedisStream::CreateGroup(std::string_view key, std::string_view group, const std::optional<StreamID>& id,
                                bool mkstream, int64_t entries_read) {
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) {
    if (!mkstream) return Status::NotFound();
    meta = StreamMeta{};
    meta.version = db_->ctx()->storage()->NewVersion();
  }
  Keys keys = stream::KeysOf(db_, key, meta);
  stream::Group g;
  s = LoadGroup(db_, keys, group, &g);
  if (s.ok()) return Status::RedisError("BUSYGROUP Consumer Group name already exists");
  if (!s.IsNotFound()) return s;
  g = stream::Group{};
  g.last_id = id ? *id : meta.last_id;
  g.entries_read = entries_read;
  s = PutGroup(db_, keys, group, &g);
  if (!s.ok()) return s;
  meta.groups++;
  stream::StoreMeta(db_, key, &lk, meta);
  return Status::OK();
}

Status RedisStream::SetGroupId(std::string_view key, std::string_view group, const std::optional<StreamID>& id,
                               int64_t entries_read) {
  GroupCtx g;
  Status s = OpenGroup(this, db_, key, group, &g);
  if (!s.ok()) return s;
  g.group.last_id = id ? *id : g.meta.last_id;
  g.group.entries_read = entries_read;
  s = PutGroup(db_, g.keys, group, &g.group);
  if (!s.ok()) return s;
  db_->ctx()->Touch(db_->id(), key);
  return Status::OK();
}

Status RedisStream::DestroyGroup(std::string_view key, std::string_view group, bool* destroyed) {
  *destroyed = false;
  GroupCtx g;
  Status s = OpenGroup(this, db_, key, group, &g);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  std::vector<std::string> doomed;
  const std::string pel = g.keys.PelPrefix(group);
  for (const std::string& prefix : {g.keys.ConsumerPrefix(group), pel}) {
    std::string from = prefix == pel ? PelSeek(g.keys, group, g.group.pel_floor, StreamID{}) : prefix;
    s = Scan(db_, prefix, from, [&](std::string_view rest, std::string_view) {
      doomed.push_back(prefix + std::string(rest));
      return true;
    });
    if (!s.ok()) return s;
  }
  for (const auto& k : doomed) db_->ctx()->Delete(ColumnFamily::kSubkey, k);
  db_->ctx()->Delete(ColumnFamily::kSubkey, g.keys.GroupKey(group));
  g.meta.groups--;
  stream::StoreMeta(db_, key, &g.lk, g.meta);
  *destroyed = true;
  return Status::OK();
}

Status RedisStream::CreateConsumer(std::string_view key, std::string_view group, std::string_view consumer,
                                   bool* created) {
  *created = false;
  GroupCtx g;
  Status s = OpenGroup(this, db_, key, group, &g);
  if (!s.ok()) return s;
  stream::Consumer c;
  s = LoadConsumer(db_, g.keys, group, consumer, &c);
  if (s.ok()) return Status::OK();
  if (!s.IsNotFound()) return s;
  c = stream::Consumer{NowMs(), 0};
  PutConsumer(db_, g.keys, group, consumer, c);
  g.group.consumers++;
  s = PutGroup(db_, g.keys, group, &g.group);
  if (!s.ok()) return s;
  db_->ctx()->Touch(db_->id(), key);
  db_->ctx()->AddDirty(1);  // Redis' streamCreateConsumer counts a change
  *created = true;
  return Status::OK();
}

Status RedisStream::DeleteConsumer(std::string_view key, std::string_view group, std::string_view consumer,
                                   int64_t* pending) {
  *pending = 0;
  GroupCtx g;
  Status s = OpenGroup(this, db_, key, group, &g);
  if (!s.ok()) return s;
  stream::Consumer c;
  s = LoadConsumer(db_, g.keys, group, consumer, &c);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  std::string pel = g.keys.PelPrefix(group);
  std::vector<std::string> doomed;
  s = Scan(db_, pel, PelSeek(g.keys, group, g.group.pel_floor, StreamID{}), [&](std::string_view rest,
                                                                               std::string_view value) {
    stream::Nack n;
    if (n.Decode(value) && n.consumer == consumer) doomed.push_back(pel + std::string(rest));
    return true;
  });
  if (!s.ok()) return s;
  for (const auto& k : doomed) db_->ctx()->Delete(ColumnFamily::kSubkey, k);
  db_->ctx()->Delete(ColumnFamily::kSubkey, g.keys.ConsumerKey(group, consumer));
  g.group.pending -= std::min<uint64_t>(g.group.pending, doomed.size());
  g.group.pel_stale += static_cast<uint32_t>(std::min<size_t>(doomed.size(), kMaxPelStale + 1));
  g.group.consumers--;
  s = PutGroup(db_, g.keys, group, &g.group);
  if (!s.ok()) return s;
  db_->ctx()->Touch(db_->id(), key);
  *pending = static_cast<int64_t>(c.pending);
  return Status::OK();
}

Status RedisStream::ReadGroup(std::string_view key, std::string_view group, std::string_view consumer,
                              const std::optional<StreamID>& start, uint64_t count, bool noack, bool* served,
                              std::vector<StreamEntry>* out) {
  *served = false;
  out->clear();
  GroupCtx g;
  Status s = OpenGroup(this, db_, key, group, &g);
  if (!s.ok()) return s;
  // As in Redis 7.0, the consumer is created (and seen) only when it is served.
  if (!start) {
    std::optional<StreamID> top;
    if (g.meta.length > 0) {
      s = stream::EdgeEntry(db_, g.keys, true, &top);
      if (!s.ok()) return s;
    }
    if (!top || *top <= g.group.last_id) return Status::OK();
  }
  *served = true;
  stream::Consumer me;
  s = TouchConsumer(db_, key, &g, group, consumer, &me);
  if (!s.ok()) return s;
  const uint64_t now = NowMs();
  if (start) {
    // The consumer's own history: its pending entries after start.
    StreamID from = *start;
    if (from.Incr()) {
      std::string pel = g.keys.PelPrefix(group);
      std::string seek = PelSeek(g.keys, group, g.group.pel_floor, from);
      std::vector<std::pair<StreamID, stream::Nack>> mine;
      s = Scan(db_, pel, seek, [&](std::string_view rest, std::string_view value) {
        stream::Nack n;
        if (rest.size() == 16 && n.Decode(value) && n.consumer == consumer) {
          mine.emplace_back(stream::GetId(rest.data()), std::move(n));
        }
        return count == 0 || mine.size() < count;
      });
      if (!s.ok()) return s;
      for (auto& [id, n] : mine) {
        StreamEntry e;
        s = stream::ReadEntry(db_, g.keys, id, nullptr, &e);
        if (s.IsNotFound()) {
          e.id = id;
          e.missing = true;
        } else if (!s.ok()) {
          return s;
        } else {
          n.delivery_time = now;
          n.delivery_count++;
          db_->ctx()->Put(ColumnFamily::kSubkey, g.keys.PelKey(group, id), n.Encode());
        }
        out->push_back(std::move(e));
      }
    }
  } else {
    StreamID from = g.group.last_id;
    from.Incr();
    s = Range(key, from, StreamID::Max(), count, false, out);
    if (!s.ok()) return s;
    for (const auto& e : *out) {
      AdvanceGroup(g.meta, &g.group, e.id);
      if (noack) continue;
      stream::Nack n;
      s = LoadNack(db_, g.keys, group, e.id, &n);
      if (s.ok()) {
        s = Reassign(db_, &g, group, e.id, n.consumer, consumer, &me);
        if (!s.ok()) return s;
      } else if (s.IsNotFound()) {
        g.group.NotePelInsert(e.id);
        g.group.pending++;
        me.pending++;
      } else {
        return s;
      }
      n.consumer = std::string(consumer);
      n.delivery_time = now;
      n.delivery_count = 1;
      db_->ctx()->Put(ColumnFamily::kSubkey, g.keys.PelKey(group, e.id), n.Encode());
    }
  }
  PutConsumer(db_, g.keys, group, consumer, me);
  s = PutGroup(db_, g.keys, group, &g.group);
  if (!s.ok()) return s;
  db_->ctx()->Touch(db_->id(), key);
  return Status::OK();
}

Status RedisStream::Ack(std::string_view key, std::string_view group, const std::vector<StreamID>& ids,
                        int64_t* acked) {
  *acked = 0;
  GroupCtx g;
  Status s = OpenGroup(this, db_, key, group, &g);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  for (const auto& id : ids) {
    stream::Nack n;
    s = LoadNack(db_, g.keys, group, id, &n);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    db_->ctx()->Delete(ColumnFamily::kSubkey, g.keys.PelKey(group, id));
    stream::Consumer c;
    s = LoadConsumer(db_, g.keys, group, n.consumer, &c);
    if (s.ok()) {
      if (c.pending > 0) c.pending--;
      PutConsumer(db_, g.keys, group, n.consumer, c);
    } else if (!s.IsNotFound()) {
      return s;
    }
    if (g.group.pending > 0) g.group.pending--;
    g.group.pel_stale++;
    (*acked)++;
  }
  if (*acked > 0) {
    s = PutGroup(db_, g.keys, group, &g.group);
    if (!s.ok()) return s;
    db_->ctx()->Touch(db_->id(), key);
  }
  return Status::OK();
}

Status RedisStream::PendingRange(std::string_view key, const StreamGroupInfo& group, const StreamID& start,
                                 const StreamID& end, uint64_t count, const std::optional<std::string>& consumer,
                                 uint64_t min_idle, std::vector<StreamPending>* out) {
  out->clear();
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok() || !exists || count == 0) return s;
  Keys keys = stream::KeysOf(db_, key, meta);
  std::string pel = keys.PelPrefix(group.name);
  const uint64_t now = NowMs();
  return Scan(db_, pel, PelSeek(keys, group.name, group.pel_floor, start), [&](std::string_view rest,
                                                                              std::string_view value) {
    if (rest.size() != 16) return true;
    StreamID id = stream::GetId(rest.data());
    if (id > end) return false;
    stream::Nack n;
    if (!n.Decode(value) || (consumer && n.consumer != *consumer)) return true;
    if (min_idle && static_cast<int64_t>(now - n.delivery_time) < static_cast<int64_t>(min_idle)) return true;
    out->push_back(StreamPending{id, n.consumer, n.delivery_time, n.delivery_count});
    return out->size() < count;
  });
}

Status RedisStream::PendingSummary(std::string_view key, const StreamGroupInfo& group,
                                   std::vector<StreamPending>* edges,
                                   std::vector<std::pair<std::string, uint64_t>>* per_consumer) {
  edges->clear();
  per_consumer->clear();
  if (group.pending == 0) return Status::OK();
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  Keys keys = stream::KeysOf(db_, key, meta);
  std::string pel = keys.PelPrefix(group.name);
  // The first pending id from the floor on, the last from the end.
  PrefixIterator it(db_, pel);
  StreamPending first, last;
  it->Seek(PelSeek(keys, group.name, group.pel_floor, StreamID{}));
  if (it->Valid() && it->key().size() == pel.size() + 16) {
    first.id = stream::GetId(it->key().data() + pel.size());
    it->SeekToLast();
    if (it->Valid() && it->key().size() == pel.size() + 16) {
      last.id = stream::GetId(it->key().data() + pel.size());
      edges->push_back(first);
      edges->push_back(last);
    }
  }
  s = stream::IterStatus(*it);
  if (!s.ok()) return s;
  std::string cp = keys.ConsumerPrefix(group.name);
  return Scan(db_, cp, cp, [&](std::string_view name, std::string_view value) {
    stream::Consumer c;
    if (c.Decode(value) && c.pending > 0) per_consumer->emplace_back(std::string(name), c.pending);
    return true;
  });
}

Status RedisStream::Claim(std::string_view key, std::string_view group, std::string_view consumer,
                          const std::vector<StreamID>& ids, const ClaimArgs& args, std::vector<StreamEntry>* claimed) {
  claimed->clear();
  GroupCtx g;
  Status s = OpenGroup(this, db_, key, group, &g);
  if (!s.ok()) return s;
  const uint64_t now = NowMs();
  const bool last_id_moved = args.last_id && *args.last_id > g.group.last_id;
  if (last_id_moved) g.group.last_id = *args.last_id;
  int64_t dropped = 0;  // PEL entries of deleted stream entries
  uint64_t delivery_time = args.delivery_time ? *args.delivery_time : now;
  if (args.delivery_time && (static_cast<int64_t>(delivery_time) < 0 || delivery_time > now)) delivery_time = now;
  std::optional<stream::Consumer> me;
  for (const auto& id : ids) {
    stream::Nack n;
    s = LoadNack(db_, g.keys, group, id, &n);
    bool have_nack = s.ok();
    if (!s.ok() && !s.IsNotFound()) return s;
    StreamEntry entry;
    s = stream::ReadEntry(db_, g.keys, id, nullptr, &entry);
    if (s.IsNotFound()) {
      // The entry is gone: drop it from the PEL.
      if (have_nack) {
        dropped++;
        s = DropPending(db_, &g, group, id, n.consumer, consumer, &me);
        if (!s.ok()) return s;
      }
      continue;
    }
    if (!s.ok()) return s;
    bool created = false;
    if (!have_nack) {
      if (!args.force) continue;
      n = stream::Nack{now, 1, ""};
      created = true;
    }
    if (!created && args.min_idle && static_cast<int64_t>(now - n.delivery_time) < static_cast<int64_t>(args.min_idle)) {
      continue;
    }
    if (!me) {
      stream::Consumer c;
      s = TouchConsumer(db_, key, &g, group, consumer, &c);
      if (!s.ok()) return s;
      me = c;
    }
    s = Reassign(db_, &g, group, id, n.consumer, consumer, &*me);
    if (!s.ok()) return s;
    n.consumer = std::string(consumer);
    n.delivery_time = delivery_time;
    if (args.retry_count) {
      n.delivery_count = *args.retry_count;
    } else if (!args.justid) {
      n.delivery_count++;
    }
    db_->ctx()->Put(ColumnFamily::kSubkey, g.keys.PelKey(group, id), n.Encode());
    if (args.justid) entry.values.clear();
    claimed->push_back(std::move(entry));
  }
  // Redis' dirty count: each dropped and each claimed entry, or the group's new
  // last id when it propagates nothing else.
  auto changes = dropped + static_cast<int64_t>(claimed->size());
  db_->ctx()->AddDirty(changes != 0 ? changes : (last_id_moved ? 1 : 0));
  if (me) PutConsumer(db_, g.keys, group, consumer, *me);
  s = PutGroup(db_, g.keys, group, &g.group);
  if (!s.ok()) return s;
  db_->ctx()->Touch(db_->id(), key);
  return Status::OK();
}

Status RedisStream::AutoClaim(std::string_view key, std::string_view group, std::string_view consumer,
                              uint64_t min_idle, const StreamID& start, uint64_t count, bool justid,
                              std::vector<StreamEntry>* claimed, StreamID* next, std::vector<StreamID>* deleted) {
  claimed->clear();
  deleted->clear();
  *next = StreamID{};
  GroupCtx g;
  Status s = OpenGroup(this, db_, key, group, &g);
  if (!s.ok()) return s;
  const uint64_t now = NowMs();
  uint64_t attempts = count * 10;
  std::string pel = g.keys.PelPrefix(group);
  std::vector<std::pair<StreamID, stream::Nack>> scanned;
  bool more = false;
  // Scan at most `attempts` PEL entries, and one more for the cursor.
  s = Scan(db_, pel, PelSeek(g.keys, group, g.group.pel_floor, start), [&](std::string_view rest,
                                                                           std::string_view value) {
    if (rest.size() != 16) return true;
    if (scanned.size() == attempts) {
      more = true;
      *next = stream::GetId(rest.data());
      return false;
    }
    stream::Nack n;
    if (n.Decode(value)) scanned.emplace_back(stream::GetId(rest.data()), std::move(n));
    return true;
  });
  if (!s.ok()) return s;
  std::optional<stream::Consumer> me;
  size_t i = 0;
  for (; i < scanned.size() && count > 0; i++) {
    auto& [id, n] = scanned[i];
    StreamEntry entry;
    s = stream::ReadEntry(db_, g.keys, id, nullptr, &entry);
    if (s.IsNotFound()) {
      s = DropPending(db_, &g, group, id, n.consumer, consumer, &me);
      if (!s.ok()) return s;
      deleted->push_back(id);
      count--;
      continue;
    }
    if (!s.ok()) return s;
    if (min_idle && static_cast<int64_t>(now - n.delivery_time) < static_cast<int64_t>(min_idle)) continue;
    if (!me) {
      stream::Consumer c;
      s = TouchConsumer(db_, key, &g, group, consumer, &c);
      if (!s.ok()) return s;
      me = c;
    }
    s = Reassign(db_, &g, group, id, n.consumer, consumer, &*me);
    if (!s.ok()) return s;
    n.consumer = std::string(consumer);
    n.delivery_time = now;
    if (!justid) n.delivery_count++;
    db_->ctx()->Put(ColumnFamily::kSubkey, g.keys.PelKey(group, id), n.Encode());
    if (justid) entry.values.clear();
    claimed->push_back(std::move(entry));
    count--;
  }
  // The cursor is the first PEL entry not examined.
  if (i < scanned.size()) {
    *next = scanned[i].first;
  } else if (!more) {
    *next = StreamID{};
  }
  if (me) PutConsumer(db_, g.keys, group, consumer, *me);
  s = PutGroup(db_, g.keys, group, &g.group);
  if (!s.ok()) return s;
  db_->ctx()->Touch(db_->id(), key);
  return Status::OK();
}

Status RedisStream::Groups(std::string_view key, const StreamMeta& meta, std::vector<StreamGroupInfo>* out) {
  out->clear();
  Keys keys = stream::KeysOf(db_, key, meta);
  std::string gp = keys.GroupPrefix();
  return Scan(db_, gp, gp, [&](std::string_view name, std::string_view value) {
    stream::Group g;
    if (g.Decode(value)) {
      out->push_back(
          StreamGroupInfo{std::string(name), g.last_id, g.entries_read, g.pending, g.consumers, g.pel_floor});
    }
    return true;
  });
}

Status RedisStream::Consumers(std::string_view key, const StreamMeta& meta, std::string_view group,
                              std::vector<StreamConsumerInfo>* out) {
  out->clear();
  Keys keys = stream::KeysOf(db_, key, meta);
  std::string cp = keys.ConsumerPrefix(group);
  return Scan(db_, cp, cp, [&](std::string_view name, std::string_view value) {
    stream::Consumer c;
    if (c.Decode(value)) out->push_back(StreamConsumerInfo{std::string(name), c.seen_time, c.pending});
    return true;
  });
}

Status RedisStream::GroupPending(std::string_view key, const StreamMeta& meta, const StreamGroupInfo& group,
                                 const std::string* consumer, uint64_t count, std::vector<StreamPending>* out) {
  out->clear();
  Keys keys = stream::KeysOf(db_, key, meta);
  std::string pel = keys.PelPrefix(group.name);
  return Scan(db_, pel, PelSeek(keys, group.name, group.pel_floor, StreamID{}), [&](std::string_view rest,
                                                                                    std::string_view value) {
    stream::Nack n;
    if (rest.size() != 16 || !n.Decode(value)) return true;
    if (consumer && n.consumer != *consumer) return true;
    out->push_back(StreamPending{stream::GetId(rest.data()), n.consumer, n.delivery_time, n.delivery_count});
    return count == 0 || out->size() < count;
  });
}

}  // namespace kvrocks
