// Writes values in Redis' RDB object format (DUMP payloads, RDB files): lengths,
// strings as Redis saves them (integer-encoded or LZF-compressed), binary doubles,
// millisecond times, and Redis 7.0's compact encodings (listpacks, intsets,
// quicklists), so that a payload matches Redis' byte for byte wherever Redis'
// own layout follows from the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvrocks::rdb {

// The RDB version DUMP payloads carry: Redis 7.0's, so that Redis 7.0 accepts them.
inline constexpr int kDumpVersion = 10;

// Redis' rdbcompression (default yes): whether strings are saved LZF-compressed.
// Process-wide; the config sets it (main.cc).
void SetCompression(bool on);
bool Compression();

// DEBUG QUICKLIST-PACKED-THRESHOLD: a list element of at least this many bytes
// gets a quicklist node of its own (a plain node). Process-wide; 1 GiB by default.
void SetPackedThreshold(size_t bytes);

void PutLen(std::string* out, uint64_t len);
// A length-prefixed string, verbatim.
void PutString(std::string* out, std::string_view s);
// A string as Redis' rdbSaveRawString writes it: up to 11 bytes that read as an
// integer of 32 bits or less as that integer; over 20 bytes LZF-compressed when
// Compression() is on and that saves more than 4 bytes; else verbatim.
void PutRawString(std::string* out, std::string_view s);
void PutBinaryDouble(std::string* out, double v);
void PutMillis(std::string* out, uint64_t ms);
// A CRC64 as RDB files and DUMP payloads end with (8 bytes, little-endian).
void PutCrc64(std::string* out, uint64_t crc);

// Compresses in as Redis' lzf_compress (liblzf with HLOG 16 and VERY_FAST)
// does when its hash table starts empty, appending to *out. Returns the
// compressed size, or 0 (and *out unchanged) when it needs more than out_cap bytes.
size_t LzfCompress(std::string_view in, size_t out_cap, std::string* out);

// Builds a listpack element by element.
class ListpackBuilder {
 public:
  void AddInt(int64_t v);
  // Stored as an integer when it is one, as listpack does.
  void AddString(std::string_view s);
  std::string Finish() const;
  // What Finish() would return's size, and the elements so far.
  size_t Bytes() const { return 6 + body_.size() + 1; }
  uint32_t Count() const { return count_; }

 private:
  void AddEntry(const std::string& entry);
  std::string body_;
  uint32_t count_ = 0;
};

// An intset blob (width, count, values in ascending order, little-endian) whose
// values take at least min_width bytes (2, 4 or 8), or more if one needs it.
std::string IntsetBlob(std::vector<int64_t> values, int min_width);

// The body of a RDB_TYPE_LIST_QUICKLIST_2 value: elems as Redis 7.0 holds them
// after pushing them one by one at the tail of a new list with
// list-max-listpack-size `fill` and list-compress-depth `depth` (node split,
// inner nodes LZF-compressed).
void PutQuicklist(std::string* out, const std::vector<std::string>& elems, int fill, int depth);
// The byte sizes of that quicklist's nodes (a listpack's, or a plain node's element).
std::vector<size_t> QuicklistNodeSizes(const std::vector<std::string>& elems, int fill);

// Appends the RDB version and CRC64 to a serialized object (type byte + value).
std::string FinishDump(std::string body, int version = kDumpVersion);

}  // namespace kvrocks::rdb
