// WalArchiveFileSystem drops a write-ahead log's pages from the page cache when
// RocksDB archives the log (renames it into <dir>/archive/, which it does once
// no memtable needs the log, when WAL_ttl_seconds or WAL_size_limit_MB keep
// logs for kvrocks replicas).
//
// Why: RocksDB deletes a log nobody keeps, and the kernel hands the freed pages
// to the next log and the next blob file. An archived log keeps its pages, so
// every later write lands in memory the machine has not touched for a while,
// which on these VMs (a balloon that reports free pages to the host) costs a
// host page fault per 4 KiB: 8 KiB SETs ran at 0.55 of their speed from the
// third 800 MB of logs on (bench/RESULTS.md, session 81). A replica that falls
// behind by more than a memtable reads its archived logs from the disk, as a
// Redis replica's backlog would not need to, but only then.
//
// Everything else forwards to the wrapped file system. Thread-safe as the
// wrapped one is.
#pragma once

#include <rocksdb/file_system.h>

#include <memory>
#include <string>

namespace kvrocks {

class WalArchiveFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit WalArchiveFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target)
      : rocksdb::FileSystemWrapper(target) {}

  static const char* kClassName() { return "WalArchiveFileSystem"; }
  const char* Name() const override { return kClassName(); }

  rocksdb::IOStatus RenameFile(const std::string& src, const std::string& target, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;

  // True for RocksDB's name of an archived log: .../archive/<number>.log.
  static bool IsArchivedLogName(const std::string& path);
};

}  // namespace kvrocks
