#include "server/write_batcher.h"

#include <glog/logging.h>

#include <algorithm>

#include "server/connection.h"
#include "server/server.h"
#include "server/worker.h"

namespace kvrocks {

WriteBatcher::WriteBatcher(Worker* worker)
    : worker_(worker),
      ctx_(worker->server()->storage()),
      held_mask_(worker->server()->storage()->locks()->size(), false) {
  commit_ev_ = event_new(worker->base(), -1, 0, &WriteBatcher::OnCommit, this);
}

WriteBatcher::~WriteBatcher() {
  Commit();
  event_free(commit_ev_);
}

void WriteBatcher::Lock(const std::vector<size_t>& stripes) {
  LockManager* lm = worker_->server()->storage()->locks();
  std::vector<size_t> wanted;
  for (size_t s : stripes) {
    if (!held_mask_[s]) wanted.push_back(s);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  size_t got = 0;
  for (; got < wanted.size(); got++) {
    if (!lm->stripe(wanted[got]).try_lock()) break;
  }
  if (got < wanted.size()) {
    // Contention: release what this attempt took, commit the batch (releasing
    // everything), then block holding nothing.
    for (size_t i = 0; i < got; i++) lm->stripe(wanted[i]).unlock();
    Commit();
    for (size_t s : wanted) lm->stripe(s).lock();
  }
  for (size_t s : wanted) {
    held_mask_[s] = true;
    held_.push_back(s);
  }
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
  for (size_t s : held_) {
    held_mask_[s] = false;
    lm->stripe(s).unlock();
  }
  held_.clear();
}

void WriteBatcher::Commit() {
  Status s = ctx_.Commit();
  Unlock();
  if (!s.ok()) LOG(ERROR) << "Write batch failed, closing its clients without a reply: " << s.message();
  std::vector<uint64_t> conns;
  conns.swap(deferred_);
  for (uint64_t id : conns) {
    Connection* c = worker_->Find(id);
    if (c == nullptr) continue;
    if (!s.ok()) {
      worker_->Close(c);
    } else {
      c->Flush();
    }
  }
}

}  // namespace kvrocks
