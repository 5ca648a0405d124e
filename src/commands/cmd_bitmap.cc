// Bitmap commands: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO.
// Argument handling follows Redis 7.0's bitops.c, including the order in which
// the key is looked up and the arguments are validated (it decides which error
// a client sees).
#include "commands/helpers.h"
#include "types/redis_bitmap.h"
#include "types/redis_string.h"

namespace kvrocks {

namespace {

const char kBitOffsetError[] = "ERR bit offset is not an integer or out of range";
const char kBitValueError[] = "ERR bit is not an integer or out of range";

// Parses a bit offset; with hash_bits > 0 the "#n" form means n * hash_bits.
bool BitOffsetArg(CommandCall& call, size_t i, int hash_bits, uint64_t* offset) {
  std::string_view arg = call.args[i];
  bool hash = hash_bits > 0 && !arg.empty() && arg[0] == '#';
  int64_t v;
  if (!ParseInt64(hash ? arg.substr(1) : arg, &v) ||
      (hash && (v > INT64_MAX / hash_bits || v < INT64_MIN / hash_bits))) {
    ReplyError(call, kBitOffsetError);
    return false;
  }
  if (hash) v *= hash_bits;
  if (v < 0 || (v >> 3) >= MaxStringLength(call)) {
    ReplyError(call, kBitOffsetError);
    return false;
  }
  *offset = static_cast<uint64_t>(v);
  return true;
}

void SetBit(CommandCall& call) {
  uint64_t offset;
  if (!BitOffsetArg(call, 2, 0, &offset)) return;
  int64_t bit;
  if (!ParseInt64(call.args[3], &bit) || (bit & ~1)) return ReplyError(call, kBitValueError);
  Database db = CurrentDb(call);
  int old;
  Status s = RedisBitmap(&db).SetBit(call.args[1], offset, static_cast<int>(bit), &old);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, old);
}

void GetBit(CommandCall& call) {
  uint64_t offset;
  if (!BitOffsetArg(call, 2, 0, &offset)) return;
  Database db = CurrentDb(call);
  int bit;
  Status s = RedisBitmap(&db).GetBit(call.args[1], offset, &bit);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, bit);
}

// Loads a string key for BITCOUNT/BITPOS: *exists=false if absent. Replies on error.
bool LoadBitmap(CommandCall& call, Database* db, std::string* raw, uint64_t* len, bool* exists) {
  RedisString str(db);
  Status s = str.LoadForRead(call.args[1], raw);
  *exists = s.ok();
  if (s.IsNotFound()) return true;
  if (s.ok()) s = RedisString::ValueSize(*raw, len);
  if (!s.ok()) ReplyStatusError(call, s);
  return s.ok();
}

// Parses a BYTE|BIT unit argument.
bool UnitArg(CommandCall& call, size_t i, bool* in_bits) {
  if (TokenEquals(call.args[i], "bit")) {
    *in_bits = true;
  } else if (TokenEquals(call.args[i], "byte")) {
    *in_bits = false;
  } else {
    ReplyError(call, kSyntaxError);
    return false;
  }
  return true;
}

// Redis' conversion of [start, end] (negative = from the end) within total
// units; false if the range is empty.
bool NormalizeRange(int64_t total, int64_t* start, int64_t* end) {
  if (*start < 0) *start += total;
  if (*end < 0) *end += total;
  if (*start < 0) *start = 0;
  if (*end < 0) *end = 0;
  if (*end >= total) *end = total - 1;
  return *start <= *end;
}

