#include "storage/compression_sampler.h"

#include <lz4.h>
#include <snappy.h>
#include <zstd.h>

#include <algorithm>
#include <string>

namespace kvrocks {

size_t CompressedSize(rocksdb::CompressionType type, const rocksdb::Slice& value) {
  // One buffer per thread: samples are taken on the threads that write.
  thread_local std::string buf;
  switch (type) {
    case rocksdb::kSnappyCompression: {
      buf.resize(snappy::MaxCompressedLength(value.size()));
      size_t n = 0;
      snappy::RawCompress(value.data(), value.size(), buf.data(), &n);
      return n;
    }
    case rocksdb::kLZ4Compression: {
      const int bound = LZ4_compressBound(static_cast<int>(value.size()));
      if (bound <= 0) return value.size();
      buf.resize(static_cast<size_t>(bound));
      int n = LZ4_compress_default(value.data(), buf.data(), static_cast<int>(value.size()), bound);
      return n > 0 ? static_cast<size_t>(n) : value.size();
    }
    case rocksdb::kZSTD: {
      buf.resize(ZSTD_compressBound(value.size()));
      size_t n = ZSTD_compress(buf.data(), buf.size(), value.data(), value.size(), ZSTD_CLEVEL_DEFAULT);
      return ZSTD_isError(n) ? value.size() : n;
    }
    default:
      return value.size();
  }
}

void CompressionSampler::Sample(rocksdb::CompressionType type, const rocksdb::Slice& value) {
  const rocksdb::Slice sample(value.data(), std::min(value.size(), kMaxSampleBytes));
  const size_t compressed = CompressedSize(type, sample);
  std::lock_guard<std::mutex> g(mu_);
  samples_++;
  raw_ += sample.size();
  if (compressed < sample.size()) saved_ += sample.size() - compressed;
}

bool CompressionSampler::TakeEstimate(size_t min_samples, double* saving_percent) {
  std::lock_guard<std::mutex> g(mu_);
  if (samples_ < min_samples || raw_ == 0) return false;
  *saving_percent = 100.0 * static_cast<double>(saved_) / static_cast<double>(raw_);
  samples_ = 0;
  raw_ = 0;
  saved_ = 0;
  return true;
}

}  // namespace kvrocks
