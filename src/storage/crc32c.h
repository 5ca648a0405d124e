// CRC32C (Castagnoli), computed with the CPU's crc32 instruction.
//
// Debian builds librocksdb portable, without SSE4.2, so RocksDB's own CRC32C
// runs table-driven at about 1.4 GB/s here, and it checksums every WAL record
// and every blob (a third of the background CPU of big-value writes, see
// docs/design.md). kvrocks links librocksdb.a statically, and crc32c.cc
// defines every function of RocksDB's util/crc32c.cc (rocksdb::crc32c::Extend,
// Crc32cCombine, IsFastCrc32Supported) on top of the functions below, so the
// linker uses these instead of that object: RocksDB computes the same
// checksums, bit for bit, with the hardware instruction (three streams at a
// time over inputs of 768 bytes and more: 2.5x one stream on an 8 KiB blob).
// Without SSE4.2 (or off x86-64) the software version runs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvrocks {

// Returns the CRC32C of A followed by data[0, n), given crc = CRC32C(A)
// (0 for the empty string), as rocksdb::crc32c::Extend defines it.
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n);

// Same result, always the byte-at-a-time table version (for tests).
uint32_t Crc32cExtendPortable(uint32_t crc, const char* data, size_t n);

// True when Crc32cExtend uses the crc32 instruction.
bool Crc32cIsHardware();

// Returns CRC32C(A followed by B), given crc_a = CRC32C(A), crc_b = CRC32C(B)
// and len_b = |B|, in O(log len_b) time.
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, size_t len_b);

}  // namespace kvrocks
