// Redis' HyperLogLog string format, byte for byte, so that an HLL written by
// Redis (arriving by RDB, RESTORE or a GET/SET copy) is read and updated here
// and the other way round, and PFCOUNT gives Redis' number on the same input.
//
// A value is a 16-byte header ("HYLL", encoding, 3 unused bytes, cached
// cardinality as 8 little-endian bytes whose top bit marks it stale) followed
// by 16384 six-bit registers: dense (12288 packed bytes) or sparse (run-length
// opcodes ZERO 00xxxxxx, XZERO 01xxxxxx yyyyyyyy, VAL 1vvvvvxx). A sparse value
// turns dense when a register exceeds 32 or it would grow past
// hll-sparse-max-bytes, exactly when Redis converts it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvrocks::hll {

inline constexpr int kPrecision = 14;
inline constexpr int kRegisters = 1 << kPrecision;  // 16384
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kDenseSize = kHeaderSize + (kRegisters * 6 + 7) / 8;
inline constexpr uint8_t kDense = 0;
inline constexpr uint8_t kSparse = 1;

// Redis' MurmurHash64A (the hash of HLL elements, seed 0xadc83b19).
uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed);

// An empty sparse HLL with a valid cached cardinality of 0 (Redis' createHLLObject).
std::string NewSparse();

// Redis' isHLLObject checks: header, magic, encoding, dense length.
bool IsValid(std::string_view v);

// Sets register `index` to `count` if that is larger. Returns 1 if the value
// changed, 0 if not, -1 if the value is corrupt. May convert v to dense.
int SetRegister(std::string* v, int index, uint8_t count, size_t sparse_max_bytes);
// Adds one element (PFADD of one argument); returns as SetRegister.
int Add(std::string* v, std::string_view element, size_t sparse_max_bytes);
// Converts a sparse value to dense (no-op on dense); false if corrupt.
bool ToDense(std::string* v);

// regs[i] = max(regs[i], register i of v) for kRegisters bytes; false if corrupt.
bool MergeInto(std::string_view v, uint8_t* regs);
// Redis' cardinality estimate (Ertl's improved estimator) of a value; false if corrupt.
bool Count(std::string_view v, uint64_t* card);
// The estimate for plain register values (kRegisters bytes).
uint64_t CountRegisters(const uint8_t* regs);

// Register index of a dense value.
uint8_t DenseRegister(std::string_view v, int index);
// PFDEBUG DECODE's text of a sparse value: its opcodes as "z:run", "Z:run" and
// "v:value,run", separated by spaces.
std::string DecodeSparse(std::string_view v);
// PFSELFTEST, as Redis': random values through the dense register layout, then
// up to 10 million elements added to a dense and a sparse value side by side,
// checking at 1, 10, 100 ... elements that a small one is still sparse, that both
// estimate the same and that the error is within six standard errors. "" if it
// passes, else Redis' "TESTFAILED ..." message.
std::string SelfTest(size_t sparse_max_bytes);

bool CacheValid(std::string_view v);
uint64_t CachedCount(std::string_view v);
void SetCachedCount(std::string* v, uint64_t card);
void InvalidateCache(std::string* v);

}  // namespace kvrocks::hll
