#include "types/hll_format.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace kvrocks::hll {

namespace {

constexpr int kQ = 64 - kPrecision;  // hash bits left for the run of zeros
constexpr int kMaxSparseValue = 32;
constexpr int kMaxValRun = 4;
constexpr int kMaxZeroRun = 64;
constexpr int kMaxXZeroRun = 16384;
constexpr size_t kEncodingAt = 4;
constexpr size_t kCardAt = 8;

// Sparse opcodes.
bool IsZero(uint8_t op) { return (op & 0xc0) == 0; }
bool IsXZero(uint8_t op) { return (op & 0xc0) == 0x40; }
bool IsVal(uint8_t op) { return (op & 0x80) != 0; }
int ZeroLen(uint8_t op) { return (op & 0x3f) + 1; }
int XZeroLen(uint8_t op, uint8_t next) { return (((op & 0x3f) << 8) | next) + 1; }
int ValValue(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
int ValLen(uint8_t op) { return (op & 0x3) + 1; }
uint8_t Val(int value, int len) { return static_cast<uint8_t>(((value - 1) << 2 | (len - 1)) | 0x80); }
uint8_t Zero(int len) { return static_cast<uint8_t>(len - 1); }
void AppendXZero(std::string* out, int len) {
  out->push_back(static_cast<char>(((len - 1) >> 8) | 0x40));
  out->push_back(static_cast<char>((len - 1) & 0xff));
}
// A run of zeros as ZERO or XZERO.
void AppendZeros(std::string* out, int len) {
  if (len > kMaxZeroRun) {
    AppendXZero(out, len);
  } else {
    out->push_back(static_cast<char>(Zero(len)));
  }
}

uint8_t At(std::string_view v, size_t i) { return static_cast<uint8_t>(v[i]); }

// The second byte of the XZERO opcode at p. Redis reads it without a bounds
// check: for an XZERO that is the value's last byte (a corrupted value), it
// reads the sds terminator, 0, and so does this.
uint8_t XZeroSecond(std::string_view v, size_t p) { return p + 1 < v.size() ? At(v, p + 1) : 0; }

// Dense registers are 6 bits each, packed from the least significant bit of
// each byte; the last register ends in the last byte.
uint8_t DenseGet(const uint8_t* regs, int index) {
  size_t bit = static_cast<size_t>(index) * 6, byte = bit / 8;
  unsigned fb = bit & 7;
  unsigned b0 = regs[byte];
  unsigned b1 = byte + 1 < kDenseSize - kHeaderSize ? regs[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << (8 - fb))) & 63);
}

void DenseSet(uint8_t* regs, int index, uint8_t value) {
  size_t bit = static_cast<size_t>(index) * 6, byte = bit / 8;
  unsigned fb = bit & 7;
  regs[byte] = static_cast<uint8_t>((regs[byte] & ~(63u << fb)) | (static_cast<unsigned>(value) << fb));
  if (byte + 1 < kDenseSize - kHeaderSize) {
    unsigned fb8 = 8 - fb;
    regs[byte + 1] = static_cast<uint8_t>((regs[byte + 1] & ~(63u >> fb8)) | (value >> fb8));
  }
}

uint8_t* DenseRegisters(std::string* v) { return reinterpret_cast<uint8_t*>(v->data()) + kHeaderSize; }
const uint8_t* DenseRegisters(std::string_view v) { return reinterpret_cast<const uint8_t*>(v.data()) + kHeaderSize; }

// Register index and run length ("count") of an element, as Redis' hllPatLen.
void HashElement(std::string_view element, int* index, uint8_t* count) {
  uint64_t hash = MurmurHash64A(element.data(), element.size(), 0xadc83b19ULL);
  *index = static_cast<int>(hash & (kRegisters - 1));
  hash >>= kPrecision;
  hash |= 1ULL << kQ;  // the loop ends, and count <= kQ + 1
  uint8_t c = 1;
  for (uint64_t bit = 1; (hash & bit) == 0; bit <<= 1) c++;
  *count = c;
}

