#include "types/geo_hash.h"

#include <cmath>

namespace kvrocks::geo {

namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr double kEarthRadiusMeters = 6372797.560856;
constexpr double kMercatorMax = 20037726.37;

double DegRad(double ang) { return ang * kDegToRad; }
double RadDeg(double ang) { return ang / kDegToRad; }

const Range kLonRange{kLonMin, kLonMax};
const Range kLatRange{kLatMin, kLatMax};

// Bits of x at even positions, bits of y at odd positions.
uint64_t Interleave(uint32_t xlo, uint32_t ylo) {
  static const uint64_t B[] = {0x5555555555555555ULL, 0x3333333333333333ULL, 0x0F0F0F0F0F0F0F0FULL,
                               0x00FF00FF00FF00FFULL, 0x0000FFFF0000FFFFULL};
  static const unsigned S[] = {1, 2, 4, 8, 16};
  uint64_t x = xlo, y = ylo;
  for (int i = 4; i >= 0; i--) {
    x = (x | (x << S[i])) & B[i];
    y = (y | (y << S[i])) & B[i];
  }
  return x | (y << 1);
}

// Inverse of Interleave: x in the low 32 bits, y in the high 32 bits.
uint64_t Deinterleave(uint64_t interleaved) {
  static const uint64_t B[] = {0x5555555555555555ULL, 0x3333333333333333ULL, 0x0F0F0F0F0F0F0F0FULL,
                               0x00FF00FF00FF00FFULL, 0x0000FFFF0000FFFFULL, 0x00000000FFFFFFFFULL};
  static const unsigned S[] = {0, 1, 2, 4, 8, 16};
  uint64_t x = interleaved, y = interleaved >> 1;
  for (int i = 0; i < 6; i++) {
    x = (x | (x >> S[i])) & B[i];
    y = (y | (y >> S[i])) & B[i];
  }
  return x | (y << 32);
}

struct Area {
  Range lon, lat;
};

bool DecodeArea(const Range& lon, const Range& lat, const Bits& hash, Area* area) {
  if (hash.IsZero()) return false;
  uint64_t sep = Deinterleave(hash.bits);
  double lat_scale = lat.max - lat.min, lon_scale = lon.max - lon.min;
  auto ilat = static_cast<uint32_t>(sep), ilon = static_cast<uint32_t>(sep >> 32);
  double cells = static_cast<double>(1ULL << hash.step);
  area->lat.min = lat.min + (ilat * 1.0 / cells) * lat_scale;
  area->lat.max = lat.min + ((ilat + 1) * 1.0 / cells) * lat_scale;
  area->lon.min = lon.min + (ilon * 1.0 / cells) * lon_scale;
  area->lon.max = lon.min + ((ilon + 1) * 1.0 / cells) * lon_scale;
  return true;
}

// Moves a hash one cell along longitude (the odd bits) or latitude (the even bits).
void MoveX(Bits* hash, int d) {
  if (d == 0) return;
  uint64_t x = hash->bits & 0xaaaaaaaaaaaaaaaaULL, y = hash->bits & 0x5555555555555555ULL;
  uint64_t zz = 0x5555555555555555ULL >> (64 - hash->step * 2);
  if (d > 0) {
    x = x + (zz + 1);
  } else {
    x = x | zz;
    x = x - (zz + 1);
  }
  x &= (0xaaaaaaaaaaaaaaaaULL >> (64 - hash->step * 2));
  hash->bits = x | y;
}

void MoveY(Bits* hash, int d) {
  if (d == 0) return;
  uint64_t x = hash->bits & 0xaaaaaaaaaaaaaaaaULL, y = hash->bits & 0x5555555555555555ULL;
  uint64_t zz = 0xaaaaaaaaaaaaaaaaULL >> (64 - hash->step * 2);
  if (d > 0) {
    y = y + (zz + 1);
  } else {
    y = y | zz;
    y = y - (zz + 1);
  }
  y &= (0x5555555555555555ULL >> (64 - hash->step * 2));
  hash->bits = x | y;
}

Bits Neighbor(const Bits& hash, int dx, int dy) {
  Bits n = hash;
  MoveX(&n, dx);
  MoveY(&n, dy);
  return n;
}

uint8_t EstimateSteps(double range_meters, double lat) {
  if (range_meters == 0) return 26;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;  // make sure the range is included in most of the base cases
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > 26) step = 26;
  return static_cast<uint8_t>(step);
}

double LatDistance(double lat1, double lat2) { return kEarthRadiusMeters * std::fabs(DegRad(lat2) - DegRad(lat1)); }

uint64_t Align52(const Bits& hash) { return hash.bits << (52 - hash.step * 2); }

}  // namespace

bool Encode(const Range& lon, const Range& lat, double longitude, double latitude, uint8_t step, Bits* hash) {
  if (longitude > kLonMax || longitude < kLonMin || latitude > kLatMax || latitude < kLatMin) return false;
  hash->bits = 0;
  hash->step = step;
  if (latitude < lat.min || latitude > lat.max || longitude < lon.min || longitude > lon.max) return false;
  double lat_offset = (latitude - lat.min) / (lat.max - lat.min);
  double lon_offset = (longitude - lon.min) / (lon.max - lon.min);
  lat_offset *= static_cast<double>(1ULL << step);
  lon_offset *= static_cast<double>(1ULL << step);
  hash->bits = Interleave(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset));
  return true;
}

bool Score(double longitude, double latitude, uint64_t* score) {
  Bits hash;
  if (!Encode(kLonRange, kLatRange, longitude, latitude, kStepMax, &hash)) return false;
  *score = Align52(hash);
  return true;
}

