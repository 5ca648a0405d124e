#include "storage/compression_sampler.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace kvrocks {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen());
  return s;
}

std::string Text(size_t n) {
  std::string s;
  while (s.size() < n) s += "a big value of text, the kind that compresses " + std::to_string(s.size()) + "\n";
  return s.substr(0, n);
}

TEST(CompressionSampler, CompressedSizeOfEachType) {
  const std::string text = Text(8192), random = RandomBytes(8192, 1);
  for (auto t : {rocksdb::kSnappyCompression, rocksdb::kLZ4Compression, rocksdb::kZSTD}) {
    EXPECT_LT(CompressedSize(t, text), text.size() / 2) << static_cast<int>(t);
    EXPECT_GE(CompressedSize(t, random), random.size() * 99 / 100) << static_cast<int>(t);
  }
  EXPECT_EQ(CompressedSize(rocksdb::kNoCompression, text), text.size());
}

TEST(CompressionSampler, EstimatesOnlyFromEnoughSamplesThenStartsOver) {
  CompressionSampler sampler;
  const std::string random = RandomBytes(4096, 2), text = Text(4096);
  double saving = -1;
  // Values 0, 32, ..., 448 are sampled: 15 samples, then value 480 is the 16th.
  for (uint32_t i = 0; i < 15 * CompressionSampler::kSampleEvery; i++) sampler.Note(rocksdb::kLZ4Compression, random);
  EXPECT_FALSE(sampler.TakeEstimate(16, &saving));
  for (uint32_t i = 0; i < CompressionSampler::kSampleEvery; i++) sampler.Note(rocksdb::kLZ4Compression, random);
  ASSERT_TRUE(sampler.TakeEstimate(16, &saving));
  EXPECT_EQ(saving, 0);  // LZ4 makes random bytes a little bigger: no saving, not a negative one
  EXPECT_FALSE(sampler.TakeEstimate(1, &saving));
  for (uint32_t i = 0; i < 4 * CompressionSampler::kSampleEvery; i++) sampler.Note(rocksdb::kLZ4Compression, text);
  ASSERT_TRUE(sampler.TakeEstimate(4, &saving));
  EXPECT_GT(saving, 50);
}

TEST(CompressionSampler, SamplesOnlyTheFrontOfABigValue) {
  CompressionSampler sampler;
  // Text up to the sample limit, random bytes after it: judged by its front only.
  const std::string value = Text(CompressionSampler::kMaxSampleBytes) + RandomBytes(4 << 20, 3);
  sampler.Note(rocksdb::kLZ4Compression, value);
  double saving = -1;
  ASSERT_TRUE(sampler.TakeEstimate(1, &saving));
  EXPECT_GT(saving, 50);
}

}  // namespace
}  // namespace kvrocks
