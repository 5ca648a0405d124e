#include "types/redis_stream.h"

#include "common/string_util.h"
#include "common/time_util.h"
#include "types/stream_encoding.h"
#include "types/stream_rax.h"

namespace kvrocks {

std::string StreamID::ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

bool StreamID::Incr() {
  if (seq == UINT64_MAX) {
    if (ms == UINT64_MAX) return false;
    ms++;
    seq = 0;
  } else {
    seq++;
  }
  return true;
}

bool StreamID::Decr() {
  if (seq == 0) {
    if (ms == 0) return false;
    ms--;
    seq = UINT64_MAX;
  } else {
    seq--;
  }
  return true;
}

namespace stream {

std::string EncodeMeta(const StreamMeta& m) {
  std::string out;
  PutId(&out, m.last_id);
  PutId(&out, m.first_id);
  PutId(&out, m.max_deleted);
  PutBE64(&out, m.entries_added);
  PutId(&out, m.head_node);
  PutId(&out, m.tail_node);
  PutBE64(&out, m.nodes);
  PutBE64(&out, m.groups);
  PutBE64(&out, m.rax_nodes);
  return out;
}

bool DecodeMeta(const Metadata& md, StreamMeta* m) {
  m->version = md.version;
  m->owner = md.owner;
  m->owner_db = md.owner_db;
  m->length = md.size;
  const std::string& p = md.payload;
  if (p.size() < 104) return false;
  m->last_id = GetId(p.data());
  m->first_id = GetId(p.data() + 16);
  m->max_deleted = GetId(p.data() + 32);
  m->entries_added = DecodeBE64(p.data() + 48);
  m->head_node = GetId(p.data() + 56);
  m->tail_node = GetId(p.data() + 72);
  m->nodes = DecodeBE64(p.data() + 88);
  m->groups = DecodeBE64(p.data() + 96);
  m->rax_nodes = p.size() >= 112 ? DecodeBE64(p.data() + 104) : 0;
  return true;
}

// Sizes of listpack elements (listpack.c's encodings), for the node emulation.
size_t BacklenSize(size_t l) {
  if (l <= 127) return 1;
  if (l < 16383) return 2;
  if (l < 2097151) return 3;
  if (l < 268435455) return 4;
  return 5;
}

size_t IntElementSize(int64_t v) {
  size_t enc;
  if (v >= 0 && v <= 127) {
    enc = 1;
  } else if (v >= -4096 && v <= 4095) {
    enc = 2;
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    enc = 3;
  } else if (v >= -8388608 && v <= 8388607) {
    enc = 4;
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    enc = 5;
  } else {
    enc = 9;
  }
  return enc + BacklenSize(enc);
}

size_t StringElementSize(std::string_view s) {
  int64_t v;
  if (s.size() <= 20 && ParseInt64(s, &v)) return IntElementSize(v);  // listpack stores it as an integer
  size_t enc = s.size() < 64 ? 1 + s.size() : s.size() < 4096 ? 2 + s.size() : 5 + s.size();
  return enc + BacklenSize(enc);
}

}  // namespace stream

using stream::Keys;
using stream::Node;

namespace stream {

Keys KeysOf(Database* db, std::string_view key, const StreamMeta& meta) {
  const uint8_t where = meta.owner_db < 0 ? db->id() : static_cast<uint8_t>(meta.owner_db);
  return Keys{EncodeSubkeyPrefix(where, meta.owner.empty() ? key : std::string_view(meta.owner), meta.version)};
}

Status IterStatus(const rocksdb::Iterator& it) {
  return it.status().ok() ? Status::OK() : Status::IOError(it.status().ToString());
}

// Reads an entry; NotFound if absent.
Status ReadEntry(Database* db, const Keys& keys, const StreamID& id, StreamID* node, StreamEntry* entry) {
  std::string v;
  Status s = db->ctx()->Get(ColumnFamily::kStream, keys.Entry(id), &v);
  if (!s.ok()) return s;
  if (v.size() < 16 || !stream::GetStrings(std::string_view(v).substr(16), &entry->values)) {
    return Status::Corruption("bad stream entry");
  }
  if (node) *node = stream::GetId(v.data());
  entry->id = id;
  return Status::OK();
}

Status EdgeEntry(Database* db, const Keys& keys, bool last, std::optional<StreamID>* id, const StreamID& from) {
  id->reset();
  std::string upper = keys.prefix;
  upper.append(16, '\xff');
  upper.push_back('\xff');
  std::string lower = keys.Entry(from);
  rocksdb::Slice lower_slice(lower), upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  ro.iterate_upper_bound = &upper_slice;
  auto it = db->ctx()->NewIterator(ColumnFamily::kStream, ro);
  if (last) {
    it->SeekToLast();
  } else {
    it->SeekToFirst();
  }
  if (it->Valid() && it->key().size() == keys.prefix.size() + 16) {
    *id = stream::GetId(it->key().data() + keys.prefix.size());
  }
  return IterStatus(*it);
}

}  // namespace stream

using stream::EdgeEntry;
using stream::IterStatus;
using stream::KeysOf;
using stream::ReadEntry;

namespace {

Status ReadNode(Database* db, const Keys& keys, const StreamID& id, Node* node) {
  std::string v;
  Status s = db->ctx()->Get(ColumnFamily::kSubkey, keys.NodeKey(id), &v);
  if (!s.ok()) return s;
  return node->Decode(v) ? Status::OK() : Status::Corruption("bad stream node");
}

// The node after `after` (which may have just been deleted). Seeking from it,
// never from the start, keeps the tombstones of trimmed nodes out of the way.
Status NextNode(Database* db, const Keys& keys, const StreamID& after, StreamID* next) {
  std::string node_prefix = keys.NodePrefix();
  auto it = db->ctx()->NewIterator(ColumnFamily::kSubkey, rocksdb::ReadOptions());
  std::string from = keys.NodeKey(after);
  from.push_back('\0');
  it->Seek(from);
  if (!it->Valid() || !it->key().starts_with(node_prefix)) {
    Status s = IterStatus(*it);
    return s.ok() ? Status::Corruption("stream node count mismatch") : s;
  }
  *next = stream::GetId(it->key().data() + node_prefix.size());
  return Status::OK();
}

// The stream's node ids as the pending writes show them, all within [floor, ceiling]:
// seeks start there, so they do not step over the tombstones of trimmed nodes.
class NodeIdSet : public stream::RaxKeySet {
 public:
  NodeIdSet(Database* db, const Keys& keys, const StreamID& floor, const StreamID& ceiling)
      : node_prefix_(keys.NodePrefix()), lower_(keys.NodeKey(floor)), upper_(keys.NodeKey(ceiling) + '\0') {
    lower_slice_ = rocksdb::Slice(lower_);
    upper_slice_ = rocksdb::Slice(upper_);
    rocksdb::ReadOptions ro;
    ro.iterate_lower_bound = &lower_slice_;
    ro.iterate_upper_bound = &upper_slice_;
    it_ = db->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
  }

