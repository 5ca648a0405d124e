// How Redis keys are laid out in RocksDB. See docs/encoding.md.
//
//   metadata CF   key:   db(1) | slot(2, BE) | user_key
//                 value: type(1) | expire_ms(8, BE, 0 = none) | payload
//                        string     -> payload is the raw value
//                        big string -> (type flag 0x10) version(8) | size(8) | [owner];
//                                      the value is the subkey with an empty field
//                        collection -> version(8) | size(8) | [owner] | type extras
//                        owner      -> [owner_db(1)] [owner_len(varint) owner_name]: where the subkeys
//                                      are when not under the key's own db and name (type flags 0x20, 0x80)
//   subkey CFs    key:   db(1) | slot(2) | key_len(4, BE) | user_key | version(8) | field...
//                        (user_key: the key's owner name, see Metadata::owner)
//   expire CF     key:   db(1) | expire_ms(8, BE) | user_key        value: empty
//
// `db` is the physical database id (SWAPDB swaps the logical->physical map).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kvrocks {

enum class RedisType : uint8_t {
  kNone = 0,
  kString = 1,
  kHash = 2,
  kList = 3,
  kSet = 4,
  kZSet = 5,
  kStream = 6,
};

// Set in the type byte of a string whose value is stored out of line (in the
// subkey CF under its version), so that writes need not read big values.
inline constexpr uint8_t kOutOfLineFlag = 0x10;
// Set in the type byte of an inline string that Redis would report as "raw"
// (written by APPEND, SETRANGE, SETBIT, BITFIELD, BITOP, PFADD ...), for OBJECT ENCODING.
inline constexpr uint8_t kRawEncodingFlag = 0x20;
// Set in the type byte of an inline string that Redis would report as "embstr"
// (or "raw" past 44 bytes) even if it reads as an integer: INCRBYFLOAT's results.
inline constexpr uint8_t kNotIntEncodingFlag = 0x80;
// Set (with kOutOfLineFlag) in the type byte of a string stored in fragments of
// kStringFragmentBytes (bitmaps written by SETBIT/BITFIELD): fragment i is the
// subkey `prefix(version) i(4, BE)`, and a missing fragment reads as zeros.
inline constexpr uint8_t kFragmentedFlag = 0x40;
// Set in the type byte of an inline string (the bit means kFragmentedFlag only
// with kOutOfLineFlag) that is an object of its own in Redis even where Redis
// would share one: COPY duplicates the value (dupStringObject), so OBJECT
// REFCOUNT of a copied integer 0..9999 is 1, not the shared objects' INT_MAX.
inline constexpr uint8_t kUnsharedFlag = 0x40;
// Set in the type byte of a collection or an out-of-line string whose subkeys
// are stored under another name than its own (a RENAME moved only its
// metadata): the metadata then goes on after size (and owner_db) with
// `owner_len(varint) owner` (Metadata::owner). In an inline string's type byte
// the bit is kNotIntEncodingFlag.
inline constexpr uint8_t kOwnerFlag = 0x80;
// Set in the type byte of a collection or an out-of-line string whose subkeys
// are stored in another database than its own (a MOVE moved only its metadata):
// the metadata then goes on after size with `owner_db(1)` (Metadata::owner_db).
// In an inline string's type byte the bit is kRawEncodingFlag.
inline constexpr uint8_t kOwnerDbFlag = 0x20;
inline constexpr uint64_t kStringFragmentBytes = 1024;

// Redis' name of a type as TYPE reports it ("string", "hash" ...).
const char* RedisTypeName(RedisType t);

std::string EncodeMetaKey(uint8_t db, std::string_view user_key);
// Splits a metadata CF key; false if it is too short to be one.
bool DecodeMetaKey(std::string_view raw, uint8_t* db, std::string_view* user_key);
// The first byte of every metadata key of database db; keys of db sort in [prefix, prefix+1).
std::string MetaDbPrefix(uint8_t db);

