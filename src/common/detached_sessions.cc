#include "common/detached_sessions.h"

#include <sys/socket.h>
#include <unistd.h>

#include <utility>
#include <vector>

namespace kvrocks {

DetachedSessions::~DetachedSessions() { Stop(); }

bool DetachedSessions::Start(int fd, std::function<void(int fd, std::atomic<bool>* cancel)> fn) {
  std::lock_guard<std::mutex> g(mu_);
  Reap();
  if (stopped_) {
    ::close(fd);
    return false;
  }
  auto session = std::make_unique<Session>();
  Session* raw = session.get();
  raw->fd = fd;
  sessions_.push_back(std::move(session));
  raw->thread = std::thread([raw, fd, fn = std::move(fn)] {
    fn(fd, &raw->cancel);
    {
      std::lock_guard<std::mutex> fg(raw->fd_mu);
      ::close(raw->fd);
      raw->fd = -1;
    }
    raw->done = true;
  });
  return true;
}

DetachedSessions::Watch::Watch(DetachedSessions* owner, int fd) : owner_(owner) {
  std::lock_guard<std::mutex> g(owner_->mu_);
  id_ = owner_->next_watch_++;
  // Stopped already: the socket goes down at once, as Stop would have done.
  if (owner_->stopped_) ::shutdown(fd, SHUT_RDWR);
  owner_->watched_[id_] = fd;
}

DetachedSessions::Watch::~Watch() {
  std::lock_guard<std::mutex> g(owner_->mu_);
  owner_->watched_.erase(id_);
}

void DetachedSessions::Stop() {
  std::list<std::unique_ptr<Session>> all;
  {
    std::lock_guard<std::mutex> g(mu_);
    stopped_ = true;
    for (auto& [id, fd] : watched_) ::shutdown(fd, SHUT_RDWR);
    all.swap(sessions_);
  }
  for (auto& s : all) {
    s->cancel = true;
    std::lock_guard<std::mutex> fg(s->fd_mu);
    if (s->fd >= 0) ::shutdown(s->fd, SHUT_RDWR);
  }
  for (auto& s : all) s->thread.join();
}

void DetachedSessions::Reap() {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if ((*it)->done) {
      (*it)->thread.join();
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace kvrocks
