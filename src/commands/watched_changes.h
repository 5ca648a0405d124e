// What a whole-database operation (FLUSHDB, FLUSHALL, SWAPDB, DEBUG RELOAD)
// does to WATCHed keys: each watched key of a physical db goes from its state
// there to its state in the db that replaces it, or to absent. Redis' EXEC
// fails for a key whose state changed (touchAllWatchedKeysInDb).
#pragma once

#include <string>
#include <vector>

#include "commands/command.h"
#include "server/server.h"

namespace kvrocks {

struct WatchedChange {
  uint8_t db;
  std::string key;
  Server::WatchedState before, after;
};

// Reads, before the operation, the changes for the keys watched in physical db
// `emptied`, which is replaced by physical db *replaced_with (SWAPDB) or emptied
// (replaced_with null).
void AddWatchedChanges(CommandCall& call, uint8_t emptied, const uint8_t* replaced_with,
                       std::vector<WatchedChange>* out);

// Applies them (Server::TouchWatchedInDbChange) once the operation is done.
void ApplyWatchedChanges(CommandCall& call, const std::vector<WatchedChange>& changes);

}  // namespace kvrocks