// Prefix of all subkeys of one incarnation (version) of a key.
std::string EncodeSubkeyPrefix(uint8_t db, std::string_view user_key, uint64_t version);
// The shortest key greater than every key that starts with prefix: trailing
// 0xff bytes dropped, the last byte incremented ("" for a prefix of all 0xff).
std::string PrefixSuccessor(std::string prefix);
// Parses the fixed part of a subkey; false on malformed input.
bool DecodeSubkeyPrefix(std::string_view raw, uint8_t* db, std::string_view* user_key, uint64_t* version);

std::string EncodeExpireKey(uint8_t db, uint64_t expire_ms, std::string_view user_key);
bool DecodeExpireKey(std::string_view raw, uint8_t* db, uint64_t* expire_ms, std::string_view* user_key);

// The metadata value of one key.
struct Metadata {
  RedisType type = RedisType::kNone;
  uint64_t expire_ms = 0;  // absolute unix ms, 0 = no expiry
  bool out_of_line = false;  // strings: value stored as a subkey
  bool fragmented = false;   // strings: value stored as fragments (implies out_of_line)
  // Collections and out-of-line strings:
  uint64_t version = 0;
  uint64_t size = 0;
  // String: the value. Collections: type-specific extras after size.
  std::string payload;
  // Keys with subkeys: the key name their subkeys are stored under when it is not
  // the key's own ("": its own). RENAME of such a key moves only the metadata; the
  // subkeys stay under the name they were written with (docs/encoding.md, Rename and move).
  std::string owner;
  // Keys with subkeys: the physical database their subkeys are stored in when it
  // is not the key's own (-1: its own). MOVE of such a key moves only the metadata.
  int owner_db = -1;

  bool IsString() const { return type == RedisType::kString; }
  // Whether the key owns subkeys of its version.
  bool HasSubkeys() const { return !IsString() || out_of_line; }
  bool Expired(uint64_t now_ms) const { return expire_ms != 0 && expire_ms <= now_ms; }
  // The name in the subkeys of key `key` with this metadata.
  std::string_view SubkeyName(std::string_view key) const { return owner.empty() ? key : std::string_view(owner); }
  // The database in the subkeys of a key of database db with this metadata.
  uint8_t SubkeyDb(uint8_t db) const { return owner_db < 0 ? db : static_cast<uint8_t>(owner_db); }

  std::string Encode() const;
  Status Decode(std::string_view raw);
};

// The prefix of the subkeys of key (of database db) with this metadata: its
// current version under its owner's db and name (EncodeSubkeyPrefix).
inline std::string SubkeyPrefix(uint8_t db, std::string_view key, const Metadata& meta) {
  return EncodeSubkeyPrefix(meta.SubkeyDb(db), meta.SubkeyName(key), meta.version);
}

// Encodes a string key's metadata value without building a Metadata.
// encoding_flag: 0, kRawEncodingFlag or kNotIntEncodingFlag (what OBJECT ENCODING reports).
std::string EncodeStringValue(std::string_view value, uint64_t expire_ms, uint8_t encoding_flag = 0);
// Metadata of a string stored out of line (or in fragments) under version, its
// subkeys named owner in database owner_db ("" and -1: the key's own,
// Metadata::owner and owner_db).
std::string EncodeStringRef(uint64_t version, uint64_t size, uint64_t expire_ms, bool fragmented = false,
                            std::string_view owner = {}, int owner_db = -1);
// The subkey of fragment `index` of a fragmented string.
std::string EncodeFragmentKey(uint8_t db, std::string_view user_key, uint64_t version, uint32_t index);

// The `state` record that names where the key (a collection or an out-of-line
// string) of version `version` lives now when its metadata moved away from its
// subkeys' db or name (RENAME, MOVE):
// `moved:version(8)` -> `db(1) user_key`. The subkey compaction filter follows it.
inline constexpr char kMovedKeyPrefix[] = "moved:";
std::string EncodeMovedKey(uint64_t version);
// Whether an encoded metadata value has subkeys under another db or name
// (kOwnerDbFlag, kOwnerFlag);
// if so, *version is their version. Reads only the fixed header.
bool HasMovedSubkeys(std::string_view raw, uint64_t* version);

// Reads only type and expiry of an encoded metadata value.
Status PeekMetadata(std::string_view raw, RedisType* type, uint64_t* expire_ms);

}  // namespace kvrocks
