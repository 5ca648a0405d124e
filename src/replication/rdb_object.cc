#include "replication/rdb_object.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "common/encoding.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "replication/rdb_writer.h"
#include "types/encoding_limits.h"
#include "types/redis_hash.h"
#include "types/redis_list.h"
#include "types/redis_set.h"
#include "types/redis_stream.h"
#include "types/redis_string.h"
#include "types/redis_zset.h"

namespace kvrocks::rdb {

namespace {

std::vector<std::string_view> Views(const std::vector<std::string>& v) {
  return std::vector<std::string_view>(v.begin(), v.end());
}

// A stream node as the listpack Redis keeps it (count, deleted, master fields, entries).
std::string NodeListpack(const StreamNodeDump& node) {
  ListpackBuilder lp;
  lp.AddInt(static_cast<int64_t>(node.entries.size()));
  lp.AddInt(0);
  lp.AddInt(static_cast<int64_t>(node.master_fields.size()));
  for (const auto& f : node.master_fields) lp.AddString(f);
  lp.AddInt(0);
  for (const auto& e : node.entries) {
    size_t nfields = e.values.size() / 2;
    bool same = nfields == node.master_fields.size();
    for (size_t i = 0; same && i < nfields; i++) same = e.values[2 * i] == node.master_fields[i];
    lp.AddInt(same ? 2 : 0);
    lp.AddInt(static_cast<int64_t>(e.id.ms - node.master_id.ms));
    lp.AddInt(static_cast<int64_t>(e.id.seq - node.master_id.seq));
    if (same) {
      for (size_t i = 0; i < nfields; i++) lp.AddString(e.values[2 * i + 1]);
    } else {
      lp.AddInt(static_cast<int64_t>(nfields));
      for (const auto& v : e.values) lp.AddString(v);
    }
    lp.AddInt(static_cast<int64_t>(nfields + 3 + (same ? 0 : nfields + 1)));
  }
  return lp.Finish();
}

// A listpack zset's score as zzlInsertAt stores it: an integer when the double
// is one (double2ll: -0 becomes 0), else d2string's text.
void AddListpackScore(ListpackBuilder* lp, double score) {
  constexpr double kHalfLongMax = static_cast<double>(INT64_MAX / 2);
  if (score >= -kHalfLongMax && score <= kHalfLongMax && static_cast<double>(static_cast<int64_t>(score)) == score) {
    return lp->AddInt(static_cast<int64_t>(score));
  }
  char buf[64];
  int n = std::isnan(score)   ? snprintf(buf, sizeof(buf), "nan")
          : std::isinf(score) ? snprintf(buf, sizeof(buf), score < 0 ? "-inf" : "inf")
                              : snprintf(buf, sizeof(buf), "%.17g", score);
  lp->AddString(std::string_view(buf, static_cast<size_t>(n)));
}

void PutRawId(std::string* out, const StreamID& id) {
  std::string raw;
  PutBE64(&raw, id.ms);
  PutBE64(&raw, id.seq);
  out->append(raw);
}

void PutStream(std::string* out, const StreamDump& d) {
  PutLen(out, d.nodes.size());
  for (const auto& n : d.nodes) {
    std::string key;
    PutRawId(&key, n.master_id);
    PutRawString(out, key);
    PutRawString(out, NodeListpack(n));
  }
  PutLen(out, d.length);
  PutLen(out, d.last_id.ms);
  PutLen(out, d.last_id.seq);
  PutLen(out, d.first_id.ms);
  PutLen(out, d.first_id.seq);
  PutLen(out, d.max_deleted.ms);
  PutLen(out, d.max_deleted.seq);
  PutLen(out, d.entries_added);
  PutLen(out, d.groups.size());
  for (const auto& g : d.groups) {
    PutRawString(out, g.name);
    PutLen(out, g.last_id.ms);
    PutLen(out, g.last_id.seq);
    PutLen(out, static_cast<uint64_t>(g.entries_read));
    PutLen(out, g.pel.size());
    for (const auto& p : g.pel) {
      PutRawId(out, p.id);
      PutMillis(out, p.delivery_time);
      PutLen(out, p.delivery_count);
    }
    PutLen(out, g.consumers.size());
    for (const auto& c : g.consumers) {
      PutRawString(out, c.name);
      PutMillis(out, c.seen_time);
      PutLen(out, c.pel.size());
      for (const auto& id : c.pel) PutRawId(out, id);
    }
  }
}

}  // namespace

Status RestoreObject(Database* db, std::string_view key, const Object& obj, uint64_t expire_ms) {
  if (!obj.module_name.empty()) return Status::InvalidArgument("module value of type " + obj.module_name);
  if (obj.Empty()) return Status::OK();
  Status s;
  switch (obj.type) {
    case RedisType::kString: {
      LoadedKey lk;
      s = db->Load(key, &lk);
      if (s.ok()) RedisString(db).WriteValue(key, &lk, obj.str, expire_ms);
      return s;
    }
    case RedisType::kStream:
      return RedisStream(db).Restore(key, *obj.stream, expire_ms);
    case RedisType::kList: {
      int64_t len;
      s = RedisList(db).Push(key, Views(obj.elements), false, false, &len);
      break;
    }
    case RedisType::kSet: {
      int64_t added;
      s = RedisSet(db).Add(key, Views(obj.elements), &added);
      // Redis keeps an intset payload as it is, wider than its members need or not.
      if (s.ok() && obj.intset_width > 2) s = RedisSet(db).WidenIntset(key, obj.intset_width);
      break;
    }
    case RedisType::kHash: {
      std::vector<std::pair<std::string_view, std::string_view>> fvs;
      fvs.reserve(obj.pairs.size());
      // Every field is loaded, its TTL passed or not, as Redis 7.4's rdbLoadObject
      // loads them (redis/redis#13347): reads hide the expired ones, and expiry
      // deletes them later (a master's active expiry, or a replica's master's HDEL;
      // the master may have persisted one since its snapshot). Judged at time 0,
      // a passed TTL is kept instead of deleting its field (RedisHash::ExpireFields).
      ExpiryTimeIgnore past_ttls_kept;
      std::map<uint64_t, std::vector<std::string_view>> by_ttl;  // fields with a TTL, grouped by it
      for (size_t i = 0; i < obj.pairs.size(); i++) {
        uint64_t ttl = i < obj.field_expires.size() ? obj.field_expires[i] : 0;
        if (ttl != 0) by_ttl[ttl].push_back(obj.pairs[i].first);
        fvs.emplace_back(obj.pairs[i].first, obj.pairs[i].second);
      }
      int64_t added;
      RedisHash hash(db);
      s = hash.Set(key, fvs, false, &added);
      for (auto it = by_ttl.begin(); s.ok() && it != by_ttl.end(); ++it) {
        std::vector<int64_t> results;
        s = hash.ExpireFields(key, it->second, it->first, RedisHash::ExpireCond::kAlways, &results);
      }
      break;
    }
    case RedisType::kZSet: {
      std::vector<ZMember> members;
      members.reserve(obj.zset.size());
      for (const auto& [m, score] : obj.zset) members.push_back(ZMember{m, score});
      int64_t result;
      std::optional<double> incr;
      RedisZSet::AddFlags flags;
      flags.whole_set = true;
      s = RedisZSet(db).Add(key, members, flags, &result, &incr);
      break;
    }
    default:
      return Status::Corruption("unknown object type");
  }
  if (s.ok() && expire_ms != 0) {
    bool applied;
    s = db->SetExpire(key, expire_ms, 0, &applied);
  }
  return s;
}

Status DumpObject(Database* db, std::string_view key, std::string* payload) {
  LoadedKey lk;
  Status s = db->Load(key, &lk);
  if (!s.ok()) return s;
  if (!lk.live) return Status::NotFound();
  std::string body;
  int version = kDumpVersion;
  if (!(s = SerializeObject(db, key, lk, &body, &version)).ok()) return s;
  *payload = FinishDump(std::move(body), version);
  return Status::OK();
}

Status SerializeObject(Database* db, std::string_view key, const LoadedKey& lk, std::string* out, int* version) {
  Status s;
  std::string& body = *out;
  switch (lk.type) {
    case RedisType::kNone:
      return Status::NotFound();
    case RedisType::kString: {
      std::string v;
      s = RedisString(db).ReadValue(key, lk.raw, &v);
      body.push_back(static_cast<char>(kTypeString));
      PutRawString(&body, v);
      break;
    }
    case RedisType::kList: {
      std::vector<std::string> elems;
      Metadata meta;
      if (!(s = meta.Decode(lk.raw)).ok()) return s;
      s = RedisList(db).Range(key, 0, -1, &elems);
      int fill, depth;
      RedisList::QuicklistOptions(meta, &fill, &depth);
      body.push_back(static_cast<char>(kTypeListQuicklist2));
      PutQuicklist(&body, elems, fill, depth);
      break;
    }
    case RedisType::kSet: {
      std::vector<std::string> members;
      Metadata meta;
      if (!(s = meta.Decode(lk.raw)).ok()) return s;
      s = RedisSet(db).Members(key, &members);
      if (std::string_view(RedisSet::Encoding(meta)) == "intset") {
        std::vector<int64_t> values(members.size());
        for (size_t i = 0; i < members.size(); i++) ParseInt64(members[i], &values[i]);
        body.push_back(static_cast<char>(kTypeSetIntset));
        PutRawString(&body, IntsetBlob(std::move(values), RedisSet::IntsetWidth(meta)));
        break;
      }
      body.push_back(static_cast<char>(kTypeSet));
      PutLen(&body, members.size());
      for (const auto& m : members) PutRawString(&body, m);
      break;
    }
    case RedisType::kHash: {
      std::vector<std::pair<std::string, std::string>> fvs;
      RedisHash hash(db);
      s = hash.GetAll(key, &fvs);
      std::vector<std::string_view> names;
      for (const auto& fv : fvs) names.push_back(fv.first);
      std::vector<int64_t> ttls;
      if (s.ok()) s = hash.FieldExpireTimes(key, names, &ttls);
      uint64_t min_ttl = UINT64_MAX;
      for (int64_t t : ttls) {
        if (t > 0) min_ttl = std::min<uint64_t>(min_ttl, static_cast<uint64_t>(t));
      }
      Metadata meta;
      if (s.ok()) s = meta.Decode(lk.raw);
      if (min_ttl == UINT64_MAX && std::string_view(RedisHash::Encoding(meta)) == "listpack") {
        ListpackBuilder lp;  // in insertion order, as GetAll gives a listpack hash
        for (const auto& [f, v] : fvs) {
          lp.AddString(f);
          lp.AddString(v);
        }
        body.push_back(static_cast<char>(kTypeHashListpack));
        PutRawString(&body, lp.Finish());
      } else if (min_ttl == UINT64_MAX) {
        body.push_back(static_cast<char>(kTypeHash));
        PutLen(&body, fvs.size());
        for (const auto& [f, v] : fvs) {
          PutRawString(&body, f);
          PutRawString(&body, v);
        }
      } else {
        // Fields with TTLs: Redis 7.4's HASH_METADATA (RDB 12), TTLs relative to the smallest one.
        body.push_back(static_cast<char>(kTypeHashMetadata));
        PutMillis(&body, min_ttl);
        PutLen(&body, fvs.size());
        for (size_t i = 0; i < fvs.size(); i++) {
          PutLen(&body, ttls[i] > 0 ? static_cast<uint64_t>(ttls[i]) - min_ttl + 1 : 0);
          PutRawString(&body, fvs[i].first);
          PutRawString(&body, fvs[i].second);
        }
        *version = std::max(*version, 12);
      }
      break;
    }
    case RedisType::kZSet: {
      std::vector<ZMember> members;
      Metadata meta;
      if (!(s = meta.Decode(lk.raw)).ok()) return s;
      s = RedisZSet(db).All(key, &members);
      if (std::string_view(RedisZSet::Encoding(meta)) == "listpack") {
        ListpackBuilder lp;  // member, score pairs by score (zzlInsertAt)
        for (const auto& m : members) {
          lp.AddString(m.member);
          AddListpackScore(&lp, m.score);
        }
        body.push_back(static_cast<char>(kTypeZSetListpack));
        PutRawString(&body, lp.Finish());
        break;
      }
      // A skiplist is saved from the greatest element to the smallest.
      body.push_back(static_cast<char>(kTypeZSet2));
      PutLen(&body, members.size());
      for (auto it = members.rbegin(); it != members.rend(); ++it) {
        PutRawString(&body, it->member);
        PutBinaryDouble(&body, it->score);
      }
      break;
    }
    case RedisType::kStream: {
      StreamDump dump;
      s = RedisStream(db).Dump(key, &dump);
      body.push_back(static_cast<char>(kTypeStreamListpacks2));
      if (s.ok()) PutStream(&body, dump);
      break;
    }
  }
  return s;
}

}  // namespace kvrocks::rdb