// Calls fn(first_register, run_length, value) for each sparse opcode; false if
// the opcodes do not cover exactly kRegisters registers.
template <typename Fn>
bool ForEachRun(std::string_view v, Fn fn) {
  size_t p = kHeaderSize;
  int idx = 0;
  while (p < v.size()) {
    uint8_t op = At(v, p);
    int run, value = 0;
    if (IsZero(op)) {
      run = ZeroLen(op);
      p++;
    } else if (IsXZero(op)) {
      run = XZeroLen(op, XZeroSecond(v, p));
      p += 2;
    } else {
      run = ValLen(op);
      value = ValValue(op);
      p++;
      if (idx + run > kRegisters) return false;
    }
    if (value != 0) fn(idx, run, value);
    idx += run;
  }
  return idx == kRegisters;
}

// Redis' hllSigma and hllTau of the improved estimator.
double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prime, y = 1, z = x;
  do {
    x *= x;
    z_prime = z;
    z += x * y;
    y += y;
  } while (z_prime != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prime, y = 1.0, z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prime = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prime != z);
  return z / 3;
}

uint64_t CountHistogram(const int* histo) {
  const double m = kRegisters;
  double z = m * Tau((m - histo[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histo[j];
    z *= 0.5;
  }
  z += m * Sigma(histo[0] / m);
  const double alpha_inf = 0.721347520444481703680;  // 0.5 / ln(2)
  return static_cast<uint64_t>(std::llround(static_cast<long double>(alpha_inf * m * m / z)));
}

// The sparse case of SetRegister (Redis' hllSparseSet): edits the one opcode
// covering index, then merges equal neighbouring VAL opcodes.
int SparseSet(std::string* v, int index, uint8_t count, size_t sparse_max_bytes) {
  if (count > kMaxSparseValue) goto promote;
  {
    size_t p = kHeaderSize, end = v->size();
    long prev = -1;
    int first = 0, span = 0;
    while (p < end) {
      uint8_t op = At(*v, p);
      size_t oplen = 1;
      if (IsZero(op)) {
        span = ZeroLen(op);
      } else if (IsVal(op)) {
        span = ValLen(op);
      } else {
        span = XZeroLen(op, XZeroSecond(*v, p));
        oplen = 2;
      }
      if (index <= first + span - 1) break;
      prev = static_cast<long>(p);
      p += oplen;
      first += span;
    }
    if (span == 0 || p >= end) return -1;

    uint8_t op = At(*v, p);
    bool is_zero = IsZero(op), is_xzero = IsXZero(op), is_val = IsVal(op);
    int runlen = is_zero ? ZeroLen(op) : is_xzero ? XZeroLen(op, XZeroSecond(*v, p)) : ValLen(op);
    if (is_val) {
      if (ValValue(op) >= count) return 0;
      if (runlen == 1) {
        (*v)[p] = static_cast<char>(Val(count, 1));
        goto updated_at;
      }
    }
    if (is_zero && runlen == 1) {
      (*v)[p] = static_cast<char>(Val(count, 1));
      goto updated_at;
    }
    {
      // Replace the opcode by up to three: what comes before index, index, what follows.
      int last = first + span - 1;
      std::string seq;
      if (is_zero || is_xzero) {
        if (index != first) AppendZeros(&seq, index - first);
        seq.push_back(static_cast<char>(Val(count, 1)));
        if (index != last) AppendZeros(&seq, last - index);
      } else {
        int curval = ValValue(op);
        if (index != first) seq.push_back(static_cast<char>(Val(curval, index - first)));
        seq.push_back(static_cast<char>(Val(count, 1)));
        if (index != last) seq.push_back(static_cast<char>(Val(curval, last - index)));
      }
      size_t oldlen = is_xzero ? 2 : 1;
      if (seq.size() > oldlen && v->size() + (seq.size() - oldlen) > sparse_max_bytes) goto promote;
      const bool truncated = p + oldlen > v->size();  // an XZERO whose second byte is past the end
      v->replace(p, oldlen, seq);
      // Redis grows the value by seq.size() - oldlen counting the missing byte as
      // present, so the last byte of seq falls past the end: dropped, as there.
      // (Redis' memory keeps it past the end, where its next read of this corrupt
      // value finds it; here that read finds 0, as Redis does after a restart.)
      if (truncated) v->pop_back();
    }
  updated_at:
    // Merge adjacent VAL opcodes of one value, scanning at most 5 opcodes from the one before the edit.
    size_t q = prev >= 0 ? static_cast<size_t>(prev) : kHeaderSize;
    end = v->size();
    int scanlen = 5;
    while (q < end && scanlen--) {
      uint8_t a = At(*v, q);
      if (IsXZero(a)) {
        q += 2;
        continue;
      }
      if (IsZero(a)) {
        q++;
        continue;
      }
      if (q + 1 < end && IsVal(At(*v, q + 1))) {
        uint8_t b = At(*v, q + 1);
        if (ValValue(a) == ValValue(b)) {
          int len = ValLen(a) + ValLen(b);
          if (len <= kMaxValRun) {
            (*v)[q + 1] = static_cast<char>(Val(ValValue(a), len));
            v->erase(q, 1);
            end--;
            continue;  // try to merge the merged opcode with the next one
          }
        }
      }
      q++;
    }
    InvalidateCache(v);
    return 1;
  }
promote:
  if (!ToDense(v)) return -1;
  uint8_t* regs = DenseRegisters(v);
  if (DenseGet(regs, index) >= count) return 0;
  DenseSet(regs, index, count);
  return 1;
}

}  // namespace

uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed) {
  const uint64_t m = 0xc6a4a7935bd1e995ULL;
  const int r = 47;
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * m);
  const auto* data = static_cast<const uint8_t*>(key);
  const uint8_t* end = data + (len - (len & 7));
  for (; data != end; data += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; i--) k = (k << 8) | data[i];  // little-endian load
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  size_t tail = len & 7;
  if (tail != 0) {
    for (size_t i = tail; i-- > 0;) h ^= static_cast<uint64_t>(data[i]) << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

std::string NewSparse() {
  std::string v(kHeaderSize, '\0');
  std::memcpy(v.data(), "HYLL", 4);
  v[kEncodingAt] = static_cast<char>(kSparse);
  for (int left = kRegisters; left > 0; left -= kMaxXZeroRun) AppendXZero(&v, left < kMaxXZeroRun ? left : kMaxXZeroRun);
  return v;
}

bool IsValid(std::string_view v) {
  if (v.size() < kHeaderSize || v.substr(0, 4) != "HYLL") return false;
  uint8_t enc = At(v, kEncodingAt);
  if (enc > kSparse) return false;
  return enc != kDense || v.size() == kDenseSize;
}

int SetRegister(std::string* v, int index, uint8_t count, size_t sparse_max_bytes) {
  if (At(*v, kEncodingAt) == kDense) {
    uint8_t* regs = DenseRegisters(v);
    if (DenseGet(regs, index) >= count) return 0;
    DenseSet(regs, index, count);
    return 1;
  }
  return SparseSet(v, index, count, sparse_max_bytes);
}

int Add(std::string* v, std::string_view element, size_t sparse_max_bytes) {
  int index;
  uint8_t count;
  HashElement(element, &index, &count);
  return SetRegister(v, index, count, sparse_max_bytes);
}

bool ToDense(std::string* v) {
  if (At(*v, kEncodingAt) == kDense) return true;
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), v->data(), kHeaderSize);  // magic and cached cardinality
  dense[kEncodingAt] = static_cast<char>(kDense);
  uint8_t* regs = DenseRegisters(&dense);
  bool ok = ForEachRun(*v, [&](int first, int run, int value) {
    for (int i = 0; i < run; i++) DenseSet(regs, first + i, static_cast<uint8_t>(value));
  });
  if (!ok) return false;
  *v = std::move(dense);
  return true;
}