// BITCOUNT key [start end [BYTE|BIT]]
void BitCount(CommandCall& call) {
  Database db = CurrentDb(call);
  std::string raw;
  uint64_t len = 0;
  bool exists;
  if (!LoadBitmap(call, &db, &raw, &len, &exists)) return;
  if (!exists) return reply::Integer(call.out, 0);
  const size_t argc = call.args.size();
  int64_t start = 0, end = static_cast<int64_t>(len) - 1;
  bool in_bits = false;
  if (argc == 4 || argc == 5) {
    if (!IntArg(call, 2, &start) || !IntArg(call, 3, &end)) return;
    // As Redis' bitcountCommand: an empty negative range answers before the unit is read.
    if (start < 0 && end < 0 && start > end) return reply::Integer(call.out, 0);
    if (argc == 5 && !UnitArg(call, 4, &in_bits)) return;
    if (!NormalizeRange(static_cast<int64_t>(in_bits ? len * 8 : len), &start, &end)) {
      return reply::Integer(call.out, 0);
    }
  } else if (argc != 2) {
    return ReplyError(call, kSyntaxError);
  }
  if (start > end) return reply::Integer(call.out, 0);
  uint64_t first = in_bits ? start : start * 8, last = in_bits ? end : end * 8 + 7;
  int64_t count;
  Status s = RedisBitmap(&db).CountBits(call.args[1], raw, first, last, &count);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, count);
}

// BITPOS key bit [start [end [BYTE|BIT]]]
void BitPos(CommandCall& call) {
  int64_t bit;
  if (!IntArg(call, 2, &bit)) return;
  if (bit != 0 && bit != 1) return ReplyError(call, "ERR The bit argument must be 1 or 0.");
  Database db = CurrentDb(call);
  std::string raw;
  uint64_t len = 0;
  bool exists;
  if (!LoadBitmap(call, &db, &raw, &len, &exists)) return;
  // A missing key is an infinite run of zeros.
  if (!exists) return reply::Integer(call.out, bit ? -1 : 0);
  const size_t argc = call.args.size();
  int64_t start = 0, end = static_cast<int64_t>(len) - 1;
  bool in_bits = false, end_given = false;
  if (argc >= 4 && argc <= 6) {
    if (!IntArg(call, 3, &start)) return;
    if (argc == 6 && !UnitArg(call, 5, &in_bits)) return;
    if (argc >= 5) {
      if (!IntArg(call, 4, &end)) return;
      end_given = true;
    } else {
      end = in_bits ? static_cast<int64_t>(len * 8 + 7) : static_cast<int64_t>(len) - 1;
    }
    if (!NormalizeRange(static_cast<int64_t>(in_bits ? len * 8 : len), &start, &end)) {
      return reply::Integer(call.out, -1);
    }
  } else if (argc != 3) {
    return ReplyError(call, kSyntaxError);
  }
  if (start > end) return reply::Integer(call.out, -1);
  uint64_t first = in_bits ? start : start * 8, last = in_bits ? end : end * 8 + 7;
  bool found;
  uint64_t pos;
  Status s = RedisBitmap(&db).FindBit(call.args[1], raw, static_cast<int>(bit), first, last, &found, &pos);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (found) return reply::Integer(call.out, static_cast<int64_t>(pos));
  // Looking for a clear bit without an explicit end: the string is taken as
  // padded with zeros on the right, so the answer is the first bit past it.
  if (bit == 0 && !end_given) return reply::Integer(call.out, static_cast<int64_t>(len * 8));
  reply::Integer(call.out, -1);
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]
void BitOp(CommandCall& call) {
  const std::string& name = call.args[1];
  BitOpKind op;
  if (TokenEquals(name, "and")) {
    op = BitOpKind::kAnd;
  } else if (TokenEquals(name, "or")) {
    op = BitOpKind::kOr;
  } else if (TokenEquals(name, "xor")) {
    op = BitOpKind::kXor;
  } else if (TokenEquals(name, "not")) {
    op = BitOpKind::kNot;
  } else {
    return ReplyError(call, kSyntaxError);
  }
  if (op == BitOpKind::kNot && call.args.size() != 4) {
    return ReplyError(call, "ERR BITOP NOT must be called with a single source key.");
  }
  std::vector<std::string> sources(call.args.begin() + 3, call.args.end());
  Database db = CurrentDb(call);
  uint64_t len;
  Status s = RedisBitmap(&db).BitOp(op, call.args[2], sources, &len);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(len));
}

