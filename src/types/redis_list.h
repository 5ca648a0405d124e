// The list type: metadata (version, size, head, tail) plus one subkey per
// element, `prefix(version) | index(8, BE) -> element`. Elements occupy the
// indexes [head, tail); both ends grow outward from 2^63, so pushes and pops at
// either end, LINDEX and LSET are O(1) point operations and LRANGE reads only
// what it returns. LINSERT and LREM rewrite the list (O(n)), as documented in
// docs/encoding.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/database.h"

namespace kvrocks {

class RedisList {
 public:
  explicit RedisList(Database* db) : db_(db) {}

  struct ListMeta {
    Metadata meta;
    uint64_t head = 0;
    uint64_t tail = 0;
    // list-max-listpack-size and list-compress-depth when the list was created:
    // Redis' quicklist keeps them for life, and lays its nodes out by them.
    int32_t fill = -2;
    int32_t depth = 0;
  };

  // The quicklist options of a list's metadata (the current config's for a list
  // written before kvrocks recorded them).
  static void QuicklistOptions(const Metadata& meta, int* fill, int* depth);

  // *len is the new length; with only_if_exists and no list, nothing is pushed and *len = 0.
  Status Push(std::string_view key, const std::vector<std::string_view>& elems, bool left, bool only_if_exists,
              int64_t* len);
  // Pops up to count elements from one end (none if the key is absent).
  Status Pop(std::string_view key, bool left, uint64_t count, std::vector<std::string>* elems);
  // LMOVE/RPOPLPUSH of a list onto itself: moves the element at one end to the
  // other end. The key stays (with its expiry) even with one element, as in
  // Redis, which pushes before it would delete an emptied source. *elem is the
  // element moved; NotFound if the list is absent.
  Status Rotate(std::string_view key, bool from_left, bool to_left, std::string* elem);
  Status Size(std::string_view key, uint64_t* size);
  Status Range(std::string_view key, int64_t start, int64_t stop, std::vector<std::string>* elems);
  // LPOS: walks the list from the head (or from the tail), at most maxlen
  // elements (0: all), calling on_match(index) for each element equal to elem
  // until it returns false. Reads only what it walks. Nothing for an absent key.
  Status Find(std::string_view key, std::string_view elem, bool from_tail, int64_t maxlen,
              const std::function<bool(int64_t)>& on_match);
  // NotFound if the key is absent or the index out of range.
  Status Index(std::string_view key, int64_t index, std::string* elem);
  Status Set(std::string_view key, int64_t index, std::string_view elem);
  // *len: new length, -1 if pivot is absent, 0 if the key is absent.
  Status Insert(std::string_view key, bool before, std::string_view pivot, std::string_view elem, int64_t* len);
  Status Rem(std::string_view key, int64_t count, std::string_view elem, int64_t* removed);
  Status Trim(std::string_view key, int64_t start, int64_t stop);
  // Loads key's list metadata; *exists=false if absent. WRONGTYPE for other types.
  Status LoadList(std::string_view key, LoadedKey* lk, ListMeta* lm, bool* exists);

 private:
  ListMeta NewList() const;
  void StoreMeta(std::string_view key, LoadedKey* lk, const ListMeta& lm);
  std::string ElemKey(std::string_view key, const ListMeta& lm, uint64_t index) const;
  // Replaces the list with elems under a new version.
  void Rewrite(std::string_view key, LoadedKey* lk, ListMeta* lm, const std::vector<std::string>& elems);

  Database* db_;
};

}  // namespace kvrocks
