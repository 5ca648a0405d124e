// Geo commands: GEOADD GEOPOS GEODIST GEOHASH GEOSEARCH GEOSEARCHSTORE
// GEORADIUS GEORADIUSBYMEMBER and their _RO forms. Argument checks follow
// Redis 7.0's geo.c in order (the key is looked up before the options are read).
#include <algorithm>
#include <cstdio>

#include "commands/helpers.h"
#include "types/redis_geo.h"

namespace kvrocks {

namespace {

// "%.4f", the precision of every distance Redis replies.
std::string FormatDistance(double d) {
  char buf[128];
  int n = std::snprintf(buf, sizeof(buf), "%.4f", d);
  return std::string(buf, static_cast<size_t>(n));
}

// A coordinate as Redis' addReplyHumanLongDouble writes it.
void ReplyCoordinate(CommandCall& call, double v) {
  std::string s = FormatLongDoubleHuman(v);
  if (call.resp == 3) {
    call.out->append(",").append(s).append("\r\n");
  } else {
    reply::Bulk(call.out, s);
  }
}

bool DoubleArg(CommandCall& call, size_t i, double* v, const char* error = kNotFloatError) {
  if (ParseDouble(call.args[i], v)) return true;
  ReplyError(call, error);
  return false;
}

// v as printf's %f writes it, however long (1e308 has 309 digits before the point).
std::string FixedPoint(double v) {
  int n = std::snprintf(nullptr, 0, "%f", v);
  std::string s(static_cast<size_t>(n), '\0');
  std::snprintf(s.data(), s.size() + 1, "%f", v);
  return s;
}

bool LonLatArgs(CommandCall& call, size_t i, double* lon, double* lat) {
  if (!DoubleArg(call, i, lon) || !DoubleArg(call, i + 1, lat)) return false;
  if (*lon < geo::kLonMin || *lon > geo::kLonMax || *lat < geo::kLatMin || *lat > geo::kLatMax) {
    // Redis' addReplyErrorFormat builds the whole text, whatever its length.
    ReplyError(call, "ERR invalid longitude,latitude pair " + FixedPoint(*lon) + "," + FixedPoint(*lat));
    return false;
  }
  return true;
}

// Meters per unit.
bool UnitArg(CommandCall& call, size_t i, double* to_meters) {
  const std::string& u = call.args[i];
  if (TokenEquals(u, "m")) {
    *to_meters = 1;
  } else if (TokenEquals(u, "km")) {
    *to_meters = 1000;
  } else if (TokenEquals(u, "ft")) {
    *to_meters = 0.3048;
  } else if (TokenEquals(u, "mi")) {
    *to_meters = 1609.34;
  } else {
    ReplyError(call, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return false;
  }
  return true;
}

bool RadiusArgs(CommandCall& call, size_t i, geo::Shape* shape) {
  double r;
  if (!DoubleArg(call, i, &r, "ERR need numeric radius")) return false;
  if (r < 0) {
    ReplyError(call, "ERR radius cannot be negative");
    return false;
  }
  shape->circle = true;
  shape->radius = r;
  return UnitArg(call, i + 1, &shape->conversion);
}

bool BoxArgs(CommandCall& call, size_t i, geo::Shape* shape) {
  double w, h;
  if (!DoubleArg(call, i, &w, "ERR need numeric width") || !DoubleArg(call, i + 1, &h, "ERR need numeric height")) {
    return false;
  }
  if (h < 0 || w < 0) {
    ReplyError(call, "ERR height or width cannot be negative");
    return false;
  }
  shape->circle = false;
  shape->width = w;
  shape->height = h;
  return UnitArg(call, i + 2, &shape->conversion);
}

// GEOADD key [NX|XX] [CH] longitude latitude member [...]
void GeoAdd(CommandCall& call) {
  const auto& a = call.args;
  RedisZSet::AddFlags flags;
  size_t i = 2;
  for (; i < a.size(); i++) {
    if (TokenEquals(a[i], "nx")) {
      flags.nx = true;
    } else if (TokenEquals(a[i], "xx")) {
      flags.xx = true;
    } else if (TokenEquals(a[i], "ch")) {
      flags.ch = true;
    } else {
      break;
    }
  }
  if ((a.size() - i) % 3 != 0 || (flags.nx && flags.xx) || i == a.size()) return ReplyError(call, kSyntaxError);
  std::vector<RedisGeo::Location> locations;
  for (; i < a.size(); i += 3) {
    RedisGeo::Location loc;
    if (!LonLatArgs(call, i, &loc.lon, &loc.lat)) return;
    loc.member = a[i + 2];
    locations.push_back(std::move(loc));
  }
  Database db = CurrentDb(call);
  int64_t result, written;
  Status s = RedisGeo(&db).Add(a[1], locations, flags, &result, &written);
  if (!s.ok()) return ReplyStatusError(call, s);
  call.ctx->AddDirty(written);  // Redis counts added and updated members
  reply::Integer(call.out, result);
}

// Looks up a geo key for a read: *exists=false if absent; replies WRONGTYPE.
bool LoadGeoKey(CommandCall& call, Database* db, const std::string& key, bool* exists) {
  LoadedKey lk;
  Metadata meta;
  Status s = RedisZSet(db).LoadZSet(key, &lk, &meta, exists);
  if (!s.ok()) ReplyStatusError(call, s);
  return s.ok();
}

// The positions of args[2...] in the geo key args[1] (empty for absent members);
// replies the error and returns false on failure.
bool MemberPositions(CommandCall& call, std::vector<std::optional<std::pair<double, double>>>* out) {
  Database db = CurrentDb(call);
  bool exists;
  if (!LoadGeoKey(call, &db, call.args[1], &exists)) return false;
  out->assign(call.args.size() - 2, std::nullopt);
  if (!exists) return true;
  RedisGeo g(&db);
  for (size_t i = 2; i < call.args.size(); i++) {
    Status s = g.Position(call.args[1], call.args[i], &(*out)[i - 2]);
    if (!s.ok()) {
      ReplyStatusError(call, s);
      return false;
    }
  }
  return true;
}

void GeoPos(CommandCall& call) {
  std::vector<std::optional<std::pair<double, double>>> positions;
  if (!MemberPositions(call, &positions)) return;
  reply::ArrayHeader(call.out, positions.size());
  for (const auto& pos : positions) {
    if (!pos) {
      reply::NullArray(call.out, call.resp);
      continue;
    }
    reply::ArrayHeader(call.out, 2);
    ReplyCoordinate(call, pos->first);
    ReplyCoordinate(call, pos->second);
  }
}

// GEODIST key member1 member2 [M|KM|FT|MI]
void GeoDist(CommandCall& call) {
  double to_meters = 1;
  if (call.args.size() == 5) {
    if (!UnitArg(call, 4, &to_meters)) return;
  } else if (call.args.size() > 5) {
    return ReplyError(call, kSyntaxError);
  }
  Database db = CurrentDb(call);
  bool exists;
  if (!LoadGeoKey(call, &db, call.args[1], &exists)) return;
  if (!exists) return reply::Null(call.out, call.resp);
  RedisGeo g(&db);
  std::optional<std::pair<double, double>> p1, p2;
  Status s = g.Position(call.args[1], call.args[2], &p1);
  if (s.ok()) s = g.Position(call.args[1], call.args[3], &p2);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!p1 || !p2) return reply::Null(call.out, call.resp);
  reply::Bulk(call.out, FormatDistance(geo::Distance(p1->first, p1->second, p2->first, p2->second) / to_meters));
}

void GeoHash(CommandCall& call) {
  std::vector<std::optional<std::pair<double, double>>> positions;
  if (!MemberPositions(call, &positions)) return;
  reply::ArrayHeader(call.out, positions.size());
  for (const auto& pos : positions) {
    if (!pos) {
      reply::Null(call.out, call.resp);
    } else {
      reply::Bulk(call.out, geo::HashString(pos->first, pos->second));
    }
  }
}

enum SearchFlags : int {
  kRadiusCoords = 1,   // GEORADIUS
  kRadiusMember = 2,   // GEORADIUSBYMEMBER
  kNoStore = 4,        // the _RO forms
  kGeoSearch = 8,      // GEOSEARCH
  kGeoSearchStore = 16,
};

// The shared implementation of every search command (Redis' georadiusGeneric).
void SearchGeneric(CommandCall& call, size_t src_index, int flags) {
  const auto& a = call.args;
  const std::string& src = a[src_index];
  Database db = CurrentDb(call);
  bool exists;
  if (!LoadGeoKey(call, &db, src, &exists)) return;
  RedisGeo g(&db);

  geo::Shape shape;
  size_t base;
  const std::string* store_key = nullptr;
  bool store_dist = false;
  if (flags & kRadiusCoords) {
    base = 6;
    if (!LonLatArgs(call, 2, &shape.lon, &shape.lat) || !RadiusArgs(call, 4, &shape)) return;
  } else if (flags & kRadiusMember) {
    base = 5;
    if (exists) {  // without the key Redis only parses the options, to pick the reply
      std::optional<std::pair<double, double>> pos;
      Status s = g.Position(src, a[2], &pos);
      if (!s.ok()) return ReplyStatusError(call, s);
      if (!pos) return ReplyError(call, "ERR could not decode requested zset member");
      shape.lon = pos->first;
      shape.lat = pos->second;
      if (!RadiusArgs(call, 3, &shape)) return;
    }
  } else {
    base = 2;
    if (flags & kGeoSearchStore) {
      base = 3;
      store_key = &a[1];
    }
  }

  bool withdist = false, withhash = false, withcoord = false;
  bool frommember = false, fromloc = false, byradius = false, bybox = false, any = false;
  enum { kNone, kAsc, kDesc } sort = kNone;
  int64_t count = 0;
  const bool search = flags & kGeoSearch;
  for (size_t i = base; i < a.size(); i++) {
    const std::string& arg = a[i];
    size_t remaining = a.size() - i - 1;
    if (TokenEquals(arg, "withdist")) {
      withdist = true;
    } else if (TokenEquals(arg, "withhash")) {
      withhash = true;
    } else if (TokenEquals(arg, "withcoord")) {
      withcoord = true;
    } else if (TokenEquals(arg, "any")) {
      any = true;
    } else if (TokenEquals(arg, "asc")) {
      sort = kAsc;
    } else if (TokenEquals(arg, "desc")) {
      sort = kDesc;
    } else if (TokenEquals(arg, "count") && remaining >= 1) {
      if (!IntArg(call, i + 1, &count)) return;
      if (count <= 0) return ReplyError(call, "ERR COUNT must be > 0");
      i++;
    } else if ((TokenEquals(arg, "store") || TokenEquals(arg, "storedist")) && remaining >= 1 &&
               !(flags & kNoStore) && !search) {
      store_key = &a[i + 1];
      store_dist = TokenEquals(arg, "storedist");
      i++;
    } else if (TokenEquals(arg, "storedist") && (flags & kGeoSearchStore)) {
      store_dist = true;
    } else if (TokenEquals(arg, "frommember") && remaining >= 1 && search && !fromloc) {
      if (exists) {
        std::optional<std::pair<double, double>> pos;
        Status s = g.Position(src, a[i + 1], &pos);
        if (!s.ok()) return ReplyStatusError(call, s);
        if (!pos) return ReplyError(call, "ERR could not decode requested zset member");
        shape.lon = pos->first;
        shape.lat = pos->second;
      }
      frommember = true;
      i++;
    } else if (TokenEquals(arg, "fromlonlat") && remaining >= 2 && search && !frommember) {
      if (!LonLatArgs(call, i + 1, &shape.lon, &shape.lat)) return;
      fromloc = true;
      i += 2;
    } else if (TokenEquals(arg, "byradius") && remaining >= 2 && search && !bybox) {
      if (!RadiusArgs(call, i + 1, &shape)) return;
      byradius = true;
      i += 2;
    } else if (TokenEquals(arg, "bybox") && remaining >= 3 && search && !byradius) {
      if (!BoxArgs(call, i + 1, &shape)) return;
      bybox = true;
      i += 3;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }

  if (store_key && (withdist || withhash || withcoord)) {
    return ReplyError(call, std::string("ERR ") +
                                (flags & kGeoSearchStore ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
                                " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
  }
  if (search && !(frommember || fromloc)) {
    return ReplyError(call, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + a[0]);
  }
  if (search && !(byradius || bybox)) {
    return ReplyError(call, "ERR exactly one of BYRADIUS and BYBOX can be specified for " + a[0]);
  }
  if (any && count == 0) return ReplyError(call, "ERR the ANY argument requires COUNT argument");

  std::vector<GeoPoint> points;
  if (exists) {
    // COUNT without ANY returns the closest ones, so it implies ASC.
    if (count != 0 && sort == kNone && !any) sort = kAsc;
    Status s = g.Search(src, shape, any ? static_cast<size_t>(count) : 0, &points);
    if (!s.ok()) return ReplyStatusError(call, s);
  }
  if (sort != kNone) {
    std::stable_sort(points.begin(), points.end(), [&](const GeoPoint& x, const GeoPoint& y) {
      return sort == kAsc ? x.dist < y.dist : x.dist > y.dist;
    });
  }
  size_t returned = count == 0 ? points.size() : std::min(points.size(), static_cast<size_t>(count));

  if (store_key == nullptr) {
    size_t options = (withdist ? 1 : 0) + (withhash ? 1 : 0) + (withcoord ? 1 : 0);
    reply::ArrayHeader(call.out, returned);
    for (size_t i = 0; i < returned; i++) {
      const GeoPoint& p = points[i];
      if (options) reply::ArrayHeader(call.out, options + 1);
      reply::Bulk(call.out, p.member);
      if (withdist) reply::Bulk(call.out, FormatDistance(p.dist / shape.conversion));
      if (withhash) reply::Integer(call.out, static_cast<int64_t>(p.score));
      if (withcoord) {
        reply::ArrayHeader(call.out, 2);
        ReplyCoordinate(call, p.lon);
        ReplyCoordinate(call, p.lat);
      }
    }
    return;
  }
  std::vector<ZMember> members;
  members.reserve(returned);
  for (size_t i = 0; i < returned; i++) {
    members.push_back(ZMember{points[i].member, store_dist ? points[i].dist / shape.conversion : points[i].score});
  }
  Status s = RedisZSet(&db).Store(*store_key, members);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, static_cast<int64_t>(returned));
}

void GeoRadius(CommandCall& call) { SearchGeneric(call, 1, kRadiusCoords); }
void GeoRadiusRo(CommandCall& call) { SearchGeneric(call, 1, kRadiusCoords | kNoStore); }
void GeoRadiusByMember(CommandCall& call) { SearchGeneric(call, 1, kRadiusMember); }
void GeoRadiusByMemberRo(CommandCall& call) { SearchGeneric(call, 1, kRadiusMember | kNoStore); }
void GeoSearch(CommandCall& call) { SearchGeneric(call, 1, kGeoSearch); }
void GeoSearchStore(CommandCall& call) { SearchGeneric(call, 2, kGeoSearch | kGeoSearchStore); }

// The STORE/STOREDIST destination of GEORADIUS[BYMEMBER], locked with the source.
std::vector<std::pair<int, std::string>> RadiusStoreKeys(const CommandCall& call) {
  std::vector<std::pair<int, std::string>> keys;
  for (size_t i = 2; i + 1 < call.args.size(); i++) {
    if (TokenEquals(call.args[i], "store") || TokenEquals(call.args[i], "storedist")) {
      keys.emplace_back(call.conn->db, call.args[i + 1]);
    }
  }
  return keys;
}

}  // namespace

void RegisterGeoCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite | kCmdDenyOOM, r = kCmdReadOnly;
  t->Add({"geoadd", -5, w, 1, 1, 1, GeoAdd, "geo", "Adds one or more members to a geospatial index. The key is created if it doesn't exist.", "3.2.0"});
  t->Add({"geopos", -2, r, 1, 1, 1, GeoPos, "geo", "Returns the longitude and latitude of members from a geospatial index.", "3.2.0"});
  t->Add({"geodist", -4, r, 1, 1, 1, GeoDist, "geo", "Returns the distance between two members of a geospatial index.", "3.2.0"});
  t->Add({"geohash", -2, r, 1, 1, 1, GeoHash, "geo", "Returns members from a geospatial index as geohash strings.", "3.2.0"});
  t->Add({"geosearch", -7, r, 1, 1, 1, GeoSearch, "geo", "Queries a geospatial index for members inside an area of a box or a circle.", "6.2.0"});
  t->Add({"geosearchstore", -8, w, 1, 2, 1, GeoSearchStore, "geo", "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result.", "6.2.0"});
  t->Add({"georadius", -6, w, 1, 1, 1, GeoRadius, "geo", "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result.", "3.2.0", RadiusStoreKeys});
  t->Add({"georadius_ro", -6, r, 1, 1, 1, GeoRadiusRo, "geo", "Returns members from a geospatial index that are within a distance from a coordinate.", "3.2.10"});
  t->Add({"georadiusbymember", -5, w, 1, 1, 1, GeoRadiusByMember, "geo", "Queries a geospatial index for members within a distance from a member, optionally stores the result.", "3.2.0", RadiusStoreKeys});
  t->Add({"georadiusbymember_ro", -5, r, 1, 1, 1, GeoRadiusByMemberRo, "geo", "Returns members from a geospatial index that are within a distance from a member.", "3.2.10"});
}

}  // namespace kvrocks