bool MergeInto(std::string_view v, uint8_t* regs) {
  if (At(v, kEncodingAt) == kDense) {
    const uint8_t* src = DenseRegisters(v);
    for (int i = 0; i < kRegisters; i++) {
      uint8_t r = DenseGet(src, i);
      if (r > regs[i]) regs[i] = r;
    }
    return true;
  }
  return ForEachRun(v, [&](int first, int run, int value) {
    for (int i = first; i < first + run; i++) {
      if (value > regs[i]) regs[i] = static_cast<uint8_t>(value);
    }
  });
}

bool Count(std::string_view v, uint64_t* card) {
  int histo[64] = {0};
  if (At(v, kEncodingAt) == kDense) {
    const uint8_t* regs = DenseRegisters(v);
    for (int i = 0; i < kRegisters; i++) histo[DenseGet(regs, i)]++;
  } else {
    int nonzero = 0;
    bool ok = ForEachRun(v, [&](int, int run, int value) {
      histo[value] += run;
      nonzero += run;
    });
    if (!ok) return false;
    histo[0] = kRegisters - nonzero;
  }
  *card = CountHistogram(histo);
  return true;
}

uint64_t CountRegisters(const uint8_t* regs) {
  int histo[64] = {0};
  for (int i = 0; i < kRegisters; i++) histo[regs[i] & 63]++;
  return CountHistogram(histo);
}

