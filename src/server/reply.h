// RESP2 reply encoding, byte for byte as Redis writes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvrocks::reply {

inline void Simple(std::string* out, std::string_view s) {
  out->push_back('+');
  out->append(s);
  out->append("\r\n");
}

// msg is a full Redis error ("ERR ...", "WRONGTYPE ..."); CR/LF in it become spaces.
void Error(std::string* out, std::string_view msg);

inline void Integer(std::string* out, int64_t v) {
  out->push_back(':');
  out->append(std::to_string(v));
  out->append("\r\n");
}

inline void Bulk(std::string* out, std::string_view s) {
  out->push_back('$');
  out->append(std::to_string(s.size()));
  out->append("\r\n");
  out->append(s);
  out->append("\r\n");
}

inline void NullBulk(std::string* out) { out->append("$-1\r\n"); }
inline void NullArray(std::string* out) { out->append("*-1\r\n"); }

inline void ArrayHeader(std::string* out, size_t n) {
  out->push_back('*');
  out->append(std::to_string(n));
  out->append("\r\n");
}

inline void BulkArray(std::string* out, const std::vector<std::string>& items) {
  ArrayHeader(out, items.size());
  for (const auto& s : items) Bulk(out, s);
}

inline void Ok(std::string* out) { out->append("+OK\r\n"); }

}  // namespace kvrocks::reply
