#include "replication/rdb_writer.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/encoding.h"
#include "common/string_util.h"
#include "replication/rdb_reader.h"

namespace kvrocks::rdb {

namespace {

void PutLE(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// listpack's back-length: the entry size written so that it reads backwards.
void PutBacklen(std::string* out, uint64_t l) {
  if (l <= 127) {
    out->push_back(static_cast<char>(l));
  } else if (l < 16383) {
    out->push_back(static_cast<char>(l >> 7));
    out->push_back(static_cast<char>((l & 127) | 128));
  } else if (l < 2097151) {
    out->push_back(static_cast<char>(l >> 14));
    out->push_back(static_cast<char>(((l >> 7) & 127) | 128));
    out->push_back(static_cast<char>((l & 127) | 128));
  } else if (l < 268435455) {
    out->push_back(static_cast<char>(l >> 21));
    out->push_back(static_cast<char>(((l >> 14) & 127) | 128));
    out->push_back(static_cast<char>(((l >> 7) & 127) | 128));
    out->push_back(static_cast<char>((l & 127) | 128));
  } else {
    out->push_back(static_cast<char>(l >> 28));
    out->push_back(static_cast<char>(((l >> 21) & 127) | 128));
    out->push_back(static_cast<char>(((l >> 14) & 127) | 128));
    out->push_back(static_cast<char>(((l >> 7) & 127) | 128));
    out->push_back(static_cast<char>((l & 127) | 128));
  }
}

std::atomic<bool> compression{true};
std::atomic<size_t> packed_threshold{size_t{1} << 30};

// lzf_compress' hash table, kept per thread: a slot holds the generation of the
// call that wrote it (high 32 bits) and a position, so that a call sees an empty
// table without clearing 512 KiB each time.
struct LzfTable {
  std::vector<uint64_t> slots = std::vector<uint64_t>(1 << 16, 0);
  uint64_t generation = 0;

  uint64_t NextGeneration() {
    if (++generation == (uint64_t{1} << 32)) {
      std::fill(slots.begin(), slots.end(), 0);
      generation = 1;
    }
    return generation << 32;
  }
};

constexpr size_t kLzfMaxLit = 1 << 5;
constexpr size_t kLzfMaxOff = 1 << 13;
constexpr size_t kLzfMaxRef = (1 << 8) + (1 << 3);

inline uint32_t LzfIndex(uint32_t h) { return ((h >> 8) - h * 5) & 0xFFFF; }

// The RDB form of an LZF-compressed string (rdbSaveLzfBlob).
void PutLzfBlob(std::string* out, std::string_view compressed, size_t original_len) {
  out->push_back(static_cast<char>(0xC3));
  PutLen(out, compressed.size());
  PutLen(out, original_len);
  out->append(compressed);
}

int IntsetWidth(int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX) return 8;
  return v < INT16_MIN || v > INT16_MAX ? 4 : 2;
}

// quicklist's limits (quicklist.c, Redis 7.0).
constexpr size_t kSizeSafetyLimit = 8192;
constexpr size_t kSizeEstimateOverhead = 8;
constexpr size_t kOptimizationLevel[] = {4096, 8192, 16384, 32768, 65536};
constexpr size_t kMinCompressBytes = 48;
constexpr size_t kMinCompressImprove = 8;

struct QuicklistNode {
  bool plain = false;
  std::string plain_value;
  ListpackBuilder lp;
};

// _quicklistNodeAllowInsert: whether an element of sz bytes joins node.
bool AllowInsert(const QuicklistNode& node, int fill, size_t sz, size_t threshold) {
  if (node.plain || sz >= threshold) return false;
  size_t new_sz = node.lp.Bytes() + sz + kSizeEstimateOverhead;
  if (fill < 0) return new_sz <= kOptimizationLevel[-fill - 1];
  return new_sz <= kSizeSafetyLimit && static_cast<int>(node.lp.Count()) < fill;
}

}  // namespace

void SetCompression(bool on) { compression.store(on, std::memory_order_relaxed); }
bool Compression() { return compression.load(std::memory_order_relaxed); }
void SetPackedThreshold(size_t bytes) { packed_threshold.store(bytes, std::memory_order_relaxed); }

size_t LzfCompress(std::string_view input, size_t out_cap, std::string* out) {
  const auto* in = reinterpret_cast<const uint8_t*>(input.data());
  const size_t in_len = input.size();
  if (in_len == 0 || out_cap == 0 || in_len >= UINT32_MAX) return 0;
  thread_local LzfTable table;
  const uint64_t gen = table.NextGeneration();
  uint64_t* slots = table.slots.data();
  std::string buf(out_cap + 1, '\0');  // the scheme writes a run header one past what it returns
  auto* o = reinterpret_cast<uint8_t*>(buf.data());
  const size_t out_end = out_cap;
  size_t ip = 0, op = 1;  // op: past the header of the literal run being written
  size_t lit = 0;
  uint32_t hval = in_len >= 2 ? (in[0] << 8) | in[1] : 0;
  // One more byte in the literal run; a full run (32 bytes) is closed and the next begun.
  auto copy_literal = [&] {
    lit++;
    o[op++] = in[ip++];
    if (lit == kLzfMaxLit) {
      o[op - lit - 1] = static_cast<uint8_t>(lit - 1);
      lit = 0;
      op++;
    }
  };
  while (ip + 2 < in_len) {
    hval = (hval << 8) | in[ip + 2];
    uint64_t& slot = slots[LzfIndex(hval)];
    const bool seen = (slot & ~uint64_t{0xFFFFFFFF}) == gen;
    const size_t ref = slot & 0xFFFFFFFF;
    slot = gen | ip;
    size_t off = seen ? ip - ref - 1 : 0;
    // As liblzf, a match never starts at the first byte (its `ref > in_data`).
    if (seen && ref > 0 && off < kLzfMaxOff && in[ref + 2] == in[ip + 2] && in[ref] == in[ip] &&
        in[ref + 1] == in[ip + 1]) {
      size_t len = 2;
      const size_t maxlen = std::min(in_len - ip - len, kLzfMaxRef);
      if (op + 3 + 1 >= out_end && op - (lit == 0) + 3 + 1 >= out_end) return 0;
      o[op - lit - 1] = static_cast<uint8_t>(lit - 1);  // close the literal run
      op -= lit == 0;                                  // or drop its empty header
      bool ended = false;
      if (maxlen > 16) {  // liblzf compares 16 bytes unrolled first, without the bound
        for (int i = 0; i < 16 && !ended; i++) {
          len++;
          ended = in[ref + len] != in[ip + len];
        }
      }
      if (!ended) {
        do {
          len++;
        } while (len < maxlen && in[ref + len] == in[ip + len]);
      }
      len -= 2;  // the match is len + 2 bytes
      ip++;
      if (len < 7) {
        o[op++] = static_cast<uint8_t>((off >> 8) + (len << 5));
      } else {
        o[op++] = static_cast<uint8_t>((off >> 8) + (7 << 5));
        o[op++] = static_cast<uint8_t>(len - 7);
      }
      o[op++] = static_cast<uint8_t>(off);
      lit = 0;
      op++;
      ip += len + 1;
      if (ip + 2 >= in_len) break;
      // VERY_FAST: hash the match's last two positions only.
      ip -= 2;
      hval = (in[ip] << 8) | in[ip + 1];
      for (int i = 0; i < 2; i++, ip++) {
        hval = (hval << 8) | in[ip + 2];
        slots[LzfIndex(hval)] = gen | ip;
      }
    } else {
      if (op >= out_end) return 0;
      copy_literal();
    }
  }
  if (op + 3 > out_end) return 0;
  while (ip < in_len) copy_literal();
  o[op - lit - 1] = static_cast<uint8_t>(lit - 1);
  op -= lit == 0;
  out->append(buf, 0, op);
  return op;
}

void PutLen(std::string* out, uint64_t len) {
  if (len < (1 << 6)) {
    out->push_back(static_cast<char>(len));
  } else if (len < (1 << 14)) {
    out->push_back(static_cast<char>(((len >> 8) & 0x3F) | 0x40));
    out->push_back(static_cast<char>(len & 0xFF));
  } else if (len <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    PutBE32(out, static_cast<uint32_t>(len));
  } else {
    out->push_back(static_cast<char>(0x81));
    PutBE64(out, len);
  }
}

void PutString(std::string* out, std::string_view s) {
  PutLen(out, s.size());
  out->append(s);
}

void PutRawString(std::string* out, std::string_view s) {
  int64_t v;
  if (s.size() <= 11 && ParseInt64(s, &v) && v >= INT32_MIN && v <= INT32_MAX) {
    if (v >= INT8_MIN && v <= INT8_MAX) {
      out->push_back(static_cast<char>(0xC0));
      PutLE(out, static_cast<uint64_t>(v), 1);
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
      out->push_back(static_cast<char>(0xC1));
      PutLE(out, static_cast<uint64_t>(v), 2);
    } else {
      out->push_back(static_cast<char>(0xC2));
      PutLE(out, static_cast<uint64_t>(v), 4);
    }
    return;
  }
  if (Compression() && s.size() > 20) {
    std::string compressed;
    if (LzfCompress(s, s.size() - 4, &compressed) > 0) return PutLzfBlob(out, compressed, s.size());
  }
  PutString(out, s);
}

void PutBinaryDouble(std::string* out, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutLE(out, bits, 8);
}

void PutMillis(std::string* out, uint64_t ms) { PutLE(out, ms, 8); }

void PutCrc64(std::string* out, uint64_t crc) { PutLE(out, crc, 8); }

void ListpackBuilder::AddEntry(const std::string& entry) {
  body_.append(entry);
  PutBacklen(&body_, entry.size());
  count_++;
}

void ListpackBuilder::AddInt(int64_t v) {
  std::string e;
  if (v >= 0 && v <= 127) {
    e.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    uint64_t u = static_cast<uint64_t>(v) & 0x1FFF;
    e.push_back(static_cast<char>(0xC0 | (u >> 8)));
    e.push_back(static_cast<char>(u & 0xFF));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    e.push_back(static_cast<char>(0xF1));
    PutLE(&e, static_cast<uint64_t>(v), 2);
  } else if (v >= -8388608 && v <= 8388607) {
    e.push_back(static_cast<char>(0xF2));
    PutLE(&e, static_cast<uint64_t>(v), 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    e.push_back(static_cast<char>(0xF3));
    PutLE(&e, static_cast<uint64_t>(v), 4);
  } else {
    e.push_back(static_cast<char>(0xF4));
    PutLE(&e, static_cast<uint64_t>(v), 8);
  }
  AddEntry(e);
}

void ListpackBuilder::AddString(std::string_view s) {
  int64_t v;
  if (s.size() <= 20 && ParseInt64(s, &v)) return AddInt(v);
  std::string e;
  if (s.size() < 64) {
    e.push_back(static_cast<char>(0x80 | s.size()));
  } else if (s.size() < 4096) {
    e.push_back(static_cast<char>(0xE0 | (s.size() >> 8)));
    e.push_back(static_cast<char>(s.size() & 0xFF));
  } else {
    e.push_back(static_cast<char>(0xF0));
    PutLE(&e, s.size(), 4);
  }
  e.append(s);
  AddEntry(e);
}

std::string ListpackBuilder::Finish() const {
  std::string out;
  PutLE(&out, 6 + body_.size() + 1, 4);
  PutLE(&out, count_ < 65535 ? count_ : 65535, 2);
  out.append(body_);
  out.push_back(static_cast<char>(0xFF));
  return out;
}

std::string IntsetBlob(std::vector<int64_t> values, int min_width) {
  std::sort(values.begin(), values.end());
  int width = min_width;
  for (int64_t v : values) width = std::max(width, IntsetWidth(v));
  std::string out;
  PutLE(&out, static_cast<uint64_t>(width), 4);
  PutLE(&out, values.size(), 4);
  for (int64_t v : values) PutLE(&out, static_cast<uint64_t>(v), width);
  return out;
}

namespace {

std::vector<QuicklistNode> LayOutQuicklist(const std::vector<std::string>& elems, int fill) {
  fill = std::clamp(fill, -5, (1 << 15) - 1);  // as quicklistSetFill
  const size_t threshold = packed_threshold.load(std::memory_order_relaxed);
  std::vector<QuicklistNode> nodes;
  for (const auto& e : elems) {
    if (nodes.empty() || !AllowInsert(nodes.back(), fill, e.size(), threshold)) {
      nodes.emplace_back();
      if (e.size() >= threshold) {
        nodes.back().plain = true;
        nodes.back().plain_value = e;
        continue;
      }
    }
    nodes.back().lp.AddString(e);
  }
  return nodes;
}

}  // namespace

std::vector<size_t> QuicklistNodeSizes(const std::vector<std::string>& elems, int fill) {
  std::vector<size_t> sizes;
  for (const auto& node : LayOutQuicklist(elems, fill)) {
    sizes.push_back(node.plain ? node.plain_value.size() : node.lp.Bytes());
  }
  return sizes;
}

void PutQuicklist(std::string* out, const std::vector<std::string>& elems, int fill, int depth) {
  depth = std::clamp(depth, 0, (1 << 16) - 1);  // as quicklistSetCompressDepth
  std::vector<QuicklistNode> nodes = LayOutQuicklist(elems, fill);
  PutLen(out, nodes.size());
  const size_t n = nodes.size(), d = static_cast<size_t>(depth);
  for (size_t i = 0; i < n; i++) {
    PutLen(out, nodes[i].plain ? 1 : 2);  // QUICKLIST_NODE_CONTAINER_PLAIN / PACKED
    std::string blob = nodes[i].plain ? std::move(nodes[i].plain_value) : nodes[i].lp.Finish();
    // Tail pushes leave every node but the `depth` ones at each end compressed
    // (where that saves enough); Redis saves those as they are in memory.
    if (d > 0 && n >= 2 * d && i >= d && i < n - d && blob.size() >= kMinCompressBytes) {
      std::string compressed;
      size_t len = LzfCompress(blob, blob.size(), &compressed);
      if (len > 0 && len + kMinCompressImprove < blob.size()) {
        PutLzfBlob(out, compressed, blob.size());
        continue;
      }
    }
    PutRawString(out, blob);
  }
}

std::string FinishDump(std::string body, int version) {
  PutLE(&body, static_cast<uint64_t>(version), 2);
  PutCrc64(&body, Crc64(0, body.data(), body.size()));
  return body;
}

}  // namespace kvrocks::rdb
