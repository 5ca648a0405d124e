#include "replication/rdb_snapshot_sender.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>

#include "common/socket_send.h"
#include "replication/rdb_file.h"
#include "stats/stats.h"

namespace kvrocks {

namespace {

Status SocketError(const char* what) {
  if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::TimedOut(std::string(what) + ": timed out");
  return Status::IOError(std::string(what) + ": " + std::strerror(errno));
}

// Sends the file's bytes [0, size) without copying them through user space.
Status SendFile(int fd, int file, uint64_t size, std::atomic<uint64_t>* sent_total) {
  off_t offset = 0;
  while (static_cast<uint64_t>(offset) < size) {
    ssize_t w = ::sendfile(fd, file, &offset, size - static_cast<uint64_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return SocketError("sendfile");
    if (w == 0) return Status::IOError("sendfile: the file ended early");
    sent_total->fetch_add(static_cast<uint64_t>(w), std::memory_order_relaxed);
  }
  return Status::OK();
}

}  // namespace

RdbSnapshotSender::RdbSnapshotSender(Storage* storage, int databases, Stats* stats)
    : storage_(storage), databases_(databases), stats_(stats) {}

RdbSnapshotSender::~RdbSnapshotSender() { Stop(); }

void RdbSnapshotSender::Start(Request req) {
  const uint64_t id = next_id_++;
  const int fd = req.fd;
  transfers_.Start(fd, [this, id, r = std::move(req)](int fd, std::atomic<bool>* cancel) { Run(fd, cancel, r, id); });
}

void RdbSnapshotSender::Stop() { transfers_.Stop(); }

void RdbSnapshotSender::Run(int fd, std::atomic<bool>* cancel, const Request& req, uint64_t id) {
  // Blocking sends, each bounded by repl-timeout (Redis drops a replica that
  // does not read for that long).
  SetBlockingWithSendTimeout(fd, req.timeout_s);

  const std::string path = req.dir + "/temp-sync-" + std::to_string(::getpid()) + "-" + std::to_string(id) + ".rdb";
  Status s = SendAll(fd, req.preamble.data(), req.preamble.size());
  uint64_t keys = 0;
  if (s.ok()) {
    LOG(INFO) << "Starting RDB snapshot for the SYNC of " << req.peer << " with target: disk";
    auto written = std::async(std::launch::async, [&] {
      return WriteRdbFile(storage_, req.include_data ? databases_ : 0, req.function_codes, path, &keys, cancel);
    });
    while (written.wait_for(std::chrono::seconds(1)) != std::future_status::ready) {
      // Redis' replicationCron: a newline to replicas waiting for their RDB.
      if (s.ok() && !(s = SendAll(fd, "\n", 1)).ok()) cancel->store(true);
    }
    Status w = written.get();
    if (s.ok()) s = w;
  }
  if (s.ok()) {
    int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (file < 0 || ::fstat(file, &st) != 0) {
      s = Status::IOError("open " + path + ": " + std::strerror(errno));
    } else {
      stats_->sync_full.fetch_add(1);
      const std::string header = "$" + std::to_string(st.st_size) + "\r\n";
      s = SendAll(fd, header.data(), header.size());
      if (s.ok()) s = SendFile(fd, file, static_cast<uint64_t>(st.st_size), &stats_->net_repl_output_bytes);
    }
    if (file >= 0) ::close(file);
  }
  ::unlink(path.c_str());
  if (s.ok()) {
    LOG(INFO) << "RDB transfer completed (" << keys << " keys), " << req.peer << " disconnected";
  } else if (!s.IsAborted()) {  // aborted: Stop() cancelled it
    LOG(WARNING) << "RDB snapshot for " << req.peer << " failed: " << s.message();
  }
}

}  // namespace kvrocks
