// Client-side caching (CLIENT TRACKING), as Redis 7.0's tracking.c does it:
// which clients may cache which keys, and the invalidation messages they get.
//
// Keys are tracked by name across databases, as in Redis. A tracking client in
// the default mode is remembered for every key its read commands fetch; a
// modification of such a key sends it one "invalidate" message and forgets the
// key. In BCAST mode a client instead gets every modified key under the
// prefixes it registered, one message per prefix and commit. FLUSHDB and
// FLUSHALL send every tracking client a null ("everything").
//
// Threading: callers are workers (and the expiry thread); one mutex guards the
// tables. Messages are posted to the receiving connection's worker, which
// formats them for its protocol. To never leave a stale value cached, a reader
// is remembered before it reads, and writers invalidate after their commit is
// visible: the message then reaches the reader after the reply of any read that
// could have seen the old value (both run on the reader's worker in order).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kvrocks {

class Connection;
class Server;
class Worker;

class Tracking {
 public:
  explicit Tracking(Server* server) : server_(server) {}

  struct Options {
    bool bcast = false;
    bool optin = false;
    bool optout = false;
    bool noloop = false;
    uint64_t redirect = 0;  // client id, 0 = none
    std::vector<std::string> prefixes;
  };

  // CLIENT TRACKING ON with options already validated (Validate). Called on
  // conn's thread; re-enabling replaces the options (prefixes add up).
  void Enable(Connection* conn, const Options& options);
  // CLIENT TRACKING OFF, RESET, and closing connections.
  void Disable(Connection* conn);
  // A killed client's shared state (count, prefixes), from any thread; its
  // Disable when it closes then finds nothing left.
  void Forget(uint64_t id);
  // Redis' error for enabling conn with these options, or "".
  std::string Validate(Connection* conn, const Options& options);
  // The protocol conn speaks changed (HELLO): flush messages use it.
  void SetResp(Connection* conn);

  // conn is about to run a read-only command on these keys (its own thread).
  // Applies the OPTIN/OPTOUT rules; nothing for BCAST or non-tracking clients.
  void Remember(Connection* conn, const std::vector<std::string>& keys);

  // Keys whose values changed, once the change is visible to readers; `by` is
  // the client that changed them (0 for expiry), for NOLOOP. marks (or null)
  // holds each key's Stamp() at its write. Redis invalidates at the write, and
  // kvrocks at the commit of the batch that holds it, after which `by` may have
  // read the key again (its own pending write, the new value): as in Redis, `by`
  // then gets a message only if it had read the key before the write, and stays
  // remembered for it. Other clients always get one (they may have read the
  // old value before the commit).
  // A key stamped by a script of `by`: as in Redis, where the script's own
  // client made the change, a BCAST client's NOLOOP does not spare `by` then
  // (default mode compares with the calling client, and does).
  void Invalidate(const std::vector<std::pair<uint8_t, std::string>>& keys, uint64_t by,
                  const std::vector<uint64_t>* marks = nullptr);
  // What one client changed, for Invalidate: keys, `by` and marks as above.
  struct Changes {
    const std::vector<std::pair<uint8_t, std::string>>* keys;
    uint64_t by;
    const std::vector<uint64_t>* marks;
  };
  // Invalidate of several clients' changes committed together (a worker's
  // batch), in the order they were made: a BCAST client gets one message per
  // prefix for all of them, as Redis sends what changed during one pass of its
  // event loop (each key with the client that changed it last).
  // kReaders and kPrefixes split it in two: the clients that read the keys
  // (told at once), the BCAST clients (later, as Redis tells them at the end
  // of its event-loop pass).
  enum class Parts { kBoth, kReaders, kPrefixes };
  void Invalidate(const std::vector<Changes>& batch, Parts parts = Parts::kBoth);
  // Counts Remember calls and BCAST registrations: a read remembered (or a
  // prefix registered) after Clock() returned m came after a write stamped m.
  // Any thread.
  uint64_t Clock() const { return clock_.load(std::memory_order_relaxed); }
  // The mark of the writes a command is about to make: Clock(), and whether a
  // script makes them.
  uint64_t Stamp(bool by_script) const { return Clock() | (by_script ? kByScript : 0); }
  // Advances the clock and returns its new value: a write stamped after this
  // call carries a mark (without the script bit, MarkTime) at least that value.
  uint64_t Tick() { return clock_.fetch_add(1, std::memory_order_relaxed) + 1; }
  // A write's Stamp without the bit that tells a script made it.
  static uint64_t MarkTime(uint64_t mark) { return mark & ~kByScript; }
  // The keys a command (a transaction, a script) wrote before it flushes:
  // Redis invalidates each at its write, so their readers get the messages
  // ahead of the flush's null (`current`, the flushing client, as in
  // InvalidateAll); BCAST clients get theirs after the command, with Invalidate
  // of all its changes, as Redis' beforeSleep sends them. Call once the writes
  // are visible, before InvalidateAll.
  void InvalidateBeforeFlush(const std::vector<std::pair<uint8_t, std::string>>& keys, uint64_t by,
                             const std::vector<uint64_t>& marks, Connection* current);
  // Every key changed (FLUSHDB, FLUSHALL): a null to every tracking client.
  // `current`, the client running the flush (may be null): what other
  // clients' tracking redirects to it is written at once, ahead of its reply,
  // as Redis writes it during the command; its own tracking's message comes
  // after the reply and after every other client's (Redis' pending
  // invalidations), where its tracking points once the command has run.
  void InvalidateAll(Connection* current = nullptr);

