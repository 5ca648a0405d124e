#include "server/logging.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace kvrocks {

StatusOr<int> OpenLogFile(const Config& cfg) {
  if (cfg.logfile.empty()) return -1;
  int fd = ::open(cfg.logfile.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::InvalidArgument(std::string("Can't open the log file: ") + strerror(errno));
  return fd;
}

void InitLogging(Config* cfg, const char* argv0, int logfile_fd) {
  google::InitGoogleLogging(argv0);
  if (logfile_fd >= 0) {
    // As Redis' logfile: one file, appended to; whatever else writes to stderr
    // (RocksDB, a crash report) lands there too.
    ::dup2(logfile_fd, STDERR_FILENO);
    ::close(logfile_fd);
    FLAGS_logtostderr = true;
  } else if (cfg->log_dir.empty()) {
    FLAGS_logtostderr = true;
  } else {
    ::mkdir(cfg->log_dir.c_str(), 0755);
    FLAGS_log_dir = cfg->log_dir;
  }
  ApplyLogLevel(cfg->log_level);
  cfg->OnSet("loglevel", [](const Config& c) {
    ApplyLogLevel(c.log_level);
    return Status::OK();
  });
  SetCrashLog(cfg->crash_log_enabled);
  cfg->OnSet("crash-log-enabled", [](const Config& c) {
    SetCrashLog(c.crash_log_enabled);
    return Status::OK();
  });
}

void SetCrashLog(bool on) {
  if (on) {
    // (glog's list includes SIGTERM and SIGINT, which every thread blocks: the
    // sigwait thread still takes them.)
    google::InstallFailureSignalHandler();
    return;
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &dfl, nullptr);
}

void ApplyLogLevel(const std::string& level) {
  FLAGS_minloglevel = level == "warning" ? google::GLOG_WARNING : google::GLOG_INFO;
  FLAGS_v = level == "debug" ? 2 : level == "verbose" ? 1 : 0;
}

}  // namespace kvrocks
