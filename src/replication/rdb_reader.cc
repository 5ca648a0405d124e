#include "replication/rdb_reader.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <unordered_set>

#include "common/encoding.h"
#include "common/string_util.h"
#include "replication/rdb_containers.h"

namespace kvrocks::rdb {

namespace {

// Strings are read in pieces so that a corrupt length cannot make us allocate
// more than the input actually holds.
constexpr size_t kChunk = 1 << 20;
constexpr uint64_t kMaxString = 1ULL << 32;

Status Corrupt(const std::string& what) { return Status::Corruption("RDB: " + what); }

bool IsObjectType(int t) { return (t >= 0 && t <= 7) || (t >= 9 && t <= 25); }

// Tables for CRC64 eight bytes at a time ("slicing by 8", as Redis' crcspeed):
// table[0] is the byte-wise table, table[k][b] the CRC of byte b followed by k zero bytes.
using Crc64Tables = uint64_t[8][256];
const Crc64Tables& Crc64Table() {
  static Crc64Tables table;
  static bool init = [] {
    const uint64_t poly = 0x95AC9329AC4BC9B5ULL;  // Jones polynomial, reflected
    for (uint64_t i = 0; i < 256; i++) {
      uint64_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
      table[0][i] = c;
    }
    for (int k = 1; k < 8; k++) {
      for (int i = 0; i < 256; i++) table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xff];
    }
    return true;
  }();
  (void)init;
  return table;
}

uint64_t LoadLE(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

bool ParseI64(const std::string& s, int64_t* v) { return ParseInt64(s, v); }

// A score stored as text inside a ziplist/listpack (integers are rendered already).
bool ParseScore(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && !std::isnan(*v);
}

std::string ModuleName(uint64_t id) {
  static const char kSet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string name(9, ' ');
  id >>= 10;
  for (int j = 8; j >= 0; j--) {
    name[j] = kSet[id & 63];
    id >>= 6;
  }
  return name;
}

// Flattened field/value (or member/score) lists must have an even length.
Status ToPairs(const std::vector<std::string>& flat, std::vector<std::pair<std::string, std::string>>* out) {
  if (flat.size() % 2 != 0) return Corrupt("odd number of elements in a hash encoding");
  for (size_t i = 0; i < flat.size(); i += 2) out->emplace_back(flat[i], flat[i + 1]);
  return Status::OK();
}

Status ToZSet(const std::vector<std::string>& flat, std::vector<std::pair<std::string, double>>* out) {
  if (flat.size() % 2 != 0) return Corrupt("odd number of elements in a sorted set encoding");
  for (size_t i = 0; i < flat.size(); i += 2) {
    double score;
    if (!ParseScore(flat[i + 1], &score)) return Corrupt("bad score in a sorted set encoding");
    out->emplace_back(flat[i], score);
  }
  return Status::OK();
}

StreamID DecodeRawId(const std::string& raw) { return StreamID{DecodeBE64(raw.data()), DecodeBE64(raw.data() + 8)}; }

// One listpack node of a stream (Redis' master entry + entries layout).
Status ParseStreamNode(const std::string& node_key, const std::string& lp, StreamNodeDump* node) {
  if (node_key.size() != 16) return Corrupt("bad stream node key");
  node->master_id = DecodeRawId(node_key);
  node->lp_bytes = lp.size();
  std::vector<std::string> el;
  if (!DecodeListpack(lp, &el)) return Corrupt("stream listpack integrity check failed");
  if (el.empty()) return Corrupt("empty listpack inside stream");
  size_t i = 0;
  auto next_int = [&](int64_t* v) { return i < el.size() && ParseI64(el[i++], v); };
  int64_t count, deleted, nfields;
  if (!next_int(&count) || !next_int(&deleted) || !next_int(&nfields) || nfields < 0 ||
      static_cast<uint64_t>(nfields) > el.size() - i) {
    return Corrupt("bad stream master entry");
  }
  node->master_fields.assign(el.begin() + static_cast<long>(i), el.begin() + static_cast<long>(i + nfields));
  i += static_cast<size_t>(nfields);
  int64_t zero;
  if (!next_int(&zero) || zero != 0) return Corrupt("bad stream master entry terminator");
  node->deleted = 0;
  while (i < el.size()) {
    int64_t flags, ms_diff, seq_diff, lp_count;
    if (!next_int(&flags) || !next_int(&ms_diff) || !next_int(&seq_diff)) return Corrupt("bad stream entry");
    StreamEntry e;
    e.id = StreamID{node->master_id.ms + static_cast<uint64_t>(ms_diff),
                    node->master_id.seq + static_cast<uint64_t>(seq_diff)};
    if (flags & 2) {  // SAMEFIELDS: the master entry's fields
      if (static_cast<uint64_t>(nfields) > el.size() - i) return Corrupt("truncated stream entry");
      for (int64_t f = 0; f < nfields; f++) {
        e.values.push_back(node->master_fields[static_cast<size_t>(f)]);
        e.values.push_back(el[i++]);
      }
    } else {
      int64_t n;
      if (!next_int(&n) || n < 0 || static_cast<uint64_t>(n) * 2 > el.size() - i) {
        return Corrupt("truncated stream entry");
      }
      e.values.assign(el.begin() + static_cast<long>(i), el.begin() + static_cast<long>(i + 2 * n));
      i += static_cast<size_t>(2 * n);
    }
    if (!next_int(&lp_count)) return Corrupt("truncated stream entry");
    node->last_id = e.id;
    if (flags & 1) {
      node->deleted++;
    } else {
      node->entries.push_back(std::move(e));
    }
  }
  if (node->entries.size() != static_cast<uint64_t>(count) || node->deleted != static_cast<uint64_t>(deleted)) {
    return Corrupt("stream node counts do not match its entries");
  }
  return Status::OK();
}

}  // namespace

uint64_t Crc64(uint64_t crc, const void* data, size_t len) {
  const Crc64Tables& t = Crc64Table();
  const auto* p = static_cast<const uint8_t*>(data);
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the 8-byte steps read little-endian words");
  for (; len >= 8; p += 8, len -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc ^= word;
    crc = t[7][crc & 0xff] ^ t[6][(crc >> 8) & 0xff] ^ t[5][(crc >> 16) & 0xff] ^ t[4][(crc >> 24) & 0xff] ^
          t[3][(crc >> 32) & 0xff] ^ t[2][(crc >> 40) & 0xff] ^ t[1][(crc >> 48) & 0xff] ^ t[0][crc >> 56];
  }
  for (; len > 0; p++, len--) crc = t[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return crc;
}

Status StringSource::Read(char* buf, size_t n) {
  if (n > data_.size() - pos_) return Corrupt("unexpected end of data");
  std::memcpy(buf, data_.data() + pos_, n);
  pos_ += n;
  return Status::OK();
}

bool Object::Empty() const {
  switch (type) {
    case RedisType::kList:
    case RedisType::kSet:
      return elements.empty();
    case RedisType::kHash:
      return pairs.empty();
    case RedisType::kZSet:
      return zset.empty();
    default:
      return false;
  }
}

Status Reader::Read(char* buf, size_t n) {
  Status s = src_->Read(buf, n);
  if (s.ok()) crc_ = Crc64(crc_, buf, n);
  return s;
}

Status Reader::ReadU8(uint8_t* v) { return Read(reinterpret_cast<char*>(v), 1); }

Status Reader::ReadLen(uint64_t* len, bool* encoded) {
  if (encoded) *encoded = false;
  uint8_t b;
  Status s = ReadU8(&b);
  if (!s.ok()) return s;
  int kind = (b & 0xC0) >> 6;
  if (kind == 3) {
    if (!encoded) return Corrupt("unexpected encoded length");
    *encoded = true;
    *len = b & 0x3F;
    return Status::OK();
  }
  if (kind == 0) {
    *len = b & 0x3F;
    return Status::OK();
  }
  if (kind == 1) {
    uint8_t b2;
    s = ReadU8(&b2);
    *len = (static_cast<uint64_t>(b & 0x3F) << 8) | b2;
    return s;
  }
  char buf[8];
  if (b == 0x80) {
    s = Read(buf, 4);
    *len = DecodeBE32(buf);
    return s;
  }
  if (b == 0x81) {
    s = Read(buf, 8);
    *len = DecodeBE64(buf);
    return s;
  }
  return Corrupt("unknown length encoding");
}

Status Reader::ReadString(std::string* out) {
  uint64_t len;
  bool encoded;
  Status s = ReadLen(&len, &encoded);
  if (!s.ok()) return s;
  out->clear();
  if (encoded) {
    char buf[4];
    switch (len) {
      case 0:
        s = Read(buf, 1);
        *out = std::to_string(static_cast<int8_t>(buf[0]));
        return s;
      case 1:
        s = Read(buf, 2);
        *out = std::to_string(static_cast<int16_t>(LoadLE(buf, 2)));
        return s;
      case 2:
        s = Read(buf, 4);
        *out = std::to_string(static_cast<int32_t>(LoadLE(buf, 4)));
        return s;
      case 3: {
        uint64_t clen, ulen;
        if (!(s = ReadLen(&clen)).ok() || !(s = ReadLen(&ulen)).ok()) return s;
        if (clen > kMaxString || ulen > kMaxString || ulen > clen * 128 + 64) return Corrupt("bad LZF lengths");
        std::string compressed;
        for (uint64_t done = 0; done < clen;) {
          size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, clen - done));
          compressed.resize(static_cast<size_t>(done) + n);
          if (!(s = Read(compressed.data() + done, n)).ok()) return s;
          done += n;
        }
        if (!LzfDecompress(compressed, static_cast<size_t>(ulen), out)) return Corrupt("invalid LZF compressed string");
        return Status::OK();
      }
      default:
        return Corrupt("unknown string encoding");
    }
  }
  if (len > kMaxString) return Corrupt("string too long");
  for (uint64_t done = 0; done < len;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, len - done));
    out->resize(static_cast<size_t>(done) + n);
    if (!(s = Read(out->data() + done, n)).ok()) return s;
    done += n;
  }
  return Status::OK();
}

