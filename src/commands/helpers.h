// Small helpers shared by the command files.
#pragma once

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "commands/command.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "common/version.h"
#include "server/connection.h"
#include "server/reply.h"
#include "server/server.h"
#include "types/database.h"

namespace kvrocks {

// OBJECT ENCODING's answer for a live key (cmd_keyspace.cc).
std::string KeyEncoding(const LoadedKey& lk);
// OBJECT REFCOUNT's answer for a live key: INT_MAX for Redis' shared integers.
int64_t KeyRefcount(const LoadedKey& lk);

// The Database of the client's selected logical db.
inline Database CurrentDb(const CommandCall& call) {
  return Database(call.ctx, call.server->storage()->PhysicalDb(call.conn->db));
}

inline void ReplyError(CommandCall& call, std::string_view msg) { reply::Error(call.out, msg); }
inline void ReplyStatusError(CommandCall& call, const Status& s) { reply::Error(call.out, s.ToRedisError()); }

// The longest string a command may make (SETRANGE, APPEND, SETBIT's offset):
// proto-max-bulk-len, except for the commands of this replica's master, which
// applied them already under its own limit (Redis' mustObeyClient).
inline int64_t MaxStringLength(const CommandCall& call) {
  return call.conn->is_master ? INT64_MAX : call.server->config()->proto_max_bulk_len.get();
}

// The arguments from index first on (the elements of RPUSH, SADD, PFADD...).
inline std::vector<std::string_view> ArgsFrom(const CommandCall& call, size_t first) {
  return std::vector<std::string_view>(call.args.begin() + static_cast<long>(first), call.args.end());
}

// Parses args[i] as an integer; on failure replies "value is not an integer".
inline bool IntArg(CommandCall& call, size_t i, int64_t* v) {
  if (ParseInt64(call.args[i], v)) return true;
  ReplyError(call, kNotIntegerError);
  return false;
}

// The count of SRANDMEMBER, HRANDFIELD and ZRANDMEMBER: Redis takes -LONG_MAX..LONG_MAX
// (a negative count is negated).
inline bool RandomCountArg(CommandCall& call, size_t i, int64_t* v) {
  if (!IntArg(call, i, v)) return false;
  if (*v != INT64_MIN) return true;
  ReplyError(call, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
  return false;
}

// Repeated random picks (SRANDMEMBER, HRANDFIELD, ZRANDMEMBER with a negative
// count) are the one reply a small command builds without bound: |count| copies
// of the key's elements. Redis builds any of them, and past the memory it has it
// is killed. kvrocks makes the picks only while they fit: their reply (at least
// avg_len + 6 bytes a pick) within the hard output buffer limit of the client's
// class, if it has one, and their memory (the copy and the reply, about 2 * avg_len + 48 bytes
// a pick) within a quarter of the machine's. Otherwise the call answers an error and the
// client is closed after the reply, as one over its output buffer limit is (a
// script's caller only gets the error), and false is returned.
inline bool RepeatedPicksFit(CommandCall& call, uint64_t picks, uint64_t avg_len) {
  static const uint64_t kQuarterOfMemory =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) / 4;
  // The client's class, as Connection::OverOutputLimit picks it.
  const Config* cfg = call.server->config();
  const int64_t hard = (call.conn != nullptr && call.conn->subscribed() ? cfg->obl_pubsub : cfg->obl_normal).hard;
  bool fit = picks <= kQuarterOfMemory / (2 * avg_len + 48);
  if (hard > 0) fit = fit && picks <= static_cast<uint64_t>(hard) / (avg_len + 6);
  if (fit) return true;
  ReplyError(call, "ERR the reply of " + std::to_string(picks) + " random picks would not fit in memory");
  if (call.from_script || call.conn == nullptr) return false;
  LOG(WARNING) << "Client id=" << call.conn->id() << " closed: the reply of " << picks
               << " random picks would not fit in its output buffer limit or memory.";
  call.conn->CloseAfterReply();
  return false;
}

// Reads done in its lifetime are not lookups of Redis' (no hit, miss or
// keymiss): a second read of a key the command has already looked up.
class UnrecordedLookups {
 public:
  explicit UnrecordedLookups(Context* ctx) : ctx_(ctx), recording_(ctx->record_lookups()) {
    ctx_->set_record_lookups(false);
  }
  ~UnrecordedLookups() { ctx_->set_record_lookups(recording_); }
  UnrecordedLookups(const UnrecordedLookups&) = delete;
  UnrecordedLookups& operator=(const UnrecordedLookups&) = delete;

