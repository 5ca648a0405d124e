// Redis' dirty counter (INFO persistence rdb_changes_since_last_save): how many
// changes each command made, counted as Redis 7.0's command implementations
// count them (HSET its field-value pairs even when unchanged, SADD the members
// it added, ZPOPMIN each popped member, PFCOUNT one when it rewrites the cached
// cardinality ...). Most rules are read off the command's reply and arguments
// (dirty.cc); the few that need what only the handler knows (ZADD's updated
// members, LTRIM's removed elements, SMOVE, BITFIELD, FLUSHDB/FLUSHALL, the
// stream claims) call Context::AddDirty themselves.
#pragma once

#include <cstddef>

#include "commands/command.h"

namespace kvrocks {

// Adds to call.ctx the changes of a call that just ran: reply_start is where
// its reply began in *call.out, touched_before the size of the context's
// touched keys before it ran.
void NoteCommandDirty(const CommandSpec& spec, CommandCall& call, size_t reply_start, size_t touched_before);

}  // namespace kvrocks
