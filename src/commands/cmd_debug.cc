// DEBUG (the subcommands of Redis' that mean something for kvrocks: DIGEST,
// DIGEST-VALUE, ERROR, LOG, MALLCTL, MALLCTL-STR, OBJECT, POPULATE, PROTOCOL,
// RELOAD, PAUSE-CRON, QUICKLIST-PACKED-THRESHOLD, SET-ACTIVE-EXPIRE, SET-DISABLE-DENY-SCRIPTS,
// SET-SKIP-CHECKSUM-VALIDATION, SLEEP) and MEMORY.
#include <arpa/inet.h>
#include <glog/logging.h>
#include <rocksdb/db.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "commands/debug_reload.h"
#include "commands/helpers.h"
#include "common/sha1.h"
#include "replication/rdb_object.h"
#include "replication/rdb_reader.h"
#include "replication/rdb_writer.h"
#include "storage/key_encoding.h"
#include "types/redis_list.h"
#include "types/redis_string.h"

// jemalloc's, when it is the process allocator (the server binary links it).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));
extern "C" void malloc_stats_print(void (*write_cb)(void*, const char*), void* cbopaque, const char* opts)
    __attribute__((weak));

namespace kvrocks {

namespace {


// Redis' debug.c digests: SHA-1 based, order-independent for sets and hashes.
using Digest = unsigned char[20];

void Sha1Raw(const void* data, size_t len, Digest out) {
  std::string hex = Sha1Hex(std::string_view(static_cast<const char*>(data), len));
  for (int i = 0; i < 20; i++) out[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
}

void XorDigest(Digest digest, const void* data, size_t len) {
  Digest hash;
  Sha1Raw(data, len, hash);
  for (int i = 0; i < 20; i++) digest[i] ^= hash[i];
}

void MixDigest(Digest digest, const void* data, size_t len) {
  XorDigest(digest, data, len);
  Digest again;
  Sha1Raw(digest, 20, again);
  memcpy(digest, again, 20);
}

void MixString(Digest digest, const std::string& s) { MixDigest(digest, s.data(), s.size()); }

// A score as Redis 7.0's digest writes it ("%.17g", not the shortest form).
std::string DigestScore(double d) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.17g", d);
  return buf;
}

// Redis' OBJ_* type numbers.
uint32_t RedisTypeNumber(RedisType t) {
  switch (t) {
    case RedisType::kString: return 0;
    case RedisType::kList: return 1;
    case RedisType::kSet: return 2;
    case RedisType::kZSet: return 3;
    case RedisType::kHash: return 4;
    case RedisType::kStream: return 6;
    default: return 0;
  }
}

// Mixes the digest of key's value into digest (Redis' xorObjectDigest); nothing
// if the key is missing. The caller decides whether expired keys are seen
// (DictLookup).
Status ValueDigest(Database& db, const std::string& key, Digest digest) {
  LoadedKey lk;
  Status s = db.Load(key, &lk);
  if (!s.ok() || !lk.live) return s;
  std::string payload;
  s = rdb::DumpObject(&db, key, &payload);
  if (!s.ok()) return s;
  rdb::Object obj;
  s = rdb::Reader::ParseDump(payload, &obj);
  if (!s.ok()) return s;
  uint32_t type = htonl(RedisTypeNumber(lk.type));
  MixDigest(digest, &type, sizeof(type));
  switch (lk.type) {
    case RedisType::kString:
      MixString(digest, obj.str);
      break;
    case RedisType::kList:
      for (const auto& e : obj.elements) MixString(digest, e);
      break;
    case RedisType::kSet:
      for (const auto& e : obj.elements) XorDigest(digest, e.data(), e.size());
      break;
    case RedisType::kZSet:
      for (const auto& [member, score] : obj.zset) {
        Digest ele = {0};
        MixString(ele, member);
        MixString(ele, DigestScore(score));
        XorDigest(digest, ele, 20);
      }
      break;
    case RedisType::kHash:
      for (const auto& [field, value] : obj.pairs) {
        Digest ele = {0};
        MixString(ele, field);
        MixString(ele, value);
        XorDigest(digest, ele, 20);
      }
      break;
    case RedisType::kStream:
      // Its entries in order, each id as "<ms>.<seq>" then its fields and values;
      // groups, deleted entries and the last id do not count.
      if (obj.stream) {
        for (const auto& node : obj.stream->nodes) {
          for (const auto& entry : node.entries) {
            MixString(digest, std::to_string(entry.id.ms) + "." + std::to_string(entry.id.seq));
            for (const auto& v : entry.values) MixString(digest, v);
          }
        }
      }
      break;
    default:
      break;
  }
  if (lk.expire_ms != 0) XorDigest(digest, "!!expire!!", 10);
  return Status::OK();
}

// DEBUG DIGEST: Redis' computeDatasetDigest over every logical database (its
// index mixed in, then each key's digest xored in: independent of key order).
Status DatasetDigest(CommandCall& call, Digest final) {
  memset(final, 0, 20);
  for (int j = 0; j < call.server->config()->databases; j++) {
    Database db(call.ctx, call.server->storage()->PhysicalDb(j));
    std::vector<std::string> keys;
    Status s = db.Keys("*", &keys);
    if (!s.ok()) return s;
    if (keys.empty()) continue;
    uint32_t aux = htonl(static_cast<uint32_t>(j));
    MixDigest(final, &aux, sizeof(aux));
    for (const auto& key : keys) {
      Digest d = {0};
      MixString(d, key);
      s = ValueDigest(db, key, d);
      if (!s.ok()) return s;
      XorDigest(final, d, 20);
    }
  }
  return Status::OK();
}

std::string Hex(const Digest d) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 20; i++) {
    out.push_back(kHex[d[i] >> 4]);
    out.push_back(kHex[d[i] & 15]);
  }
  return out;
}

