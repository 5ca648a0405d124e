#include "server/worker.h"

#include <arpa/inet.h>
#include <event2/thread.h>
#include <glog/logging.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/socket_address.h"
#include "common/time_util.h"
#include "server/connection.h"
#include "server/server.h"
#include "server/write_batcher.h"

namespace kvrocks {

// Redis' reply to a client it refuses in protected mode, word for word.
static const char kProtectedModeError[] =
    "-DENIED Redis is running in protected mode because protected "
    "mode is enabled and no password is set for the default user. "
    "In this mode connections are only accepted from the loopback interface. "
    "If you want to connect from external computers to Redis you "
    "may adopt one of the following solutions: "
    "1) Just disable protected mode sending the command "
    "'CONFIG SET protected-mode no' from the loopback interface "
    "by connecting to Redis from the same host the server is "
    "running, however MAKE SURE Redis is not publicly accessible "
    "from internet if you do so. Use CONFIG REWRITE to make this "
    "change permanent. "
    "2) Alternatively you can just disable the protected mode by "
    "editing the Redis configuration file, and setting the protected "
    "mode option to 'no', and then restarting the server. "
    "3) If you started the server manually just for testing, restart "
    "it with the '--protected-mode no' option. "
    "4) Setup a an authentication password for the default user. "
    "NOTE: You only need to do one of the above things in order for "
    "the server to start accepting connections from the outside.\r\n";

namespace {
thread_local Worker* tl_worker = nullptr;
}  // namespace

Worker* Worker::Current() { return tl_worker; }

Worker::Worker(Server* server, int index) : server_(server), index_(index) {
  unread_epfd_ = epoll_create1(EPOLL_CLOEXEC);
  PCHECK(unread_epfd_ >= 0) << "epoll_create1";
  base_ = event_base_new();
  posted_ev_ = event_new(base_, -1, EV_PERSIST, &Worker::OnPosted, this);
  event_add(posted_ev_, nullptr);
  timer_ev_ = event_new(base_, -1, EV_PERSIST, &Worker::OnTimer, this);
  timeval tv{1, 0};
  event_add(timer_ev_, &tv);
  batcher_ = std::make_unique<WriteBatcher>(this);
}

Worker::~Worker() {
  for (auto& t : timers_) event_free(t->ev);
  for (auto& a : adopt_queue_) ::close(a.fd);
  batcher_.reset();
  conns_.clear();
  for (auto& l : tcp_listeners_) Unwatch(std::move(l));
  if (unix_listener_) Unwatch(std::move(unix_listener_));
  event_free(posted_ev_);
  event_free(timer_ev_);
  event_base_free(base_);
  ::close(unread_epfd_);
}

namespace {

// The kernel's receive times order the clients that block (Connection::CommandArrivalNs).
// On a listening socket this does two more things: the connections it accepts inherit
// the flag, so bytes that arrive before accept(2) are stamped too, and the kernel's
// global switch for stamping (turned on lazily, from a work queue, by the first socket
// that asks) stays on from startup instead of following the server's open connections.
void StampReceives(int fd) {
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
}

// One listening socket on host:port as Redis' anetTcpServer/anetTcp6Server
// makes it (SO_REUSEADDR; an IPv6 socket takes IPv6 only); -1 and *err the errno
// of a failure.
int BindTcp(std::string host, int port, int backlog, int* err) {
  if (host == "*") host = "0.0.0.0";
  if (host == "::*") host = "::";
  const bool v6 = host.find(':') != std::string::npos;
  std::string spec = v6 ? "[" + host + "]:" + std::to_string(port) : host + ":" + std::to_string(port);
  sockaddr_storage ss{};
  int len = sizeof(ss);
  if (host.empty() || evutil_parse_sockaddr_port(spec.c_str(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    *err = EINVAL;
    return -1;
  }
  int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0 || ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      (v6 && ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, backlog) != 0) {
    *err = errno;
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::unique_ptr<Worker::Listener> Worker::Watch(int fd) {
  StampReceives(fd);
  auto l = std::make_unique<Listener>(Listener{this, fd, nullptr});
  l->ev = event_new(base_, fd, EV_READ | EV_PERSIST, &Worker::OnListenReadable, l.get());
  event_add(l->ev, nullptr);
  return l;
}

void Worker::Unwatch(std::unique_ptr<Listener> l) {
  event_del(l->ev);
  event_free(l->ev);
  ::close(l->fd);
}

Status Worker::ListenTcp(const std::vector<std::string>& hosts, int port) {
  std::lock_guard<std::mutex> g(listen_mu_);
  for (auto& l : tcp_listeners_) Unwatch(std::move(l));
  tcp_listeners_.clear();
  if (port == 0) return Status::OK();
  for (const auto& h : hosts) {
    const bool optional = !h.empty() && h[0] == '-';
    const std::string addr = optional ? h.substr(1) : h;
    int err = 0;
    int fd = BindTcp(addr, port, server_->config()->tcp_backlog, &err);
    if (fd >= 0) {
      tcp_listeners_.push_back(Watch(fd));
      continue;
    }
    LOG(WARNING) << "Warning: Could not create server TCP listening socket " << addr << ":" << port << ": "
                 << strerror(err);
    if (err == EADDRNOTAVAIL && optional) continue;
    if (err == ENOPROTOOPT || err == EPROTONOSUPPORT || err == ESOCKTNOSUPPORT || err == EPFNOSUPPORT ||
        err == EAFNOSUPPORT) {
      continue;
    }
    for (auto& l : tcp_listeners_) Unwatch(std::move(l));
    tcp_listeners_.clear();
    if (err == EINVAL) return Status::InvalidArgument("bad bind address " + addr);
    return Status::IOError("could not bind " + addr + ":" + std::to_string(port) + ": " + strerror(err));
  }
  return Status::OK();
}

bool Worker::Owns(const Listener* l) const {
  if (l == unix_listener_.get()) return true;
  for (const auto& t : tcp_listeners_) {
    if (t.get() == l) return true;
  }
  return false;
}

Status Worker::ListenUnix(const std::string& path, int perm) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() > sizeof(sa.sun_path) - 1) {
    return Status::InvalidArgument("unix socket path too long (" + std::to_string(path.size()) + "), must be under " +
                                   std::to_string(sizeof(sa.sun_path)));
  }
  std::memcpy(sa.sun_path, path.data(), path.size());
  ::unlink(path.c_str());  // a socket left by an earlier run; failing is fine
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError(std::string("unix socket: ") + strerror(errno));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
      (perm != 0 && ::chmod(path.c_str(), perm) != 0)) {
    Status s = Status::IOError("could not bind unix socket " + path + ": " + strerror(errno));
    ::close(fd);
    return s;
  }
  if (::listen(fd, server_->config()->tcp_backlog) != 0) {
    Status s = Status::IOError("could not listen on unix socket " + path + ": " + strerror(errno));
    ::close(fd);
    return s;
  }
  std::lock_guard<std::mutex> g(listen_mu_);
  unix_listener_ = Watch(fd);
  return Status::OK();
}

void Worker::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), ("worker-" + std::to_string(index_)).c_str());
    tid_ = static_cast<int>(::gettid());
    tl_worker = this;
    event_base_dispatch(base_);
    // Close everything this worker owns on its own thread.
    {
      std::lock_guard<std::mutex> g(listen_mu_);
      for (auto& l : tcp_listeners_) event_del(l->ev);
      if (unix_listener_) event_del(unix_listener_->ev);
    }
    batcher_->Commit();
    while (!conns_.empty()) Close(conns_.begin()->second.get());
  });
}

