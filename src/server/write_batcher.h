// WriteBatcher: group commit for one worker thread.
//
// The write commands a worker runs during one pass of its event loop (all
// pipelined commands of all connections that were readable) share one
// storage Context and are committed as a single RocksDB write batch at the
// end of the pass; only then are the replies of those connections sent, so an
// acknowledged write is always durable. The batch keeps the key locks of the
// commands in it until it commits. It only ever *tries* to take a lock it
// does not hold: on contention it commits first and then blocks holding
// nothing, so batches of different workers cannot deadlock.
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/status.h"
#include "server/tracking.h"
#include "storage/context.h"

namespace kvrocks {

class Connection;
class Worker;

class WriteBatcher {
 public:
  explicit WriteBatcher(Worker* worker);
  ~WriteBatcher();
  WriteBatcher(const WriteBatcher&) = delete;
  WriteBatcher& operator=(const WriteBatcher&) = delete;

  Context* ctx() { return &ctx_; }
  bool pending() const { return holds_global_ || ctx_.HasWrites(); }

  // Takes the given key locks (LockManager::KeyHash) for the current batch,
  // committing it first if one of them is held by someone else.
  void Lock(const std::vector<uint64_t>& keys);
  // Adds key locks to the current batch without ever waiting or committing:
  // false (and nothing taken) if one of them is held by someone else. For
  // work that must stay atomic with what the batch already holds (scripts).
  bool TryLockMore(const std::vector<uint64_t>& keys);
  // Sends connection id's replies only after the batch commits.
  void Defer(uint64_t conn_id);
  // Runs fn after the batch commits (if it commits).
  void AfterCommit(std::function<void()> fn);
  // Takes the keys ctx touched, changed by client `by`: client-side caching
  // invalidates them once the batch commits (Tracking::Invalidate).
  void NoteChanged(Context* ctx, uint64_t by);
  // conn's next commands wait (Connection::awaiting_own_messages) until what
  // its last NoteChanged tells its own tracking has been posted.
  void HoldUntilTold(Connection* conn);
  // Commits the batch, releases its locks and flushes deferred connections.
  // Connections whose writes failed are closed without a reply.
  void Commit() { Finish(CommitOnly()); }
  // What a commit still has to send: its BCAST messages, its replies.
  struct Committed {
    bool ok = true;
    std::vector<std::vector<std::pair<uint8_t, std::string>>> keys;  // per client run
    std::vector<std::vector<uint64_t>> marks;
    std::vector<uint64_t> by;
    std::vector<uint64_t> conns, held;  // deferred replies, HoldUntilTold
    // keys, marks and by, as Tracking takes them.
    std::vector<Tracking::Changes> Changes() const;
  };
  // Commit in two steps, for an exclusive command that runs in between
  // (RunExclusive): the batch commits and the clients that read its keys are
  // told; its BCAST messages (with `also`, the exclusive command's changes)
  // and then its replies go out in Finish, after what the command sent (a
  // flush's nulls), as Redis tells BCAST clients at the end of the pass.
  Committed CommitOnly();
  void Finish(Committed done, const Tracking::Changes* also = nullptr);

 private:
  static void OnCommit(evutil_socket_t, short, void* arg);
  void Schedule();
  void Unlock();

  Worker* worker_;
  Context ctx_;
  bool holds_global_ = false;
  std::unordered_set<uint64_t> held_;
  std::vector<uint64_t> deferred_;
  std::vector<std::function<void()>> after_commit_;
  // Keys changed in this batch, their Context::touch_marks, and (client, end of
  // its run in changed_).
  std::vector<std::pair<uint8_t, std::string>> changed_;
  std::vector<uint64_t> changed_marks_;
  struct ChangedBy {
    uint64_t by;
    size_t end;  // of its run in changed_
  };
  std::vector<ChangedBy> changed_by_;
  std::vector<uint64_t> held_until_told_;  // connection ids (HoldUntilTold)
  event* commit_ev_;
  bool scheduled_ = false;
};

}  // namespace kvrocks