// DEBUG OBJECT's quicklist fields, of the nodes DUMP lays the list out in.
std::string QuicklistFields(Database& db, const std::string& key, const LoadedKey& lk) {
  Metadata meta;
  std::vector<std::string> elems;
  if (!meta.Decode(lk.raw).ok() || !RedisList(&db).Range(key, 0, -1, &elems).ok() || elems.empty()) return "";
  int fill, depth;
  RedisList::QuicklistOptions(meta, &fill, &depth);
  std::vector<size_t> sizes = rdb::QuicklistNodeSizes(elems, fill);
  size_t total = 0;
  for (size_t sz : sizes) total += sz;
  char buf[160];
  snprintf(buf, sizeof(buf), " ql_nodes:%zu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%zu",
           sizes.size(), static_cast<double>(elems.size()) / static_cast<double>(sizes.size()), fill, depth != 0 ? 1 : 0,
           total);
  return buf;
}

void DebugObject(CommandCall& call) {
  DictLookup dict_lookup(call.ctx);
  Database db = CurrentDb(call);
  LoadedKey lk;
  Status s = db.Load(call.args[2], &lk);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!lk.live) return ReplyError(call, "ERR no such key");
  std::string body;
  int version = 0;
  s = rdb::SerializeObject(&db, call.args[2], lk, &body, &version);
  if (!s.ok()) return ReplyStatusError(call, s);
  // No object in memory: the address is none, the refcount that of OBJECT REFCOUNT.
  uint32_t lru = call.server->access_clock().Get(call.args[2]);
  std::string line = "Value at:0x0 refcount:" + std::to_string(KeyRefcount(lk)) + " encoding:" + KeyEncoding(lk) +
                     " serializedlength:" + std::to_string(body.size() - 1) + " lru:" + std::to_string(lru) +
                     " lru_seconds_idle:" + std::to_string(AccessClock::IdleMs(lru, AccessClock::Now()) / 1000);
  if (lk.type == RedisType::kList) line += QuicklistFields(db, call.args[2], lk);
  reply::Simple(call.out, line);
}