  Status First(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) override {
    it_->Seek(Key(lo));
    return Take(lo, hi, out);
  }
  Status Last(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) override {
    it_->SeekForPrev(Key(hi));
    return Take(lo, hi, out);
  }

 private:
  std::string Key(const StreamID& id) const {
    std::string k = node_prefix_;
    stream::PutId(&k, id);
    return k;
  }
  Status Take(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) {
    out->reset();
    if (!it_->Valid()) return IterStatus(*it_);
    if (!it_->key().starts_with(node_prefix_)) return Status::OK();  // a pending write past the bounds
    if (it_->key().size() != node_prefix_.size() + 16) return Status::Corruption("bad stream node key");
    StreamID id = stream::GetId(it_->key().data() + node_prefix_.size());
    if (lo <= id && id <= hi) *out = id;
    return Status::OK();
  }

  std::string node_prefix_, lower_, upper_;
  rocksdb::Slice lower_slice_, upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

// The rax node count of the stream's nodes, read whole (metadata written before
// kvrocks kept the count).
Status CountRaxNodes(Database* db, const Keys& keys, const StreamMeta& meta, uint64_t* count) {
  std::vector<StreamID> ids;
  if (meta.nodes > 0) {
    std::string node_prefix = keys.NodePrefix(), lower = keys.NodeKey(meta.head_node),
                upper = keys.NodeKey(meta.tail_node) + '\0';
    rocksdb::Slice lower_slice(lower), upper_slice(upper);
    rocksdb::ReadOptions ro;
    ro.iterate_lower_bound = &lower_slice;
    ro.iterate_upper_bound = &upper_slice;
    auto it = db->ctx()->NewIterator(ColumnFamily::kSubkey, ro);
    for (it->SeekToFirst(); it->Valid() && it->key().starts_with(node_prefix); it->Next()) {
      if (it->key().size() != node_prefix.size() + 16) return Status::Corruption("bad stream node key");
      ids.push_back(stream::GetId(it->key().data() + node_prefix.size()));
    }
    Status s = IterStatus(*it);
    if (!s.ok()) return s;
  }
  *count = stream::RaxNodes(ids);
  return Status::OK();
}

// Moves meta->rax_nodes by what node `id` adds to (added) or takes from Redis'
// radix tree. meta (nodes, head_node, tail_node) and the pending writes must
// show the node set without id: call it before a new node is counted and its
// record put, or after a removed node's record is deleted and it is no longer
// counted.
Status MoveRaxNodes(Database* db, const Keys& keys, const StreamID& id, bool added, StreamMeta* meta) {
  if (meta->rax_nodes == 0) {
    Status s = CountRaxNodes(db, keys, *meta, &meta->rax_nodes);
    if (!s.ok()) return s;
  }
  uint64_t delta = 1;  // into or out of an empty tree
  if (meta->nodes > 0) {
    NodeIdSet set(db, keys, std::min(meta->head_node, id), std::max(meta->tail_node, id));
    Status s = stream::RaxInsertDelta(id, &set, &delta);
    if (!s.ok()) return s;
  }
  meta->rax_nodes = added ? meta->rax_nodes + delta : meta->rax_nodes - delta;
  return Status::OK();
}

}  // namespace

Status RedisStream::RaxNodes(std::string_view key, const StreamMeta& meta, uint64_t* nodes) {
  if (meta.rax_nodes != 0) {
    *nodes = meta.rax_nodes;
    return Status::OK();
  }
  return CountRaxNodes(db_, KeysOf(db_, key, meta), meta, nodes);
}

Status RedisStream::Load(std::string_view key, LoadedKey* lk, StreamMeta* meta, bool* exists) {
  Metadata md;
  Status s = db_->LoadCollection(key, RedisType::kStream, lk, &md, exists);
  if (!s.ok() || !*exists) return s;
  return stream::DecodeMeta(md, meta) ? Status::OK() : Status::Corruption("bad stream metadata");
}

static Metadata StreamMetadata(const LoadedKey& lk, const StreamMeta& meta) {
  Metadata md;
  md.type = RedisType::kStream;
  md.expire_ms = lk.live ? lk.expire_ms : 0;
  md.version = meta.version;
  md.owner = meta.owner;
  md.owner_db = meta.owner_db;
  md.size = meta.length;
  md.payload = stream::EncodeMeta(meta);
  return md;
}

void stream::StoreMeta(Database* db, std::string_view key, LoadedKey* lk, const StreamMeta& meta) {
  Metadata md = StreamMetadata(*lk, meta);
  db->Store(key, lk, md.Encode(), md.expire_ms);
}

// Trims the stream per Redis' streamTrim over the emulated nodes.
//
// Scans start at the first live entry (meta->first_id, then each new head node),
// never at a node's first id: the entries XDEL or earlier exact trims deleted from
// the head node are tombstones an iterator would otherwise step over on every
// XADD with an exact MAXLEN.
static Status TrimStream(Database* db, std::string_view key, StreamMeta* meta, const StreamTrim& trim,
                         int64_t* deleted) {
  *deleted = 0;
  if (trim.strategy == StreamTrim::kNone) return Status::OK();
  Keys keys = KeysOf(db, key, *meta);
  const bool by_len = trim.strategy == StreamTrim::kMaxLen;
  StreamID scan_from = meta->first_id;  // no live entry of the head node precedes it
  std::optional<StreamID> new_first;    // known when an exact trim stops at a kept entry
  while (meta->nodes > 0) {
    if (by_len && meta->length <= trim.maxlen) break;
    StreamID node_id = meta->head_node;
    Node node;
    Status rs = ReadNode(db, keys, node_id, &node);
    if (!rs.ok()) return rs;
    auto entries = static_cast<int64_t>(node.live);
    if (trim.limit && *deleted + entries > trim.limit) break;
    bool remove_node = by_len ? meta->length - node.live >= trim.maxlen : node.last_id < trim.minid;
    if (!remove_node && trim.approx) break;
    std::string lower = keys.Entry(std::max(node_id, scan_from)), upper = keys.Entry(node.last_id);
    upper.push_back('\0');
    rocksdb::Slice lower_slice(lower), upper_slice(upper);
    rocksdb::ReadOptions eo;
    eo.iterate_lower_bound = &lower_slice;
    eo.iterate_upper_bound = &upper_slice;
    std::vector<std::string> doomed;
    auto eit = db->ctx()->NewIterator(ColumnFamily::kStream, eo);
    if (remove_node) {
      // Every entry of the node (ids node_id..last_id) goes.
      for (eit->SeekToFirst(); eit->Valid(); eit->Next()) doomed.emplace_back(eit->key().ToString());
      Status s = IterStatus(*eit);
      if (!s.ok()) return s;
      eit.reset();
      for (const auto& k : doomed) db->ctx()->Delete(ColumnFamily::kStream, k);
      db->ctx()->Delete(ColumnFamily::kSubkey, keys.NodeKey(node_id));
      meta->nodes--;
      meta->length -= node.live;
      *deleted += entries;
      if (meta->nodes > 0) {
        Status ns = NextNode(db, keys, node_id, &meta->head_node);
        if (!ns.ok()) return ns;
        scan_from = meta->head_node;
      }
      Status rs_moved = MoveRaxNodes(db, keys, node_id, false, meta);
      if (!rs_moved.ok()) return rs_moved;
      continue;
    }
    // Exact trimming inside the node: entries are deleted one by one (the node stays).
    uint64_t length = meta->length;
    for (eit->SeekToFirst(); eit->Valid(); eit->Next()) {
      StreamID id = stream::GetId(eit->key().data() + keys.prefix.size());
      if (by_len ? length <= trim.maxlen : id >= trim.minid) {
        new_first = id;
        break;
      }
      doomed.emplace_back(eit->key().ToString());
      length--;
    }
    Status s = IterStatus(*eit);
    if (!s.ok()) return s;
    eit.reset();
    for (const auto& k : doomed) db->ctx()->Delete(ColumnFamily::kStream, k);
    node.live -= doomed.size();
    node.deleted += doomed.size();
    meta->length = length;
    *deleted += static_cast<int64_t>(doomed.size());
    db->ctx()->Put(ColumnFamily::kSubkey, keys.NodeKey(node_id), node.Encode());
    break;  // there was enough to delete in this node
  }
  if (meta->nodes == 0) meta->head_node = meta->tail_node = StreamID{};
  if (*deleted == 0) return Status::OK();  // at most nodes without live entries went
  if (meta->length == 0) {
    meta->first_id = StreamID{};
  } else if (new_first) {
    meta->first_id = *new_first;
  } else {
    std::optional<StreamID> first;
    Status s = EdgeEntry(db, keys, false, &first, scan_from);
    if (!s.ok()) return s;
    if (first) meta->first_id = *first;
  }
  return Status::OK();
}

Status RedisStream::Add(std::string_view key, const AddArgs& args, const std::vector<std::string>& values,
                        StreamID* out_id) {
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) {
    if (args.nomkstream) return Status::NotFound();
    meta = StreamMeta{};
    meta.version = db_->ctx()->storage()->NewVersion();
  }
  if (meta.last_id == StreamID::Max()) {
    return Status::RedisError("ERR The stream has exhausted the last possible ID, unable to add more items");
  }
  const char* kTooSmall = "ERR The ID specified in XADD is equal or smaller than the target stream top item";
  StreamID id;
  if (args.id_given) {
    if (args.seq_given) {
      id = args.id;
    } else if (meta.last_id.ms == args.id.ms) {
      if (meta.last_id.seq == UINT64_MAX) return Status::RedisError(kTooSmall);
      id = meta.last_id;
      id.seq++;
    } else {
      id = args.id;
    }
  } else {
    uint64_t now = NowMs();
    if (now > meta.last_id.ms) {
      id = StreamID{now, 0};
    } else {
      id = meta.last_id;
      id.Incr();
    }
  }
  if (id <= meta.last_id) return Status::RedisError(kTooSmall);

