#include "storage/key_encoding.h"

#include "common/encoding.h"
#include "common/string_util.h"

namespace kvrocks {

const char* RedisTypeName(RedisType t) {
  switch (t) {
    case RedisType::kString: return "string";
    case RedisType::kHash: return "hash";
    case RedisType::kList: return "list";
    case RedisType::kSet: return "set";
    case RedisType::kZSet: return "zset";
    case RedisType::kStream: return "stream";
    default: return "none";
  }
}

std::string EncodeMetaKey(uint8_t db, std::string_view user_key) {
  std::string out;
  out.reserve(3 + user_key.size());
  PutFixed8(&out, db);
  PutBE16(&out, KeySlot(user_key));
  out.append(user_key);
  return out;
}

bool DecodeMetaKey(std::string_view raw, uint8_t* db, std::string_view* user_key) {
  if (raw.size() < 3) return false;
  *db = static_cast<uint8_t>(raw[0]);
  *user_key = raw.substr(3);
  return true;
}

std::string MetaDbPrefix(uint8_t db) { return std::string(1, static_cast<char>(db)); }

std::string PrefixSuccessor(std::string prefix) {
  while (!prefix.empty() && static_cast<uint8_t>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<uint8_t>(prefix.back()) + 1);
  return prefix;
}

std::string EncodeSubkeyPrefix(uint8_t db, std::string_view user_key, uint64_t version) {
  std::string out;
  out.reserve(15 + user_key.size());
  PutFixed8(&out, db);
  PutBE16(&out, KeySlot(user_key));
  PutBE32(&out, static_cast<uint32_t>(user_key.size()));
  out.append(user_key);
  PutBE64(&out, version);
  return out;
}

bool DecodeSubkeyPrefix(std::string_view raw, uint8_t* db, std::string_view* user_key, uint64_t* version) {
  Reader r(raw);
  uint16_t slot;
  uint32_t len;
  if (!r.GetU8(db) || !r.GetBE16(&slot) || !r.GetBE32(&len) || !r.GetBytes(len, user_key) || !r.GetBE64(version)) {
    return false;
  }
  return true;
}

std::string EncodeExpireKey(uint8_t db, uint64_t expire_ms, std::string_view user_key) {
  std::string out;
  out.reserve(9 + user_key.size());
  PutFixed8(&out, db);
  PutBE64(&out, expire_ms);
  out.append(user_key);
  return out;
}

bool DecodeExpireKey(std::string_view raw, uint8_t* db, uint64_t* expire_ms, std::string_view* user_key) {
  Reader r(raw);
  if (!r.GetU8(db) || !r.GetBE64(expire_ms)) return false;
  *user_key = r.rest();
  return true;
}

std::string Metadata::Encode() const {
  std::string out;
  out.reserve(17 + payload.size() + (IsString() ? 0 : 16));
  const bool owned = HasSubkeys() && !owner.empty();
  const bool owned_db = HasSubkeys() && owner_db >= 0;
  PutFixed8(&out, static_cast<uint8_t>(type) | (out_of_line ? kOutOfLineFlag : 0) | (fragmented ? kFragmentedFlag : 0) |
                      (owned ? kOwnerFlag : 0) | (owned_db ? kOwnerDbFlag : 0));
  PutBE64(&out, expire_ms);
  if (HasSubkeys()) {
    PutBE64(&out, version);
    PutBE64(&out, size);
  }
  if (owned_db) PutFixed8(&out, static_cast<uint8_t>(owner_db));
  if (owned) {
    PutVarint64(&out, owner.size());
    out.append(owner);
  }
  out.append(payload);
  return out;
}

Status Metadata::Decode(std::string_view raw) {
  Reader r(raw);
  uint8_t t;
  if (!r.GetU8(&t) || !r.GetBE64(&expire_ms)) return Status::Corruption("metadata too short");
  type = static_cast<RedisType>(t & 0x0f);
  out_of_line = IsString() && (t & kOutOfLineFlag) != 0;
  fragmented = out_of_line && (t & kFragmentedFlag) != 0;
  if (type == RedisType::kNone || static_cast<uint8_t>(type) > static_cast<uint8_t>(RedisType::kStream)) {
    return Status::Corruption("bad metadata type");
  }
  if (HasSubkeys()) {
    if (!r.GetBE64(&version) || !r.GetBE64(&size)) return Status::Corruption("collection metadata too short");
  }
  owner.clear();
  owner_db = -1;
  if (HasSubkeys() && (t & kOwnerDbFlag)) {
    uint8_t d;
    if (!r.GetU8(&d)) return Status::Corruption("subkey owner db missing");
    owner_db = d;
  }
  if (HasSubkeys() && (t & kOwnerFlag)) {
    uint64_t n;
    std::string_view name;
    if (!r.GetVarint64(&n) || !r.GetBytes(n, &name)) return Status::Corruption("subkey owner too short");
    owner.assign(name);
  }
  payload.assign(r.rest());
  return Status::OK();
}

std::string EncodeMovedKey(uint64_t version) {
  std::string out = kMovedKeyPrefix;
  PutBE64(&out, version);
  return out;
}

bool HasMovedSubkeys(std::string_view raw, uint64_t* version) {
  if (raw.size() < 17) return false;
  auto t = static_cast<uint8_t>(raw[0]);
  if (!(t & (kOwnerFlag | kOwnerDbFlag))) return false;
  // For an inline string the bits are kNotIntEncodingFlag and kRawEncodingFlag.
  if ((t & 0x0f) == static_cast<uint8_t>(RedisType::kString) && !(t & kOutOfLineFlag)) return false;
  *version = DecodeBE64(raw.data() + 9);
  return true;
}

std::string EncodeStringValue(std::string_view value, uint64_t expire_ms, uint8_t encoding_flag) {
  std::string out;
  out.reserve(9 + value.size());
  PutFixed8(&out, static_cast<uint8_t>(RedisType::kString) | encoding_flag);
  PutBE64(&out, expire_ms);
  out.append(value);
  return out;
}

std::string EncodeStringRef(uint64_t version, uint64_t size, uint64_t expire_ms, bool fragmented,
                            std::string_view owner, int owner_db) {
  // Metadata::Encode's layout, without building a Metadata (every big SET comes here).
  std::string out;
  out.reserve(27 + owner.size());
  PutFixed8(&out, static_cast<uint8_t>(RedisType::kString) | kOutOfLineFlag | (fragmented ? kFragmentedFlag : 0) |
                      (owner.empty() ? 0 : kOwnerFlag) | (owner_db < 0 ? 0 : kOwnerDbFlag));
  PutBE64(&out, expire_ms);
  PutBE64(&out, version);
  PutBE64(&out, size);
  if (owner_db >= 0) PutFixed8(&out, static_cast<uint8_t>(owner_db));
  if (!owner.empty()) {
    PutVarint64(&out, owner.size());
    out.append(owner);
  }
  return out;
}

std::string EncodeFragmentKey(uint8_t db, std::string_view user_key, uint64_t version, uint32_t index) {
  std::string out = EncodeSubkeyPrefix(db, user_key, version);
  PutBE32(&out, index);
  return out;
}

Status PeekMetadata(std::string_view raw, RedisType* type, uint64_t* expire_ms) {
  if (raw.size() < 9) return Status::Corruption("metadata too short");
  *type = static_cast<RedisType>(static_cast<uint8_t>(raw[0]) & 0x0f);
  *expire_ms = DecodeBE64(raw.data() + 1);
  return Status::OK();
}

}  // namespace kvrocks
