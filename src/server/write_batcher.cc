#include "server/write_batcher.h"

#include <glog/logging.h>

#include <algorithm>
#include <iterator>

#include "common/trim.h"
#include "server/connection.h"
#include "server/server.h"
#include "server/worker.h"

namespace kvrocks {

WriteBatcher::WriteBatcher(Worker* worker)
    : worker_(worker), ctx_(worker->server()->storage()) {
  ctx_.set_expired_counter(&worker->server()->stats().expired_keys);
  ctx_.set_dirty_counter(&worker->server()->stats().dirty);
  ctx_.set_record_lookups(true);
  commit_ev_ = event_new(worker->base(), -1, 0, &WriteBatcher::OnCommit, this);
}

WriteBatcher::~WriteBatcher() {
  Commit();
  event_free(commit_ev_);
}

void WriteBatcher::Lock(const std::vector<uint64_t>& keys) {
  LockManager* lm = worker_->server()->storage()->locks();
  std::vector<uint64_t> wanted;
  for (uint64_t k : keys) {
    if (held_.count(k) == 0) wanted.push_back(k);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (!holds_global_) {
    lm->LockShared();
    holds_global_ = true;
  }
  size_t got = 0;
  for (; got < wanted.size(); got++) {
    if (!lm->TryLock(wanted[got])) break;
  }
  if (got < wanted.size()) {
    // Contention: release what this attempt took, commit the batch (releasing
    // everything), then block holding nothing but the new keys, in order.
    for (size_t i = 0; i < got; i++) lm->Unlock(wanted[i]);
    Commit();
    lm->LockShared();
    holds_global_ = true;
    for (uint64_t k : wanted) lm->Lock(k);
  }
  held_.insert(wanted.begin(), wanted.end());
  Schedule();
}

bool WriteBatcher::TryLockMore(const std::vector<uint64_t>& keys) {
  LockManager* lm = worker_->server()->storage()->locks();
  std::vector<uint64_t> wanted;
  for (uint64_t k : keys) {
    if (held_.count(k) == 0) wanted.push_back(k);
  }
  if (wanted.empty()) return true;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (!holds_global_) {
    lm->LockShared();
    holds_global_ = true;
  }
  for (size_t got = 0; got < wanted.size(); got++) {
    if (lm->TryLock(wanted[got])) continue;
    for (size_t i = 0; i < got; i++) lm->Unlock(wanted[i]);
    return false;
  }
  held_.insert(wanted.begin(), wanted.end());
  Schedule();
  return true;
}

void WriteBatcher::AfterCommit(std::function<void()> fn) {
  after_commit_.push_back(std::move(fn));
  Schedule();
}

void WriteBatcher::Defer(uint64_t conn_id) {
  if (deferred_.empty() || deferred_.back() != conn_id) deferred_.push_back(conn_id);
  Schedule();
}

void WriteBatcher::Schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  // Same priority as the socket events: runs after every read callback of this pass.
  event_active(commit_ev_, EV_READ, 0);
}

void WriteBatcher::OnCommit(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<WriteBatcher*>(arg);
  self->scheduled_ = false;
  self->Commit();
}

void WriteBatcher::Unlock() {
  LockManager* lm = worker_->server()->storage()->locks();
  for (uint64_t k : held_) lm->Unlock(k);
  // clear() keeps the buckets a huge command's locks made: let them go.
  if (held_.bucket_count() > kTrimKeepEntries) {
    std::unordered_set<uint64_t>().swap(held_);
  } else {
    held_.clear();
  }
  if (holds_global_) {
    lm->UnlockShared();
    holds_global_ = false;
  }
}

void WriteBatcher::NoteChanged(Context* ctx, uint64_t by) {
  if (!pending()) {
    worker_->server()->KeysChanged(ctx->touched(), by, &ctx->touch_marks());  // nothing to wait for
    ctx->ClearTouched();
    return;
  }
  ctx->MoveTouchedTo(&changed_, &changed_marks_);
  changed_by_.push_back({by, changed_.size()});
}

void WriteBatcher::HoldUntilTold(Connection* conn) {
  conn->awaiting_own_messages++;
  if (pending()) {
    held_until_told_.push_back(conn->id());
  } else {
    conn->EndOwnMessagesWait();  // NoteChanged has posted them already
  }
}

WriteBatcher::Committed WriteBatcher::CommitOnly() {
  Committed done;
  Status s = ctx_.Commit();
  Unlock();
  if (!s.ok()) LOG(ERROR) << "Write batch failed, closing its clients without a reply: " << s.message();
  done.ok = s.ok();
  std::vector<std::function<void()>> after;
  after.swap(after_commit_);
  if (s.ok()) {
    for (auto& fn : after) fn();
    if (!changed_.empty() && !worker_->server()->tracking().idle()) {
      // Each client's run of changed_, as its own vectors (Tracking::Changes).
      size_t from = 0;
      for (const ChangedBy& c : changed_by_) {
        done.keys.emplace_back(std::make_move_iterator(changed_.begin() + from),
                               std::make_move_iterator(changed_.begin() + c.end));
        done.marks.emplace_back(changed_marks_.begin() + from, changed_marks_.begin() + c.end);
        done.by.push_back(c.by);
        from = c.end;
      }
      worker_->server()->tracking().Invalidate(done.Changes(), Tracking::Parts::kReaders);
    }
  }
  ClearAndTrim(&changed_, kTrimKeepEntries);
  ClearAndTrim(&changed_marks_, kTrimKeepEntries);
  ClearAndTrim(&changed_by_, kTrimKeepEntries);
  done.conns.swap(deferred_);
  done.held.swap(held_until_told_);
  return done;
}

std::vector<Tracking::Changes> WriteBatcher::Committed::Changes() const {
  std::vector<Tracking::Changes> batch;
  for (size_t i = 0; i < by.size(); i++) batch.push_back({&keys[i], by[i], &marks[i]});
  return batch;
}

void WriteBatcher::Finish(Committed done, const Tracking::Changes* also) {
  std::vector<Tracking::Changes> batch = done.Changes();
  if (also != nullptr) batch.push_back(*also);
  if (!batch.empty() && !worker_->server()->tracking().idle()) {
    worker_->server()->tracking().Invalidate(batch, Tracking::Parts::kPrefixes);
  }
  for (uint64_t id : done.conns) {
    Connection* c = worker_->Find(id);
    if (c == nullptr) continue;
    if (!done.ok) {
      c->CloseSoon();
    } else {
      c->Flush();
    }
  }
  for (uint64_t id : done.held) {
    if (Connection* c = worker_->Find(id)) c->EndOwnMessagesWait();
  }
}

}  // namespace kvrocks
