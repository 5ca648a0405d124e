#include "types/redis_geo.h"

namespace kvrocks {

Status RedisGeo::Add(std::string_view key, const std::vector<Location>& locations, const RedisZSet::AddFlags& flags,
                     int64_t* result, int64_t* written) {
  std::vector<ZMember> members;
  members.reserve(locations.size());
  for (const auto& loc : locations) {
    uint64_t score;
    if (!geo::Score(loc.lon, loc.lat, &score)) return Status::InvalidArgument("coordinates out of range");
    members.push_back(ZMember{loc.member, static_cast<double>(score)});
  }
  std::optional<double> unused;
  return RedisZSet(db_).Add(key, members, flags, result, &unused, written);
}

Status RedisGeo::Position(std::string_view key, std::string_view member,
                          std::optional<std::pair<double, double>>* pos) {
  pos->reset();
  std::optional<double> score;
  Status s = RedisZSet(db_).Score(key, member, &score);
  if (!s.ok() || !score) return s;
  double lon, lat;
  if (geo::Decode(*score, &lon, &lat)) *pos = std::make_pair(lon, lat);
  return Status::OK();
}

Status RedisGeo::Search(std::string_view key, const geo::Shape& shape, size_t limit, std::vector<GeoPoint>* out) {
  out->clear();
  geo::ScoreRange ranges[9];
  int n = geo::SearchRanges(shape, ranges);
  Context::SnapshotScope snapshot(db_->ctx());
  RedisZSet zset(db_);
  for (int i = 0; i < n; i++) {
    if (limit && out->size() >= limit) break;
    const double max = static_cast<double>(ranges[i].max);
    Status s = zset.Walk(key, false, static_cast<double>(ranges[i].min), [&](const ZMember& m) {
      if (m.score >= max) return false;
      GeoPoint p;
      if (geo::Decode(m.score, &p.lon, &p.lat) && geo::WithinShape(shape, p.lon, p.lat, &p.dist)) {
        p.member = m.member;
        p.score = m.score;
        out->push_back(std::move(p));
      }
      return !(limit && out->size() >= limit);
    });
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace kvrocks
