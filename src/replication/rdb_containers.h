// Decoders of Redis' compact in-memory encodings as they appear inside RDB
// values: ziplist, listpack, zipmap, intset, and LZF-compressed strings. Each
// checks every length against the blob and returns false on malformed input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvrocks::rdb {

// The elements of a ziplist (integers as decimal strings).
bool DecodeZiplist(std::string_view blob, std::vector<std::string>* out);
// The elements of a listpack (integers as decimal strings).
bool DecodeListpack(std::string_view blob, std::vector<std::string>* out);
// The field/value strings of a zipmap, flattened.
bool DecodeZipmap(std::string_view blob, std::vector<std::string>* out);
// The members of an intset as decimal strings.
bool DecodeIntset(std::string_view blob, std::vector<std::string>* out);
// LZF decompression to exactly out_len bytes.
bool LzfDecompress(std::string_view in, size_t out_len, std::string* out);

}  // namespace kvrocks::rdb
