// What a whole-database operation (FLUSHDB, FLUSHALL, SWAPDB, DEBUG RELOAD)
// does to clients blocked on keys. It touches no key, so Redis signals the
// waited keys itself (signalKeyAsReady): a key that was a stream and no longer
// is (scanDatabaseForDeletedStreams, which ends XREADGROUP waits), then, when
// the databases' contents were replaced rather than emptied, a key that now
// holds a list, sorted set or stream (scanDatabaseForReadyKeys after SWAPDB).
// The signals take their place among the transaction's touches (a key that
// only appears later in it is signalled there), so blocked clients are served
// in Redis' order.
#pragma once

#include <string>
#include <vector>

#include "commands/command.h"

namespace kvrocks {

struct WaitedKey {
  int db;  // logical
  std::string key;
  bool was_stream;
};

// Reads, before the operation, the keys waited on in logical databases dbs (in
// the order Redis scans them: by database as given).
std::vector<WaitedKey> WaitedKeysBefore(CommandCall& call, const std::vector<int>& dbs);
// The same for every database.
std::vector<WaitedKey> WaitedKeysBefore(CommandCall& call);

// How the databases changed: emptied (FLUSHDB, FLUSHALL), swapped with others
// (SWAPDB: keys that now hold a list, sorted set or stream signal too), or
// emptied and loaded again (DEBUG RELOAD, whose loading signals nothing).
enum class DbChange { kEmptied, kSwapped, kReloaded };

// Notes Redis' signals for keys in call.ctx once the operation is done.
void SignalWaitedKeys(CommandCall& call, const std::vector<WaitedKey>& keys, DbChange change);

}  // namespace kvrocks
