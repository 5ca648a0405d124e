#include "server/supervision.h"

#include <glog/logging.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace kvrocks {

namespace {

bool g_systemd = false;  // set once at startup, read-only afterwards

// sd_notify(0, message) without libsystemd: one datagram to NOTIFY_SOCKET (a
// path, or an abstract socket when it starts with '@'). Redis' messages when it fails.
bool SendToSystemd(const std::string& message) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') {
    LOG(WARNING) << "systemd supervision error: NOTIFY_SOCKET not found!";
    return false;
  }
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  const size_t len = std::strlen(path);
  if (len >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@')) {
    LOG(WARNING) << "systemd supervision error: sd_notify: " << -EINVAL;
    return false;
  }
  std::memcpy(sa.sun_path, path, len);
  if (path[0] == '@') sa.sun_path[0] = '\0';
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ssize_t sent = fd < 0 ? -1
                        : ::sendto(fd, message.data(), message.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&sa),
                                   static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (sent < 0) {
    LOG(WARNING) << "systemd supervision error: sd_notify: " << -err;
    return false;
  }
  return true;
}

// The supervisor `mode` stands for: auto resolved by the environment.
std::string Resolve(const std::string& mode) {
  if (mode != "auto") return mode;
  if (std::getenv("UPSTART_JOB") != nullptr) return "upstart";
  if (std::getenv("NOTIFY_SOCKET") != nullptr) return "systemd";
  return "no";
}

}  // namespace

bool Supervised(const std::string& mode) {
  const std::string m = Resolve(mode);
  return (m == "upstart" && std::getenv("UPSTART_JOB") != nullptr) ||
         (m == "systemd" && std::getenv("NOTIFY_SOCKET") != nullptr);
}

void StartSupervision(const std::string& mode) {
  const std::string m = Resolve(mode);
  if (mode == "auto" && m != "no") VLOG(1) << (m == "upstart" ? "Upstart" : "Systemd") << " supervision detected.";
  if (m == "upstart") {
    if (std::getenv("UPSTART_JOB") == nullptr) {
      LOG(WARNING) << "upstart supervision requested, but UPSTART_JOB not found!";
      return;
    }
    LOG(INFO) << "supervised by upstart, will stop to signal readiness.";
    std::raise(SIGSTOP);
    ::unsetenv("UPSTART_JOB");
  } else if (m == "systemd" && SendToSystemd("STATUS=kvrocks is loading...\n")) {
    LOG(INFO) << "Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and "
                 "TimeoutStopSec in your service unit.";
    g_systemd = true;
  }
}

void NotifySystemd(const std::string& message) {
  if (g_systemd) SendToSystemd(message);
}

}  // namespace kvrocks
