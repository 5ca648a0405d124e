// A streaming parser of Redis' RDB format, versions 1 to 12 (Redis 2.x to
// 8.x): the file/stream layout (header, opcodes, EOF and CRC64) and every
// object type and encoding (strings int/LZF; lists linked/ziplist/quicklist/
// quicklist 2/listpack; sets plain/intset/listpack; sorted sets plain/binary
// scores/ziplist/listpack; hashes plain/zipmap/ziplist/listpack and with field
// TTLs (7.4); streams listpacks v1..v3 with consumer groups; module values,
// which are skipped after their name is read).
//
// The parser pulls bytes from a Source as it needs them, so a replica parses
// the payload while it arrives; one key's value is decoded into an Object at a
// time and handed to a Handler. Malformed input gives a Corruption status,
// never a crash (the parser is fuzzed): lengths are checked against what the
// input can hold before anything is allocated for them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "storage/key_encoding.h"
#include "types/redis_stream.h"

namespace kvrocks::rdb {

// RDB object type bytes.
enum ObjectType : int {
  kTypeString = 0,
  kTypeList = 1,
  kTypeSet = 2,
  kTypeZSet = 3,
  kTypeHash = 4,
  kTypeZSet2 = 5,
  kTypeModulePreGA = 6,
  kTypeModule2 = 7,
  kTypeHashZipmap = 9,
  kTypeListZiplist = 10,
  kTypeSetIntset = 11,
  kTypeZSetZiplist = 12,
  kTypeHashZiplist = 13,
  kTypeListQuicklist = 14,
  kTypeStreamListpacks = 15,
  kTypeHashListpack = 16,
  kTypeZSetListpack = 17,
  kTypeListQuicklist2 = 18,
  kTypeStreamListpacks2 = 19,
  kTypeSetListpack = 20,
  kTypeStreamListpacks3 = 21,
  kTypeHashMetadataPreGA = 22,
  kTypeHashListpackExPreGA = 23,
  kTypeHashMetadata = 24,
  kTypeHashListpackEx = 25,
};

// RDB opcodes: the bytes that introduce something other than a key.
enum Opcode : int {
  kOpSlotInfo = 244,
  kOpFunction2 = 245,
  kOpFunctionPreGA = 246,
  kOpModuleAux = 247,
  kOpIdle = 248,
  kOpFreq = 249,
  kOpAux = 250,
  kOpResizeDb = 251,
  kOpExpireTimeMs = 252,
  kOpExpireTime = 253,
  kOpSelectDb = 254,
  kOpEof = 255,
};

// The highest RDB version this parser reads.
inline constexpr int kMaxVersion = 12;

// CRC64 (Jones polynomial, reflected) as Redis computes it over RDB files and DUMP payloads.
uint64_t Crc64(uint64_t crc, const void* data, size_t len);

// Where the parser reads from.
class Source {
 public:
  virtual ~Source() = default;
  // Reads exactly n bytes into buf.
  virtual Status Read(char* buf, size_t n) = 0;
};

class StringSource : public Source {
 public:
  explicit StringSource(std::string_view data) : data_(data) {}
  Status Read(char* buf, size_t n) override;
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// One decoded value.
struct Object {
  int rdb_type = 0;
  RedisType type = RedisType::kNone;
  std::string str;                                         // string
  std::vector<std::string> elements;                       // list elements, set members
  int intset_width = 0;                                    // an intset's bytes per value (2, 4, 8)
  std::vector<std::pair<std::string, std::string>> pairs;  // hash fields and values
  std::vector<uint64_t> field_expires;                     // hash field TTLs (unix ms, 0 = none), if any
  std::vector<std::pair<std::string, double>> zset;
  std::unique_ptr<StreamDump> stream;
  std::string module_name;  // a module value (its content is skipped)
  int64_t lru_idle_s = -1;  // the IDLE opcode before the key (seconds), -1 if none

  // A collection Redis would skip as empty when loading.
  bool Empty() const;
};

class Handler {
 public:
  virtual ~Handler() = default;
  virtual Status OnAux(const std::string& /*key*/, const std::string& /*value*/) { return Status::OK(); }
  virtual Status OnSelectDb(uint64_t db) = 0;
  // expire_ms: absolute unix ms, or -1 for none.
  virtual Status OnKey(std::string key, Object obj, int64_t expire_ms) = 0;
  virtual Status OnFunction(const std::string& /*code*/) { return Status::OK(); }
  virtual Status OnModuleAux(const std::string& /*module*/) { return Status::OK(); }
};

class Reader {
 public:
  explicit Reader(Source* src) : src_(src) {}

  // Parses a whole RDB (header to EOF and checksum).
  Status ReadRdb(Handler* handler);
  // Parses one value of the given type (the body of a key, or of a DUMP payload).
  Status ReadObject(int type, Object* obj);
  int version() const { return version_; }

  // Parses a DUMP payload (type, value, RDB version (2 bytes), CRC64 (8 bytes)).
  static Status ParseDump(std::string_view payload, Object* obj);
  // Parses a FUNCTION DUMP payload (function library records, then version
  // and CRC64) into the libraries' code.
  static Status ParseFunctionDump(std::string_view payload, std::vector<std::string>* codes);

  // Whether RDB files and DUMP payloads have their CRC64 checked (default yes).
  // DEBUG SET-SKIP-CHECKSUM-VALIDATION turns it off for the whole process, as
  // Redis' server.skip_checksum_validation does; the parser stays as strict.
  static void set_verify_checksums(bool verify);
  static bool verify_checksums();
  // rdbchecksum (set at startup, immutable as in Redis): RDB files are written
  // with their CRC64 (else 0) and checked against it when read; DUMP payloads
  // keep and check theirs either way.
  static void set_file_checksums(bool on);
  static bool file_checksums();

 private:
  Status Read(char* buf, size_t n);
  Status ReadU8(uint8_t* v);
  // A length; *encoded tells a special string encoding follows (then *len is its kind).
  Status ReadLen(uint64_t* len, bool* encoded = nullptr);
  Status ReadString(std::string* s);
  Status ReadBinaryDouble(double* v);
  Status ReadStringDouble(double* v);
  Status ReadMillis(uint64_t* ms);
  Status ReadObjectBody(int type, Object* obj);
  Status ReadStream(int type, Object* obj);
  Status SkipModuleValue();

  Source* src_;
  uint64_t crc_ = 0;
  int version_ = kMaxVersion;
};

}  // namespace kvrocks::rdb