Status Reader::ReadBinaryDouble(double* v) {
  char buf[8];
  Status s = Read(buf, 8);
  uint64_t bits = LoadLE(buf, 8);
  std::memcpy(v, &bits, 8);
  if (s.ok() && std::isnan(*v)) return Corrupt("NaN score");
  return s;
}

Status Reader::ReadStringDouble(double* v) {
  uint8_t len;
  Status s = ReadU8(&len);
  if (!s.ok()) return s;
  if (len == 253) return Corrupt("NaN score");
  if (len == 254) {
    *v = INFINITY;
    return Status::OK();
  }
  if (len == 255) {
    *v = -INFINITY;
    return Status::OK();
  }
  char buf[256];
  if (!(s = Read(buf, len)).ok()) return s;
  buf[len] = '\0';
  char* end = nullptr;
  *v = std::strtod(buf, &end);
  if (end != buf + len || std::isnan(*v)) return Corrupt("bad score");
  return Status::OK();
}

Status Reader::ReadMillis(uint64_t* ms) {
  char buf[8];
  Status s = Read(buf, 8);
  *ms = LoadLE(buf, 8);
  return s;
}

Status Reader::SkipModuleValue() {
  std::string scratch;
  char buf[8];
  while (true) {
    uint64_t op, v;
    Status s = ReadLen(&op);
    if (!s.ok()) return s;
    switch (op) {
      case 0:
        return Status::OK();
      case 1:
      case 2:
        s = ReadLen(&v);
        break;
      case 3:
        s = Read(buf, 4);
        break;
      case 4:
        s = Read(buf, 8);
        break;
      case 5:
        s = ReadString(&scratch);
        break;
      default:
        return Corrupt("unknown module value opcode");
    }
    if (!s.ok()) return s;
  }
}

