// Small helpers shared by the command files.
#pragma once

#include <string>

#include "commands/command.h"
#include "common/string_util.h"
#include "common/version.h"
#include "server/connection.h"
#include "server/reply.h"
#include "server/server.h"
#include "types/database.h"

namespace kvrocks {

// The Database of the client's selected logical db.
inline Database CurrentDb(const CommandCall& call) {
  return Database(call.ctx, call.server->storage()->PhysicalDb(call.conn->db));
}

inline void ReplyError(CommandCall& call, std::string_view msg) { reply::Error(call.out, msg); }
inline void ReplyStatusError(CommandCall& call, const Status& s) { reply::Error(call.out, s.ToRedisError()); }

// Parses args[i] as an integer; on failure replies "value is not an integer".
inline bool IntArg(CommandCall& call, size_t i, int64_t* v) {
  if (ParseInt64(call.args[i], v)) return true;
  ReplyError(call, kNotIntegerError);
  return false;
}

// "ERR unknown subcommand 'x'. Try NAME HELP."
inline void ReplyUnknownSubcommand(CommandCall& call, const std::string& cmd) {
  ReplyError(call, "ERR unknown subcommand '" + call.args[1].substr(0, 128) + "'. Try " + cmd + " HELP.");
}

// "ERR wrong number of arguments for 'cmd|sub' command"
inline void ReplySubcommandArity(CommandCall& call) {
  ReplyError(call, "ERR wrong number of arguments for '" + ToLower(call.args[0]) + "|" + ToLower(call.args[1]) +
                       "' command");
}

// Parses a database index argument; replies the Redis error on failure.
inline bool DbIndexArg(CommandCall& call, size_t i, int* db) {
  int64_t v;
  if (!ParseInt64(call.args[i], &v)) {
    ReplyError(call, kNotIntegerError);
    return false;
  }
  if (v < 0 || v >= call.server->config()->databases) {
    ReplyError(call, "ERR DB index is out of range");
    return false;
  }
  *db = static_cast<int>(v);
  return true;
}

}  // namespace kvrocks
