// The string type: the value lives inline in the key's metadata entry, or out
// of line as one subkey when large (RocksDB blob files), or, for bitmaps written
// bit by bit and big strings edited by APPEND or SETRANGE (StringEditor), as
// fixed-size fragments of which only the non-zero ones exist.
#pragma once

#include <functional>
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

  // APPEND / SETRANGE; max_len is proto-max-bulk-len. Past kEditInPlaceAt bytes
  // they write only the fragments they touch (string_editor.h).
  Status Append(std::string_view key, std::string_view value, int64_t max_len, size_t* new_len);
  Status SetRange(std::string_view key, int64_t offset, std::string_view value, int64_t max_len, size_t* new_len);

  Status IncrBy(std::string_view key, int64_t delta, int64_t* result);
  Status IncrByFloat(std::string_view key, long double delta, std::string* result);

  // MSETNX semantics when nx: nothing is written if any key exists.
  Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs, bool nx, bool* done);

  // STRLEN without reading the value. 0 if absent.
  Status Strlen(std::string_view key, uint64_t* len);

  // Calls fn(offset, bytes) in increasing offset order for the stored bytes of
  // the string whose metadata is raw that fall in [offset, offset+len), clipped
  // to the string's length. Bytes not passed to fn are zeros: the gaps are the
  // missing fragments of a sparse bitmap. fn returns false to stop early.
  using ChunkFn = std::function<bool(uint64_t offset, std::string_view bytes)>;
  Status ReadChunks(std::string_view key, const std::string& raw, uint64_t offset, uint64_t len, const ChunkFn& fn);
  // Bytes [offset, offset+len) of the value, clipped to its length, gaps filled with zeros.
  Status ReadRange(std::string_view key, const std::string& raw, uint64_t offset, uint64_t len, std::string* out);
  // The length of the string whose metadata is raw.
  static Status ValueSize(const std::string& raw, uint64_t* size);
  // Loads a live string key's metadata for a read: NotFound if absent, WRONGTYPE if not a string.
  Status LoadForRead(std::string_view key, std::string* raw);
  // The value of a string key given its encoded metadata (inline, out of line or in fragments).
  Status ReadValue(std::string_view key, const std::string& raw, std::string* value);

  // Loads key for a write and its value ("" if absent); WRONGTYPE if it is a live non-string.
  Status LoadString(std::string_view key, LoadedKey* lk, std::string* value);
  // Stores value inline or, when big, out of line under a new version.
  // encoding_flag: how Redis would report the result in OBJECT ENCODING
  // (EncodeStringValue): kRawEncodingFlag for APPEND, SETRANGE and bit writes.
  // unsignaled: a change of a live key that Redis makes without signalModifiedKey
  // (PFDEBUG's conversion to dense): no keyspace event, WATCH or tracking touch,
  // and expire_ms must be the key's own.
  void WriteValue(std::string_view key, LoadedKey* lk, std::string_view value, uint64_t expire_ms,
                  uint8_t encoding_flag = 0, bool unsignaled = false);
  // Stores value in fragments of kStringFragmentBytes under a new version,
  // leaving out the all-zero ones; returns the version. relayout: the live key
  // already holds this value, only stored differently, so that no client sees a
  // write (no keyspace event, WATCH or tracking touch).
  uint64_t WriteFragments(std::string_view key, LoadedKey* lk, std::string_view value, uint64_t expire_ms,
                          bool relayout = false);
  // Redis' dbUnshareStringValue of a live key that a command looks at for a write
  // it may then not make (PFADD, PFCOUNT, SETBIT, BITFIELD): an inline value
  // reports OBJECT ENCODING raw from then on; no client sees a write.
  void MarkRaw(LoadedKey* lk);

 private:

  Database* db_;
};

}  // namespace kvrocks
