// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: Redis' round trip of the data set
// through an RDB file. kvrocks writes every key and function library to
// <dir>/dump.rdb in Redis 7.0's format, then loads that file back: by default
// in place of the current data set (staged, then switched in one step), with
// NOFLUSH on top of it (a key or library that exists already fails the load
// unless MERGE lets the file's replace it). NOSAVE loads the file as it is.
#pragma once

#include "commands/command.h"

namespace kvrocks {

void DebugReload(CommandCall& call);

}  // namespace kvrocks