// DEBUG PROTOCOL <type>: a sample reply of each RESP type (Redis' test values).
void DebugProtocol(CommandCall& call) {
  const std::string& name = call.args[2];
  std::string* out = call.out;
  const int resp = call.resp;
  auto boolean = [&](bool v) { out->append(resp == 3 ? (v ? "#t\r\n" : "#f\r\n") : (v ? ":1\r\n" : ":0\r\n")); };
  if (TokenEquals(name, "string")) {
    reply::Bulk(out, "Hello World");
  } else if (TokenEquals(name, "integer")) {
    reply::Integer(out, 12345);
  } else if (TokenEquals(name, "double")) {
    reply::Double(out, 3.141, resp);
  } else if (TokenEquals(name, "bignum")) {
    const char* big = "1234567999999999999999999999999999999";
    if (resp == 3) {
      out->append("(").append(big).append("\r\n");
    } else {
      reply::Bulk(out, big);
    }
  } else if (TokenEquals(name, "null")) {
    reply::Null(out, resp);
  } else if (TokenEquals(name, "array") || TokenEquals(name, "set")) {
    if (TokenEquals(name, "set")) {
      reply::SetHeader(out, 3, resp);
    } else {
      reply::ArrayHeader(out, 3);
    }
    for (int j = 0; j < 3; j++) reply::Integer(out, j);
  } else if (TokenEquals(name, "map")) {
    reply::MapHeader(out, 3, resp);
    for (int j = 0; j < 3; j++) {
      reply::Integer(out, j);
      boolean(j == 1);
    }
  } else if (TokenEquals(name, "attrib")) {
    if (resp == 3) {
      out->append("|1\r\n");
      reply::Bulk(out, "key-popularity");
      reply::ArrayHeader(out, 2);
      reply::Bulk(out, "key:123");
      reply::Integer(out, 90);
    }
    // An attribute is not a reply: a real one follows it.
    reply::Bulk(out, "Some real reply following the attribute");
  } else if (TokenEquals(name, "push")) {
    if (resp != 3) return ReplyError(call, "ERR RESP2 is not supported by this command");
    out->append(">2\r\n");
    reply::Bulk(out, "server-cpu-usage");
    reply::Integer(out, 42);
    // A push is not a reply to the command: a real one follows it.
    reply::Bulk(out, "Some real reply following the push reply");
  } else if (TokenEquals(name, "true")) {
    boolean(true);
  } else if (TokenEquals(name, "false")) {
    boolean(false);
  } else if (TokenEquals(name, "verbatim")) {
    reply::Verbatim(out, "This is a verbatim\nstring", resp);
  } else {
    ReplyError(call,
               "ERR Wrong protocol type name. Please use one of the following: "
               "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
  }
}

// Redis' getPositiveLongFromObjectOrReply: one error for a non-number and a negative one.
bool NonNegativeArg(CommandCall& call, size_t i, int64_t* v) {
  if (ParseInt64(call.args[i], v) && *v >= 0) return true;
  ReplyError(call, "ERR value is out of range, must be positive");
  return false;
}

// DEBUG POPULATE <count> [<prefix>] [<size>]: string keys <prefix>:<n> holding
// "value:<n>" (cut or padded with zero bytes to size), skipping existing keys.
void DebugPopulate(CommandCall& call) {
  const auto& a = call.args;
  int64_t count, size = 0;
  if (!NonNegativeArg(call, 2, &count) || (a.size() == 5 && !NonNegativeArg(call, 4, &size))) return;
  if (!call.exclusive) {
    call.rerun_exclusive = true;  // many keys: run again holding every key lock
    return;
  }
  const std::string prefix = a.size() >= 4 ? a[3] : "key";
  Database db = CurrentDb(call);
  RedisString strings(&db);
  RedisString::SetOptions nx;
  nx.cond = RedisString::SetOptions::kNX;
  for (int64_t j = 0; j < count; j++) {
    // Redis formats the name into 128 bytes: a long prefix is cut to 127.
    std::string key = prefix + ":" + std::to_string(j);
    if (key.size() > 127) key.resize(127);
    std::string value = "value:" + std::to_string(j);
    if (size != 0) value.resize(static_cast<size_t>(size), '\0');
    bool done;
    Status s = strings.Set(key, value, nx, &done, nullptr);
    if (s.ok() && j % 10000 == 9999) s = call.ctx->Commit();  // bounded batches
    if (!s.ok()) return ReplyStatusError(call, s);
  }
  reply::Ok(call.out);
}

// DEBUG MALLCTL <name> [<value>]: reads (and writes) a jemalloc integer
// setting as Redis 7.0's mallctl_int does: it tries smaller sizes after EINVAL,
// but jemalloc has then already shrunk the size it passes, so only 8-byte
// settings can be read (a 4-byte one answers "Invalid argument" in Redis too).
void DebugMallctl(CommandCall& call) {
  const auto& a = call.args;
  if (mallctl == nullptr) return ReplySubcommandSyntaxError(call);
  int64_t val = 0, old = 0;
  const bool write = a.size() > 3;
  if (write && !IntArg(call, 3, &val)) return;
  const char* name = a[2].c_str();
  size_t sz = sizeof(old);
  while (sz > 0) {
    int ret = mallctl(name, &old, &sz, write ? &val : nullptr, write ? sz : 0);
    if (ret == 0) return reply::Integer(call.out, old);
    // A write-only setting: write it alone.
    if (ret == EPERM && write && (ret = mallctl(name, nullptr, nullptr, &val, sz)) == 0) return reply::Ok(call.out);
    if (ret != EINVAL) return ReplyError(call, std::string("ERR ") + std::strerror(ret));
    sz /= 2;
  }
  ReplyError(call, std::string("ERR ") + std::strerror(EINVAL));
}

// DEBUG MALLCTL-STR <name> [<value>|VOID]: the same for a string setting.
void DebugMallctlStr(CommandCall& call) {
  const auto& a = call.args;
  if (mallctl == nullptr) return ReplySubcommandSyntaxError(call);
  const char* name = a[2].c_str();
  const char* old = nullptr;
  size_t sz = sizeof(old);
  int rret = mallctl(name, &old, &sz, nullptr, 0);
  // Only a write-only setting may fail to read.
  if (rret != 0 && !(rret == EPERM && a.size() > 3)) return ReplyError(call, std::string("ERR ") + std::strerror(rret));
  int wret = 0;
  if (a.size() > 3) {
    const char* val = a[3].c_str();
    if (a[3] == "VOID") {
      wret = mallctl(name, nullptr, nullptr, nullptr, 0);
    } else {
      wret = mallctl(name, nullptr, nullptr, &val, sizeof(val));
    }
  }
  if (rret == 0) return reply::Bulk(call.out, old != nullptr ? old : "");
  if (wret != 0) return ReplyError(call, std::string("ERR ") + std::strerror(wret));
  reply::Ok(call.out);
}

void Debug(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  if (TokenEquals(sub, "help") && a.size() == 2) {
    return ReplyHelp(call, {"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                            "DIGEST",
                            "    Output a hex signature representing the current DB content.",
                            "DIGEST-VALUE <key> [<key> ...]",
                            "    Output a hex signature of the values of all the specified keys.",
                            "ERROR <string>",
                            "    Return a Redis protocol error with <string> as message. Useful for clients",
                            "    unit tests to simulate Redis errors.",
                            "LOG <message>",
                            "    Write <message> to the server log.",
                            "MALLCTL <key> [<val>]",
                            "    Get or set a malloc tuning integer.",
                            "MALLCTL-STR <key> [<val>]",
                            "    Get or set a malloc tuning string.",
                            "OBJECT <key>",
                            "    Show low level info about the `key` and associated value.",
                            "PANIC",
                            "    Crash the server simulating a panic.",
                            "POPULATE <count> [<prefix>] [<size>]",
                            "    Create <count> string keys named key:<num>. If <prefix> is specified then",
                            "    it is used instead of the 'key' prefix. These are not propagated to",
                            "    replicas.",
                            "PROTOCOL <type>",
                            "    Reply with a test value of the specified type. <type> can be: string,",
                            "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
                            "    true, false.",
                            "RELOAD [option ...]",
                            "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
                            "    * MERGE: conflicting keys will be loaded from RDB.",
                            "    * NOFLUSH: the existing database will not be removed before load, but",
                            "      conflicting keys will fail the load.",
                            "    * NOSAVE: the database will be loaded from an existing RDB file.",
                            "    Examples:",
                            "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
                            "      the database.",
                            "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
                            "      existing RDB file.",
                            "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
                            "      file to the database.",
                            "PAUSE-CRON <0|1>",
                            "    Stop periodic cron job processing.",
                            "SET-DISABLE-DENY-SCRIPTS <0|1>",
                            "    Let scripts call some of the commands marked noscript (CLIENT LIST,",
                            "    DEBUG PROTOCOL, CONFIG ...).",
                            "SET-ACTIVE-EXPIRE <0|1>",
                            "    Setting it to 0 disables expiring keys in background when they are not",
                            "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
                            "    default.",
                            "QUICKLIST-PACKED-THRESHOLD <size>",
                            "    Sets the threshold for elements to be inserted as plain vs packed nodes",
                            "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
                            "SEGFAULT",
                            "    Crash the server with sigsegv.",
                            "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
                            "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
                            "SLEEP <seconds>",
                            "    Stop the server for <seconds>. Decimals allowed.",
                            "HELP",
                            "    Prints this help."});
  }
  if (TokenEquals(sub, "segfault")) {
    // As Redis: a write to a read-only page (a plain bad pointer is UB the compiler may drop).
    auto* p = static_cast<volatile char*>(mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    *p = 'x';
  }
  if (TokenEquals(sub, "panic")) {
    LOG(ERROR) << "Guru Meditation: DEBUG PANIC called at Unix time " << std::time(nullptr);
    std::abort();  // the crash log (crash-log-enabled) shows where, as Redis' bug report
  }
  if (TokenEquals(sub, "sleep") && a.size() == 3) {
    double secs;
    if (!ParseDouble(a[2], &secs)) secs = 0;
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(secs * 1e6)));
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "object") && a.size() == 3) return DebugObject(call);
  if (TokenEquals(sub, "protocol") && a.size() == 3) return DebugProtocol(call);
  if (TokenEquals(sub, "populate") && a.size() >= 3 && a.size() <= 5) return DebugPopulate(call);
  if (TokenEquals(sub, "reload")) return DebugReload(call);
  if (TokenEquals(sub, "mallctl") && a.size() >= 3) return DebugMallctl(call);
  if (TokenEquals(sub, "mallctl-str") && a.size() >= 3) return DebugMallctlStr(call);
  if (TokenEquals(sub, "log") && a.size() == 3) {
    LOG(WARNING) << "DEBUG LOG: " << a[2];
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "error") && a.size() == 3) {
    // The message as it is (no "ERR " added), newlines made spaces.
    return reply::Error(call.out, a[2]);
  }
  if (TokenEquals(sub, "set-skip-checksum-validation") && a.size() == 3) {
    rdb::Reader::set_verify_checksums(std::atoi(a[2].c_str()) == 0);
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "pause-cron") && a.size() == 3) {
    call.server->PauseCron(std::atoi(a[2].c_str()) != 0);  // atoi, as Redis: "x" is 0
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "set-disable-deny-scripts") && a.size() == 3) {
    call.server->set_scripts_deny_disabled(std::atoi(a[2].c_str()) != 0);
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "quicklist-packed-threshold") && a.size() == 3) {
    // kvrocks keeps no quicklist: the threshold shapes the nodes DUMP, RDB files
    // and DEBUG OBJECT lay lists out in.
    uint64_t sz;
    if (!RedisMemToUll(a[2], &sz) || sz > (1ULL << 32) - (1 << 20)) {
      return ReplyError(call, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
    }
    rdb::SetPackedThreshold(sz == 0 ? size_t{1} << 30 : sz);
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "set-active-expire") && a.size() == 3) {
    call.server->SetActiveExpire(a[2] != "0");
    return reply::Ok(call.out);
  }
  if (TokenEquals(sub, "digest-value") && a.size() >= 2) {
    DictLookup dict_lookup(call.ctx);
    reply::ArrayHeader(call.out, a.size() - 2);
    Database db = CurrentDb(call);
    for (size_t i = 2; i < a.size(); i++) {
      Digest d = {0};
      if (!ValueDigest(db, a[i], d).ok()) memset(d, 0, 20);
      reply::Simple(call.out, Hex(d));
    }
    return;
  }
  if (TokenEquals(sub, "digest") && a.size() == 2) {
    DictLookup dict_lookup(call.ctx);
    Digest d;
    Status s = DatasetDigest(call, d);
    if (!s.ok()) return ReplyStatusError(call, s);
    return reply::Simple(call.out, Hex(d));
  }
  ReplySubcommandSyntaxError(call);
}

