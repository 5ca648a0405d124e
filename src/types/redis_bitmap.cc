#include "types/redis_bitmap.h"

#include <algorithm>

#include "types/redis_string.h"
#include "types/string_editor.h"

namespace kvrocks {

namespace {

// Bits [offset, offset+bits) of buf (bit 0 = most significant bit of buf[0]).
uint64_t GetBits(const uint8_t* buf, uint64_t offset, int bits) {
  uint64_t v = 0;
  for (int i = 0; i < bits; i++, offset++) {
    v = (v << 1) | ((buf[offset >> 3] >> (7 - (offset & 7))) & 1);
  }
  return v;
}

void SetBits(uint8_t* buf, uint64_t offset, int bits, uint64_t v) {
  for (int i = bits - 1; i >= 0; i--, offset++) {
    uint8_t mask = static_cast<uint8_t>(1 << (7 - (offset & 7)));
    if ((v >> i) & 1) {
      buf[offset >> 3] |= mask;
    } else {
      buf[offset >> 3] &= static_cast<uint8_t>(~mask);
    }
  }
}

// Sign-extends the low `bits` bits of v.
int64_t SignExtend(uint64_t v, int bits) {
  if (bits < 64 && (v >> (bits - 1)) & 1) v |= ~0ULL << bits;
  return static_cast<int64_t>(v);
}

uint64_t LowBits(uint64_t v, int bits) { return bits == 64 ? v : v & ((1ULL << bits) - 1); }

// Applies the overflow policy of one BITFIELD SET/INCRBY to the exact result
// `want`; false if the op must fail (OVERFLOW FAIL). *stored is the field's new raw bits.
bool Fit(const BitfieldOp& op, __int128 want, uint64_t* stored) {
  __int128 min, max;
  if (op.is_signed) {
    max = (static_cast<__int128>(1) << (op.bits - 1)) - 1;
    min = -max - 1;
  } else {
    max = (static_cast<__int128>(1) << op.bits) - 1;
    min = 0;
  }
  if (want >= min && want <= max) {
    *stored = LowBits(static_cast<uint64_t>(want), op.bits);
    return true;
  }
  switch (op.overflow) {
    case BitfieldOp::kWrap:
      *stored = LowBits(static_cast<uint64_t>(want), op.bits);
      return true;
    case BitfieldOp::kSat:
      *stored = LowBits(static_cast<uint64_t>(want > max ? max : min), op.bits);
      return true;
    case BitfieldOp::kFail:
      return false;
  }
  return false;
}

int64_t FieldValue(const BitfieldOp& op, uint64_t raw) {
  return op.is_signed ? SignExtend(raw, op.bits) : static_cast<int64_t>(raw);
}

}  // namespace

Status RedisBitmap::GetBit(std::string_view key, uint64_t offset, int* bit) {
  *bit = 0;
  RedisString str(db_);
  std::string raw, byte;
  Status s = str.LoadForRead(key, &raw);
  if (s.IsNotFound()) return Status::OK();
  if (s.ok()) s = str.ReadRange(key, raw, offset >> 3, 1, &byte);
  if (!s.ok()) return s;
  if (!byte.empty()) *bit = (static_cast<uint8_t>(byte[0]) >> (7 - (offset & 7))) & 1;
  return Status::OK();
}

Status RedisBitmap::SetBit(std::string_view key, uint64_t offset, int bit, int* old) {
  StringEditor w(db_, key);
  Status s = w.Open();
  if (!s.ok()) return s;
  uint64_t at = offset >> 3;
  const bool created = !w.exists();
  const uint64_t size_before = w.size();
  w.Grow(at + 1);
  uint8_t byte = 0;
  s = w.Read(at, 1, &byte);
  if (!s.ok()) return s;
  uint8_t mask = static_cast<uint8_t>(1 << (7 - (offset & 7)));
  *old = (byte & mask) ? 1 : 0;
  if (*old != bit) {
    byte = bit ? (byte | mask) : (byte & static_cast<uint8_t>(~mask));
    s = w.Write(at, 1, &byte);
    if (!s.ok()) return s;
  }
  // Redis' dirty count: a new key, a longer string or a changed bit.
  if (created || w.size() > size_before || *old != bit) db_->ctx()->AddDirty(1);
  w.Commit();
  return Status::OK();
}

// Bits of byte b at positions [lo, hi] (0 = most significant), others cleared.
static uint8_t BitsBetween(uint8_t b, unsigned lo, unsigned hi) {
  uint8_t mask = static_cast<uint8_t>((0xFFu >> lo) & (0xFFu << (7 - hi)));
  return b & mask;
}

Status RedisBitmap::CountBits(std::string_view key, const std::string& raw, uint64_t first, uint64_t last,
                              int64_t* count) {
  *count = 0;
  uint64_t first_byte = first >> 3, last_byte = last >> 3;
  return RedisString(db_).ReadChunks(
      key, raw, first_byte, last_byte - first_byte + 1, [&](uint64_t at, std::string_view bytes) {
        const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
        size_t n = bytes.size(), i = 0;
        int64_t c = 0;
        for (; i < n && (at + i == first_byte || at + i == last_byte); i++) {
          uint64_t pos = at + i;
          unsigned lo = pos == first_byte ? first & 7 : 0, hi = pos == last_byte ? last & 7 : 7;
          c += __builtin_popcount(BitsBetween(p[i], lo, hi));
        }
        size_t body_end = (at + n - 1 == last_byte) ? n - 1 : n;
        for (; i + 8 <= body_end; i += 8) {
          uint64_t word;
          std::copy_n(p + i, 8, reinterpret_cast<uint8_t*>(&word));
          c += __builtin_popcountll(word);
        }
        for (; i < n; i++) {
          uint64_t pos = at + i;
          unsigned lo = pos == first_byte ? first & 7 : 0, hi = pos == last_byte ? last & 7 : 7;
          c += __builtin_popcount(BitsBetween(p[i], lo, hi));
        }
        *count += c;
        return true;
      });
}

Status RedisBitmap::FindBit(std::string_view key, const std::string& raw, int bit, uint64_t first, uint64_t last,
                            bool* found, uint64_t* pos) {
  *found = false;
  uint64_t first_byte = first >> 3, last_byte = last >> 3;
  uint64_t cursor = first;  // for bit 0: every bit before cursor is known to be 1
  Status s = RedisString(db_).ReadChunks(
      key, raw, first_byte, last_byte - first_byte + 1, [&](uint64_t at, std::string_view bytes) {
        if (bit == 0 && at * 8 > cursor) {  // a gap (missing fragment) of zeros
          *found = true;
          *pos = cursor;
          return false;
        }
        for (size_t i = 0; i < bytes.size(); i++) {
          uint64_t byte_pos = at + i;
          unsigned lo = byte_pos == first_byte ? first & 7 : 0, hi = byte_pos == last_byte ? last & 7 : 7;
          uint8_t b = static_cast<uint8_t>(bytes[i]);
          if (bit == 0) b = static_cast<uint8_t>(~b);
          b = BitsBetween(b, lo, hi);
          if (b != 0) {
            *found = true;
            *pos = byte_pos * 8 + static_cast<uint64_t>(__builtin_clz(b) - 24);
            return false;
          }
        }
        cursor = (at + bytes.size()) * 8;
        return true;
      });
  if (s.ok() && !*found && bit == 0 && cursor <= last) {
    *found = true;
    *pos = cursor;
  }
  return s;
}

Status RedisBitmap::BitOp(BitOpKind op, std::string_view dest, const std::vector<std::string>& sources,
                          uint64_t* len) {
  RedisString str(db_);
  std::vector<std::string> values(sources.size());
  size_t maxlen = 0, minlen = SIZE_MAX;
  {
    Context::SnapshotScope snapshot(db_->ctx());
    for (size_t i = 0; i < sources.size(); i++) {
      Status s = str.Get(sources[i], &values[i]);
      if (!s.ok() && !s.IsNotFound()) return s;
      maxlen = std::max(maxlen, values[i].size());
      minlen = std::min(minlen, values[i].size());
    }
  }
  *len = maxlen;
  LoadedKey lk;
  Status s = db_->Load(dest, &lk);
  if (!s.ok()) return s;
  if (maxlen == 0) {
    db_->RemoveDestination(dest, &lk);  // as Redis' dbDelete, expired or not
    return Status::OK();
  }
  std::string out(maxlen, '\0');
  for (size_t j = 0; j < maxlen; j++) {
    auto byte_of = [&](size_t i) -> uint8_t { return j < values[i].size() ? static_cast<uint8_t>(values[i][j]) : 0; };
    uint8_t r = byte_of(0);
    if (op == BitOpKind::kNot) {
      r = static_cast<uint8_t>(~r);
    } else {
      for (size_t i = 1; i < values.size(); i++) {
        if (op == BitOpKind::kAnd) {
          if (j >= minlen) {
            r = 0;
            break;
          }
          r &= byte_of(i);
        } else if (op == BitOpKind::kOr) {
          r |= byte_of(i);
        } else {
          r ^= byte_of(i);
        }
      }
    }
    out[j] = static_cast<char>(r);
  }
  // Like SET, the result replaces dest and its TTL.
  if (out.size() <= kStringFragmentBytes) {
    str.WriteValue(dest, &lk, out, 0, kRawEncodingFlag);
  } else {
    str.WriteFragments(dest, &lk, out, 0);
  }
  return Status::OK();
}

Status RedisBitmap::BitField(std::string_view key, const std::vector<BitfieldOp>& ops,
                             std::vector<std::optional<int64_t>>* results) {
  results->clear();
  uint64_t write_end = 0;  // bytes the writes need
  for (const auto& op : ops) {
    if (op.kind != BitfieldOp::kGet) write_end = std::max(write_end, ((op.offset + op.bits - 1) >> 3) + 1);
  }
  if (write_end == 0) {  // read-only: no key is created
    RedisString str(db_);
    std::string raw;
    Status s = str.LoadForRead(key, &raw);
    if (!s.ok() && !s.IsNotFound()) return s;
    bool exists = s.ok();
    for (const auto& op : ops) {
      uint8_t buf[9] = {0};
      if (exists) {
        std::string bytes;
        s = str.ReadRange(key, raw, op.offset >> 3, 9, &bytes);
        if (!s.ok()) return s;
        std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(buf));
      }
      results->emplace_back(FieldValue(op, GetBits(buf, op.offset & 7, op.bits)));
    }
    return Status::OK();
  }
  StringEditor w(db_, key);
  Status s = w.Open();
  if (!s.ok()) return s;
  // Redis' dirty count: every write of a new or longer string, else every write that changes bits.
  const bool grew = !w.exists() || write_end > w.size();
  int64_t changes = 0;
  w.Grow(write_end);
  for (const auto& op : ops) {
    uint64_t at = op.offset >> 3;
    size_t n = std::min<uint64_t>(9, w.size() > at ? w.size() - at : 0);
    uint8_t buf[9] = {0};
    s = w.Read(at, n, buf);
    if (!s.ok()) return s;
    uint64_t old_raw = GetBits(buf, op.offset & 7, op.bits);
    int64_t old_value = FieldValue(op, old_raw);
    if (op.kind == BitfieldOp::kGet) {
      results->emplace_back(old_value);
      continue;
    }
    __int128 want = op.kind == BitfieldOp::kSet ? static_cast<__int128>(op.value)
                                                 : static_cast<__int128>(old_value) + op.value;
    if (op.kind == BitfieldOp::kSet && !op.is_signed) {
      // Redis checks an unsigned SET value as the unsigned 64-bit number it casts it to.
      want = static_cast<__int128>(static_cast<uint64_t>(op.value));
    }
    uint64_t stored;
    if (!Fit(op, want, &stored)) {
      results->emplace_back(std::nullopt);
      continue;
    }
    results->emplace_back(op.kind == BitfieldOp::kSet ? old_value : FieldValue(op, stored));
    if (grew || stored != old_raw) changes++;
    if (stored != old_raw) {
      SetBits(buf, op.offset & 7, op.bits, stored);
      s = w.Write(at, n, buf);
      if (!s.ok()) return s;
    }
  }
  db_->ctx()->AddDirty(changes);
  w.Commit();
  return Status::OK();
}

}  // namespace kvrocks
