// The on-disk records of the stream type (shared by redis_stream.cc and
// redis_stream_group.cc). See docs/encoding.md.
//
//   stream CF  prefix | ms(8) seq(8)                 -> node id(16) | n(4) | (len(4) bytes)*n
//   subkey CF  prefix | 'N' | node id(16)            -> live(8) deleted(8) bytes(8) last id(16) | master fields
//              prefix | 'G' | group                  -> last id(16) entries_read(8) pending(8) consumers(8)
//              prefix | 'C' | len(4) group | name    -> seen time(8) pending(8)
//              prefix | 'P' | len(4) group | id(16)  -> delivery time(8) delivery count(8) | consumer
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/encoding.h"
#include "types/redis_stream.h"

namespace kvrocks::stream {

inline void PutId(std::string* out, const StreamID& id) {
  PutBE64(out, id.ms);
  PutBE64(out, id.seq);
}
inline StreamID GetId(const char* p) { return StreamID{DecodeBE64(p), DecodeBE64(p + 8)}; }

inline void PutStrings(std::string* out, const std::vector<std::string>& v) {
  PutBE32(out, static_cast<uint32_t>(v.size()));
  for (const auto& s : v) {
    PutBE32(out, static_cast<uint32_t>(s.size()));
    out->append(s);
  }
}
// Parses a list written by PutStrings; false if malformed.
inline bool GetStrings(std::string_view in, std::vector<std::string>* v) {
  if (in.size() < 4) return false;
  uint32_t n = DecodeBE32(in.data());
  in.remove_prefix(4);
  v->clear();
  v->reserve(n);
  for (uint32_t i = 0; i < n; i++) {
    if (in.size() < 4) return false;
    uint32_t len = DecodeBE32(in.data());
    if (in.size() < 4 + static_cast<size_t>(len)) return false;
    v->emplace_back(in.substr(4, len));
    in.remove_prefix(4 + len);
  }
  return true;
}

struct Node {
  uint64_t live = 0, deleted = 0, bytes = 0;  // bytes: listpack size without the two counters
  StreamID last_id;
  std::vector<std::string> master_fields;

  std::string Encode() const {
    std::string out;
    PutBE64(&out, live);
    PutBE64(&out, deleted);
    PutBE64(&out, bytes);
    PutId(&out, last_id);
    PutStrings(&out, master_fields);
    return out;
  }
  bool Decode(std::string_view in) {
    if (in.size() < 40) return false;
    live = DecodeBE64(in.data());
    deleted = DecodeBE64(in.data() + 8);
    bytes = DecodeBE64(in.data() + 16);
    last_id = GetId(in.data() + 24);
    return GetStrings(in.substr(40), &master_fields);
  }
};

struct Group {
  StreamID last_id;
  int64_t entries_read = -1;
  uint64_t pending = 0, consumers = 0;
  // Every pending id is >= pel_floor; pel_stale counts the PEL entries removed
  // since pel_floor was last the first pending id. Walks of the PEL start at the
  // floor, so the tombstones of acknowledged entries before it (an LSM keeps
  // them until compaction) are not stepped over. Records written before the
  // floor existed decode with 0-0, a floor too.
  StreamID pel_floor;
  uint32_t pel_stale = 0;

  // Call before counting a new pending entry id.
  void NotePelInsert(const StreamID& id) {
    if (pending == 0 || id < pel_floor) {
      pel_floor = id;
      pel_stale = 0;
    }
  }

