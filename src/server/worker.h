// A worker thread: one libevent loop serving a set of connections. The first
// worker also owns the listening sockets and deals new connections round-robin.
#pragma once

#include <event2/event.h>

#include <atomic>
#include <functional>
#include <list>
#include <map>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace kvrocks {

class Server;
class Connection;
class WriteBatcher;

class Worker {
 public:
  Worker(Server* server, int index);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Replaces this worker's TCP listening sockets with sockets bound to each of
  // hosts at port; none when port is 0 or hosts is empty. As Redis'
  // listenToPort: "*" is every IPv4 address and "::*" every IPv6 one, a host
  // written "-addr" is skipped when the address is not available, and an
  // address family the machine lacks is skipped. The old sockets close first,
  // so that the same address can be bound again (Redis' changeBindAddr); on
  // failure no TCP socket is left open. Thread-safe: CONFIG SET port/bind calls
  // it from whichever worker runs the command.
  Status ListenTcp(const std::vector<std::string>& hosts, int port);
  // Listens on a Unix domain socket at path (a file there is replaced, as
  // redis-server does); perm, when not 0, becomes the socket file's mode.
  Status ListenUnix(const std::string& path, int perm);
  void Start();
  // Stops the loop (thread-safe) and joins the thread.
  void Stop();

  // Runs fn on this worker's thread (thread-safe).
  void Post(std::function<void()> fn);
  // Runs fn on this worker's thread after ms milliseconds (from this thread).
  void RunAfter(uint64_t ms, std::function<void()> fn);
  // From a posted task: flush conn after the tasks posted so far have run, so
  // that a burst of messages for one client leaves in one write.
  void FlushAfterPosted(Connection* conn);
  // Whether tasks were posted and have not run yet (a cheap, racy hint).
  bool HasPosted() const { return has_posted_.load(std::memory_order_acquire); }
  // Runs the tasks posted so far now (from an event callback of this worker).
  void RunPosted() { OnPosted(-1, 0, this); }

  Server* server() const { return server_; }
  event_base* base() const { return base_; }
  int index() const { return index_; }
  // The kernel's id of this worker's thread (0 until it runs), for INFO cpu.
  int thread_id() const { return tid_.load(std::memory_order_relaxed); }

  // An accepted client socket, its addresses as CLIENT LIST shows them, and
  // its client id, given at accept as Redis does (ids follow the order of the
  // connections, whichever worker takes them over first).
  struct Accepted {
    int fd;
    std::string peer, local;
    bool unix_socket = false;
    uint64_t id = 0;
  };
  // Takes over an accepted socket (on this worker's thread).
  void Adopt(Accepted a);
  // Hands an accepted socket to this worker from another thread.
  void AdoptLater(Accepted a);
  // Destroys a connection (on this worker's thread).
  void Close(Connection* conn);
  // Brackets a read callback (HasUnreadInput).
  void BeginRead() { reading_.fetch_add(1); }
  void EndRead() { reading_.fetch_sub(1); }
  Connection* Find(uint64_t id);
  // Called from within a long command of `running` (a busy script): reads and
  // answers the input of every other connection of this worker (they get
  // -BUSY, or run SCRIPT KILL).
  void ServeWhileBusy(Connection* running);
  // True inside ServeWhileBusy: the batch is the busy script's and commits only
  // after it, so what runs meanwhile (no writes: -BUSY refuses them) answers at once.
  bool serving_while_busy() const { return serving_while_busy_; }
  // Group commit of this worker's write commands.
  WriteBatcher* batcher() { return batcher_.get(); }

  // The worker whose thread calls this (null on other threads).
  static Worker* Current();
  // Whether a client of this worker sent bytes it has not run yet: they wait in
  // the kernel (its sockets are watched, level-triggered, by an epoll set of
  // their own that nothing waits on) or are being read and run now. Any
  // thread; a snapshot, so bytes that arrive after it are not seen.
  bool HasUnreadInput();
  // Reads and runs what HasUnreadInput saw (on this worker's thread, from a
  // posted task): the commands clients sent before a wake that waited for them.
  void ReadPending();

 private:
  // A listening socket, watched by this worker's loop.
  struct Listener {
    Worker* worker;
    int fd;
    event* ev;
  };
  // Starts watching the listening socket fd (which it then owns).
  std::unique_ptr<Listener> Watch(int fd);
  // Stops watching and closes. From another thread, event_del first waits for a
  // running accept callback of l to end, so the socket is closed on return.
  static void Unwatch(std::unique_ptr<Listener> l);
  static void OnListenReadable(evutil_socket_t fd, short, void* arg);
  // Accepts every connection waiting on the listening socket lfd; false when
  // accept failed for another reason than none being left.
  bool AcceptPending(int lfd);
  void OnAccepted(int fd, const sockaddr* addr);
  static void OnPosted(evutil_socket_t, short, void* arg);
  static void OnTimer(evutil_socket_t, short, void* arg);

  Server* server_;
  int index_;
  int unread_epfd_ = -1;  // HasUnreadInput's epoll set: this worker's client sockets
  // Inside a read callback (Connection::OnEvent): bytes read, their commands not yet run.
  alignas(64) std::atomic<int> reading_{0};
  std::atomic<int> tid_{0};
  bool serving_while_busy_ = false;
  event_base* base_;
  // CONFIG SET replaces the TCP listeners from any thread; this thread accepts.
  // An accept callback never takes listen_mu_ (Unwatch waits for it holding it).
  std::mutex listen_mu_;
  std::vector<std::unique_ptr<Listener>> tcp_listeners_;  // guarded by listen_mu_
  std::unique_ptr<Listener> unix_listener_;               // guarded by listen_mu_
  // Whether l is one of the listeners (listen_mu_ held).
  bool Owns(const Listener* l) const;
  event* posted_ev_ = nullptr;
  event* timer_ev_ = nullptr;
  std::mutex posted_mu_;
  std::vector<std::function<void()>> posted_;
  std::atomic<bool> has_posted_{false};
  std::vector<Accepted> adopt_queue_;  // guarded by posted_mu_
  // Adopts the sockets handed over by other workers (on this worker's thread).
  void AdoptQueued();
  std::vector<uint64_t> flush_after_posted_;
  struct Timer {
    Worker* worker;
    event* ev;
    std::function<void()> fn;
  };
  static void OnRunAfter(evutil_socket_t, short, void* arg);
  std::list<std::unique_ptr<Timer>> timers_;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;
  std::unique_ptr<WriteBatcher> batcher_;
  std::thread thread_;
};

}  // namespace kvrocks
