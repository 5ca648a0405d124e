#include "commands/expire_on_access.h"

#include <algorithm>
#include <string_view>

#include "commands/command_keys.h"
#include "server/connection.h"
#include "server/server.h"
#include "server/worker.h"
#include "server/write_batcher.h"
#include "storage/lock_manager.h"
#include "types/database.h"

namespace kvrocks {

namespace {

// Of the keys a client's write call found expired on a writable replica, those Redis
// deletes there: the ones it looks up for writing (lookupKeyWrite forces the
// deletion on such a replica), which are the keys its specs mark RW, and SET's (OW,
// but setGenericCommand looks it up so for XX and NX), but for GETDEL's and GETEX's,
// read with lookupKeyRead. A replica leaves every other expired key to its master's DEL.
std::vector<std::pair<uint8_t, std::string>> WriteLookups(const CommandSpec& spec, const CommandCall& call,
                                                          std::vector<std::pair<uint8_t, std::string>> found) {
  CommandKeyFinder finder(spec, call.args);
  if (!finder.valid() || finder.name() == "getdel" || finder.name() == "getex") return {};
  const bool set = finder.name() == "set";
  std::vector<std::string_view> written;
  for (const KeyReference& k : finder.Find(call.args)) {
    if ((k.flags & kKeyRW) || set) written.emplace_back(call.args[k.pos]);
  }
  found.erase(std::remove_if(
                  found.begin(), found.end(),
                  [&](const auto& f) { return std::find(written.begin(), written.end(), f.second) == written.end(); }),
              found.end());
  return found;
}

}  // namespace

void DeleteExpiredFound(const CommandSpec& spec, CommandCall& call) {
  Context* ctx = call.ctx;
  if (!ctx->HasExpiredFound()) return;
  auto found = ctx->TakeExpiredFound();
  Server* srv = call.server;
  if (srv->ClientsPaused()) return;
  if (srv->IsReplica()) {
    if (call.conn->is_master || srv->ReadOnlyReplica() || !(CommandTable::FlagsOf(spec, call.args) & kCmdWrite)) {
      return;
    }
    found = WriteLookups(spec, call, std::move(found));
    if (found.empty()) return;
  }
  if (!call.exclusive) {
    std::vector<uint64_t> locks;
    locks.reserve(found.size());
    for (const auto& [db, key] : found) locks.push_back(LockManager::KeyHash(db, key));
    if (!call.conn->worker()->batcher()->TryLockMore(locks)) return;
  }
  for (const auto& [db, key] : found) {
    // Read again under the lock: another batch may have written or deleted it since.
    Database d(ctx, db);
    LoadedKey lk;
    if (d.Peek(key, &lk).ok() && lk.on_disk && !lk.live) d.Remove(key, &lk);
  }
}

}  // namespace kvrocks