  std::string Encode() const {
    std::string out;
    PutId(&out, last_id);
    PutBE64(&out, static_cast<uint64_t>(entries_read));
    PutBE64(&out, pending);
    PutBE64(&out, consumers);
    PutId(&out, pel_floor);
    PutBE32(&out, pel_stale);
    return out;
  }
  bool Decode(std::string_view in) {
    if (in.size() < 40) return false;
    last_id = GetId(in.data());
    entries_read = static_cast<int64_t>(DecodeBE64(in.data() + 16));
    pending = DecodeBE64(in.data() + 24);
    consumers = DecodeBE64(in.data() + 32);
    if (in.size() >= 60) {
      pel_floor = GetId(in.data() + 40);
      pel_stale = DecodeBE32(in.data() + 56);
    }
    return true;
  }
};

struct Consumer {
  uint64_t seen_time = 0, pending = 0;
  std::string Encode() const {
    std::string out;
    PutBE64(&out, seen_time);
    PutBE64(&out, pending);
    return out;
  }
  bool Decode(std::string_view in) {
    if (in.size() < 16) return false;
    seen_time = DecodeBE64(in.data());
    pending = DecodeBE64(in.data() + 8);
    return true;
  }
};

struct Nack {
  uint64_t delivery_time = 0, delivery_count = 0;
  std::string consumer;
  std::string Encode() const {
    std::string out;
    PutBE64(&out, delivery_time);
    PutBE64(&out, delivery_count);
    out.append(consumer);
    return out;
  }
  bool Decode(std::string_view in) {
    if (in.size() < 16) return false;
    delivery_time = DecodeBE64(in.data());
    delivery_count = DecodeBE64(in.data() + 8);
    consumer.assign(in.substr(16));
    return true;
  }
};

// Key builders for one stream incarnation (the subkey prefix of its version).
struct Keys {
  std::string prefix;

  std::string Entry(const StreamID& id) const {
    std::string k = prefix;
    PutId(&k, id);
    return k;
  }
  std::string NodeKey(const StreamID& id) const {
    std::string k = prefix + 'N';
    PutId(&k, id);
    return k;
  }
  std::string NodePrefix() const { return prefix + 'N'; }
  std::string GroupKey(std::string_view g) const { return prefix + 'G' + std::string(g); }
  std::string GroupPrefix() const { return prefix + 'G'; }
  std::string GroupScoped(char tag, std::string_view g) const {
    std::string k = prefix + tag;
    PutBE32(&k, static_cast<uint32_t>(g.size()));
    k.append(g);
    return k;
  }
  std::string ConsumerKey(std::string_view g, std::string_view c) const { return GroupScoped('C', g) + std::string(c); }
  std::string ConsumerPrefix(std::string_view g) const { return GroupScoped('C', g); }
  std::string PelKey(std::string_view g, const StreamID& id) const {
    std::string k = GroupScoped('P', g);
    PutId(&k, id);
    return k;
  }
  std::string PelPrefix(std::string_view g) const { return GroupScoped('P', g); }
};

// The stream's payload after version and size.
std::string EncodeMeta(const StreamMeta& m);
bool DecodeMeta(const Metadata& md, StreamMeta* m);

// Sizes of listpack elements (listpack.c's encodings), for the node emulation:
// an element's encoding plus its back-length.
inline constexpr size_t kListpackOverhead = 7;  // header (6) and end byte
size_t BacklenSize(size_t l);
size_t IntElementSize(int64_t v);
// A string element (stored as an integer when it is one, as listpack does).
size_t StringElementSize(std::string_view s);

Keys KeysOf(Database* db, std::string_view key, const StreamMeta& meta);
Status IterStatus(const rocksdb::Iterator& it);
// Reads an entry (and the id of its node); NotFound if absent.
Status ReadEntry(Database* db, const Keys& keys, const StreamID& id, StreamID* node, StreamEntry* entry);
// First (or last) entry id of the stream, empty if it has none. A first entry
// is searched from `from` on: seeking from an id known to be at or below it
// skips the tombstones of trimmed entries.
Status EdgeEntry(Database* db, const Keys& keys, bool last, std::optional<StreamID>* id,
                 const StreamID& from = StreamID{});
// Writes a stream's metadata (streams exist even when empty).
void StoreMeta(Database* db, std::string_view key, LoadedKey* lk, const StreamMeta& meta);

}  // namespace kvrocks::stream
