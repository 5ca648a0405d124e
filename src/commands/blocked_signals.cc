#include "commands/blocked_signals.h"

#include "server/server.h"
#include "types/database.h"

namespace kvrocks {

namespace {

// key's type in logical db, expired or not: Redis looks in the dict, which
// still holds an expired key until something deletes it.
RedisType TypeOnDisk(CommandCall& call, int logical_db, const std::string& key) {
  Database db(call.ctx, call.server->storage()->PhysicalDb(logical_db));
  LoadedKey lk;
  if (!db.Peek(key, &lk).ok() || !lk.on_disk) return RedisType::kNone;
  return lk.type;
}

}  // namespace

std::vector<WaitedKey> WaitedKeysBefore(CommandCall& call, const std::vector<int>& dbs) {
  std::vector<WaitedKey> out;
  for (auto& [db, key] : call.server->BlockedKeysIn(dbs)) {
    bool was_stream = TypeOnDisk(call, db, key) == RedisType::kStream;
    out.push_back(WaitedKey{db, std::move(key), was_stream});
  }
  return out;
}

std::vector<WaitedKey> WaitedKeysBefore(CommandCall& call) {
  std::vector<int> all(static_cast<size_t>(call.server->config()->databases));
  for (size_t i = 0; i < all.size(); i++) all[i] = static_cast<int>(i);
  return WaitedKeysBefore(call, all);
}

void SignalWaitedKeys(CommandCall& call, const std::vector<WaitedKey>& keys, DbChange change) {
  if (keys.empty()) return;
  Storage* st = call.server->storage();
  std::vector<RedisType> now(keys.size(), RedisType::kNone);
  if (change != DbChange::kEmptied) {
    for (size_t i = 0; i < keys.size(); i++) now[i] = TypeOnDisk(call, keys[i].db, keys[i].key);
  }
  // A flush signals every stream it empties, though a reload may bring it back.
  for (size_t i = 0; i < keys.size(); i++) {
    bool gone = now[i] != RedisType::kStream;
    if (keys[i].was_stream && (gone || change != DbChange::kSwapped)) {
      call.ctx->SignalReady(st->PhysicalDb(keys[i].db), keys[i].key, gone);
    }
  }
  if (change != DbChange::kSwapped) return;
  for (size_t i = 0; i < keys.size(); i++) {
    if (now[i] == RedisType::kList || now[i] == RedisType::kZSet) {
      call.ctx->SignalReady(st->PhysicalDb(keys[i].db), keys[i].key, false);
    } else if (now[i] == RedisType::kStream) {
      // As after XADD: Redis offers a stream to every client blocked on it (a read
      // takes nothing away from the next reader, whose ID may be older).
      call.ctx->WakeAllWaiters(st->PhysicalDb(keys[i].db), keys[i].key);
    }
  }
}

}  // namespace kvrocks