bool Decode(double score, double* longitude, double* latitude) {
  Bits hash{static_cast<uint64_t>(score), kStepMax};
  Area area;
  if (!DecodeArea(kLonRange, kLatRange, hash, &area)) return false;
  *longitude = std::fmin(kLonMax, std::fmax(kLonMin, (area.lon.min + area.lon.max) / 2));
  *latitude = std::fmin(kLatMax, std::fmax(kLatMin, (area.lat.min + area.lat.max) / 2));
  return true;
}

std::string HashString(double longitude, double latitude) {
  static const char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  Bits hash;
  // The standard geohash covers latitudes -90..90, unlike the scores.
  Encode(Range{-180, 180}, Range{-90, 90}, longitude, latitude, 26, &hash);
  std::string out(11, '0');
  for (int i = 0; i < 10; i++) out[i] = kAlphabet[(hash.bits >> (52 - ((i + 1) * 5))) & 0x1f];
  return out;  // 52 bits make 10.4 characters; the 11th is always '0', as in Redis
}

double Distance(double lon1d, double lat1d, double lon2d, double lat2d) {
  double lon1r = DegRad(lon1d), lon2r = DegRad(lon2d);
  double v = std::sin((lon2r - lon1r) / 2);
  if (v == 0.0) return LatDistance(lat1d, lat2d);
  double lat1r = DegRad(lat1d), lat2r = DegRad(lat2d);
  double u = std::sin((lat2r - lat1r) / 2);
  double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool WithinShape(const Shape& shape, double lon, double lat, double* distance) {
  if (shape.circle) {
    *distance = Distance(shape.lon, shape.lat, lon, lat);
    return *distance <= shape.radius * shape.conversion;
  }
  double width = shape.width * shape.conversion, height = shape.height * shape.conversion;
  if (LatDistance(lat, shape.lat) > height / 2) return false;
  if (Distance(lon, lat, shape.lon, lat) > width / 2) return false;
  *distance = Distance(shape.lon, shape.lat, lon, lat);
  return true;
}

int SearchRanges(const Shape& shape, ScoreRange out[9]) {
  // The bounding box of the shape.
  double height = shape.conversion * (shape.circle ? shape.radius : shape.height / 2);
  double width = shape.conversion * (shape.circle ? shape.radius : shape.width / 2);
  const double lat_delta = RadDeg(height / kEarthRadiusMeters);
  const double lon_delta_top = RadDeg(width / kEarthRadiusMeters / std::cos(DegRad(shape.lat + lat_delta)));
  const double lon_delta_bottom = RadDeg(width / kEarthRadiusMeters / std::cos(DegRad(shape.lat - lat_delta)));
  bool southern = shape.lat < 0;
  double min_lon = southern ? shape.lon - lon_delta_bottom : shape.lon - lon_delta_top;
  double max_lon = southern ? shape.lon + lon_delta_bottom : shape.lon + lon_delta_top;
  double min_lat = shape.lat - lat_delta, max_lat = shape.lat + lat_delta;

  double radius_meters = shape.circle ? shape.radius
                                      : std::sqrt((shape.width / 2) * (shape.width / 2) +
                                                  (shape.height / 2) * (shape.height / 2));
  radius_meters *= shape.conversion;
  int steps = EstimateSteps(radius_meters, shape.lat);

  Bits hash;
  Area area;
  auto compute = [&]() {
    Encode(kLonRange, kLatRange, shape.lon, shape.lat, static_cast<uint8_t>(steps), &hash);
    DecodeArea(kLonRange, kLatRange, hash, &area);
  };
  compute();
  // When the search area is near an edge of the center box, a neighbour may be
  // too small to cover it: use one step less (boxes twice as large).
  Area north, south, east, west;
  DecodeArea(kLonRange, kLatRange, Neighbor(hash, 0, 1), &north);
  DecodeArea(kLonRange, kLatRange, Neighbor(hash, 0, -1), &south);
  DecodeArea(kLonRange, kLatRange, Neighbor(hash, 1, 0), &east);
  DecodeArea(kLonRange, kLatRange, Neighbor(hash, -1, 0), &west);
  bool decrease = north.lat.max < max_lat || south.lat.min > min_lat || east.lon.max < max_lon ||
                  west.lon.min > min_lon;
  if (steps > 1 && decrease) {
    steps--;
    compute();
  }
  // Redis' order: center, N, S, E, W, NE, NW, SE, SW.
  static const int kMoves[9][2] = {{0, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
  Bits boxes[9];
  for (int i = 0; i < 9; i++) boxes[i] = Neighbor(hash, kMoves[i][0], kMoves[i][1]);
  // Leave out the neighbours the search area cannot reach.
  if (steps >= 2) {
    auto zero = [&](int a, int b, int c) { boxes[a] = boxes[b] = boxes[c] = Bits{}; };
    if (area.lat.min < min_lat) zero(2, 8, 7);
    if (area.lat.max > max_lat) zero(1, 5, 6);
    if (area.lon.min < min_lon) zero(4, 8, 6);
    if (area.lon.max > max_lon) zero(3, 7, 5);
  }
  int n = 0, last = 0;
  for (int i = 0; i < 9; i++) {
    if (boxes[i].IsZero()) continue;
    // Huge radii make adjacent neighbours equal; skip a repeat of the previous box.
    if (last && boxes[i].bits == boxes[last].bits && boxes[i].step == boxes[last].step) continue;
    Bits next = boxes[i];
    next.bits++;
    out[n++] = ScoreRange{Align52(boxes[i]), Align52(next)};
    last = i;
  }
  return n;
}

}  // namespace kvrocks::geo