  // Node emulation: does the entry open a new listpack node (Redis' streamAppendItem)?
  Keys keys = KeysOf(db_, key, meta);
  size_t totelelen = 0;
  for (const auto& v : values) totelelen += v.size();
  Node node;
  StreamID node_id;
  bool new_node = true;
  if (meta.nodes > 0) {
    s = ReadNode(db_, keys, meta.tail_node, &node);
    if (!s.ok()) return s;
    uint64_t max_bytes = limits_.max_bytes <= 0 || limits_.max_bytes > (1 << 30) ? (1 << 30) : limits_.max_bytes;
    size_t lp_bytes = node.bytes + stream::IntElementSize(static_cast<int64_t>(node.live)) +
                      stream::IntElementSize(static_cast<int64_t>(node.deleted));
    new_node = lp_bytes + totelelen >= max_bytes ||
               (limits_.max_entries > 0 && node.live + node.deleted >= static_cast<uint64_t>(limits_.max_entries));
  }
  const size_t nfields = values.size() / 2;
  bool same_fields;
  if (new_node) {
    s = MoveRaxNodes(db_, keys, id, true, &meta);
    if (!s.ok()) return s;
    node_id = id;
    node = Node{};
    node.bytes = stream::kListpackOverhead + stream::IntElementSize(static_cast<int64_t>(nfields)) +
                 stream::IntElementSize(0);  // num-fields ... master terminator
    for (size_t i = 0; i < nfields; i++) {
      node.master_fields.push_back(values[2 * i]);
      node.bytes += stream::StringElementSize(values[2 * i]);
    }
    same_fields = true;
    if (meta.nodes == 0) meta.head_node = id;
    meta.nodes++;
    meta.tail_node = id;
  } else {
    node_id = meta.tail_node;
    same_fields = node.master_fields.size() == nfields;
    for (size_t i = 0; same_fields && i < nfields; i++) same_fields = node.master_fields[i] == values[2 * i];
  }
  // flags, ms-diff, seq-diff, [num-fields, fields and values | values], lp-count
  int64_t lp_count = static_cast<int64_t>(nfields) + 3;
  node.bytes += stream::IntElementSize(same_fields ? 2 : 0) +
                stream::IntElementSize(static_cast<int64_t>(id.ms - node_id.ms)) +
                stream::IntElementSize(static_cast<int64_t>(id.seq - node_id.seq));
  if (same_fields) {
    for (size_t i = 0; i < nfields; i++) node.bytes += stream::StringElementSize(values[2 * i + 1]);
  } else {
    lp_count += static_cast<int64_t>(nfields) + 1;
    node.bytes += stream::IntElementSize(static_cast<int64_t>(nfields));
    for (const auto& v : values) node.bytes += stream::StringElementSize(v);
  }
  node.bytes += stream::IntElementSize(lp_count);
  node.live++;
  node.last_id = id;

