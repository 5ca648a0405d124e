// A writable byte view of one string key, for writes that change part of a
// value (SETBIT, BITFIELD, APPEND, SETRANGE). A small value is edited whole and
// stored inline; once the value exceeds kStringFragmentBytes it is kept in
// fragments (see redis_string.h) and only the fragments a write touches are read
// and written: O(bytes written) whatever the string's size.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "types/database.h"
#include "types/redis_string.h"

namespace kvrocks {

// APPEND and SETRANGE edit a string in place once it is this big.
inline constexpr uint64_t kEditInPlaceAt = 64 * 1024;

class StringEditor {
 public:
  // split_at: the size past which the value is kept in fragments (bit writes:
  // one fragment; APPEND and SETRANGE: kEditInPlaceAt, below which a value
  // rewritten whole stays one key for GET).
  StringEditor(Database* db, std::string_view key, uint64_t split_at = kStringFragmentBytes)
      : db_(db), str_(db), key_(key), split_at_(split_at) {}

  // Loads the key; WRONGTYPE if it holds a live non-string. A value over
  // split_at that is stored whole (SET by a client, say) becomes fragments at
  // the first Grow or Write, O(n) once, so that this and later edits touch
  // single fragments; a command that writes nothing leaves it as it is.
  Status Open();

  uint64_t size() const { return size_; }
  bool exists() const { return lk_.live; }
  // The key as Open loaded it, for a caller that stores it another way.
  LoadedKey* loaded() { return &lk_; }

  // Makes the string at least n bytes long (zero padded).
  void Grow(uint64_t n);
  // Copies bytes [offset, offset+n) into buf (offset+n <= size()).
  Status Read(uint64_t offset, size_t n, uint8_t* buf);
  // Overwrites bytes [offset, offset+n) (offset+n <= size()).
  Status Write(uint64_t offset, size_t n, const uint8_t* buf);
  // Makes Commit store the key even if no byte changed (APPEND of nothing is a
  // write for Redis: keyspace event, WATCH, dirty count).
  void Touch() { changed_ = true; }

  // Writes the changes (if the string changed or grew) into the context. A
  // write that changes nothing is no write for clients, but Redis has unshared
  // the value all the same: it reports "raw" from then on. encoding_flag is how
  // a small result reports in OBJECT ENCODING (WriteValue).
  void Commit(uint8_t encoding_flag = kRawEncodingFlag);

 private:
  // Moves the value into fragments. relayout: the value as it is (Open), which
  // no client sees as a write; otherwise the string is growing (Grow), and
  // Commit stores the metadata again with the final size.
  void Split(bool relayout);
  // Split(true) of a value over split_at still stored whole (Open).
  void SplitIfBig();
  Status Fragment(uint64_t index, std::string** frag);
  // The name and db in the fragments' keys (Metadata::SubkeyName, SubkeyDb).
  std::string_view SubkeyName() const { return owner_.empty() ? std::string_view(key_) : std::string_view(owner_); }
  uint8_t SubkeyDb() const { return owner_db_ < 0 ? db_->id() : static_cast<uint8_t>(owner_db_); }

  Database* db_;
  RedisString str_;
  std::string key_;
  uint64_t split_at_;
  LoadedKey lk_;
  bool fragmented_ = false;
  bool changed_ = false;
  bool grown_ = false;
  uint64_t version_ = 0;
  std::string owner_;  // fragmented: Metadata::owner and owner_db of version_
  int owner_db_ = -1;
  uint64_t size_ = 0;
  std::string whole_;                      // the value when not fragmented
  std::map<uint32_t, std::string> frags_;  // fragments read so far, full length
  std::set<uint32_t> dirty_;
};

}  // namespace kvrocks
