// Bit operations on string values (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
// BITFIELD). A string that bit writes grow past kStringFragmentBytes is kept
// in fragments (see redis_string.h), so one bit costs one fragment read and
// write however large and sparse the bitmap is.
//
// Offsets here are already validated and converted by the command layer
// (negative indexes, BYTE/BIT units); this layer only reads and writes bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/database.h"

namespace kvrocks {

struct BitfieldOp {
  enum Kind { kGet, kSet, kIncrBy } kind = kGet;
  enum Overflow { kWrap, kSat, kFail } overflow = kWrap;
  bool is_signed = false;
  int bits = 0;         // 1..64 signed, 1..63 unsigned
  uint64_t offset = 0;  // in bits
  int64_t value = 0;    // SET value or INCRBY increment
};

enum class BitOpKind { kAnd, kOr, kXor, kNot };

class RedisBitmap {
 public:
  explicit RedisBitmap(Database* db) : db_(db) {}

  // The bit at offset (0 past the end or when key is absent).
  Status GetBit(std::string_view key, uint64_t offset, int* bit);
  // Sets the bit at offset, growing the string with zeros; *old is its previous value.
  Status SetBit(std::string_view key, uint64_t offset, int bit, int* old);

  // Number of set bits in bit positions [first, last] of the string whose
  // metadata is raw (first <= last < length in bits).
  Status CountBits(std::string_view key, const std::string& raw, uint64_t first, uint64_t last, int64_t* count);
  // Position of the first bit equal to bit in [first, last]; *found=false if none.
  Status FindBit(std::string_view key, const std::string& raw, int bit, uint64_t first, uint64_t last, bool* found,
                 uint64_t* pos);

  // BITOP: writes op over the sources to dest (deleting dest when every source
  // is empty); *len is the result's length in bytes.
  Status BitOp(BitOpKind op, std::string_view dest, const std::vector<std::string>& sources, uint64_t* len);

  // BITFIELD: runs ops in order; results[i] is nullopt when op i failed with
  // OVERFLOW FAIL. A write op creates or grows the key to cover every write.
  Status BitField(std::string_view key, const std::vector<BitfieldOp>& ops,
                  std::vector<std::optional<int64_t>>* results);

 private:
  Database* db_;
};

}  // namespace kvrocks
