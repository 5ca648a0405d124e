// Clients whose socket is served outside the event loop for a while, on a
// thread of their own (an RDB snapshot sent to `redis-cli --rdb`, a SCRIPT
// DEBUG YES session) or on their worker (a SCRIPT DEBUG SYNC session). Stop()
// ends them before storage closes: their sockets are shut down, which ends
// every wait on the client, and the threads are joined.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace kvrocks {

class DetachedSessions {
 public:
  DetachedSessions() = default;
  ~DetachedSessions();
  DetachedSessions(const DetachedSessions&) = delete;
  DetachedSessions& operator=(const DetachedSessions&) = delete;

  // Runs fn(fd, cancel) on a new thread, which owns fd and closes it when fn
  // returns. *cancel turns true when Stop() begins (fn may set it as well).
  // After Stop() fd is closed at once and false returned.
  bool Start(int fd, std::function<void(int fd, std::atomic<bool>* cancel)> fn);

  // A socket used directly by the calling thread until the Watch ends: Stop()
  // shuts it down too.
  class Watch {
   public:
    Watch(DetachedSessions* owner, int fd);
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

   private:
    DetachedSessions* owner_;
    uint64_t id_;
  };

  // Shuts down every session's socket and waits for the threads. Idempotent.
  void Stop();

 private:
  struct Session {
    std::thread thread;
    std::atomic<bool> done{false};
    std::atomic<bool> cancel{false};
    std::mutex fd_mu;  // guards fd between the thread's close and Stop's shutdown
    int fd = -1;
  };
  // Joins and forgets finished sessions (under mu_).
  void Reap();

  std::mutex mu_;
  bool stopped_ = false;
  std::list<std::unique_ptr<Session>> sessions_;
  uint64_t next_watch_ = 0;
  std::map<uint64_t, int> watched_;  // Watch id -> fd
};

}  // namespace kvrocks
