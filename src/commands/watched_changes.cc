#include "commands/watched_changes.h"

#include "types/database.h"

namespace kvrocks {

namespace {

// A watched key's state in physical db d.
Server::WatchedState WatchedStateIn(CommandCall& call, uint8_t d, const std::string& key) {
  Database db(call.ctx, d);
  LoadedKey lk;
  if (!db.Peek(key, &lk).ok() || !lk.on_disk) return Server::WatchedState::kAbsent;
  return lk.live ? Server::WatchedState::kLive : Server::WatchedState::kStale;
}

}  // namespace

void AddWatchedChanges(CommandCall& call, uint8_t emptied, const uint8_t* replaced_with,
                       std::vector<WatchedChange>* out) {
  for (auto& key : call.server->WatchedKeys(emptied)) {
    Server::WatchedState before = WatchedStateIn(call, emptied, key);
    Server::WatchedState after =
        replaced_with ? WatchedStateIn(call, *replaced_with, key) : Server::WatchedState::kAbsent;
    out->push_back(WatchedChange{emptied, std::move(key), before, after});
  }
}

void ApplyWatchedChanges(CommandCall& call, const std::vector<WatchedChange>& changes) {
  for (const auto& c : changes) call.server->TouchWatchedInDbChange(c.db, c.key, c.before, c.after);
}

}  // namespace kvrocks