 private:
  Context* ctx_;
  bool recording_;
};

// For its lifetime, reads look as Redis' debug commands (DEBUG OBJECT, DEBUG
// DIGEST, MEMORY USAGE) do, in its dict rather than through lookupKey: a logically
// expired key that is still stored is there (and stays: nothing is found expired),
// and the lookups count no keyspace hit or miss and send no "keymiss" event.
class DictLookup {
 public:
  explicit DictLookup(Context* ctx) : unrecorded_(ctx) {}

 private:
  ExpiryTimeIgnore see_expired_;
  UnrecordedLookups unrecorded_;
};

// "ERR unknown subcommand 'x'. Try NAME HELP."
inline void ReplyUnknownSubcommand(CommandCall& call, const std::string& cmd) {
  ReplyError(call, "ERR unknown subcommand '" + CString(call.args[1]).substr(0, 128) + "'. Try " + cmd + " HELP.");
}

// Redis' addReplySubcommandSyntaxError: "ERR unknown subcommand or wrong number
// of arguments for 'x'. Try NAME HELP." (NAME: the command as called, upper case).
// What a subcommand says of arguments its arity allows but its form does not (a
// count outside the arity is the dispatcher's "wrong number of arguments").
inline void ReplySubcommandSyntaxError(CommandCall& call) {
  ReplyError(call, "ERR unknown subcommand or wrong number of arguments for '" + CString(call.args[1]).substr(0, 128) +
                       "'. Try " + ToUpper(call.args[0]) + " HELP.");
}

// A HELP subcommand's reply: its lines as simple strings.
inline void ReplyHelp(CommandCall& call, const std::vector<std::string>& lines) {
  reply::ArrayHeader(call.out, lines.size());
  for (const auto& l : lines) reply::Simple(call.out, l);
}

// Reads an int argument as Redis' getIntFromObjectOrReply does: a string that
// is no long long gets error (or the usual "not an integer"), one outside int
// gets error (or Redis' range error naming int's bounds).
inline bool IntArgOfInt(CommandCall& call, size_t i, int* v, const char* error = nullptr) {
  int64_t x;
  if (!ParseInt64(call.args[i], &x)) {
    ReplyError(call, error != nullptr ? error : kNotIntegerError);
    return false;
  }
  if (x < INT_MIN || x > INT_MAX) {
    ReplyError(call, error != nullptr ? error
                                      : "ERR value is out of range, value must between -2147483648 and 2147483647");
    return false;
  }
  *v = static_cast<int>(x);
  return true;
}

// Parses a database index argument (SELECT, MOVE, COPY ... DB); replies the
// Redis error on failure.
inline bool DbIndexArg(CommandCall& call, size_t i, int* db) {
  if (!IntArgOfInt(call, i, db)) return false;
  if (*db < 0 || *db >= call.server->config()->databases) {
    ReplyError(call, "ERR DB index is out of range");
    return false;
  }
  return true;
}

// The reply of a SCAN-family command on a missing key: cursor 0, no elements.
inline void ReplyEmptyScan(CommandCall& call) {
  reply::ArrayHeader(call.out, 2);
  reply::Bulk(call.out, "0");
  reply::ArrayHeader(call.out, 0);
}

// Parses "[MATCH pattern] [COUNT count]" from args[first...] (SCAN family);
// replies the Redis error on failure.
inline bool ParseScanOptions(CommandCall& call, size_t first, std::string* pattern, int64_t* count) {
  *pattern = "*";
  *count = 10;
  for (size_t i = first; i < call.args.size(); i++) {
    bool has_next = i + 1 < call.args.size();
    if (TokenEquals(call.args[i], "count") && has_next) {
      if (!IntArg(call, i + 1, count)) return false;
      if (*count < 1) {
        ReplyError(call, kSyntaxError);
        return false;
      }
      i++;
    } else if (TokenEquals(call.args[i], "match") && has_next) {
      *pattern = call.args[++i];
    } else {
      ReplyError(call, kSyntaxError);
      return false;
    }
  }
  return true;
}

}  // namespace kvrocks