void Worker::Stop() {
  Post([this] { event_base_loopbreak(base_); });
  if (thread_.joinable()) thread_.join();
}

void Worker::Post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> g(posted_mu_);
    posted_.push_back(std::move(fn));
    has_posted_.store(true, std::memory_order_release);
  }
  event_active(posted_ev_, EV_READ, 0);
}

void Worker::AdoptLater(Accepted a) {
  {
    std::lock_guard<std::mutex> g(posted_mu_);
    adopt_queue_.push_back(std::move(a));
    has_posted_.store(true, std::memory_order_release);
  }
  event_active(posted_ev_, EV_READ, 0);
}

void Worker::AdoptQueued() {
  std::vector<Accepted> sockets;
  {
    std::lock_guard<std::mutex> g(posted_mu_);
    sockets.swap(adopt_queue_);
  }
  for (auto& a : sockets) Adopt(std::move(a));
}

void Worker::OnPosted(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Worker*>(arg);
  self->AdoptQueued();
  std::vector<std::function<void()>> fns;
  {
    std::lock_guard<std::mutex> g(self->posted_mu_);
    fns.swap(self->posted_);
    self->has_posted_.store(false, std::memory_order_relaxed);
  }
  for (auto& fn : fns) fn();
  std::vector<uint64_t> ids;
  ids.swap(self->flush_after_posted_);
  for (uint64_t id : ids) {
    Connection* c = self->Find(id);
    if (c != nullptr && !c->awaiting_commit) c->Flush();
  }
}

