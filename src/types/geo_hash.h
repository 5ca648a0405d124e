// Redis' geohash arithmetic (geohash.c, geohash_helper.c semantics): a point is
// stored as a sorted-set score holding its 52-bit interleaved geohash over
// longitude [-180, 180] and latitude [-85.05112878, 85.05112878]; a radius or
// box search scans the score ranges of 9 geohash boxes (the one holding the
// center and its 8 neighbours) chosen exactly as Redis chooses them, so that
// results (and their order before sorting) are Redis'.
#pragma once

#include <cstdint>
#include <string>

namespace kvrocks::geo {

inline constexpr int kStepMax = 26;
inline constexpr double kLonMin = -180, kLonMax = 180;
inline constexpr double kLatMin = -85.05112878, kLatMax = 85.05112878;

struct Bits {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool IsZero() const { return bits == 0 && step == 0; }
};

struct Range {
  double min, max;
};

// false if the point is outside the ranges.
bool Encode(const Range& lon, const Range& lat, double longitude, double latitude, uint8_t step, Bits* hash);
// The 52-bit score of a point (GEOADD); false if out of the geo ranges.
bool Score(double longitude, double latitude, uint64_t* score);
// The center of the step-26 cell of a score (GEOPOS); false if undecodable.
bool Decode(double score, double* longitude, double* latitude);
// The standard 11-character geohash string (GEOHASH).
std::string HashString(double longitude, double latitude);

// Great-circle distance in meters (Redis' haversine).
double Distance(double lon1, double lat1, double lon2, double lat2);

struct Shape {
  bool circle = true;
  double lon = 0, lat = 0;
  double conversion = 1;  // meters per unit
  double radius = 0;      // circle, in units
  double width = 0, height = 0;  // box, in units
};

// Whether a point is in the shape; *distance (meters) from the center when it is.
bool WithinShape(const Shape& shape, double lon, double lat, double* distance);

// The score ranges [min, max) of the 9 boxes to scan, in Redis' order; empty
// boxes and a box equal to the previous one scanned are omitted.
struct ScoreRange {
  uint64_t min, max;
};
int SearchRanges(const Shape& shape, ScoreRange out[9]);

}  // namespace kvrocks::geo