Status Reader::ReadStream(int type, Object* obj) {
  obj->type = RedisType::kStream;
  obj->stream = std::make_unique<StreamDump>();
  StreamDump& st = *obj->stream;
  uint64_t nodes;
  Status s = ReadLen(&nodes);
  if (!s.ok()) return s;
  for (uint64_t i = 0; i < nodes; i++) {
    std::string key, lp;
    if (!(s = ReadString(&key)).ok() || !(s = ReadString(&lp)).ok()) return s;
    StreamNodeDump node;
    if (!(s = ParseStreamNode(key, lp, &node)).ok()) return s;
    st.nodes.push_back(std::move(node));
  }
  uint64_t ms, seq;
  if (!(s = ReadLen(&st.length)).ok() || !(s = ReadLen(&ms)).ok() || !(s = ReadLen(&seq)).ok()) return s;
  st.last_id = StreamID{ms, seq};
  // Nodes come in ID order (Redis' radix tree keeps them so) and entry IDs
  // increase through the whole stream: a repeated node or entry would make two
  // entries one here (Redis refuses "Listpack re-added with existing key").
  uint64_t live = 0;
  const StreamID* last = nullptr;  // the previous live entry's
  for (size_t i = 0; i < st.nodes.size(); i++) {
    const StreamNodeDump& n = st.nodes[i];
    if (i > 0 && !(st.nodes[i - 1].master_id < n.master_id)) return Corrupt("stream nodes out of order");
    for (const auto& e : n.entries) {
      if (last != nullptr && !(*last < e.id)) return Corrupt("stream entry IDs out of order");
      last = &e.id;
    }
    live += n.entries.size();
  }
  if (live != st.length) return Corrupt("stream length does not match its entries");
  if (type >= kTypeStreamListpacks2) {
    uint64_t a, b, c, d;
    if (!(s = ReadLen(&a)).ok() || !(s = ReadLen(&b)).ok() || !(s = ReadLen(&c)).ok() || !(s = ReadLen(&d)).ok() ||
        !(s = ReadLen(&st.entries_added)).ok()) {
      return s;
    }
    st.first_id = StreamID{a, b};
    st.max_deleted = StreamID{c, d};
  } else {
    // Older files do not store these: Redis derives them on load.
    st.entries_added = st.length;
    for (const auto& n : st.nodes) {
      if (!n.entries.empty()) {
        st.first_id = n.entries.front().id;
        break;
      }
    }
  }
  uint64_t ngroups;
  if (!(s = ReadLen(&ngroups)).ok()) return s;
  std::set<std::string> group_names;
  for (uint64_t g = 0; g < ngroups; g++) {
    StreamGroupDump group;
    if (!(s = ReadString(&group.name)).ok() || !(s = ReadLen(&ms)).ok() || !(s = ReadLen(&seq)).ok()) return s;
    group.last_id = StreamID{ms, seq};
    if (type >= kTypeStreamListpacks2) {
      uint64_t er;
      if (!(s = ReadLen(&er)).ok()) return s;
      group.entries_read = static_cast<int64_t>(er);
    } else {
      // Older files do not store it: Redis estimates it from the group's last id.
      group.entries_read =
          StreamEstimateEntriesRead(st.entries_added, st.length, st.first_id, st.last_id, st.max_deleted, group.last_id);
    }
    uint64_t npel;
    if (!(s = ReadLen(&npel)).ok()) return s;
    for (uint64_t p = 0; p < npel; p++) {
      std::string raw(16, '\0');
      StreamGroupDump::Pending pe;
      if (!(s = Read(raw.data(), 16)).ok() || !(s = ReadMillis(&pe.delivery_time)).ok() ||
          !(s = ReadLen(&pe.delivery_count)).ok()) {
        return s;
      }
      pe.id = DecodeRawId(raw);
      group.pel.push_back(std::move(pe));
    }
    uint64_t nconsumers;
    if (!(s = ReadLen(&nconsumers)).ok()) return s;
    for (uint64_t c = 0; c < nconsumers; c++) {
      StreamGroupDump::Consumer consumer;
      if (!(s = ReadString(&consumer.name)).ok() || !(s = ReadMillis(&consumer.seen_time)).ok()) return s;
      if (type >= kTypeStreamListpacks3) {
        uint64_t active_time;
        if (!(s = ReadMillis(&active_time)).ok()) return s;
      }
      uint64_t n;
      if (!(s = ReadLen(&n)).ok()) return s;
      for (uint64_t k = 0; k < n; k++) {
        std::string raw(16, '\0');
        if (!(s = Read(raw.data(), 16)).ok()) return s;
        consumer.pel.push_back(DecodeRawId(raw));
      }
      group.consumers.push_back(std::move(consumer));
    }
    // Names and pending ids are unique, and every pending entry belongs to
    // exactly one consumer (Redis refuses the value otherwise).
    std::map<StreamID, size_t> pending;  // id -> index in group.pel
    for (size_t i = 0; i < group.pel.size(); i++) {
      group.pel[i].consumer.clear();
      if (!pending.emplace(group.pel[i].id, i).second) return Corrupt("duplicate group pending entry");
    }
    std::set<std::string_view> consumer_names;
    for (const auto& consumer : group.consumers) {
      if (!consumer_names.insert(consumer.name).second) return Corrupt("duplicate consumer name");
      for (const auto& id : consumer.pel) {
        auto it = pending.find(id);
        if (it == pending.end()) return Corrupt("consumer pending entry not in the group PEL");
        auto& owner = group.pel[it->second].consumer;
        if (!owner.empty()) return Corrupt("pending entry of two consumers");
        owner = consumer.name;
      }
    }
    for (const auto& pe : group.pel) {
      if (pe.consumer.empty()) return Corrupt("group pending entry without a consumer");
    }
    if (!group_names.insert(group.name).second) return Corrupt("duplicate consumer group name");
    st.groups.push_back(std::move(group));
  }
  return Status::OK();
}

