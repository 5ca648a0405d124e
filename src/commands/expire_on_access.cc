#include "commands/expire_on_access.h"

#include "replication/replica.h"
#include "server/connection.h"
#include "server/server.h"
#include "server/worker.h"
#include "server/write_batcher.h"
#include "storage/lock_manager.h"
#include "types/database.h"

namespace kvrocks {

void DeleteExpiredFound(CommandCall& call) {
  Context* ctx = call.ctx;
  if (!ctx->HasExpiredFound()) return;
  auto found = ctx->TakeExpiredFound();
  Server* srv = call.server;
  if ((srv->replica() != nullptr && srv->replica()->is_replica()) || srv->ClientsPaused()) return;
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