  std::string value;
  stream::PutId(&value, node_id);
  stream::PutStrings(&value, values);
  db_->ctx()->Put(ColumnFamily::kStream, keys.Entry(id), value);
  db_->ctx()->Put(ColumnFamily::kSubkey, keys.NodeKey(node_id), node.Encode());
  meta.length++;
  meta.entries_added++;
  meta.last_id = id;
  if (meta.length == 1) meta.first_id = id;
  int64_t trimmed;
  s = TrimStream(db_, key, &meta, args.trim, &trimmed);
  if (!s.ok()) return s;
  stream::StoreMeta(db_, key, &lk, meta);
  if (trimmed > 0) db_->ctx()->NoteEvent(db_->id(), key, "xtrim");
  *out_id = id;
  return Status::OK();
}

Status RedisStream::Trim(std::string_view key, const StreamTrim& trim, int64_t* deleted) {
  *deleted = 0;
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  const uint64_t nodes = meta.nodes;
  s = TrimStream(db_, key, &meta, trim, deleted);
  if (!s.ok()) return s;
  if (*deleted > 0) {
    stream::StoreMeta(db_, key, &lk, meta);
  } else if (meta.nodes != nodes) {
    // An exact MINID trim can leave a node without live entries, which a later
    // trim removes deleting no entry: Redis signals no change then (no WATCH or
    // tracking touch), but the node count moved.
    db_->Restamp(&lk, StreamMetadata(lk, meta).Encode());
  }
  return Status::OK();
}

Status RedisStream::Delete(std::string_view key, const std::vector<StreamID>& ids, int64_t* deleted) {
  *deleted = 0;
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  Keys keys = KeysOf(db_, key, meta);
  bool first_deleted = false;
  for (const auto& id : ids) {
    StreamID node_id;
    StreamEntry entry;
    s = ReadEntry(db_, keys, id, &node_id, &entry);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    Node node;
    s = ReadNode(db_, keys, node_id, &node);
    if (!s.ok()) return s;
    db_->ctx()->Delete(ColumnFamily::kStream, keys.Entry(id));
    if (node.live == 1) {
      // The node's last live entry: Redis frees the whole node.
      db_->ctx()->Delete(ColumnFamily::kSubkey, keys.NodeKey(node_id));
      meta.nodes--;
      if (meta.nodes == 0) {
        meta.head_node = meta.tail_node = StreamID{};
      } else if (node_id == meta.head_node) {
        s = NextNode(db_, keys, node_id, &meta.head_node);
        if (!s.ok()) return s;
      } else if (node_id == meta.tail_node) {
        meta.tail_node = StreamID{};
        if (meta.nodes > 0) {
          std::string node_prefix = keys.NodePrefix();
          auto it = db_->ctx()->NewIterator(ColumnFamily::kSubkey, rocksdb::ReadOptions());
          it->SeekForPrev(keys.NodeKey(node_id));
          if (it->Valid() && it->key().starts_with(node_prefix)) {
            meta.tail_node = stream::GetId(it->key().data() + node_prefix.size());
          }
        }
      }
      s = MoveRaxNodes(db_, keys, node_id, false, &meta);
      if (!s.ok()) return s;
    } else {
      node.live--;
      node.deleted++;
      db_->ctx()->Put(ColumnFamily::kSubkey, keys.NodeKey(node_id), node.Encode());
    }
    meta.length--;
    if (id == meta.first_id) first_deleted = true;
    if (id > meta.max_deleted) meta.max_deleted = id;
    (*deleted)++;
  }
  if (*deleted == 0) return Status::OK();
  if (meta.length == 0) {
    meta.first_id = StreamID{};
  } else if (first_deleted) {
    std::optional<StreamID> first;
    s = EdgeEntry(db_, keys, false, &first, meta.first_id);
    if (!s.ok()) return s;
    if (first) meta.first_id = *first;
  }
  stream::StoreMeta(db_, key, &lk, meta);
  return Status::OK();
}

Status RedisStream::Range(std::string_view key, const StreamID& start, const StreamID& end, uint64_t count, bool rev,
                          std::vector<StreamEntry>* out) {
  out->clear();
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok() || !exists) return s;
  return Range(key, meta, start, end, count, rev, out);
}

