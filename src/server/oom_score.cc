#include "server/oom_score.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace kvrocks {

bool ApplyOomScoreAdj(const Config& cfg, bool replica) {
  static std::mutex mu;
  static bool adjusted = false;  // kvrocks has changed the score, from `base`
  static int base = 0;
  std::lock_guard<std::mutex> g(mu);
  int value;
  const std::string mode = cfg.Value(&Config::oom_score_adj);  // REPLICAOF calls this beside CONFIG SET
  if (mode != "no") {
    if (!adjusted) {
      char buf[64] = {};
      int fd = ::open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::read(fd, buf, sizeof(buf) - 1) < 0) {
        LOG(WARNING) << "Unable to read oom_score_adj: " << strerror(errno);
        if (fd >= 0) ::close(fd);
        return false;
      }
      ::close(fd);
      base = std::atoi(buf);
      adjusted = true;
    }
    value = cfg.oom_score_adj_values[replica ? 1 : 0];
    if (mode == "yes") value += base;
    value = std::clamp(value, -1000, 1000);
  } else if (adjusted) {
    adjusted = false;
    value = base;
  } else {
    return true;
  }
  const std::string text = std::to_string(value) + "\n";
  int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::write(fd, text.data(), text.size()) < 0) {
    LOG(WARNING) << "Unable to write oom_score_adj: " << strerror(errno);
    if (fd >= 0) ::close(fd);
    return false;
  }
  ::close(fd);
  return true;
}

}  // namespace kvrocks
