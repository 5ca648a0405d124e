// Redis' geohash arithmetic, checked against values redis-server 7.0 reports.
#include "types/geo_hash.h"

#include <gtest/gtest.h>

using namespace kvrocks;

TEST(GeoHash, ScoreAndPositionMatchRedis) {
  uint64_t score;
  ASSERT_TRUE(geo::Score(13.361389, 38.115556, &score));
  EXPECT_EQ(score, 3479099956230698ULL);  // GEOSEARCH ... WITHHASH for Palermo
  double lon, lat;
  ASSERT_TRUE(geo::Decode(static_cast<double>(score), &lon, &lat));
  EXPECT_NEAR(lon, 13.36138933897018433, 1e-12);
  EXPECT_NEAR(lat, 38.11555639549629859, 1e-12);
  EXPECT_EQ(geo::HashString(lon, lat), "sqc8b49rny0");
  EXPECT_FALSE(geo::Score(181, 0, &score));
  EXPECT_FALSE(geo::Score(0, 85.06, &score));
}

TEST(GeoHash, DistanceMatchesRedis) {
  // GEODIST Sicily Palermo Catania -> 166274.1516 m
  double d = geo::Distance(13.36138933897018433, 38.11555639549629859, 15.08726745843887329, 37.50266842333162032);
  EXPECT_NEAR(d, 166274.1516, 1e-3);
}

TEST(GeoHash, SearchRangesCoverTheCenterFirst) {
  geo::Shape shape;
  shape.lon = 15;
  shape.lat = 37;
  shape.radius = 200;
  shape.conversion = 1000;
  geo::ScoreRange ranges[9];
  int n = geo::SearchRanges(shape, ranges);
  ASSERT_GE(n, 1);
  uint64_t center;
  ASSERT_TRUE(geo::Score(15, 37, &center));
  EXPECT_LE(ranges[0].min, center);
  EXPECT_GT(ranges[0].max, center);
}
