#include "storage/wal_archive_file_system.h"

#include <fcntl.h>
#include <unistd.h>

namespace kvrocks {

namespace {

bool EndsWith(const std::string& s, const char* suffix, size_t n) {
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Writes back what is still dirty (an obsolete log's bytes, written once) and
// drops the file's pages; a failure only leaves them cached.
void DropFromPageCache(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  fdatasync(fd);  // dirty pages would stay cached
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

}  // namespace

bool WalArchiveFileSystem::IsArchivedLogName(const std::string& path) {
  static constexpr char kLog[] = ".log";
  if (!EndsWith(path, kLog, sizeof(kLog) - 1)) return false;
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return false;
  const std::string dir = path.substr(0, slash);
  static constexpr char kArchive[] = "/archive";
  return dir == "archive" || EndsWith(dir, kArchive, sizeof(kArchive) - 1);
}

rocksdb::IOStatus WalArchiveFileSystem::RenameFile(const std::string& src, const std::string& target,
                                                   const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus s = target_->RenameFile(src, target, options, dbg);
  if (s.ok() && IsArchivedLogName(target)) DropFromPageCache(target);
  return s;
}

}  // namespace kvrocks
