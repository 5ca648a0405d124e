#include "commands/scan_cursor.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace kvrocks {

uint64_t CursorTable::Save(const std::string& position) {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t id;
  do {
    id = rng_() & ((1ULL << 62) - 1);
  } while (id == 0 || positions_.count(id) != 0);
  positions_[id] = position;
  order_.push_back(id);
  if (order_.size() > kCapacity) {
    positions_.erase(order_.front());
    order_.pop_front();
  }
  return id;
}

std::string CursorTable::Find(uint64_t id) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = positions_.find(id);
  return it == positions_.end() ? std::string() : it->second;
}

CursorTable& ScanCursors() {
  static CursorTable table;
  return table;
}

bool ParseCursor(const std::string& s, uint64_t* out) {
  // s[0] of "" is its terminator: strtoul reads "" as 0 with nothing left over, so
  // Redis takes an empty cursor as 0.
  if (std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *out = v;
  return true;
}

}  // namespace kvrocks
