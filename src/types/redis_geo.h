// Geo commands over sorted sets: a member's score is its 52-bit geohash
// (types/geo_hash.h), so geo keys are ordinary sorted sets, as in Redis.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "types/geo_hash.h"
#include "types/redis_zset.h"

namespace kvrocks {

struct GeoPoint {
  std::string member;
  double lon = 0, lat = 0;
  double dist = 0;  // meters from the search center
  double score = 0;
};

class RedisGeo {
 public:
  explicit RedisGeo(Database* db) : db_(db) {}

  struct Location {
    double lon, lat;
    std::string member;
  };
  // GEOADD: ZADD of the members with their geohash scores (flags NX XX CH).
  Status Add(std::string_view key, const std::vector<Location>& locations, const RedisZSet::AddFlags& flags,
             int64_t* result, int64_t* written = nullptr);
  // The decoded position of a member, empty if key or member is absent.
  Status Position(std::string_view key, std::string_view member, std::optional<std::pair<double, double>>* pos);
  // Members inside shape, in Redis' scan order (box by box, score order within
  // a box). limit > 0 stops once that many are found (COUNT ... ANY).
  Status Search(std::string_view key, const geo::Shape& shape, size_t limit, std::vector<GeoPoint>* out);

 private:
  Database* db_;
};

}  // namespace kvrocks
