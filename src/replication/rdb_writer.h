// Writes values in Redis' RDB object format (for DUMP payloads): lengths,
// strings, binary doubles, millisecond times, and listpacks (stream nodes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvrocks::rdb {

// The RDB version DUMP payloads carry: Redis 7.0's, so that Redis 7.0 accepts them.
inline constexpr int kDumpVersion = 10;

void PutLen(std::string* out, uint64_t len);
void PutString(std::string* out, std::string_view s);
void PutBinaryDouble(std::string* out, double v);
void PutMillis(std::string* out, uint64_t ms);
// A CRC64 as RDB files and DUMP payloads end with (8 bytes, little-endian).
void PutCrc64(std::string* out, uint64_t crc);

// Builds a listpack element by element.
class ListpackBuilder {
 public:
  void AddInt(int64_t v);
  // Stored as an integer when it is one, as listpack does.
  void AddString(std::string_view s);
  std::string Finish() const;

 private:
  void AddEntry(const std::string& entry);
  std::string body_;
  uint32_t count_ = 0;
};

// Appends the RDB version and CRC64 to a serialized object (type byte + value).
std::string FinishDump(std::string body, int version = kDumpVersion);

}  // namespace kvrocks::rdb