void Worker::RunAfter(uint64_t ms, std::function<void()> fn) {
  timers_.push_back(std::make_unique<Timer>(Timer{this, nullptr, std::move(fn)}));
  Timer* t = timers_.back().get();
  t->ev = evtimer_new(base_, &Worker::OnRunAfter, t);
  timeval tv{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  evtimer_add(t->ev, &tv);
}

void Worker::OnRunAfter(evutil_socket_t, short, void* arg) {
  auto* t = static_cast<Timer*>(arg);
  std::function<void()> fn = std::move(t->fn);
  Worker* self = t->worker;
  event_free(t->ev);
  self->timers_.remove_if([t](const std::unique_ptr<Timer>& x) { return x.get() == t; });
  fn();
}

void Worker::FlushAfterPosted(Connection* conn) {
  if (conn->flush_pending) return;
  conn->flush_pending = true;
  flush_after_posted_.push_back(conn->id());
}

void Worker::OnTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Worker*>(arg);
  if (self->server_->cron_paused()) return;
  int timeout = self->server_->config()->timeout;
  int64_t now = static_cast<int64_t>(NowMs());
  std::vector<Connection*> idle;
  for (auto& [id, c] : self->conns_) {
    c->TrimBuffers(now);
    // Clients in MONITOR or Pub/Sub mode are never timed out, as in Redis.
    if (timeout > 0 && !c->monitor && !c->subscribed() &&
        now - c->last_interaction_ms.load() > static_cast<int64_t>(timeout) * 1000) {
      idle.push_back(c.get());
    }
  }
  for (auto* c : idle) self->Close(c);
}

void Worker::OnListenReadable(evutil_socket_t lfd, short, void* arg) {
  auto* l = static_cast<Listener*>(arg);
  Worker* self = l->worker;
  if (self->AcceptPending(static_cast<int>(lfd))) return;
  const int err = errno;
  // Out of descriptors (EMFILE, ENFILE) or memory: the socket stays readable, and
  // accepting again at once would spin. Pause this listener briefly; pending
  // connections wait in the backlog.
  LOG_EVERY_N(WARNING, 100) << "Accepting client connection: " << strerror(err);
  event_del(l->ev);
  self->RunAfter(100, [self, l] {
    std::lock_guard<std::mutex> g(self->listen_mu_);
    if (self->Owns(l)) event_add(l->ev, nullptr);  // unless CONFIG SET port/bind has replaced it since
  });
}

bool Worker::AcceptPending(int lfd) {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int fd = accept4(lfd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      OnAccepted(fd, reinterpret_cast<sockaddr*>(&ss));
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) return false;
    // A connection that went away before it was accepted (ECONNABORTED, EPROTO, ...): the next one.
  }
}

