#include "replication/master_link.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/time_util.h"

namespace kvrocks {

namespace {

constexpr int kSliceMs = 100;  // longest uninterrupted wait

}  // namespace

MasterLink::~MasterLink() { Close(); }

void MasterLink::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  in_.clear();
  pos_ = 0;
}

namespace {

// Redis' anetTcpGenericConnect: the first of source_addr's addresses that binds.
bool BindSource(int fd, const std::string& source_addr, std::string* why) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int rc = getaddrinfo(source_addr.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    *why = gai_strerror(rc);
    return false;
  }
  bool bound = false;
  for (addrinfo* b = res; b != nullptr && !bound; b = b->ai_next) bound = ::bind(fd, b->ai_addr, b->ai_addrlen) == 0;
  if (!bound) *why = std::string("bind: ") + strerror(errno);
  freeaddrinfo(res);
  return bound;
}

}  // namespace

Status MasterLink::Connect(const std::string& host, int port, int timeout_ms, const std::string& source_addr) {
  Close();
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) return Status::NotFound(std::string("cannot resolve ") + host + ": " + gai_strerror(rc));
  Status result = Status::IOError("cannot connect to " + host + ":" + std::to_string(port));
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    std::string why;
    if (!source_addr.empty() && !BindSource(fd, source_addr, &why)) {
      ::close(fd);
      result = Status::IOError(why);
      break;
    }
    int r = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (r != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      uint64_t deadline = MonotonicMs() + static_cast<uint64_t>(timeout_ms);
      r = -1;
      errno = ETIMEDOUT;
      while (!stop_->load() && MonotonicMs() < deadline) {
        int n = ::poll(&p, 1, kSliceMs);
        if (n > 0) {
          int err = 0;
          socklen_t len = sizeof(err);
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          r = err == 0 ? 0 : -1;
          if (err != 0) errno = err;
          break;
        }
      }
    }
    if (r == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
      fd_ = fd;
      last_io_ms_ = MonotonicMs();
      result = Status::OK();
      break;
    }
    why = "cannot connect to " + host + ":" + std::to_string(port) + ": " + strerror(errno);
    result = errno == ETIMEDOUT ? Status::TimedOut(why) : Status::IOError(why);
    ::close(fd);
  }
  freeaddrinfo(res);
  return result;
}

Status MasterLink::Send(const std::string& bytes, int timeout_ms) {
  size_t done = 0;
  uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : MonotonicMs() + static_cast<uint64_t>(timeout_ms);
  while (done < bytes.size()) {
    if (stop_->load()) return Status::Aborted("stopping");
    if (MonotonicMs() >= deadline) return Status::TimedOut("timeout writing to the peer");
    ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, kSliceMs);
      continue;
    }
    return Status::IOError(std::string("write to master failed: ") + strerror(errno));
  }
  return Status::OK();
}

Status MasterLink::SendCommand(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return Send(out);
}

Status MasterLink::Fill(int timeout_ms, size_t* got) {
  *got = 0;
  uint64_t deadline = MonotonicMs() + static_cast<uint64_t>(timeout_ms);
  while (true) {
    if (stop_->load()) return Status::Aborted("stopping");
    char buf[64 * 1024];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      if (bytes_in_ != nullptr) bytes_in_->fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
      in_.append(buf, static_cast<size_t>(n));
      *got = static_cast<size_t>(n);
      last_io_ms_ = MonotonicMs();
      return Status::OK();
    }
    if (n == 0) return Status::IOError("connection closed by master");
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return Status::IOError(std::string("read from master failed: ") + strerror(errno));
    }
    uint64_t now = MonotonicMs();
    if (now >= deadline) return Status::OK();
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<uint64_t>(kSliceMs, deadline - now)));
  }
}

size_t MasterLink::Unread() const {
  int n = 0;
  if (fd_ < 0 || ioctl(fd_, FIONREAD, &n) != 0) return 0;
  return static_cast<size_t>(n);
}

void MasterLink::Compact() {
  // Consumed input is dropped once it passes kCompactAt: a stream, read 64 KiB
  // at a time, needs about twice kCompactAt of room.
  static constexpr size_t kCompactAt = 1 << 20;
  if (pos_ > 0 && (pos_ == in_.size() || pos_ > kCompactAt)) {
    in_.erase(0, pos_);
    pos_ = 0;
  }
  // A big command (or the RDB's bulk) read through: do not keep its room for the
  // link's lifetime (what follows it is usually the start of a small command).
  // The room a stream needs stays: giving it back at every compaction made the
  // next megabyte grow the buffer again, copy by copy into fresh pages (a
  // seventh of the applier's CPU under a stream of 8 KiB SETs, session 59).
  if (in_.capacity() > 8 * kCompactAt && in_.size() < in_.capacity() / 8) {
    std::string rest(in_, pos_);
    in_.swap(rest);
    pos_ = 0;
  }
}

Status MasterLink::Ask(const std::vector<std::string>& args, std::string* line, int timeout_ms) {
  Status s = SendCommand(args);
  return s.ok() ? ReadLine(line, timeout_ms) : s;
}

Status MasterLink::ReadLine(std::string* line, int timeout_ms) {
  uint64_t deadline = MonotonicMs() + static_cast<uint64_t>(timeout_ms);
  while (true) {
    size_t nl = in_.find('\n', pos_);
    if (nl != std::string::npos) {
      size_t end = nl > pos_ && in_[nl - 1] == '\r' ? nl - 1 : nl;
      line->assign(in_, pos_, end - pos_);
      pos_ = nl + 1;
      Compact();
      return Status::OK();
    }
    uint64_t now = MonotonicMs();
    if (now >= deadline) return Status::TimedOut("timeout reading from master");
    size_t got;
    Status s = Fill(static_cast<int>(deadline - now), &got);
    if (!s.ok()) return s;
  }
}

Status MasterLink::ReadExact(char* buf, size_t n, int timeout_ms) {
  size_t done = 0;
  while (done < n) {
    size_t avail = in_.size() - pos_;
    if (avail > 0) {
      size_t take = std::min(avail, n - done);
      std::memcpy(buf + done, in_.data() + pos_, take);
      pos_ += take;
      done += take;
      Compact();
      continue;
    }
    size_t got;
    Status s = Fill(timeout_ms, &got);
    if (!s.ok()) return s;
    if (got == 0) return Status::TimedOut("timeout reading from master");
  }
  return Status::OK();
}

}  // namespace kvrocks