namespace {

// Redis refuses a set, hash or sorted set that holds a member twice (its dict
// insert or listpack check fails); kvrocks would merge the two and count wrong.
Status CheckNoDuplicates(const Object& obj) {
  std::unordered_set<std::string_view> seen;
  auto unique = [&](std::string_view member) { return seen.insert(member).second; };
  switch (obj.type) {
    case RedisType::kSet:
      seen.reserve(obj.elements.size());
      for (const auto& e : obj.elements) {
        if (!unique(e)) return Corrupt("duplicate set member");
      }
      break;
    case RedisType::kHash:
      seen.reserve(obj.pairs.size());
      for (const auto& [field, value] : obj.pairs) {
        if (!unique(field)) return Corrupt("duplicate hash field");
      }
      break;
    case RedisType::kZSet:
      seen.reserve(obj.zset.size());
      for (const auto& [member, score] : obj.zset) {
        if (!unique(member)) return Corrupt("duplicate sorted set member");
      }
      break;
    default:
      break;
  }
  return Status::OK();
}

}  // namespace

Status Reader::ReadObject(int type, Object* obj) {
  Status s = ReadObjectBody(type, obj);
  return s.ok() ? CheckNoDuplicates(*obj) : s;
}

Status Reader::ReadObjectBody(int type, Object* obj) {
  obj->rdb_type = type;
  Status s;
  uint64_t len;
  std::vector<std::string> flat;
  std::string blob;
  switch (type) {
    case kTypeString:
      obj->type = RedisType::kString;
      return ReadString(&obj->str);
    case kTypeList:
    case kTypeSet:
      obj->type = type == kTypeList ? RedisType::kList : RedisType::kSet;
      if (!(s = ReadLen(&len)).ok()) return s;
      for (uint64_t i = 0; i < len; i++) {
        std::string e;
        if (!(s = ReadString(&e)).ok()) return s;
        obj->elements.push_back(std::move(e));
      }
      return Status::OK();
    case kTypeZSet:
    case kTypeZSet2:
      obj->type = RedisType::kZSet;
      if (!(s = ReadLen(&len)).ok()) return s;
      for (uint64_t i = 0; i < len; i++) {
        std::string m;
        double score;
        if (!(s = ReadString(&m)).ok()) return s;
        s = type == kTypeZSet2 ? ReadBinaryDouble(&score) : ReadStringDouble(&score);
        if (!s.ok()) return s;
        obj->zset.emplace_back(std::move(m), score);
      }
      return Status::OK();
    case kTypeHash:
      obj->type = RedisType::kHash;
      if (!(s = ReadLen(&len)).ok()) return s;
      for (uint64_t i = 0; i < len; i++) {
        std::string f, v;
        if (!(s = ReadString(&f)).ok() || !(s = ReadString(&v)).ok()) return s;
        obj->pairs.emplace_back(std::move(f), std::move(v));
      }
      return Status::OK();
    case kTypeHashMetadataPreGA:
    case kTypeHashMetadata: {
      obj->type = RedisType::kHash;
      uint64_t min_expire = 0;
      if (type == kTypeHashMetadata && !(s = ReadMillis(&min_expire)).ok()) return s;
      if (!(s = ReadLen(&len)).ok()) return s;
      for (uint64_t i = 0; i < len; i++) {
        uint64_t ttl;
        std::string f, v;
        if (!(s = ReadLen(&ttl)).ok() || !(s = ReadString(&f)).ok() || !(s = ReadString(&v)).ok()) return s;
        uint64_t expire_at = type == kTypeHashMetadata ? (ttl != 0 ? ttl + min_expire - 1 : 0) : ttl;
        obj->pairs.emplace_back(std::move(f), std::move(v));
        obj->field_expires.push_back(expire_at);
      }
      return Status::OK();
    }
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      obj->type = RedisType::kList;
      if (!(s = ReadLen(&len)).ok()) return s;
      for (uint64_t i = 0; i < len; i++) {
        uint64_t container = 2;  // packed
        if (type == kTypeListQuicklist2 && !(s = ReadLen(&container)).ok()) return s;
        if (container != 1 && container != 2) return Corrupt("quicklist integrity check failed");
        if (!(s = ReadString(&blob)).ok()) return s;
        if (blob.empty()) return Corrupt("empty quicklist node");
        if (container == 1) {
          obj->elements.push_back(std::move(blob));
          continue;
        }
        bool ok = type == kTypeListQuicklist ? DecodeZiplist(blob, &obj->elements) : DecodeListpack(blob, &obj->elements);
        if (!ok) return Corrupt(type == kTypeListQuicklist ? "ziplist integrity check failed" : "listpack integrity check failed");
      }
      return Status::OK();
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
    case kTypeStreamListpacks3:
      return ReadStream(type, obj);
    case kTypeModulePreGA:
      return Corrupt("module value of a pre-release module format cannot be loaded");
    case kTypeModule2: {
      uint64_t id;
      if (!(s = ReadLen(&id)).ok()) return s;
      obj->module_name = ModuleName(id);
      return SkipModuleValue();
    }
    default:
      break;
  }
  // The blob encodings.
  uint64_t min_expire;
  if (type == kTypeHashListpackEx && !(s = ReadMillis(&min_expire)).ok()) return s;
  if (!(s = ReadString(&blob)).ok()) return s;
  switch (type) {
    case kTypeHashZipmap:
      obj->type = RedisType::kHash;
      if (!DecodeZipmap(blob, &flat)) return Corrupt("zipmap integrity check failed");
      return ToPairs(flat, &obj->pairs);
    case kTypeListZiplist:
      obj->type = RedisType::kList;
      if (!DecodeZiplist(blob, &obj->elements)) return Corrupt("list ziplist integrity check failed");
      return Status::OK();
    case kTypeSetIntset:
      obj->type = RedisType::kSet;
      if (!DecodeIntset(blob, &obj->elements)) return Corrupt("intset integrity check failed");
      obj->intset_width = static_cast<uint8_t>(blob[0]);  // checked by DecodeIntset: 2, 4 or 8
      return Status::OK();
    case kTypeSetListpack:
      obj->type = RedisType::kSet;
      if (!DecodeListpack(blob, &obj->elements)) return Corrupt("set listpack integrity check failed");
      return Status::OK();
    case kTypeZSetZiplist:
    case kTypeZSetListpack:
      obj->type = RedisType::kZSet;
      if (!(type == kTypeZSetZiplist ? DecodeZiplist(blob, &flat) : DecodeListpack(blob, &flat))) {
        return Corrupt("zset encoding integrity check failed");
      }
      return ToZSet(flat, &obj->zset);
    case kTypeHashZiplist:
    case kTypeHashListpack:
      obj->type = RedisType::kHash;
      if (!(type == kTypeHashZiplist ? DecodeZiplist(blob, &flat) : DecodeListpack(blob, &flat))) {
        return Corrupt("hash encoding integrity check failed");
      }
      return ToPairs(flat, &obj->pairs);
    case kTypeHashListpackExPreGA:
    case kTypeHashListpackEx: {
      obj->type = RedisType::kHash;
      if (!DecodeListpack(blob, &flat) || flat.size() % 3 != 0) return Corrupt("hash listpackex integrity check failed");
      for (size_t i = 0; i < flat.size(); i += 3) {
        int64_t ttl;
        if (!ParseI64(flat[i + 2], &ttl) || ttl < 0) return Corrupt("bad hash field TTL");
        obj->pairs.emplace_back(flat[i], flat[i + 1]);
        obj->field_expires.push_back(static_cast<uint64_t>(ttl));
      }
      return Status::OK();
    }
    default:
      return Corrupt("unknown object type " + std::to_string(type));
  }
}