  // Forgets keys (with invalidations) while the table is over
  // tracking-table-max-keys; Remember does it too. As Redis before every
  // command: `current` (the client about to run one, on its own thread, or
  // null) gets its messages at once, ahead of that command's reply.
  void Trim(Connection* current = nullptr);

  // True when no client tracks anything: writers can skip Invalidate.
  bool idle() const { return tracking_clients_.load(std::memory_order_relaxed) == 0 && keys_.load() == 0; }

  size_t clients() const { return tracking_clients_.load(); }
  size_t keys() const { return keys_.load(); }
  size_t items();
  size_t prefixes();

  // CLIENT TRACKINGINFO of conn: flags, redirect id (-1 when off), prefixes.
  struct Info {
    std::vector<std::string> flags;
    int64_t redirect = -1;
    std::vector<std::string> prefixes;
  };
  Info InfoOf(Connection* conn);
  // CLIENT LIST flags "t", "R", "B" and redir= of a client id (any thread).
  void ListFields(uint64_t id, std::string* flags, int64_t* redirect);

 private:
  static constexpr uint64_t kByScript = uint64_t{1} << 63;

  struct ClientState {
    Worker* worker = nullptr;
    int resp = 2;
    bool bcast = false;
    bool noloop = false;
    bool broken_redirect = false;
    uint64_t redirect = 0;
    std::set<std::string> prefixes;
  };
  // One message to post: the receiver (the tracking client, or its redirect
  // target), and for a key list the RESP array, for a flush the null of the
  // tracking client's protocol (as Redis sends it, even through a redirect).
  struct Message {
    uint64_t tracker;
    uint64_t receiver;
    std::string payload;
    bool redirected;
    // The tracker's own flush null is still to be sent (flush_pending_): this
    // message goes through the tracker's worker so that it follows that null.
    bool behind_flush = false;
  };
  // Drops keys (sending their invalidations) while the table is over
  // tracking-table-max-keys. Called with mu_ held.
  void EnforceLimit(std::vector<Message>* out);
  // The default-mode part of Invalidate: messages to the clients remembered
  // for keys, which forgets them. Called with mu_ held.
  void InvalidateReaders(const std::vector<std::pair<uint8_t, std::string>>& keys, uint64_t by,
                         const std::vector<uint64_t>* marks, std::vector<Message>* out);
  // Posts out; what other clients' tracking redirects to `current` (if any) is
  // written at once, ahead of its reply, as Redis writes it during the command.
  void PostAround(std::vector<Message> out, Connection* current);
  void AddMessage(uint64_t id, const ClientState& st, std::string payload, std::vector<Message>* out);
  // Sends out, after mu_ is released (redirect targets are looked up in the
  // server's client registry).
  void Post(std::vector<Message> out, Connection* current = nullptr);
  void PostBrokenRedirect(uint64_t tracker, uint64_t redirect);
  // Removes id's state (with mu_ held).
  void ForgetLocked(uint64_t id);

  Server* server_;
  std::mutex mu_;
  std::unordered_map<uint64_t, ClientState> clients_;
  // Reads of a key by one client since its last invalidation (Clock() values).
  struct Reads {
    uint64_t first, last;
  };
  // key -> the clients remembered for it.
  std::unordered_map<std::string, std::unordered_map<uint64_t, Reads>> table_;
  std::atomic<uint64_t> clock_{0};
  // Clients whose flush nulls wait for the end of their command (InvalidateAll),
  // with how many (a transaction may flush twice): as in Redis' pending list,
  // their tracking's later messages come after the last of them.
  std::unordered_map<uint64_t, int> flush_pending_;
  size_t items_ = 0;
  // BCAST prefix -> its clients, each with the Clock() value at which it
  // registered the prefix (a write stamped earlier came before it).
  std::map<std::string, std::map<uint64_t, uint64_t>> prefix_clients_;
  std::atomic<size_t> tracking_clients_{0};
  std::atomic<size_t> keys_{0};
};

}  // namespace kvrocks
