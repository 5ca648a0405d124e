// Redis' thresholds for its compact encodings: hash-max-listpack-entries and
// -value, set-max-intset-entries, zset-max-listpack-entries and -value.
//
// kvrocks stores every collection the same way whatever its size; these limits
// only decide which encoding a key would have in Redis, which is what OBJECT
// ENCODING reports and what the behaviours Redis ties to the compact encodings
// follow (HSCAN, SSCAN and ZSCAN return a compact key whole in one call, an
// intset answers in numeric order, a listpack zset drops the sign of -0). As in
// Redis, a key converts to the big encoding when an element or its count passes
// a limit, and never converts back; changing a limit affects later writes only.
//
// One process-wide set, read on every collection write; CONFIG SET stores new
// values (main.cc). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvrocks {

// A hash's or set's metadata payload[0] flag: Redis would hold it as a hashtable
// (OBJECT ENCODING), set once a limit below is passed.
inline constexpr uint8_t kHashtableFlag = 1;

struct EncodingLimits {
  std::atomic<uint64_t> hash_max_listpack_entries{512};
  std::atomic<uint64_t> hash_max_listpack_value{64};
  std::atomic<uint64_t> set_max_intset_entries{512};
  std::atomic<uint64_t> zset_max_listpack_entries{128};
  std::atomic<uint64_t> zset_max_listpack_value{64};
  // list-max-listpack-size and list-compress-depth: only where a list is
  // serialized (DUMP, RDB), which lays it out in Redis' quicklist nodes.
  std::atomic<int> list_max_listpack_size{-2};
  std::atomic<int> list_compress_depth{0};

  static EncodingLimits& Get() {
    static EncodingLimits limits;
    return limits;
  }
  // Relaxed loads: a write racing a CONFIG SET may use either value, as in Redis'
  // single thread one command sees the old value and the next the new one.
  static uint64_t HashEntries() { return Get().hash_max_listpack_entries.load(std::memory_order_relaxed); }
  static uint64_t HashValue() { return Get().hash_max_listpack_value.load(std::memory_order_relaxed); }
  static uint64_t SetEntries() { return Get().set_max_intset_entries.load(std::memory_order_relaxed); }
  static uint64_t ZSetEntries() { return Get().zset_max_listpack_entries.load(std::memory_order_relaxed); }
  static uint64_t ZSetValue() { return Get().zset_max_listpack_value.load(std::memory_order_relaxed); }
  static int ListFill() { return Get().list_max_listpack_size.load(std::memory_order_relaxed); }
  static int ListCompressDepth() { return Get().list_compress_depth.load(std::memory_order_relaxed); }
};

}  // namespace kvrocks
