#include "stats/latency_histogram.h"

namespace kvrocks {

namespace {

// hdr_init(1, 1000000000, 2): unit magnitude 0, 256 sub-buckets (half: 128),
// 23 buckets, (23 + 1) * 128 counters.
constexpr int64_t kMinValue = 1;
constexpr int64_t kMaxValue = 1000000000;
constexpr int kSubBucketHalfCountMagnitude = 7;
constexpr int64_t kSubBucketHalfCount = 128;
constexpr int64_t kSubBucketCount = 256;
constexpr int64_t kSubBucketMask = kSubBucketCount - 1;
constexpr int kCountsLen = (23 + 1) * 128;

int BucketIndex(int64_t value) {
  int pow2ceiling = 64 - __builtin_clzll(static_cast<uint64_t>(value | kSubBucketMask));
  return pow2ceiling - (kSubBucketHalfCountMagnitude + 1);
}

int CountsIndexFor(int64_t value) {
  int bucket = BucketIndex(value);
  int64_t sub = value >> bucket;
  return static_cast<int>(((bucket + 1) << kSubBucketHalfCountMagnitude) + (sub - kSubBucketHalfCount));
}

int64_t ValueAtIndex(int index) {
  int bucket = (index >> kSubBucketHalfCountMagnitude) - 1;
  int64_t sub = (index & (kSubBucketHalfCount - 1)) + kSubBucketHalfCount;
  if (bucket < 0) {
    sub -= kSubBucketHalfCount;
    bucket = 0;
  }
  return sub << bucket;
}

int64_t LowestEquivalent(int64_t value) {
  int bucket = BucketIndex(value);
  return (value >> bucket) << bucket;
}

int64_t RangeSize(int64_t value) {
  int bucket = BucketIndex(value);
  return int64_t{1} << ((value >> bucket) >= kSubBucketCount ? bucket + 1 : bucket);
}

int64_t HighestEquivalent(int64_t value) { return LowestEquivalent(value) + RangeSize(value) - 1; }

}  // namespace

void LatencyHistogram::Record(int64_t ns) {
  if (ns < kMinValue) ns = kMinValue;
  if (ns > kMaxValue) ns = kMaxValue;
  if (!ready_.load(std::memory_order_acquire)) {
    std::call_once(allocated_, [this] {
      counts_ = std::make_unique<std::atomic<int64_t>[]>(kCountsLen);
      ready_.store(true, std::memory_order_release);
    });
  }
  counts_[CountsIndexFor(ns)].fetch_add(1, std::memory_order_relaxed);
}

void LatencyHistogram::Reset() {
  if (!ready_.load(std::memory_order_acquire)) return;
  for (int i = 0; i < kCountsLen; i++) counts_[i].store(0, std::memory_order_relaxed);
}

LatencyHistogram::Snapshot LatencyHistogram::Read() const {
  Snapshot s;
  if (!ready_.load(std::memory_order_acquire)) return s;
  s.counts_.resize(kCountsLen);
  for (int i = 0; i < kCountsLen; i++) {
    s.counts_[i] = counts_[i].load(std::memory_order_relaxed);
    s.total_ += s.counts_[i];
  }
  return s;
}

int64_t LatencyHistogram::Snapshot::ValueAtPercentile(double percentile) const {
  double requested = percentile < 100.0 ? percentile : 100.0;
  int64_t count_at = static_cast<int64_t>(requested / 100 * static_cast<double>(total_) + 0.5);
  if (count_at < 1) count_at = 1;
  int64_t cumulative = 0;
  for (size_t i = 0; i < counts_.size(); i++) {
    cumulative += counts_[i];
    if (cumulative >= count_at) {
      int64_t value = ValueAtIndex(static_cast<int>(i));
      return percentile == 0.0 ? LowestEquivalent(value) : HighestEquivalent(value);
    }
  }
  return 0;
}

std::vector<std::pair<int64_t, int64_t>> LatencyHistogram::Snapshot::CumulativeBuckets() const {
  // hdr_iter_log_init(1024, 2) as Redis' fillCommandCDF walks it: a step ends at
  // the first counter whose value reaches the next reporting level and reports
  // that counter's highest equivalent value and the cumulative count through it.
  std::vector<std::pair<int64_t, int64_t>> out;
  const int len = static_cast<int>(counts_.size());
  int64_t level = 1024, level_lowest = LowestEquivalent(level);
  int index = -1;
  int64_t value = 0, highest = 0, cumulative = 0, previous = 0;
  while (cumulative < total_ || (index < len && ValueAtIndex(index + 1) > level_lowest)) {
    bool exhausted = false;
    while (value < level_lowest) {
      if (++index >= len) {
        exhausted = true;
        break;
      }
      cumulative += counts_[index];
      value = ValueAtIndex(index);
      highest = LowestEquivalent(value) + RangeSize(value) - 1;
    }
    if (cumulative > previous) out.emplace_back(highest / 1000, cumulative);
    previous = cumulative;
    if (exhausted) break;
    level *= 2;
    level_lowest = LowestEquivalent(level);
  }
  return out;
}

}  // namespace kvrocks
