#include "stats/latency_histogram.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace kvrocks {
namespace {

using Buckets = std::vector<std::pair<int64_t, int64_t>>;

TEST(LatencyHistogramTest, EmptyHasNoBuckets) {
  LatencyHistogram h;
  LatencyHistogram::Snapshot s = h.Read();
  EXPECT_EQ(s.total(), 0);
  EXPECT_TRUE(s.CumulativeBuckets().empty());
  EXPECT_EQ(s.ValueAtPercentile(50), 0);
}

// Expected values follow HdrHistogram's layout for 1 ns .. 1 s at two significant
// digits: 1000 ns sits in a 4 ns wide slot (1000..1003), 33000 in a 256 ns wide one
// (32768..33023); Redis prints them as p50=1.003 and p99=33.023.
TEST(LatencyHistogramTest, PercentilesAreHighestEquivalentValues) {
  LatencyHistogram h;
  for (int i = 0; i < 3; i++) h.Record(1000);
  h.Record(33000);
  LatencyHistogram::Snapshot s = h.Read();
  EXPECT_EQ(s.total(), 4);
  EXPECT_EQ(s.ValueAtPercentile(50), 1003);
  EXPECT_EQ(s.ValueAtPercentile(75), 1003);
  EXPECT_EQ(s.ValueAtPercentile(99), 33023);
  EXPECT_EQ(s.ValueAtPercentile(100), 33023);
  EXPECT_EQ(s.ValueAtPercentile(0), 1000);  // the lowest equivalent value
}

TEST(LatencyHistogramTest, BucketsArePowersOfTwoMicrosecondsWhereTheCountGrows) {
  LatencyHistogram h;
  h.Record(1000);     // <= 1 us
  h.Record(2000);     // <= 2 us
  h.Record(2007);     // same 8 ns slot as 2000
  h.Record(33000);    // the 32768 ns level's slot reaches 33023: "33"
  h.Record(900000);   // <= 1056 us (the 1048576 ns level)
  LatencyHistogram::Snapshot s = h.Read();
  EXPECT_EQ(s.CumulativeBuckets(), (Buckets{{1, 1}, {2, 3}, {33, 4}, {1056, 5}}));
}

TEST(LatencyHistogramTest, ValuesAreClampedToOneNanosecondAndOneSecond) {
  LatencyHistogram h;
  h.Record(0);
  h.Record(5000000000);
  LatencyHistogram::Snapshot s = h.Read();
  EXPECT_EQ(s.total(), 2);
  // One second lies past the last reporting level below it (2^29 ns); the walk
  // ends on the last slot of the histogram, 1069547520 + 4194304 - 1 ns.
  EXPECT_EQ(s.CumulativeBuckets(), (Buckets{{1, 1}, {1073741, 2}}));
  EXPECT_EQ(s.ValueAtPercentile(100), 1002438655);
}

TEST(LatencyHistogramTest, ResetForgetsEverything) {
  LatencyHistogram h;
  h.Record(1500);
  h.Reset();
  EXPECT_EQ(h.Read().total(), 0);
  h.Record(1500);
  EXPECT_EQ(h.Read().total(), 1);
}

}  // namespace
}  // namespace kvrocks
