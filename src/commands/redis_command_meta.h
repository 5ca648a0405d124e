// What Redis 7.0 answers to COMMAND INFO and COMMAND DOCS, per command and
// subcommand ("config|get"), recorded from redis-server by
// scripts/gen_command_meta.py into redis_command_meta.cc. kvrocks serves these
// for the commands it shares with Redis (COMMAND INFO/DOCS/LIST, ACL
// categories); a unit test checks that kvrocks' own table (arity, flags, key
// positions) agrees with them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvrocks {

struct RedisCommandMeta {
  const char* name;  // lower case; "container|sub" for a subcommand
  // The first nine elements of its COMMAND INFO entry, RESP3: name, arity,
  // flags, first key, last key, step, ACL categories, tips, key specs. (The
  // tenth, its subcommands, depends on which of them kvrocks has.)
  const char* info;
  size_t docs_fields;  // number of field/value pairs in docs
  // Its COMMAND DOCS map without "subcommands", RESP3 field/value pairs.
  const char* docs;
  const char* categories;  // ACL categories without '@', space-separated
};

extern const RedisCommandMeta kRedisCommandMeta[];
extern const size_t kRedisCommandMetaCount;

// The entry of a command or subcommand name (lower case), or nullptr.
const RedisCommandMeta* FindRedisCommandMeta(std::string_view name);

// Its ACL categories, without '@', in Redis' order.
std::vector<std::string> RecordedAclCategories(const RedisCommandMeta& m);

// RESP3 reply bytes as a RESP2 client gets them: maps become flat arrays,
// sets arrays. Only the types COMMAND's replies use (aggregates, strings,
// integers).
void Resp3ToResp2(std::string_view resp3, std::string* out);

}  // namespace kvrocks