uint8_t DenseRegister(std::string_view v, int index) { return DenseGet(DenseRegisters(v), index); }

std::string DecodeSparse(std::string_view v) {
  std::string out;
  for (size_t p = kHeaderSize; p < v.size();) {
    uint8_t op = At(v, p);
    if (!out.empty()) out.push_back(' ');
    if (IsZero(op)) {
      out += "z:" + std::to_string(ZeroLen(op));
      p++;
    } else if (IsXZero(op)) {
      out += "Z:" + std::to_string(XZeroLen(op, XZeroSecond(v, p)));
      p += 2;
    } else {
      out += "v:" + std::to_string(ValValue(op)) + "," + std::to_string(ValLen(op));
      p++;
    }
  }
  return out;
}

std::string SelfTest(size_t sparse_max_bytes) {
  std::mt19937_64 rng(std::random_device{}());
  // Test 1: every register keeps its value and leaves its neighbours alone.
  std::vector<uint8_t> regs(kDenseSize - kHeaderSize), expected(kRegisters);
  for (int cycle = 0; cycle < 1000; cycle++) {
    for (int i = 0; i < kRegisters; i++) {
      expected[static_cast<size_t>(i)] = static_cast<uint8_t>(rng() & 63);
      DenseSet(regs.data(), i, expected[static_cast<size_t>(i)]);
    }
    for (int i = 0; i < kRegisters; i++) {
      uint8_t got = DenseGet(regs.data(), i);
      if (got != expected[static_cast<size_t>(i)]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expected[static_cast<size_t>(i)]) + " but is " + std::to_string(got);
      }
    }
  }
  // Test 2: the estimate's error, dense and sparse side by side.
  std::string dense = NewSparse(), sparse = NewSparse();
  ToDense(&dense);
  const double relerr = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  const uint64_t seed = rng();
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 10000000; j++) {
    uint64_t ele = j ^ seed;
    std::string_view bytes(reinterpret_cast<const char*>(&ele), sizeof(ele));
    Add(&dense, bytes, sparse_max_bytes);
    Add(&sparse, bytes, sparse_max_bytes);
    if (j != checkpoint) continue;
    if (j < sparse_max_bytes / 2 && At(sparse, kEncodingAt) != kSparse) return "TESTFAILED sparse encoding not used";
    uint64_t d = 0, s = 0;
    Count(dense, &d);
    Count(sparse, &s);
    if (d != s) return "TESTFAILED dense/sparse disagree";
    int64_t abserr = std::llabs(static_cast<int64_t>(checkpoint) - static_cast<int64_t>(d));
    auto maxerr = static_cast<int64_t>(std::ceil(relerr * 6 * static_cast<double>(checkpoint)));
    if (j == 10) maxerr = 1;  // Redis' allowance for collisions at cardinality 10
    if (abserr > maxerr) {
      return "TESTFAILED Too big error. card:" + std::to_string(checkpoint) + " abserr:" + std::to_string(abserr);
    }
    checkpoint *= 10;
  }
  return "";
}

bool CacheValid(std::string_view v) { return (At(v, kCardAt + 7) & 0x80) == 0; }

uint64_t CachedCount(std::string_view v) {
  uint64_t card = 0;
  for (int i = 7; i >= 0; i--) card = (card << 8) | At(v, kCardAt + i);
  return card;
}

void SetCachedCount(std::string* v, uint64_t card) {
  for (int i = 0; i < 8; i++) (*v)[kCardAt + i] = static_cast<char>((card >> (8 * i)) & 0xff);
}

void InvalidateCache(std::string* v) { (*v)[kCardAt + 7] = static_cast<char>(At(*v, kCardAt + 7) | 0x80); }

}  // namespace kvrocks::hll
