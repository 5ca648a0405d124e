// Stream commands: XADD XLEN XRANGE XREVRANGE XDEL XTRIM XSETID XREAD
// XREADGROUP XGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO. Argument handling
// follows Redis 7.0's t_stream.c, including which check comes first.
#include <cerrno>
#include <cstdlib>

#include "commands/cmd_list.h"
#include "commands/helpers.h"
#include "common/time_util.h"
#include "types/redis_stream.h"

namespace kvrocks {

namespace {

const char kInvalidIdError[] = "ERR Invalid stream ID specified as stream command argument";

RedisStream Streams(CommandCall& call, Database* db) {
  const Config* cfg = call.server->config();
  return RedisStream(db, StreamNodeLimits{cfg->stream_node_max_bytes, cfg->stream_node_max_entries});
}

// Redis' string2ull: a strict integer, else what strtoull accepts in full (s holds no NUL).
bool ParseU64(const std::string& s, uint64_t* v) {
  int64_t ll;
  if (ParseInt64(s, &ll)) {
    if (ll < 0) return false;
    *v = static_cast<uint64_t>(ll);
    return true;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long r = std::strtoull(s.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || s.empty() || *end != '\0') return false;
  *v = r;
  return true;
}

// Redis' streamGenericParseIDOrReply. seq_given (when not null) allows "ms-*".
// Redis reads the id as a C string: what follows a NUL does not count.
bool ParseId(const std::string& given, uint64_t missing_seq, bool strict, bool* seq_given, StreamID* id) {
  if (seq_given) *seq_given = true;
  if (given.size() > 127) return false;
  const std::string arg = CString(given);
  if (strict && (arg == "-" || arg == "+")) return false;
  if (arg == "-") {
    *id = StreamID::Min();
    return true;
  }
  if (arg == "+") {
    *id = StreamID::Max();
    return true;
  }
  size_t dash = arg.find('-');
  if (!ParseU64(arg.substr(0, dash), &id->ms)) return false;
  if (dash == std::string::npos) {
    id->seq = missing_seq;
    return true;
  }
  std::string seq = arg.substr(dash + 1);
  if (seq_given && seq == "*") {
    id->seq = 0;
    *seq_given = false;
    return true;
  }
  return ParseU64(seq, &id->seq);
}

bool IdArg(CommandCall& call, const std::string& arg, StreamID* id, bool strict = true, uint64_t missing_seq = 0) {
  if (ParseId(arg, missing_seq, strict, nullptr, id)) return true;
  ReplyError(call, kInvalidIdError);
  return false;
}

// A range bound: "-", "+", an id, or "(id" (exclusive, adjusted here).
bool IntervalArg(CommandCall& call, const std::string& arg, bool is_start, StreamID* id) {
  uint64_t missing = is_start ? 0 : UINT64_MAX;
  if (arg.size() > 1 && arg[0] == '(') {
    if (!IdArg(call, arg.substr(1), id, true, missing)) return false;
    if (is_start ? !id->Incr() : !id->Decr()) {
      ReplyError(call, is_start ? "ERR invalid start ID for the interval" : "ERR invalid end ID for the interval");
      return false;
    }
    return true;
  }
  return IdArg(call, arg, id, false, missing);
}

void ReplyId(CommandCall& call, const StreamID& id) { reply::Bulk(call.out, id.ToString()); }

void ReplyEntry(CommandCall& call, const StreamEntry& e) {
  reply::ArrayHeader(call.out, 2);
  ReplyId(call, e.id);
  if (e.missing) return reply::NullArray(call.out, call.resp);
  reply::ArrayHeader(call.out, e.values.size());
  for (const auto& v : e.values) reply::Bulk(call.out, v);
}

void ReplyEntries(CommandCall& call, const std::vector<StreamEntry>& entries) {
  reply::ArrayHeader(call.out, entries.size());
  for (const auto& e : entries) ReplyEntry(call, e);
}

// Parses the trimming options of XADD (from args[2]) or XTRIM; returns the
// index of the id (XADD) or 0 after replying an error.
size_t ParseAddOrTrim(CommandCall& call, bool xadd, RedisStream::AddArgs* out) {
  const auto& a = call.args;
  StreamTrim& trim = out->trim;
  bool limit_given = false;
  size_t i = 2;
  for (; i < a.size(); i++) {
    size_t more = a.size() - 1 - i;
    const std::string& opt = a[i];
    // Redis compares ids and markers as C strings: "*\0x" is "*".
    if (xadd && CString(opt) == "*") {
      break;
    } else if ((TokenEquals(opt, "maxlen") || TokenEquals(opt, "minid")) && more) {
      if (trim.strategy != StreamTrim::kNone) {
        ReplyError(call, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
      }
      bool maxlen = TokenEquals(opt, "maxlen");
      trim.approx = false;
      if (more >= 2 && CString(a[i + 1]) == "~") {
        trim.approx = true;
        i++;
      } else if (more >= 2 && CString(a[i + 1]) == "=") {
        i++;
      }
      if (maxlen) {
        int64_t n;
        if (!IntArg(call, i + 1, &n)) return 0;
        if (n < 0) {
          ReplyError(call, "ERR The MAXLEN argument must be >= 0.");
          return 0;
        }
        trim.maxlen = static_cast<uint64_t>(n);
        trim.strategy = StreamTrim::kMaxLen;
      } else {
        if (!IdArg(call, a[i + 1], &trim.minid)) return 0;
        trim.strategy = StreamTrim::kMinId;
      }
      i++;
    } else if (TokenEquals(opt, "limit") && more) {
      if (!IntArg(call, i + 1, &trim.limit)) return 0;
      if (trim.limit < 0) {
        ReplyError(call, "ERR The LIMIT argument must be >= 0.");
        return 0;
      }
      limit_given = true;
      i++;
    } else if (xadd && TokenEquals(opt, "nomkstream")) {
      out->nomkstream = true;
    } else if (xadd) {
      if (!ParseId(opt, 0, true, &out->seq_given, &out->id)) {
        ReplyError(call, kInvalidIdError);
        return 0;
      }
      out->id_given = true;
      break;
    } else {
      ReplyError(call, kSyntaxError);
      return 0;
    }
  }
  if (trim.limit && trim.strategy == StreamTrim::kNone) {
    ReplyError(call, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return 0;
  }
  if (!xadd && trim.strategy == StreamTrim::kNone) {
    ReplyError(call, "ERR syntax error, XTRIM must be called with a trimming strategy");
    return 0;
  }
  if (call.conn->is_master) {
    // The master rewrote the threshold to what it trimmed to (Redis'
    // mustObeyClient): its LIMIT, even beside '=', no longer applies.
    trim.limit = 0;
  } else if (limit_given) {
    if (!trim.approx) {
      ReplyError(call, "ERR syntax error, LIMIT cannot be used without the special ~ option");
      return 0;
    }
  } else if (trim.approx) {
    int64_t n = 100 * call.server->config()->stream_node_max_entries;
    trim.limit = (n <= 0 || n > 10000) ? 10000 : n;
  } else {
    trim.limit = 0;
  }
  return xadd ? i : a.size();
}

// Every reader blocked on the stream wakes once the command is done (a new
// entry is for all of them; a destroyed group ends all their waits).
void SignalStream(CommandCall& call, const std::string& key) {
  call.ctx->WakeAllWaiters(call.server->storage()->PhysicalDb(call.conn->db), key);
}

void XAdd(CommandCall& call) {
  RedisStream::AddArgs args;
  size_t id_at = ParseAddOrTrim(call, true, &args);
  if (id_at == 0) return;
  size_t fields_at = id_at + 1;
  if (id_at >= call.args.size() || call.args.size() - fields_at < 2 || (call.args.size() - fields_at) % 2 == 1) {
    return ReplyError(call, "ERR wrong number of arguments for 'xadd' command");
  }
  if (args.id_given && args.seq_given && args.id.IsZero()) {
    return ReplyError(call, "ERR The ID specified in XADD must be greater than 0-0");
  }
  std::vector<std::string> values(call.args.begin() + static_cast<long>(fields_at), call.args.end());
  Database db = CurrentDb(call);
  StreamID id;
  Status s = Streams(call, &db).Add(call.args[1], args, values, &id);
  if (s.IsNotFound()) return reply::Null(call.out, call.resp);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplyId(call, id);
  SignalStream(call, call.args[1]);
}

void XLen(CommandCall& call) {
  Database db = CurrentDb(call);
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = Streams(call, &db).Load(call.args[1], &lk, &meta, &exists);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, exists ? static_cast<int64_t>(meta.length) : 0);
}

void RangeGeneric(CommandCall& call, bool rev) {
  const auto& a = call.args;
  StreamID start, end;
  if (!IntervalArg(call, rev ? a[3] : a[2], true, &start)) return;
  if (!IntervalArg(call, rev ? a[2] : a[3], false, &end)) return;
  int64_t count = -1;
  for (size_t j = 4; j < a.size(); j++) {
    if (TokenEquals(a[j], "count") && j + 1 < a.size()) {
      if (!IntArg(call, j + 1, &count)) return;
      if (count < 0) count = 0;
      j++;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  Database db = CurrentDb(call);
  RedisStream rs = Streams(call, &db);
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = rs.Load(a[1], &lk, &meta, &exists);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!exists) return reply::ArrayHeader(call.out, 0);
  if (count == 0) return reply::NullArray(call.out, call.resp);
  std::vector<StreamEntry> entries;
  s = rs.Range(a[1], start, end, count < 0 ? 0 : static_cast<uint64_t>(count), rev, &entries);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplyEntries(call, entries);
}

void XRange(CommandCall& call) { RangeGeneric(call, false); }
void XRevRange(CommandCall& call) { RangeGeneric(call, true); }

void XDel(CommandCall& call) {
  Database db = CurrentDb(call);
  RedisStream rs = Streams(call, &db);
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = rs.Load(call.args[1], &lk, &meta, &exists);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!exists) return reply::Integer(call.out, 0);
  std::vector<StreamID> ids(call.args.size() - 2);
  for (size_t j = 2; j < call.args.size(); j++) {
    if (!IdArg(call, call.args[j], &ids[j - 2])) return;
  }
  int64_t deleted;
  s = rs.Delete(call.args[1], ids, &deleted);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, deleted);
}

void XTrim(CommandCall& call) {
  RedisStream::AddArgs args;
  if (ParseAddOrTrim(call, false, &args) == 0) return;
  Database db = CurrentDb(call);
  int64_t deleted;
  Status s = Streams(call, &db).Trim(call.args[1], args.trim, &deleted);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, deleted);
}

// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]
void XSetId(CommandCall& call) {
  const auto& a = call.args;
  StreamID id, max_deleted;
  if (!IdArg(call, a[2], &id)) return;
  int64_t entries_added = -1;
  for (size_t i = 3; i < a.size(); i += 2) {
    bool more = i + 1 < a.size();
    if (TokenEquals(a[i], "entriesadded") && more) {
      if (!IntArg(call, i + 1, &entries_added)) return;
      if (entries_added < 0) return ReplyError(call, "ERR entries_added must be positive");
    } else if (TokenEquals(a[i], "maxdeletedid") && more) {
      if (!IdArg(call, a[i + 1], &max_deleted)) return;
      if (id < max_deleted) {
        return ReplyError(call, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
      }
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  Database db = CurrentDb(call);
  Status s = Streams(call, &db).SetId(a[1], id, entries_added, max_deleted);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Ok(call.out);
}

// XREAD [COUNT count] [BLOCK ms] STREAMS key... id...
// XREADGROUP GROUP group consumer [COUNT count] [BLOCK ms] [NOACK] STREAMS key... id...
void ReadGeneric(CommandCall& call, bool group_read) {
  const auto& a = call.args;
  int64_t timeout = -1, count = 0;
  size_t streams_at = 0, nstreams = 0;
  const std::string* group = nullptr;
  const std::string* consumer = nullptr;
  bool noack = false;
  for (size_t i = 1; i < a.size(); i++) {
    size_t more = a.size() - i - 1;
    if (TokenEquals(a[i], "block") && more) {
      if (call.from_script) {
        // As Redis (kept apart from MULTI, where BLOCK just does not wait).
        return ReplyError(call, "ERR " + a[0] + " command is not allowed with BLOCK option from scripts");
      }
      i++;
      if (!ParseInt64(a[i], &timeout)) return ReplyError(call, "ERR timeout is not an integer or out of range");
      if (timeout < 0) return ReplyError(call, "ERR timeout is negative");
    } else if (TokenEquals(a[i], "count") && more) {
      i++;
      if (!IntArg(call, i, &count)) return;
      if (count < 0) count = 0;
    } else if (TokenEquals(a[i], "streams") && more) {
      streams_at = i + 1;
      nstreams = a.size() - streams_at;
      if (nstreams % 2 != 0) {
        // Redis 7.0 says this of XREADGROUP too (the command name and '>' came in 7.2).
        return ReplyError(call,
                          "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.");
      }
      nstreams /= 2;
      break;
    } else if (TokenEquals(a[i], "group") && more >= 2) {
      if (!group_read) {
        return ReplyError(call, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
      }
      group = &a[i + 1];
      consumer = &a[i + 2];
      i += 2;
    } else if (TokenEquals(a[i], "noack")) {
      if (!group_read) {
        return ReplyError(call, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
      }
      noack = true;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  if (streams_at == 0) return ReplyError(call, kSyntaxError);
  if (group_read && group == nullptr) return ReplyError(call, "ERR Missing GROUP option for XREADGROUP");

  Database db = CurrentDb(call);
  RedisStream rs = Streams(call, &db);
  // XREAD reads several keys without locks: one snapshot for all. XREADGROUP holds its keys' locks.
  std::optional<Context::SnapshotScope> snapshot;
  if (!group_read) snapshot.emplace(call.ctx);
  // Resolve ids (and check every key and group) before serving anything.
  std::vector<std::optional<StreamID>> ids(nstreams);  // nullopt: ">"
  std::vector<bool> exists(nstreams);
  std::vector<StreamMeta> metas(nstreams);
  std::vector<std::string> retry_args = a;
  for (size_t k = 0; k < nstreams; k++) {
    const std::string& key = a[streams_at + k];
    const std::string& id_arg = a[streams_at + nstreams + k];
    LoadedKey lk;
    bool e;
    Status s = rs.Load(key, &lk, &metas[k], &e);
    // A blocked XREADGROUP woken because a key it waits on was deleted or
    // overwritten ends with an error, as in Redis (XREAD stays blocked).
    bool woken = group_read && call.conn != nullptr && call.conn->block.active;
    if (woken && (!e || s.IsRedisError() || call.conn->block.key_removed)) {
      return ReplyError(call, "UNBLOCKED the stream key no longer exists");
    }
    if (!s.ok()) return ReplyStatusError(call, s);
    exists[k] = e;
    if (group_read) {
      StreamGroupInfo info;
      s = e ? rs.GetGroup(key, metas[k], *group, &info) : Status::NotFound();
      if (s.IsNotFound() && woken) {
        return ReplyError(call, "NOGROUP the consumer group this client was blocked on no longer exists");
      }
      if (s.IsNotFound()) {
        return ReplyError(call, "NOGROUP No such key '" + CString(key) + "' or consumer group '" + CString(*group) +
                                    "' in XREADGROUP with GROUP option");
      }
      if (!s.ok()) return ReplyStatusError(call, s);
    }
    if (CString(id_arg) == "$") {
      if (group_read) {
        return ReplyError(call,
                          "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of "
                          "this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID "
                          "would just return an empty result set.");
      }
      ids[k] = e ? metas[k].last_id : StreamID{};
      retry_args[streams_at + nstreams + k] = ids[k]->ToString();
    } else if (CString(id_arg) == ">") {
      if (!group_read) {
        return ReplyError(call,
                          "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
                          "<consumer> option.");
      }
      ids[k] = std::nullopt;
    } else {
      StreamID id;
      if (!IdArg(call, id_arg, &id)) return;
      ids[k] = id;
    }
  }

  // Redis looks every key up again to serve it (a hit or miss each: notify.cc's ReadKeys).
  for (size_t k = 0; k < nstreams; k++) call.ctx->RecordLookup(db.id(), a[streams_at + k], exists[k]);

  std::string body;
  size_t served = 0;
  std::string* saved_out = call.out;
  call.out = &body;
  for (size_t k = 0; k < nstreams; k++) {
    if (!exists[k]) continue;
    const std::string& key = a[streams_at + k];
    std::vector<StreamEntry> entries;
    bool serve = false;
    Status s;
    if (group_read) {
      s = rs.ReadGroup(key, *group, *consumer, ids[k], static_cast<uint64_t>(count), noack, &serve, &entries);
    } else if (metas[k].length > 0 && metas[k].last_id > *ids[k]) {
      StreamID from = *ids[k];
      if (from.Incr()) s = rs.Range(key, metas[k], from, StreamID::Max(), static_cast<uint64_t>(count), false, &entries);
      serve = !entries.empty();
    }
    if (!s.ok()) {
      call.out = saved_out;
      return ReplyStatusError(call, s);
    }
    if (!serve) continue;
    served++;
    if (call.resp == 2) reply::ArrayHeader(call.out, 2);
    reply::Bulk(call.out, key);
    ReplyEntries(call, entries);
  }
  call.out = saved_out;
  if (served > 0) {
    if (call.resp == 2) {
      reply::ArrayHeader(call.out, served);
    } else {
      reply::MapHeader(call.out, served, 3);
    }
    call.out->append(body);
    return;
  }
  if (timeout == -1) return reply::NullArray(call.out, call.resp);
  std::vector<std::string> keys(a.begin() + static_cast<long>(streams_at),
                                a.begin() + static_cast<long>(streams_at + nstreams));
  if (call.in_exec) return reply::NullArray(call.out, call.resp);
  std::vector<std::pair<uint8_t, std::string>> wait;
  for (const auto& k : keys) wait.emplace_back(call.conn->db, k);
  // Served after blocking, a read without COUNT returns at most 1000 entries, as in Redis.
  if (count == 0) retry_args.insert(retry_args.begin() + 1, {"COUNT", "1000"});
  call.conn->RequestBlock(std::move(wait), static_cast<uint64_t>(timeout), std::move(retry_args));
}

void XRead(CommandCall& call) { ReadGeneric(call, false); }
void XReadGroup(CommandCall& call) { ReadGeneric(call, true); }

// The stream keys of an XREAD or XREADGROUP (locking).
std::vector<std::pair<int, std::string>> ReadGroupKeys(const CommandCall& call) {
  std::vector<std::pair<int, std::string>> keys;
  const auto& a = call.args;
  for (size_t i = 1; i < a.size(); i++) {
    if (TokenEquals(a[i], "streams")) {
      size_t n = (a.size() - i - 1) / 2;
      for (size_t k = 0; k < n; k++) keys.emplace_back(call.conn->db, a[i + 1 + k]);
      break;
    }
  }
  return keys;
}

std::string NoGroupFor(const std::string& group, const std::string& key) {
  return "NOGROUP No such consumer group '" + CString(group) + "' for key name '" + CString(key) + "'";
}

void XGroupHelp(CommandCall& call) {
  static const std::vector<std::string> kHelp = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Prints this help."};
  ReplyHelp(call, kHelp);
}

void XGroup(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  if (TokenEquals(sub, "help")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    return XGroupHelp(call);
  }
  bool create = TokenEquals(sub, "create"), setid = TokenEquals(sub, "setid");
  bool destroy = TokenEquals(sub, "destroy"), mkcons = TokenEquals(sub, "createconsumer");
  bool delcons = TokenEquals(sub, "delconsumer");
  if (!create && !setid && !destroy && !mkcons && !delcons) return ReplyUnknownSubcommand(call, "XGROUP");
  size_t n = a.size();
  if (((create || setid) && n < 5) || (destroy && n != 4) || ((mkcons || delcons) && n != 5)) {
    return ReplySubcommandSyntaxError(call);
  }
  bool mkstream = false;
  int64_t entries_read = -1;
  if (create || setid) {
    for (size_t i = 5; i < n;) {
      if (create && TokenEquals(a[i], "mkstream")) {
        mkstream = true;
        i++;
      } else if (TokenEquals(a[i], "entriesread") && i + 1 < n) {
        if (!IntArg(call, i + 1, &entries_read)) return;
        if (entries_read < 0 && entries_read != -1) {
          return ReplyError(call, "ERR value for ENTRIESREAD must be positive or -1");
        }
        i += 2;
      } else {
        return ReplySubcommandSyntaxError(call);
      }
    }
  }
  const std::string& key = a[2];
  const std::string& group = a[3];
  Database db = CurrentDb(call);
  RedisStream rs = Streams(call, &db);
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = rs.Load(key, &lk, &meta, &exists);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!exists && !(create && mkstream)) {
    return ReplyError(call,
                      "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use "
                      "the MKSTREAM option to create an empty stream automatically.");
  }
  if (setid || mkcons || delcons) {
    StreamGroupInfo info;
    s = rs.GetGroup(key, meta, group, &info);
    if (s.IsNotFound()) return ReplyError(call, NoGroupFor(group, key));
    if (!s.ok()) return ReplyStatusError(call, s);
  }
  if (create || setid) {
    std::optional<StreamID> id;
    if (CString(a[4]) != "$") {
      StreamID parsed;
      if (!IdArg(call, a[4], &parsed, false)) return;
      id = parsed;
    }
    s = create ? rs.CreateGroup(key, group, id, mkstream, entries_read) : rs.SetGroupId(key, group, id, entries_read);
    if (!s.ok()) return ReplyStatusError(call, s);
    // The stream MKSTREAM made is signalled, unlike the group (kCmdUnsignaled).
    if (!exists) call.ctx->Touch(db.id(), key, Context::TouchKind::kCreated, true);
    return reply::Ok(call.out);
  }
  if (destroy) {
    bool destroyed;
    s = rs.DestroyGroup(key, group, &destroyed);
    if (!s.ok()) return ReplyStatusError(call, s);
    if (destroyed) SignalStream(call, key);
    return reply::Integer(call.out, destroyed ? 1 : 0);
  }
  if (mkcons) {
    bool created;
    s = rs.CreateConsumer(key, group, a[4], &created);
    if (!s.ok()) return ReplyStatusError(call, s);
    return reply::Integer(call.out, created ? 1 : 0);
  }
  int64_t pending;
  s = rs.DeleteConsumer(key, group, a[4], &pending);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, pending);
}

void XAck(CommandCall& call) {
  Database db = CurrentDb(call);
  RedisStream rs = Streams(call, &db);
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = rs.Load(call.args[1], &lk, &meta, &exists);
  if (!s.ok()) return ReplyStatusError(call, s);
  StreamGroupInfo info;
  if (!exists || rs.GetGroup(call.args[1], meta, call.args[2], &info).IsNotFound()) {
    return reply::Integer(call.out, 0);
  }
  std::vector<StreamID> ids(call.args.size() - 3);
  for (size_t j = 3; j < call.args.size(); j++) {
    if (!IdArg(call, call.args[j], &ids[j - 3])) return;
  }
  int64_t acked;
  s = rs.Ack(call.args[1], call.args[2], ids, &acked);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Integer(call.out, acked);
}

std::string NoKeyOrGroup(const std::string& key, const std::string& group) {
  return "NOGROUP No such key '" + CString(key) + "' or consumer group '" + CString(group) + "'";
}

// Loads key and group for XPENDING/XCLAIM/XAUTOCLAIM; replies NOGROUP.
bool LoadGroupOrReply(CommandCall& call, RedisStream* rs, StreamMeta* meta, StreamGroupInfo* info) {
  LoadedKey lk;
  bool exists;
  Status s = rs->Load(call.args[1], &lk, meta, &exists);
  if (!s.ok()) {
    ReplyStatusError(call, s);
    return false;
  }
  if (exists) s = rs->GetGroup(call.args[1], *meta, call.args[2], info);
  if (!exists || s.IsNotFound()) {
    ReplyError(call, NoKeyOrGroup(call.args[1], call.args[2]));
    return false;
  }
  if (!s.ok()) ReplyStatusError(call, s);
  return s.ok();
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
void XPending(CommandCall& call) {
  const auto& a = call.args;
  size_t n = a.size();
  if (n != 3 && (n < 6 || n > 9)) return ReplyError(call, kSyntaxError);
  StreamID start, end;
  int64_t count = 0, min_idle = 0;
  std::optional<std::string> consumer;
  if (n >= 6) {
    size_t at = 3;
    if (TokenEquals(a[3], "idle")) {
      if (!IntArg(call, 4, &min_idle)) return;
      if (n < 8) return ReplyError(call, kSyntaxError);
      at += 2;
    }
    if (!IntArg(call, at + 2, &count)) return;
    if (count < 0) count = 0;
    if (!IntervalArg(call, a[at], true, &start) || !IntervalArg(call, a[at + 1], false, &end)) return;
    if (at + 3 < n) consumer = a[at + 3];
  }
  Database db = CurrentDb(call);
  RedisStream rs = Streams(call, &db);
  StreamMeta meta;
  StreamGroupInfo group;
  if (!LoadGroupOrReply(call, &rs, &meta, &group)) return;
  if (n == 3) {
    std::vector<StreamPending> edges;
    std::vector<std::pair<std::string, uint64_t>> per_consumer;
    Status s = rs.PendingSummary(a[1], group, &edges, &per_consumer);
    if (!s.ok()) return ReplyStatusError(call, s);
    reply::ArrayHeader(call.out, 4);
    reply::Integer(call.out, static_cast<int64_t>(group.pending));
    if (edges.empty()) {
      reply::Null(call.out, call.resp);
      reply::Null(call.out, call.resp);
      return reply::NullArray(call.out, call.resp);
    }
    ReplyId(call, edges[0].id);
    ReplyId(call, edges[1].id);
    reply::ArrayHeader(call.out, per_consumer.size());
    for (const auto& [name, pending] : per_consumer) {
      reply::ArrayHeader(call.out, 2);
      reply::Bulk(call.out, name);
      reply::Bulk(call.out, std::to_string(pending));
    }
    return;
  }
  if (consumer) {
    std::vector<StreamConsumerInfo> consumers;
    Status s = rs.Consumers(a[1], meta, group.name, &consumers);
    if (!s.ok()) return ReplyStatusError(call, s);
    bool found = false;
    for (const auto& c : consumers) found = found || c.name == *consumer;
    if (!found) return reply::ArrayHeader(call.out, 0);
  }
  std::vector<StreamPending> entries;
  Status s = rs.PendingRange(a[1], group, start, end, static_cast<uint64_t>(count), consumer,
                             static_cast<uint64_t>(std::max<int64_t>(0, min_idle)), &entries);
  if (!s.ok()) return ReplyStatusError(call, s);
  uint64_t now = NowMs();
  reply::ArrayHeader(call.out, entries.size());
  for (const auto& p : entries) {
    reply::ArrayHeader(call.out, 4);
    ReplyId(call, p.id);
    reply::Bulk(call.out, p.consumer);
    reply::Integer(call.out, now > p.delivery_time ? static_cast<int64_t>(now - p.delivery_time) : 0);
    reply::Integer(call.out, static_cast<int64_t>(p.delivery_count));
  }
}

void ReplyClaimed(CommandCall& call, const std::vector<StreamEntry>& claimed, bool justid) {
  reply::ArrayHeader(call.out, claimed.size());
  for (const auto& e : claimed) {
    if (justid) {
      ReplyId(call, e.id);
    } else {
      ReplyEntry(call, e);
    }
  }
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id]
void XClaim(CommandCall& call) {
  const auto& a = call.args;
  Database db = CurrentDb(call);
  RedisStream rs = Streams(call, &db);
  StreamMeta meta;
  StreamGroupInfo group;
  if (!LoadGroupOrReply(call, &rs, &meta, &group)) return;
  int64_t min_idle;
  if (!ParseInt64(a[4], &min_idle)) return ReplyError(call, "ERR Invalid min-idle-time argument for XCLAIM");
  RedisStream::ClaimArgs args;
  args.min_idle = static_cast<uint64_t>(std::max<int64_t>(0, min_idle));
  std::vector<StreamID> ids;
  size_t j = 5;
  for (; j < a.size(); j++) {
    StreamID id;
    if (!ParseId(a[j], 0, true, nullptr, &id)) break;
    ids.push_back(id);
  }
  const uint64_t now = NowMs();
  for (; j < a.size(); j++) {
    bool more = j + 1 < a.size();
    const std::string& opt = a[j];
    int64_t v;
    if (TokenEquals(opt, "force")) {
      args.force = true;
    } else if (TokenEquals(opt, "justid")) {
      args.justid = true;
    } else if (TokenEquals(opt, "idle") && more) {
      if (!ParseInt64(a[++j], &v)) return ReplyError(call, "ERR Invalid IDLE option argument for XCLAIM");
      args.delivery_time = static_cast<uint64_t>(static_cast<int64_t>(now) - v);
    } else if (TokenEquals(opt, "time") && more) {
      if (!ParseInt64(a[++j], &v)) return ReplyError(call, "ERR Invalid TIME option argument for XCLAIM");
      args.delivery_time = static_cast<uint64_t>(v);
    } else if (TokenEquals(opt, "retrycount") && more) {
      if (!ParseInt64(a[++j], &v)) return ReplyError(call, "ERR Invalid RETRYCOUNT option argument for XCLAIM");
      if (v >= 0) args.retry_count = static_cast<uint64_t>(v);
    } else if (TokenEquals(opt, "lastid") && more) {
      StreamID id;
      if (!IdArg(call, a[++j], &id)) return;
      args.last_id = id;
    } else {
      return ReplyError(call, "ERR Unrecognized XCLAIM option '" + CString(opt) + "'");
    }
  }
  std::vector<StreamEntry> claimed;
  Status s = rs.Claim(a[1], a[2], a[3], ids, args, &claimed);
  if (!s.ok()) return ReplyStatusError(call, s);
  ReplyClaimed(call, claimed, args.justid);
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void XAutoClaim(CommandCall& call) {
  const auto& a = call.args;
  Database db = CurrentDb(call);
  {
    // Redis looks the key up before it parses the arguments: an expired key is
    // deleted even when they are wrong.
    LoadedKey lk;
    Status s = db.Load(a[1], &lk);
    if (!s.ok()) return ReplyStatusError(call, s);
  }
  int64_t min_idle;
  if (!ParseInt64(a[4], &min_idle)) return ReplyError(call, "ERR Invalid min-idle-time argument for XAUTOCLAIM");
  StreamID start;
  if (!IntervalArg(call, a[5], true, &start)) return;
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < a.size(); j++) {
    if (TokenEquals(a[j], "count") && j + 1 < a.size()) {
      if (!ParseInt64(a[j + 1], &count) || count < 1 || count > INT64_MAX / 16) {
        return ReplyError(call, "ERR COUNT must be > 0");
      }
      j++;
    } else if (TokenEquals(a[j], "justid")) {
      justid = true;
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  RedisStream rs = Streams(call, &db);
  StreamMeta meta;
  StreamGroupInfo group;
  if (!LoadGroupOrReply(call, &rs, &meta, &group)) return;
  std::vector<StreamEntry> claimed;
  std::vector<StreamID> deleted;
  StreamID next;
  Status s = rs.AutoClaim(a[1], a[2], a[3], static_cast<uint64_t>(std::max<int64_t>(0, min_idle)), start,
                          static_cast<uint64_t>(count), justid, &claimed, &next, &deleted);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::ArrayHeader(call.out, 3);
  ReplyId(call, next);
  ReplyClaimed(call, claimed, justid);
  reply::ArrayHeader(call.out, deleted.size());
  for (const auto& id : deleted) ReplyId(call, id);
}

void ReplyLag(CommandCall& call, const StreamMeta& meta, const StreamGroupInfo& g) {
  std::optional<int64_t> lag = RedisStream::Lag(meta, g);
  if (lag) {
    reply::Integer(call.out, *lag);
  } else {
    reply::Null(call.out, call.resp);
  }
}

void ReplyEntriesRead(CommandCall& call, const StreamGroupInfo& g) {
  if (g.entries_read == -1) return reply::Null(call.out, call.resp);
  reply::Integer(call.out, g.entries_read);
}

void XInfoStream(CommandCall& call, RedisStream* rs, const StreamMeta& meta) {
  const auto& a = call.args;
  bool full = false;
  int64_t count = 10;
  if (a.size() > 3) {
    if (!TokenEquals(a[3], "full") || (a.size() != 4 && a.size() != 6) ||
        (a.size() == 6 && !TokenEquals(a[4], "count"))) {
      return ReplySubcommandSyntaxError(call);
    }
    full = true;
    if (a.size() == 6) {
      if (!IntArg(call, 5, &count)) return;
      if (count < 0) count = 10;
    }
  }
  const std::string& key = a[2];
  uint64_t rax_nodes;
  Status rs_status = rs->RaxNodes(key, meta, &rax_nodes);
  if (!rs_status.ok()) return ReplyStatusError(call, rs_status);
  reply::MapHeader(call.out, full ? 9 : 10, call.resp);
  reply::Bulk(call.out, "length");
  reply::Integer(call.out, static_cast<int64_t>(meta.length));
  reply::Bulk(call.out, "radix-tree-keys");
  reply::Integer(call.out, static_cast<int64_t>(meta.nodes));
  reply::Bulk(call.out, "radix-tree-nodes");
  reply::Integer(call.out, static_cast<int64_t>(rax_nodes));
  reply::Bulk(call.out, "last-generated-id");
  ReplyId(call, meta.last_id);
  reply::Bulk(call.out, "max-deleted-entry-id");
  ReplyId(call, meta.max_deleted);
  reply::Bulk(call.out, "entries-added");
  reply::Integer(call.out, static_cast<int64_t>(meta.entries_added));
  reply::Bulk(call.out, "recorded-first-entry-id");
  ReplyId(call, meta.first_id);
  std::vector<StreamGroupInfo> groups;
  Status s = rs->Groups(key, meta, &groups);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!full) {
    reply::Bulk(call.out, "groups");
    reply::Integer(call.out, static_cast<int64_t>(groups.size()));
    std::vector<StreamEntry> first, last;
    s = rs->Range(key, meta, StreamID::Min(), StreamID::Max(), 1, false, &first);
    if (s.ok()) s = rs->Range(key, meta, StreamID::Min(), StreamID::Max(), 1, true, &last);
    if (!s.ok()) return ReplyStatusError(call, s);
    reply::Bulk(call.out, "first-entry");
    if (first.empty()) {
      reply::Null(call.out, call.resp);
    } else {
      ReplyEntry(call, first[0]);
    }
    reply::Bulk(call.out, "last-entry");
    if (last.empty()) {
      reply::Null(call.out, call.resp);
    } else {
      ReplyEntry(call, last[0]);
    }
    return;
  }
  const uint64_t limit = static_cast<uint64_t>(count);
  std::vector<StreamEntry> entries;
  s = rs->Range(key, meta, StreamID::Min(), StreamID::Max(), limit, false, &entries);
  if (!s.ok()) return ReplyStatusError(call, s);
  reply::Bulk(call.out, "entries");
  ReplyEntries(call, entries);
  reply::Bulk(call.out, "groups");
  reply::ArrayHeader(call.out, groups.size());
  for (const auto& g : groups) {
    reply::MapHeader(call.out, 7, call.resp);
    reply::Bulk(call.out, "name");
    reply::Bulk(call.out, g.name);
    reply::Bulk(call.out, "last-delivered-id");
    ReplyId(call, g.last_id);
    reply::Bulk(call.out, "entries-read");
    ReplyEntriesRead(call, g);
    reply::Bulk(call.out, "lag");
    ReplyLag(call, meta, g);
    reply::Bulk(call.out, "pel-count");
    reply::Integer(call.out, static_cast<int64_t>(g.pending));
    std::vector<StreamPending> pel;
    s = rs->GroupPending(key, meta, g, nullptr, limit, &pel);
    if (!s.ok()) return ReplyStatusError(call, s);
    reply::Bulk(call.out, "pending");
    reply::ArrayHeader(call.out, pel.size());
    for (const auto& p : pel) {
      reply::ArrayHeader(call.out, 4);
      ReplyId(call, p.id);
      reply::Bulk(call.out, p.consumer);
      reply::Integer(call.out, static_cast<int64_t>(p.delivery_time));
      reply::Integer(call.out, static_cast<int64_t>(p.delivery_count));
    }
    std::vector<StreamConsumerInfo> consumers;
    s = rs->Consumers(key, meta, g.name, &consumers);
    if (!s.ok()) return ReplyStatusError(call, s);
    reply::Bulk(call.out, "consumers");
    reply::ArrayHeader(call.out, consumers.size());
    for (const auto& c : consumers) {
      reply::MapHeader(call.out, 4, call.resp);
      reply::Bulk(call.out, "name");
      reply::Bulk(call.out, c.name);
      reply::Bulk(call.out, "seen-time");
      reply::Integer(call.out, static_cast<int64_t>(c.seen_time));
      reply::Bulk(call.out, "pel-count");
      reply::Integer(call.out, static_cast<int64_t>(c.pending));
      s = rs->GroupPending(key, meta, g, &c.name, limit, &pel);
      if (!s.ok()) return ReplyStatusError(call, s);
      reply::Bulk(call.out, "pending");
      reply::ArrayHeader(call.out, pel.size());
      for (const auto& p : pel) {
        reply::ArrayHeader(call.out, 3);
        ReplyId(call, p.id);
        reply::Integer(call.out, static_cast<int64_t>(p.delivery_time));
        reply::Integer(call.out, static_cast<int64_t>(p.delivery_count));
      }
    }
  }
}

void XInfoHelp(CommandCall& call) {
  static const std::vector<std::string> kHelp = {
      "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
      "HELP",
      "    Prints this help."};
  ReplyHelp(call, kHelp);
}

void XInfo(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  if (TokenEquals(sub, "help")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    return XInfoHelp(call);
  }
  bool consumers = TokenEquals(sub, "consumers"), groups = TokenEquals(sub, "groups");
  bool stream = TokenEquals(sub, "stream");
  if (!consumers && !groups && !stream) return ReplyUnknownSubcommand(call, "XINFO");
  if ((consumers && a.size() != 4) || (groups && a.size() != 3) || (stream && a.size() < 3)) {
    return ReplySubcommandSyntaxError(call);
  }
  Database db = CurrentDb(call);
  RedisStream rs = Streams(call, &db);
  LoadedKey lk;
  StreamMeta meta;
  bool exists;
  Status s = rs.Load(a[2], &lk, &meta, &exists);
  if (!s.ok()) return ReplyStatusError(call, s);
  if (!exists) return ReplyError(call, "ERR no such key");
  if (stream) return XInfoStream(call, &rs, meta);
  if (groups) {
    std::vector<StreamGroupInfo> list;
    s = rs.Groups(a[2], meta, &list);
    if (!s.ok()) return ReplyStatusError(call, s);
    reply::ArrayHeader(call.out, list.size());
    for (const auto& g : list) {
      reply::MapHeader(call.out, 6, call.resp);
      reply::Bulk(call.out, "name");
      reply::Bulk(call.out, g.name);
      reply::Bulk(call.out, "consumers");
      reply::Integer(call.out, static_cast<int64_t>(g.consumers));
      reply::Bulk(call.out, "pending");
      reply::Integer(call.out, static_cast<int64_t>(g.pending));
      reply::Bulk(call.out, "last-delivered-id");
      ReplyId(call, g.last_id);
      reply::Bulk(call.out, "entries-read");
      ReplyEntriesRead(call, g);
      reply::Bulk(call.out, "lag");
      ReplyLag(call, meta, g);
    }
    return;
  }
  StreamGroupInfo info;
  s = rs.GetGroup(a[2], meta, a[3], &info);
  if (s.IsNotFound()) return ReplyError(call, NoGroupFor(a[3], a[2]));
  if (!s.ok()) return ReplyStatusError(call, s);
  std::vector<StreamConsumerInfo> list;
  s = rs.Consumers(a[2], meta, a[3], &list);
  if (!s.ok()) return ReplyStatusError(call, s);
  uint64_t now = NowMs();
  reply::ArrayHeader(call.out, list.size());
  for (const auto& c : list) {
    reply::MapHeader(call.out, 3, call.resp);
    reply::Bulk(call.out, "name");
    reply::Bulk(call.out, c.name);
    reply::Bulk(call.out, "pending");
    reply::Integer(call.out, static_cast<int64_t>(c.pending));
    reply::Bulk(call.out, "idle");
    reply::Integer(call.out, now > c.seen_time ? static_cast<int64_t>(now - c.seen_time) : 0);
  }
}

}  // namespace

void RegisterStreamCommands(CommandTable* t) {
  const uint32_t w = kCmdWrite | kCmdDenyOOM, r = kCmdReadOnly;
  t->Add({"xadd", -5, w | kCmdFast, 1, 1, 1, XAdd, "stream", "Appends a new message to a stream. Creates the key if it doesn't exist.", "5.0.0"});
  t->Add({"xlen", 2, r | kCmdFast, 1, 1, 1, XLen, "stream", "Return the number of messages in a stream.", "5.0.0"});
  t->Add({"xrange", -4, r, 1, 1, 1, XRange, "stream", "Returns the messages from a stream within a range of IDs.", "5.0.0"});
  t->Add({"xrevrange", -4, r, 1, 1, 1, XRevRange, "stream", "Returns the messages from a stream within a range of IDs in reverse order.", "5.0.0"});
  t->Add({"xdel", -3, kCmdWrite | kCmdFast, 1, 1, 1, XDel, "stream", "Returns the number of messages after removing them from a stream.", "5.0.0"});
  t->Add({"xtrim", -4, kCmdWrite, 1, 1, 1, XTrim, "stream", "Deletes messages from the beginning of a stream.", "5.0.0"});
  t->Add({"xsetid", -3, w | kCmdFast | kCmdUnsignaled, 1, 1, 1, XSetId, "stream", "An internal command for replicating stream values.", "5.0.0"});
  // XREAD takes its keys' locks although it only reads: a reader woken by an XADD then waits
  // for the XADD's batch to commit instead of reading before it and missing the entry.
  t->Add({"xread", -4, r | kCmdBlocking | kCmdLocksKeys, 0, 0, 0, XRead, "stream", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", "5.0.0", ReadGroupKeys});
  t->Add({"xreadgroup", -7, kCmdWrite | kCmdBlocking | kCmdUnsignaled, 0, 0, 0, XReadGroup, "stream", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", "5.0.0", ReadGroupKeys});
  t->Add({"xgroup", -2, w | kCmdUnsignaled, 2, 2, 1, XGroup, "stream", "A container for consumer groups commands.", "5.0.0", nullptr,
          {{"xgroup|create", -5}, {"xgroup|setid", -5}, {"xgroup|destroy", 4}, {"xgroup|createconsumer", 5},
           {"xgroup|delconsumer", 5}, {"xgroup|help", 2}}});
  t->Add({"xack", -4, kCmdWrite | kCmdFast | kCmdUnsignaled, 1, 1, 1, XAck, "stream", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", "5.0.0"});
  t->Add({"xpending", -3, r, 1, 1, 1, XPending, "stream", "Returns the information and entries from a stream consumer group's pending entries list.", "5.0.0"});
  t->Add({"xclaim", -6, kCmdWrite | kCmdFast | kCmdUnsignaled, 1, 1, 1, XClaim, "stream", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", "5.0.0"});
  t->Add({"xautoclaim", -6, kCmdWrite | kCmdFast | kCmdUnsignaled, 1, 1, 1, XAutoClaim, "stream", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", "6.2.0"});
  t->Add({"xinfo", -2, r, 2, 2, 1, XInfo, "stream", "A container for stream introspection commands.", "5.0.0", nullptr,
          {{"xinfo|consumers", 4}, {"xinfo|groups", 3}, {"xinfo|stream", -3}, {"xinfo|help", 2}}});
}

}  // namespace kvrocks
