// Where the server's log goes and how much of it, as Redis' logfile and loglevel
// options say (kvrocks logs through glog).
#pragma once

#include <string>

#include "common/status.h"
#include "config/config.h"

namespace kvrocks {

// Opens cfg.logfile for appending (Redis checks it at startup too, so that a bad
// path is reported on the terminal); -1 when logfile is empty. Call before
// daemonizing.
StatusOr<int> OpenLogFile(const Config& cfg);

// Starts glog: into `logfile_fd` (made the process' stderr) when it is not -1,
// else into glog's files in cfg.log_dir, else to stderr; at cfg.log_level, and at
// each CONFIG SET loglevel afterwards.
void InitLogging(Config* cfg, const char* argv0, int logfile_fd);

// Redis' crash-log-enabled: with on, a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGABRT) logs the signal and the stack before the process dies, as Redis' crash
// report does (glog's failure handler); with off, the default actions.
void SetCrashLog(bool on);

// Redis' levels over glog's: warning shows warnings and errors only, notice adds
// LOG(INFO), verbose adds VLOG(1) (what Redis logs at LL_VERBOSE, such as
// protocol errors), debug VLOG(2).
void ApplyLogLevel(const std::string& level);

}  // namespace kvrocks