void Worker::OnAccepted(int fd, const sockaddr* addr) {
  Accepted a{fd, "", "", addr->sa_family == AF_UNIX};
  StampReceives(fd);  // a Unix socket's connection does not inherit it from the listener
  if (a.unix_socket) {
    // As Redis: both addresses of a Unix socket client are "<unixsocket>:0".
    a.peer = server_->config()->unixsocket + ":0";
    a.local = a.peer;
  } else {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int keepalive = server_->config()->tcp_keepalive;
    if (keepalive > 0) {
      setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &keepalive, sizeof(keepalive));
      int intvl = std::max(1, keepalive / 3);
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
      int cnt = 3;
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    }
    sockaddr_storage local{};
    socklen_t llen = sizeof(local);
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen);
    a.peer = AddrToString(addr);
    a.local = AddrToString(reinterpret_cast<sockaddr*>(&local));
  }
  server_->stats().total_connections_received++;
  a.id = server_->NextClientId();
  // Connections are dealt round-robin: the kernel's SO_REUSEPORT hashing leaves
  // workers unevenly loaded with few connections.
  Worker* target = server_->NextWorker();
  if (target == this) {
    Adopt(std::move(a));
  } else {
    target->AdoptLater(std::move(a));
  }
}

void Worker::Adopt(Accepted a) {
  const int fd = a.fd;
  auto conn = std::make_unique<Connection>(this, fd, a.id, std::move(a.peer), std::move(a.local));
  conn->set_unix_socket(a.unix_socket);
  if (!server_->Register(conn.get())) {
    server_->stats().rejected_connections++;
    static const char kMsg[] = "-ERR max number of clients reached\r\n";
    ssize_t ignored = ::write(fd, kMsg, sizeof(kMsg) - 1);
    (void)ignored;
    return;  // the Connection destructor closes fd
  }
  if (server_->config()->protected_mode && !conn->is_local()) {
    auto user = server_->acl().Find("default");
    if (user != nullptr && user->nopass) {
      server_->stats().rejected_connections++;
      ssize_t ignored = ::write(fd, kProtectedModeError, sizeof(kProtectedModeError) - 1);
      (void)ignored;
      server_->Unregister(conn.get());
      return;  // the Connection destructor closes fd
    }
  }
  Connection* c = conn.get();
  conns_.emplace(c->id(), std::move(conn));
  c->Start();
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = c->id();
  if (epoll_ctl(unread_epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) PLOG(WARNING) << "epoll_ctl";
}

void Worker::Close(Connection* conn) {
  server_->Unregister(conn);
  epoll_ctl(unread_epfd_, EPOLL_CTL_DEL, conn->fd(), nullptr);
  conns_.erase(conn->id());
}

bool Worker::HasUnreadInput() {
  if (reading_.load() > 0) return true;
  epoll_event ev;
  return epoll_wait(unread_epfd_, &ev, 1, 0) > 0;
}

void Worker::ReadPending() {
  epoll_event evs[64];
  int n = epoll_wait(unread_epfd_, evs, 64, 0);
  for (int i = 0; i < n; i++) {
    if (Connection* c = Find(evs[i].data.u64)) c->ReadInput();  // may close it
  }
}

void Worker::ServeWhileBusy(Connection* running) {
  // The event loop is not running: accept and take over connections by hand.
  std::unique_lock<std::mutex> listening(listen_mu_);
  for (auto& l : tcp_listeners_) AcceptPending(l->fd);
  if (unix_listener_) AcceptPending(unix_listener_->fd);
  listening.unlock();
  AdoptQueued();
  serving_while_busy_ = true;
  // Other posted tasks are left for later: a woken blocked command would run
  // inside the running script's write batch.
  std::vector<uint64_t> ids;
  for (auto& [id, c] : conns_) {
    if (c.get() != running) ids.push_back(id);
  }
  for (uint64_t id : ids) {
    if (Connection* c = Find(id)) c->ReadInput();
  }
  serving_while_busy_ = false;
}

Connection* Worker::Find(uint64_t id) {
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : it->second.get();
}

}  // namespace kvrocks
