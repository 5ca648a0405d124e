// SCAN-family cursors. Redis clients expect numeric cursors; kvrocks iterates
// in key order, so a cursor names the position (a raw key or a field) where the
// scan continues. The table keeps the most recent positions under random ids.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>

namespace kvrocks {

class CursorTable {
 public:
  // A new cursor id (never 0) for position.
  uint64_t Save(const std::string& position);
  // The position of a cursor, or "" (start over) for an unknown one. Starting
  // over keeps SCAN's guarantee: every element present throughout is returned.
  std::string Find(uint64_t id);

 private:
  static constexpr size_t kCapacity = 65536;
  std::mutex mu_;
  std::mt19937_64 rng_{std::random_device{}()};
  std::unordered_map<uint64_t, std::string> positions_;
  std::deque<uint64_t> order_;
};

CursorTable& ScanCursors();

// Parses a cursor as Redis' strtoul-based parser does (so "-1" is a valid, unknown
// cursor, "" is 0, and a leading space, trailing bytes or overflow are invalid).
bool ParseCursor(const std::string& s, uint64_t* out);

}  // namespace kvrocks