Status RedisStream::Range(std::string_view key, const StreamMeta& meta, const StreamID& start, const StreamID& end,
                          uint64_t count, bool rev, std::vector<StreamEntry>* out) {
  out->clear();
  if (end < start || meta.length == 0) return Status::OK();
  Keys keys = KeysOf(db_, key, meta);
  // Nothing lives below the first entry: starting there skips trimmed entries' tombstones.
  std::string lower = keys.Entry(std::max(start, meta.first_id)), upper = keys.Entry(end);
  upper.push_back('\0');
  rocksdb::Slice lower_slice(lower), upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower_slice;
  ro.iterate_upper_bound = &upper_slice;
  auto it = db_->ctx()->NewIterator(ColumnFamily::kStream, ro);
  for (rev ? it->SeekToLast() : it->SeekToFirst(); it->Valid() && (count == 0 || out->size() < count);
       rev ? it->Prev() : it->Next()) {
    StreamEntry e;
    e.id = stream::GetId(it->key().data() + keys.prefix.size());
    std::string_view v(it->value().data(), it->value().size());
    if (v.size() < 16 || !stream::GetStrings(v.substr(16), &e.values)) return Status::Corruption("bad stream entry");
    out->push_back(std::move(e));
  }
  return IterStatus(*it);
}

Status RedisStream::SetId(std::string_view key, const StreamID& id, int64_t entries_added,
                          const StreamID& max_deleted) {
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Load(key, &lk, &meta, &exists);
  if (!s.ok()) return s;
  if (!exists) return Status::RedisError("ERR no such key");
  if (meta.length > 0) {
    std::optional<StreamID> top;
    s = EdgeEntry(db_, KeysOf(db_, key, meta), true, &top);
    if (!s.ok()) return s;
    if (top && id < *top) {
      return Status::RedisError("ERR The ID specified in XSETID is smaller than the target stream top item");
    }
    if (entries_added != -1 && meta.length > static_cast<uint64_t>(entries_added)) {
      return Status::RedisError("ERR The entries_added specified in XSETID is smaller than the target stream length");
    }
  }
  meta.last_id = id;
  if (entries_added != -1) meta.entries_added = static_cast<uint64_t>(entries_added);
  if (!max_deleted.IsZero()) meta.max_deleted = max_deleted;
  stream::StoreMeta(db_, key, &lk, meta);
  return Status::OK();
}

}  // namespace kvrocks