Status Reader::ReadRdb(Handler* handler) {
  char header[9];
  Status s = Read(header, 9);
  if (!s.ok()) return s;
  if (std::memcmp(header, "REDIS", 5) != 0) return Corrupt("wrong signature trying to load DB from file");
  version_ = 0;
  for (int i = 5; i < 9; i++) {
    if (header[i] < '0' || header[i] > '9') return Corrupt("bad version");
    version_ = version_ * 10 + (header[i] - '0');
  }
  if (version_ < 1 || version_ > kMaxVersion) return Corrupt("can't handle RDB format version " + std::to_string(version_));
  int64_t expire = -1, idle = -1;
  while (true) {
    uint8_t type;
    if (!(s = ReadU8(&type)).ok()) return s;
    char buf[8];
    uint64_t a, b;
    std::string k, v;
    switch (type) {
      case kOpExpireTimeMs: {
        uint64_t ms;
        if (!(s = ReadMillis(&ms)).ok()) return s;
        expire = static_cast<int64_t>(ms);
        continue;
      }
      case kOpExpireTime:
        if (!(s = Read(buf, 4)).ok()) return s;
        expire = static_cast<int64_t>(static_cast<int32_t>(LoadLE(buf, 4))) * 1000;
        continue;
      case kOpFreq:
        if (!(s = Read(buf, 1)).ok()) return s;
        continue;
      case kOpIdle:
        if (!(s = ReadLen(&a)).ok()) return s;
        idle = a > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(a);
        continue;
      case kOpSelectDb:
        if (!(s = ReadLen(&a)).ok() || !(s = handler->OnSelectDb(a)).ok()) return s;
        continue;
      case kOpResizeDb:
        if (!(s = ReadLen(&a)).ok() || !(s = ReadLen(&b)).ok()) return s;
        continue;
      case kOpSlotInfo:
        if (!(s = ReadLen(&a)).ok() || !(s = ReadLen(&a)).ok() || !(s = ReadLen(&a)).ok()) return s;
        continue;
      case kOpAux:
        if (!(s = ReadString(&k)).ok() || !(s = ReadString(&v)).ok() || !(s = handler->OnAux(k, v)).ok()) return s;
        continue;
      case kOpModuleAux: {
        uint64_t id, when_op, when;
        if (!(s = ReadLen(&id)).ok() || !(s = ReadLen(&when_op)).ok() || !(s = ReadLen(&when)).ok() ||
            !(s = SkipModuleValue()).ok() || !(s = handler->OnModuleAux(ModuleName(id))).ok()) {
          return s;
        }
        continue;
      }
      case kOpFunctionPreGA:
        return Corrupt("pre-release function format not supported");
      case kOpFunction2:
        if (!(s = ReadString(&v)).ok() || !(s = handler->OnFunction(v)).ok()) return s;
        continue;
      case kOpEof: {
        if (version_ < 5) return Status::OK();
        uint64_t expected = crc_;
        if (!(s = Read(buf, 8)).ok()) return s;
        uint64_t stored = LoadLE(buf, 8);
        if (stored != 0 && stored != expected && verify_checksums() && file_checksums()) {
          return Corrupt("wrong RDB checksum");
        }
        return Status::OK();
      }
      default:
        break;
    }
    if (!IsObjectType(type)) return Corrupt("unknown RDB type " + std::to_string(type));
    std::string key;
    if (!(s = ReadString(&key)).ok()) return s;
    Object obj;
    if (!(s = ReadObject(type, &obj)).ok()) return s;
    obj.lru_idle_s = idle;
    if (!(s = handler->OnKey(std::move(key), std::move(obj), expire)).ok()) return s;
    expire = -1;
    idle = -1;
  }
}

