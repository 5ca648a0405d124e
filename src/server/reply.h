// RESP2 and RESP3 reply encoding, byte for byte as Redis writes it. Functions
// taking `resp` (2 or 3) write the form of the client's protocol.
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

inline void Null(std::string* out, int resp) { out->append(resp == 3 ? "_\r\n" : "$-1\r\n"); }
inline void NullArray(std::string* out, int resp) { out->append(resp == 3 ? "_\r\n" : "*-1\r\n"); }

inline void ArrayHeader(std::string* out, size_t n) {
  out->push_back('*');
  out->append(std::to_string(n));
  out->append("\r\n");
}

// A map of n pairs: "%n" in RESP3, a flat array of 2n in RESP2.
inline void MapHeader(std::string* out, size_t n, int resp) {
  out->push_back(resp == 3 ? '%' : '*');
  out->append(std::to_string(resp == 3 ? n : 2 * n));
  out->append("\r\n");
}

inline void SetHeader(std::string* out, size_t n, int resp) {
  out->push_back(resp == 3 ? '~' : '*');
  out->append(std::to_string(n));
  out->append("\r\n");
}

// Text such as INFO: a verbatim "txt" string in RESP3, a bulk string in RESP2.
inline void Verbatim(std::string* out, std::string_view s, int resp) {
  if (resp != 3) return Bulk(out, s);
  out->push_back('=');
  out->append(std::to_string(s.size() + 4));
  out->append("\r\ntxt:");
  out->append(s);
  out->append("\r\n");
}

// A score as Redis' addReplyDouble writes it (%.17g; inf/-inf): bulk in RESP2, double in RESP3.
void Double(std::string* out, double d, int resp);

inline void BulkArray(std::string* out, const std::vector<std::string>& items) {
  ArrayHeader(out, items.size());
  for (const auto& s : items) Bulk(out, s);
}

inline void Ok(std::string* out) { out->append("+OK\r\n"); }

}  // namespace kvrocks::reply
