#include "server/fd_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kvrocks {

namespace {

// Sets the soft limit to wanted (raising the hard one if this process may); if
// that is refused, to the hard limit, which is always allowed.
rlim_t RaiseLimit(rlim_t current, rlim_t hard, rlim_t wanted, int* error) {
  rlimit l{};
  l.rlim_cur = wanted;
  l.rlim_max = std::max(wanted, hard);
  if (setrlimit(RLIMIT_NOFILE, &l) == 0) return wanted;
  *error = errno;
  if (hard == RLIM_INFINITY || hard <= current) return current;
  l.rlim_cur = hard;
  l.rlim_max = hard;
  return setrlimit(RLIMIT_NOFILE, &l) == 0 ? hard : current;
}

}  // namespace

Status AdjustOpenFilesLimit(int maxclients, int rocksdb_open_files, FdBudget* out) {
  out->maxclients = maxclients;
  out->rocksdb_open_files = rocksdb_open_files;
  out->warning.clear();
  const rlim_t wanted = static_cast<rlim_t>(maxclients) + rocksdb_open_files + kReservedFds;
  rlimit l{};
  if (getrlimit(RLIMIT_NOFILE, &l) != 0) {
    return Status::IOError(std::string("getrlimit(RLIMIT_NOFILE): ") + strerror(errno));
  }
  rlim_t limit = l.rlim_cur;
  out->original_limit = limit == RLIM_INFINITY ? INT32_MAX : static_cast<int>(std::min<rlim_t>(limit, INT32_MAX));
  int error = 0;
  if (limit != RLIM_INFINITY && limit < wanted) limit = RaiseLimit(limit, l.rlim_max, wanted, &error);
  out->limit = limit == RLIM_INFINITY ? INT32_MAX : static_cast<int>(std::min<rlim_t>(limit, INT32_MAX));
  if (limit == RLIM_INFINITY || limit >= wanted) return Status::OK();

  const int usable = out->limit - kReservedFds;
  if (usable < 2) {
    return Status::InvalidArgument("Your current 'ulimit -n' of " + std::to_string(out->limit) +
                                   " is not enough for the server to start. Please increase your open file limit "
                                   "to at least " + std::to_string(kReservedFds + 2) + ". Exiting.");
  }
  out->rocksdb_open_files = std::min(rocksdb_open_files, std::max(usable / 2, usable - maxclients));
  out->maxclients = std::min(maxclients, usable - out->rocksdb_open_files);
  out->warning = "You requested maxclients of " + std::to_string(maxclients) + " and rocksdb.max-open-files of " +
                 std::to_string(rocksdb_open_files) + " requiring at least " + std::to_string(wanted) +
                 " max file descriptors. Server can't set maximum open files to " + std::to_string(wanted) +
                 " because of OS error: " + strerror(error) + ". Current maximum open files is " +
                 std::to_string(out->limit) + ". maxclients has been reduced to " + std::to_string(out->maxclients) +
                 " and rocksdb.max-open-files to " + std::to_string(out->rocksdb_open_files) +
                 " to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.";
  return Status::OK();
}

}  // namespace kvrocks
