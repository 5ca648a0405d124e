// Keyspace notifications (notify-keyspace-events): the events Redis 7.0
// publishes on __keyspace@<db>__:<key> and __keyevent@<db>__:<event>.
//
// Commands do not publish events themselves. After a command ran, the keys
// its storage context touched (created, modified or removed, in order) and
// the command's name and arguments determine the events, with Redis' names
// and order ("new" at creation, the command's event, "del" when a key
// disappears). Nothing is computed while notify-keyspace-events is empty.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvrocks {

class Server;
class Context;
struct CommandSpec;

// One event: published on __keyspace@db__:key and __keyevent@db__:name.
struct KeyspaceEvent {
  uint32_t cls;  // NotifyFlag
  std::string name;
  int db;  // logical
  std::string key;
};

// Adds the events of one command, whose writes are ctx's touched keys from
// index `from` on, to this thread's pending events (db: the client's logical
// database). Events are published only once the writes are committed, so
// that a subscriber reading the key sees them: see TakePendingEvents. Also
// counts the command's read lookups (Context::lookups) in keyspace_hits and
// keyspace_misses, and forgets them; records the keys it accessed in the
// server's AccessClock.
void CollectCommandEvents(Server* srv, int db, const CommandSpec& spec, const std::vector<std::string>& args,
                          Context& ctx, size_t from);
// Whether the configured events need to know what a write replaced (whether
// it created its key: "new"; whether the key had expired: "expired"): if not,
// writes that replace a key may skip reading it (Context::set_unread_replace_ok).
bool NeedsPriorKeyState(Server* srv);
// This thread's pending events (and dropping those added after a point, for
// a script that is undone).
size_t PendingEventCount();
void DropPendingEvents(size_t keep);
std::vector<KeyspaceEvent> TakePendingEvents();
void PublishEvents(Server* srv, const std::vector<KeyspaceEvent>& events);

// Publishes "expired" for keys the expiry cycle removed from physical db.
void NotifyExpired(Server* srv, uint8_t physical_db, const std::vector<std::string>& keys);

}  // namespace kvrocks