// Parses a bitfield type: i1..i64 or u1..u63 (read as a C string, as Redis does).
bool BitfieldTypeArg(CommandCall& call, size_t i, BitfieldOp* op) {
  std::string_view arg = call.args[i];
  arg = arg.substr(0, arg.find('\0'));
  int64_t bits;
  bool ok = !arg.empty() && (arg[0] == 'i' || arg[0] == 'u') && ParseInt64(arg.substr(1), &bits) && bits >= 1 &&
            bits <= (arg[0] == 'i' ? 64 : 63);
  if (!ok) {
    ReplyError(call, "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    return false;
  }
  op->is_signed = arg[0] == 'i';
  op->bits = static_cast<int>(bits);
  return true;
}

void BitFieldGeneric(CommandCall& call, bool read_only_command) {
  const auto& a = call.args;
  std::vector<BitfieldOp> ops;
  auto overflow = BitfieldOp::kWrap;
  bool writes = false;
  for (size_t j = 2; j < a.size(); j++) {
    size_t remaining = a.size() - j - 1;
    BitfieldOp op;
    if (TokenEquals(a[j], "get") && remaining >= 2) {
      op.kind = BitfieldOp::kGet;
    } else if (TokenEquals(a[j], "set") && remaining >= 3) {
      op.kind = BitfieldOp::kSet;
    } else if (TokenEquals(a[j], "incrby") && remaining >= 3) {
      op.kind = BitfieldOp::kIncrBy;
    } else if (TokenEquals(a[j], "overflow") && remaining >= 1) {
      const std::string& kind = a[++j];
      if (TokenEquals(kind, "wrap")) {
        overflow = BitfieldOp::kWrap;
      } else if (TokenEquals(kind, "sat")) {
        overflow = BitfieldOp::kSat;
      } else if (TokenEquals(kind, "fail")) {
        overflow = BitfieldOp::kFail;
      } else {
        return ReplyError(call, "ERR Invalid OVERFLOW type specified");
      }
      continue;
    } else {
      return ReplyError(call, kSyntaxError);
    }
    if (!BitfieldTypeArg(call, j + 1, &op) || !BitOffsetArg(call, j + 2, op.bits, &op.offset)) return;
    if (op.kind != BitfieldOp::kGet) {
      writes = true;
      if (!IntArg(call, j + 3, &op.value)) return;
    }
    op.overflow = overflow;
    ops.push_back(op);
    j += op.kind == BitfieldOp::kGet ? 2 : 3;
  }
  if (writes && read_only_command) return ReplyError(call, "ERR BITFIELD_RO only supports the GET subcommand");
  Database db = CurrentDb(call);
  std::vector<std::optional<int64_t>> results;
  Status s = RedisBitmap(&db).BitField(a[1], ops, &results);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::ArrayHeader(call.out, results.size());
  for (const auto& r : results) {
    if (r) {
      reply::Integer(call.out, *r);
    } else {
      reply::Null(call.out, call.resp);
    }
  }
}

void BitField(CommandCall& call) { BitFieldGeneric(call, false); }
void BitFieldRo(CommandCall& call) { BitFieldGeneric(call, true); }

}  // namespace

void RegisterBitmapCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite | kCmdDenyOOM, r = kCmdReadOnly;
  t->Add({"setbit", 4, w, 1, 1, 1, SetBit, "bitmap", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", "2.2.0"});
  t->Add({"getbit", 3, r | kCmdFast, 1, 1, 1, GetBit, "bitmap", "Returns a bit value by offset.", "2.2.0"});
  t->Add({"bitcount", -2, r, 1, 1, 1, BitCount, "bitmap", "Counts the number of set bits (population counting) in a string.", "2.6.0"});
  t->Add({"bitpos", -3, r, 1, 1, 1, BitPos, "bitmap", "Finds the first set (1) or clear (0) bit in a string.", "2.8.7"});
  t->Add({"bitop", -4, w, 2, -1, 1, BitOp, "bitmap", "Performs bitwise operations on multiple strings, and stores the result.", "2.6.0"});
  t->Add({"bitfield", -2, w, 1, 1, 1, BitField, "bitmap", "Performs arbitrary bitfield integer operations on strings.", "3.2.0"});
  t->Add({"bitfield_ro", -2, r | kCmdFast, 1, 1, 1, BitFieldRo, "bitmap", "Performs arbitrary read-only bitfield integer operations on strings.", "6.0.0"});
}

}  // namespace kvrocks
