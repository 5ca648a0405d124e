// The string type: the value lives inline in the key's metadata entry (large
// values go to RocksDB blob files).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "types/database.h"

namespace kvrocks {

class RedisString {
 public:
  explicit RedisString(Database* db) : db_(db) {}

  // NotFound if absent; RedisError(WRONGTYPE) if not a string.
  Status Get(std::string_view key, std::string* value);

  struct SetOptions {
    enum Cond { kAlways, kNX, kXX } cond = kAlways;
    bool get = false;        // return the old value (SET ... GET)
    bool keep_ttl = false;   // KEEPTTL
    uint64_t expire_ms = 0;  // absolute; 0 = none (unless keep_ttl)
  };
  // SET with every option. *done tells if the value was written; *old is the
  // previous value when opts.get (nullopt if there was none).
  Status Set(std::string_view key, std::string_view value, const SetOptions& opts, bool* done,
             std::optional<std::string>* old);

  enum class ExpireChange { kKeep, kPersist, kSet };
  // GETEX: returns the value and changes the expiry (absolute ms for kSet;
  // a time in the past deletes the key).
  Status GetEx(std::string_view key, ExpireChange change, uint64_t expire_ms, std::string* value);
  Status GetDel(std::string_view key, std::string* value);

  // APPEND / SETRANGE; max_len is proto-max-bulk-len.
  Status Append(std::string_view key, std::string_view value, int64_t max_len, size_t* new_len);
  Status SetRange(std::string_view key, int64_t offset, std::string_view value, int64_t max_len, size_t* new_len);

  Status IncrBy(std::string_view key, int64_t delta, int64_t* result);
  Status IncrByFloat(std::string_view key, long double delta, std::string* result);

  // MSETNX semantics when nx: nothing is written if any key exists.
  Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs, bool nx, bool* done);

 private:
  // Loads key for a write and its value ("" if absent); WRONGTYPE if it is a live non-string.
  Status LoadString(std::string_view key, LoadedKey* lk, std::string* value);
  // The value of a string key given its encoded metadata (inline or out of line).
  Status ReadValue(std::string_view key, const std::string& raw, std::string* value);
  // Stores value inline or, when big, out of line under a new version.
  // raw_encoding: Redis would report the result as "raw" (APPEND, SETRANGE).
  void WriteValue(std::string_view key, LoadedKey* lk, std::string_view value, uint64_t expire_ms,
                  bool raw_encoding = false);

  Database* db_;
};

}  // namespace kvrocks
