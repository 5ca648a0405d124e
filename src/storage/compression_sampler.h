// CompressionSampler: how much a compression type saves on the values being
// written, estimated from a sample of them.
//
// RocksDB compresses every blob with the column family's blob compression, even
// when the result is no smaller (already compressed data, random bytes), and
// that costs about a tenth of the CPU of each big write (bench/RESULTS.md). The
// storage samples the big values it writes and turns blob compression off while
// it saves (almost) nothing, on again when it does (Storage::AdjustBlobCompression).
#pragma once

#include <rocksdb/options.h>
#include <rocksdb/slice.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace kvrocks {

// Size of value compressed with type (snappy, lz4 or zstd at RocksDB's default
// levels), without RocksDB's framing; value.size() for any other type.
size_t CompressedSize(rocksdb::CompressionType type, const rocksdb::Slice& value);

class CompressionSampler {
 public:
  // One value in kSampleEvery is compressed.
  static constexpr uint32_t kSampleEvery = 32;
  // Of a bigger value only its first kMaxSampleBytes are: a 100 MB value would
  // stall its writer for the estimate and leave a buffer that size per thread.
  static constexpr size_t kMaxSampleBytes = 256 * 1024;

  // Counts a value written; compresses every kSampleEvery-th with type. Thread-safe.
  void Note(rocksdb::CompressionType type, const rocksdb::Slice& value) {
    if (seen_.fetch_add(1, std::memory_order_relaxed) % kSampleEvery == 0) Sample(type, value);
  }

  // Once at least min_samples values were compressed since the last estimate:
  // sets *saving_percent to the share of their bytes compression saved (0 when
  // it made them bigger), starts a new round of samples and returns true.
  // Otherwise returns false and keeps the samples.
  bool TakeEstimate(size_t min_samples, double* saving_percent);

 private:
  void Sample(rocksdb::CompressionType type, const rocksdb::Slice& value);

  std::atomic<uint32_t> seen_{0};
  std::mutex mu_;
  size_t samples_ = 0;     // guarded by mu_
  uint64_t raw_ = 0;       // bytes sampled; guarded by mu_
  uint64_t saved_ = 0;     // bytes compression took off them; guarded by mu_
};

}  // namespace kvrocks