namespace {

std::atomic<bool> g_verify_checksums{true};
std::atomic<bool> g_file_checksums{true};

// Checks a payload's footer (version, CRC64); *body gets the length before it.
Status CheckDumpFooter(std::string_view payload, size_t min_size, size_t* body, int* version) {
  if (payload.size() < min_size) return Status::RedisError("ERR DUMP payload version or checksum are wrong");
  *body = payload.size() - 10;
  *version = static_cast<uint8_t>(payload[*body]) | (static_cast<uint8_t>(payload[*body + 1]) << 8);
  uint64_t crc = LoadLE(payload.data() + *body + 2, 8);
  if (*version > kMaxVersion || (Reader::verify_checksums() && Crc64(0, payload.data(), *body + 2) != crc)) {
    return Status::RedisError("ERR DUMP payload version or checksum are wrong");
  }
  return Status::OK();
}

}  // namespace

void Reader::set_verify_checksums(bool verify) { g_verify_checksums = verify; }
bool Reader::verify_checksums() { return g_verify_checksums.load(std::memory_order_relaxed); }
void Reader::set_file_checksums(bool on) { g_file_checksums = on; }
bool Reader::file_checksums() { return g_file_checksums.load(std::memory_order_relaxed); }

Status Reader::ParseFunctionDump(std::string_view payload, std::vector<std::string>* codes) {
  size_t body;
  int version;
  Status s = CheckDumpFooter(payload, 10, &body, &version);
  if (!s.ok()) return s;
  StringSource src(payload.substr(0, body));
  Reader reader(&src);
  reader.version_ = version;
  while (src.remaining() > 0) {
    uint8_t type;
    std::string code;
    if (!reader.ReadU8(&type).ok()) return Status::RedisError("ERR payload is corrupted");
    if (type != kOpFunction2) return Status::RedisError("ERR given type is not a function");
    if (!reader.ReadString(&code).ok()) return Status::RedisError("ERR payload is corrupted");
    codes->push_back(std::move(code));
  }
  return Status::OK();
}

Status Reader::ParseDump(std::string_view payload, Object* obj) {
  // type(1) value... version(2, LE) crc64(8, LE)
  size_t body;
  int version;
  Status cs = CheckDumpFooter(payload, 11, &body, &version);
  if (!cs.ok()) return cs;
  StringSource src(payload.substr(0, body));
  Reader reader(&src);
  reader.version_ = version;
  uint8_t type;
  Status s = reader.ReadU8(&type);
  if (s.ok() && !IsObjectType(type)) s = Corrupt("unknown object type");
  if (s.ok()) s = reader.ReadObject(type, obj);
  if (s.ok() && src.remaining() != 0) s = Corrupt("trailing bytes in payload");
  if (!s.ok()) return Status::RedisError("ERR Bad data format");
  return Status::OK();
}

}  // namespace kvrocks::rdb
