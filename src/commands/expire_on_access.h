// Deletion of expired keys on access: what Redis' expireIfNeeded does when a
// command looks up a key whose time has passed.
#pragma once

#include "commands/command.h"

namespace kvrocks {

// Deletes, in the call's batch, the keys the call's reads found expired
// (Context::TakeExpiredFound): each becomes a kExpired touch, which counts in
// INFO expired_keys when the batch commits and is announced as "expired",
// signals WATCH and invalidates client-side caches. As in Redis, nothing is
// deleted while clients are paused (the data set stays still), nor on a replica
// (its master sends the DELs) but for the keys a client's write command looks up
// for writing on a writable replica (Redis' lookupKeyWrite there). A key whose
// lock the batch neither holds nor can take at once is left to the expiry cycle,
// which deletes it soon after.
void DeleteExpiredFound(const CommandSpec& spec, CommandCall& call);

}  // namespace kvrocks
