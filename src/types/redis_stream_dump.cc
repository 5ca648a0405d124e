// Whole-stream restore and dump (RDB loading, RESTORE, DUMP).
#include <algorithm>

#include "types/redis_stream.h"
#include "types/stream_encoding.h"
#include "types/stream_rax.h"

namespace kvrocks {

Status RedisStream::Restore(std::string_view key, const StreamDump& dump, uint64_t expire_ms) {
  LoadedKey lk;
  Status s = db_->Load(key, &lk);
  if (!s.ok()) return s;
  StreamMeta meta;
  meta.version = db_->ctx()->storage()->NewVersion();
  meta.length = dump.length;
  meta.last_id = dump.last_id;
  meta.first_id = dump.first_id;
  meta.max_deleted = dump.max_deleted;
  meta.entries_added = dump.entries_added;
  meta.groups = dump.groups.size();
  stream::Keys keys = stream::KeysOf(db_, key, meta);
  std::vector<StreamID> node_ids;
  node_ids.reserve(dump.nodes.size());
  for (const auto& n : dump.nodes) node_ids.push_back(n.master_id);
  meta.rax_nodes = stream::RaxNodes(node_ids);
  for (const auto& n : dump.nodes) {
    stream::Node node;
    node.live = n.entries.size();
    node.deleted = n.deleted;
    size_t counters = stream::IntElementSize(static_cast<int64_t>(node.live)) +
                      stream::IntElementSize(static_cast<int64_t>(node.deleted));
    node.bytes = n.lp_bytes > counters ? n.lp_bytes - counters : 0;
    node.last_id = n.last_id;
    node.master_fields = n.master_fields;
    db_->ctx()->Put(ColumnFamily::kSubkey, keys.NodeKey(n.master_id), node.Encode());
    for (const auto& e : n.entries) {
      std::string value;
      stream::PutId(&value, n.master_id);
      stream::PutStrings(&value, e.values);
      db_->ctx()->Put(ColumnFamily::kStream, keys.Entry(e.id), value);
    }
    if (meta.nodes == 0) meta.head_node = n.master_id;
    meta.tail_node = n.master_id;
    meta.nodes++;
  }
  for (const auto& g : dump.groups) {
    stream::Group group;
    group.last_id = g.last_id;
    group.entries_read = g.entries_read;
    for (const auto& p : g.pel) {
      group.NotePelInsert(p.id);
      group.pending++;
    }
    group.consumers = g.consumers.size();
    db_->ctx()->Put(ColumnFamily::kSubkey, keys.GroupKey(g.name), group.Encode());
    for (const auto& c : g.consumers) {
      stream::Consumer consumer{c.seen_time, c.pel.size()};
      db_->ctx()->Put(ColumnFamily::kSubkey, keys.ConsumerKey(g.name, c.name), consumer.Encode());
    }
    for (const auto& p : g.pel) {
      stream::Nack n{p.delivery_time, p.delivery_count, p.consumer};
      db_->ctx()->Put(ColumnFamily::kSubkey, keys.PelKey(g.name, p.id), n.Encode());
    }
  }
  lk.expire_ms = lk.on_disk ? lk.expire_ms : 0;
  Metadata md;
  md.type = RedisType::kStream;
  md.expire_ms = expire_ms;
  md.version = meta.version;
  md.owner = meta.owner;
  md.owner_db = meta.owner_db;
  md.size = meta.length;
  md.payload = stream::EncodeMeta(meta);
  db_->Store(key, &lk, md.Encode(), expire_ms);
  return Status::OK();
}

Status RedisStream::Dump(std::string_view key, StreamDump* dump) {
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::NotFound();
  *dump = StreamDump{};
  dump->length = meta.length;
  dump->last_id = meta.last_id;
  dump->first_id = meta.first_id;
  dump->max_deleted = meta.max_deleted;
  dump->entries_added = meta.entries_added;
  // Entries grouped by the node they were appended to.
  std::vector<StreamEntry> entries;
  s = Range(key, StreamID::Min(), StreamID::Max(), 0, false, &entries);
  if (!s.ok()) return s;
  stream::Keys keys = stream::KeysOf(db_, key, meta);
  for (auto& e : entries) {
    StreamID node_id;
    StreamEntry unused;
    s = stream::ReadEntry(db_, keys, e.id, &node_id, &unused);
    if (!s.ok()) return s;
    if (dump->nodes.empty() || dump->nodes.back().master_id != node_id) {
      StreamNodeDump n;
      n.master_id = node_id;
      for (size_t i = 0; i < e.values.size(); i += 2) n.master_fields.push_back(e.values[i]);
      dump->nodes.push_back(std::move(n));
    }
    dump->nodes.back().last_id = e.id;
    dump->nodes.back().entries.push_back(std::move(e));
  }
  std::vector<StreamGroupInfo> groups;
  s = Groups(key, meta, &groups);
  if (!s.ok()) return s;
  for (const auto& g : groups) {
    StreamGroupDump gd;
    gd.name = g.name;
    gd.last_id = g.last_id;
    gd.entries_read = g.entries_read;
    std::vector<StreamPending> pel;
    s = GroupPending(key, meta, g, nullptr, 0, &pel);
    if (!s.ok()) return s;
    for (const auto& p : pel) gd.pel.push_back({p.id, p.delivery_time, p.delivery_count, p.consumer});
    std::vector<StreamConsumerInfo> consumers;
    s = Consumers(key, meta, g.name, &consumers);
    if (!s.ok()) return s;
    for (const auto& c : consumers) {
      StreamGroupDump::Consumer cd;
      cd.name = c.name;
      cd.seen_time = c.seen_time;
      for (const auto& p : pel) {
        if (p.consumer == c.name) cd.pel.push_back(p.id);
      }
      gd.consumers.push_back(std::move(cd));
    }
    dump->groups.push_back(std::move(gd));
  }
  return Status::OK();
}

}  // namespace kvrocks