// MEMORY STATS: Redis' fields in Redis' order (server/memory_stats.h).
void MemoryStatsReply(CommandCall& call) {
  MemoryOverhead m = call.server->memory_stats().Overhead(call.server);
  std::string* out = call.out;
  const int resp = call.resp;
  auto integer = [&](const char* name, int64_t v) {
    reply::Bulk(out, name);
    reply::Integer(out, v);
  };
  auto dbl = [&](const char* name, float v) {
    reply::Bulk(out, name);
    reply::Double(out, v, resp);
  };
  reply::MapHeader(out, 27 + m.dbs.size(), resp);
  integer("peak.allocated", static_cast<int64_t>(m.peak_allocated));
  integer("total.allocated", static_cast<int64_t>(m.total_allocated));
  integer("startup.allocated", static_cast<int64_t>(m.startup_allocated));
  integer("replication.backlog", static_cast<int64_t>(m.repl_backlog));
  integer("clients.slaves", static_cast<int64_t>(m.clients_slaves));
  integer("clients.normal", static_cast<int64_t>(m.clients_normal));
  integer("cluster.links", static_cast<int64_t>(m.cluster_links));
  integer("aof.buffer", static_cast<int64_t>(m.aof_buffer));
  integer("lua.caches", static_cast<int64_t>(m.lua_caches));
  integer("functions.caches", static_cast<int64_t>(m.functions_caches));
  for (int db : m.dbs) {
    reply::Bulk(out, "db." + std::to_string(db));
    reply::MapHeader(out, 3, resp);
    integer("overhead.hashtable.main", 0);  // no per-key structures in memory
    integer("overhead.hashtable.expires", 0);
    integer("overhead.hashtable.slot-to-keys", 0);
  }
  integer("overhead.total", static_cast<int64_t>(m.overhead_total));
  integer("keys.count", static_cast<int64_t>(m.total_keys));
  integer("keys.bytes-per-key", static_cast<int64_t>(m.bytes_per_key));
  integer("dataset.bytes", static_cast<int64_t>(m.dataset));
  dbl("dataset.percentage", m.dataset_perc);
  dbl("peak.percentage", m.peak_perc);
  integer("allocator.allocated", static_cast<int64_t>(m.sample.allocated));
  integer("allocator.active", static_cast<int64_t>(m.sample.active));
  integer("allocator.resident", static_cast<int64_t>(m.sample.resident));
  dbl("allocator-fragmentation.ratio", m.allocator_frag);
  integer("allocator-fragmentation.bytes", m.allocator_frag_bytes);
  dbl("allocator-rss.ratio", m.allocator_rss);
  integer("allocator-rss.bytes", m.allocator_rss_bytes);
  dbl("rss-overhead.ratio", m.rss_extra);
  integer("rss-overhead.bytes", m.rss_extra_bytes);
  dbl("fragmentation", m.total_frag);
  integer("fragmentation.bytes", m.total_frag_bytes);
}

// MEMORY USAGE: the bytes the key takes in RocksDB (metadata entry, and the
// approximate size of its elements' range, memtables included).
void Memory(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  if (TokenEquals(sub, "help") && a.size() == 2) {
    return ReplyHelp(call, {"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                            "DOCTOR",
                            "    Return memory problems reports.",
                            "MALLOC-STATS",
                            "    Return internal statistics report from the memory allocator.",
                            "PURGE",
                            "    Attempt to purge dirty pages for reclamation by the allocator.",
                            "STATS",
                            "    Return information about the memory usage of the server.",
                            "USAGE <key> [SAMPLES <count>]",
                            "    Return memory in bytes used by <key> and its value. Nested values are",
                            "    sampled up to <count> times (default: 5, 0 means sample all).",
                            "HELP",
                            "    Prints this help."});
  }
  if (TokenEquals(sub, "stats") && a.size() == 2) return MemoryStatsReply(call);
  if (TokenEquals(sub, "doctor") && a.size() == 2) {
    return reply::Verbatim(call.out, call.server->memory_stats().DoctorReport(call.server), call.resp);
  }
  if (TokenEquals(sub, "malloc-stats") && a.size() == 2) {
    if (malloc_stats_print == nullptr) return reply::Bulk(call.out, "Stats not supported for the current allocator");
    std::string text;
    malloc_stats_print([](void* out, const char* s) { static_cast<std::string*>(out)->append(s); }, &text, nullptr);
    return reply::Verbatim(call.out, text, call.resp);
  }
  if (TokenEquals(sub, "purge") && a.size() == 2) {
    // Redis' jemalloc_purge: arena <narenas> stands for all arenas.
    if (mallctl != nullptr) {
      unsigned narenas = 0;
      size_t sz = sizeof(narenas);
      if (mallctl("arenas.narenas", &narenas, &sz, nullptr, 0) != 0 ||
          mallctl(("arena." + std::to_string(narenas) + ".purge").c_str(), nullptr, nullptr, nullptr, 0) != 0) {
        return ReplyError(call, "ERR Error purging dirty pages");
      }
    }
    return reply::Ok(call.out);
  }
  if (!TokenEquals(sub, "usage")) return ReplyUnknownSubcommand(call, "MEMORY");
  if (a.size() < 3) return ReplySubcommandSyntaxError(call);
  // SAMPLES may come several times (the last counts); kvrocks' size needs no samples.
  for (size_t j = 3; j < a.size(); j += 2) {
    if (!TokenEquals(a[j], "samples") || j + 1 == a.size()) return ReplyError(call, kSyntaxError);
    int64_t samples;
    if (!IntArg(call, j + 1, &samples)) return;
    if (samples < 0) return ReplyError(call, kSyntaxError);
  }
  DictLookup dict_lookup(call.ctx);
  Database db = CurrentDb(call);
  LoadedKey lk;
  Status s = db.Load(a[2], &lk);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!lk.live) return reply::Null(call.out, call.resp);
  uint64_t bytes = lk.meta_key.size() + lk.raw.size();
  Metadata meta;
  if (meta.Decode(lk.raw).ok() && meta.version != 0 && lk.type == RedisType::kString) {
    // A value stored out of line: its length is in the metadata (estimates of
    // memtable ranges are far off for one big entry).
    bytes += meta.size + SubkeyPrefix(db.id(), a[2], meta).size();
  } else if (meta.Decode(lk.raw).ok() && meta.version != 0) {
    Storage* st = call.server->storage();
    std::string begin = SubkeyPrefix(db.id(), a[2], meta), end = begin;
    end.push_back('\xff');
    rocksdb::Range range(begin, end);
    rocksdb::SizeApproximationOptions opts;
    opts.include_memtables = true;
    opts.include_files = true;
    for (ColumnFamily cf :
         {ColumnFamily::kSubkey, ColumnFamily::kZSetScore, ColumnFamily::kStream, ColumnFamily::kZSetRank}) {
      uint64_t size = 0;
      if (st->db()->GetApproximateSizes(opts, st->cf(cf), &range, 1, &size).ok()) bytes += size;
    }
  }
  reply::Integer(call.out, static_cast<int64_t>(bytes));
}

// MEMORY USAGE's key, for COMMAND GETKEYS.
std::vector<std::pair<int, std::string>> MemoryKeys(const CommandCall& call) {
  if (call.args.size() >= 3 && TokenEquals(call.args[1], "usage")) return {{call.conn->db, call.args[2]}};
  return {};
}

}  // namespace

void RegisterDebugCommands(CommandTable* t) {
  constexpr uint32_t kDebugFlags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdProtected | kCmdNoTouch;
  t->Add({"debug", -2, kDebugFlags, 0, 0, 0, Debug, "server",
          "A container for debugging commands.", "1.0.0", nullptr,
          {{"debug|help", 0}, {"debug|sleep", 0}, {"debug|object", 0}, {"debug|set-active-expire", 0},
           {"debug|pause-cron", 0}, {"debug|set-disable-deny-scripts", 0},
           {"debug|digest-value", 0}, {"debug|digest", 0}, {"debug|protocol", 0},
           // Whole-database writes: EXEC runs them holding every key lock.
           SubcommandWithFlags("debug|populate", 0, kDebugFlags | kCmdExclusive),
           SubcommandWithFlags("debug|reload", 0, kDebugFlags | kCmdExclusive), {"debug|mallctl", 0},
           {"debug|mallctl-str", 0}, {"debug|log", 0}, {"debug|error", 0},
           {"debug|set-skip-checksum-validation", 0}, {"debug|quicklist-packed-threshold", 0}, {"debug|segfault", 0},
           {"debug|panic", 0}}});
  t->Add({"memory", -2, kCmdReadOnly | kCmdNoTouch, 0, 0, 0, Memory, "server", "A container for memory diagnostics commands.",
          "4.0.0", MemoryKeys, {{"memory|usage", -3}, {"memory|help", 2}, {"memory|malloc-stats", 2}, {"memory|purge", 2},
                          {"memory|stats", 2}, {"memory|doctor", 2}}});
}

}  // namespace kvrocks
