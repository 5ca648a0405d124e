#include "replication/wal_sender.h"

#include <glog/logging.h>
#include <poll.h>
#include <rocksdb/transaction_log.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "common/socket_send.h"
#include "common/time_util.h"
#include "replication/native_frames.h"
#include "stats/stats.h"

namespace kvrocks {

namespace {

Status HistoryChanged() {
  return Status::Aborted("data was written around the write-ahead log (a full sync or DEBUG RELOAD here)");
}

// The replica's side of the socket: its acknowledgements ('A' frames).
class AckReader {
 public:
  explicit AckReader(int fd) : fd_(fd) {}
  // Reads what has arrived without waiting; *acked gets the last acknowledgement.
  Status Poll(uint64_t* acked, bool* got) {
    *got = false;
    char buf[4096];
    while (true) {
      ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
      if (n == 0) return Status::IOError("the replica closed the connection");
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return Status::IOError(std::string("recv: ") + std::strerror(errno));
      }
      in_.append(buf, static_cast<size_t>(n));
    }
    size_t pos = 0;
    while (in_.size() - pos >= native::kHeaderSize) {
      const uint32_t len = DecodeBE32(in_.data() + pos + 1);
      if (in_[pos] != native::kAck || len != 8) return Status::Corruption("a bad frame from the replica");
      if (in_.size() - pos < native::kHeaderSize + len) break;
      *acked = DecodeBE64(in_.data() + pos + native::kHeaderSize);
      *got = true;
      pos += native::kHeaderSize + len;
    }
    in_.erase(0, pos);
    return Status::OK();
  }

 private:
  int fd_;
  std::string in_;
};

}  // namespace

WalSender::~WalSender() { Stop(); }

void WalSender::Start(Request req) {
  const uint64_t id = next_id_++;
  const int fd = req.fd;
  streams_.Start(fd, [this, id, r = std::move(req)](int fd, std::atomic<bool>* cancel) { Run(fd, cancel, r, id); });
}

void WalSender::Stop() { streams_.Stop(); }

std::vector<WalSender::ReplicaInfo> WalSender::Replicas() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<ReplicaInfo> out;
  for (const auto& [id, info] : replicas_) out.push_back(info);
  return out;
}

int WalSender::GoodReplicas(int max_lag_s) {
  const uint64_t now = MonotonicMs();
  std::lock_guard<std::mutex> g(mu_);
  int good = 0;
  for (const auto& [id, r] : replicas_) {
    if (r.online && (now - r.last_ack_ms) / 1000 <= static_cast<uint64_t>(max_lag_s)) good++;
  }
  return good;
}

int WalSender::AckedReplicas(uint64_t seq) {
  std::lock_guard<std::mutex> g(mu_);
  int n = 0;
  for (const auto& [id, r] : replicas_) n += r.online && r.acked >= seq;
  return n;
}

void WalSender::RequestAcks() {
  ack_requests_.fetch_add(1);
  storage_->WakeWriteWaiters();
}

bool WalSender::CanContinue(uint64_t seq) {
  rocksdb::DB* db = storage_->db();
  const uint64_t latest = db->GetLatestSequenceNumber();
  if (seq == latest + 1) return true;
  if (seq == 0 || seq > latest) return false;
  const uint64_t generation = storage_->wal_generation();
  // As in Run: the log iterator may miss a file being archived; a few tries.
  for (int attempt = 0; attempt < 20; attempt++) {
    {
      WalReadGate::Reading reading(storage_->wal_gate());
      if (storage_->wal_generation() != generation) return false;
      std::unique_ptr<rocksdb::TransactionLogIterator> it;
      if (db->GetUpdatesSince(seq, &it).ok() && it->Valid()) {
        rocksdb::BatchResult b = it->GetBatch();
        if (b.sequence == seq) return true;
        if (b.sequence < seq) return false;  // seq is inside a batch: no boundary of this history
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void WalSender::Run(int fd, std::atomic<bool>* cancel, const Request& req, uint64_t id) {
  SetBlockingWithSendTimeout(fd, req.timeout_s);
  {
    std::lock_guard<std::mutex> g(mu_);
    replicas_[id] = ReplicaInfo{req.ip, req.port, false, req.seq > 0 ? req.seq - 1 : 0, MonotonicMs()};
  }
  struct Unlist {
    WalSender* self;
    uint64_t id;
    ~Unlist() {
      std::lock_guard<std::mutex> g(self->mu_);
      self->replicas_.erase(id);
    }
  } unlist{this, id};
  const std::string peer = req.ip + ":" + std::to_string(req.port);
  rocksdb::DB* db = storage_->db();
  // The history this stream follows: a gap in the WAL (data written around it) ends it.
  const uint64_t generation = storage_->wal_generation();
  const std::string wal_id = storage_->wal_id();
  auto send = [&](const std::string& bytes) {
    if (cancel->load()) return Status::Aborted("stopping");
    if (storage_->wal_generation() != generation) {
      return HistoryChanged();
    }
    Status s = SendAll(fd, bytes.data(), bytes.size());
    if (s.ok()) stats_->net_repl_output_bytes.fetch_add(bytes.size(), std::memory_order_relaxed);
    return s;
  };

  Status s;
  uint64_t next = req.seq;
  if (req.wal_id == wal_id && CanContinue(req.seq)) {
    LOG(INFO) << "kvrocks replica " << peer << " continues at sequence " << req.seq;
    stats_->sync_partial_ok.fetch_add(1);
    s = send("+CONTINUE " + wal_id + "\r\n");
  } else {
    if (req.wal_id != "?") stats_->sync_partial_err.fetch_add(1);
    const rocksdb::Snapshot* snap = db->GetSnapshot();
    std::unique_ptr<const rocksdb::Snapshot, std::function<void(const rocksdb::Snapshot*)>> release(
        snap, [db](const rocksdb::Snapshot* p) { db->ReleaseSnapshot(p); });
    LOG(INFO) << "Full sync of kvrocks replica " << peer << " from the snapshot at sequence "
              << snap->GetSequenceNumber();
    stats_->sync_full.fetch_add(1);
    s = send("+FULLSYNC " + wal_id + " " + std::to_string(snap->GetSequenceNumber()) + "\r\n");
    rocksdb::ReadOptions ro;
    ro.snapshot = snap;
    ro.fill_cache = false;
    std::string out;
    uint64_t records = 0;
    for (int c = 0; s.ok() && c < static_cast<int>(ColumnFamily::kCount); c++) {
      const auto family = static_cast<ColumnFamily>(c);
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, storage_->cf(family)));
      size_t start = 0;
      for (it->SeekToFirst(); s.ok() && it->Valid(); it->Next()) {
        if (family == ColumnFamily::kState && Storage::IsLocalStateKey(it->key())) continue;
        if (out.empty()) {
          native::BeginFrame(&out, native::kChunk);
          out.push_back(static_cast<char>(c));
        }
        native::AppendRecord(&out, it->key().ToStringView(), it->value().ToStringView());
        records++;
        if (out.size() >= native::kChunkBytes) {
          native::EndFrame(&out, start);
          s = send(out);
          out.clear();
        }
      }
      if (s.ok() && !it->status().ok()) s = Status::IOError(it->status().ToString());
      if (s.ok() && !out.empty()) {
        native::EndFrame(&out, start);
        s = send(out);
        out.clear();
      }
    }
    if (s.ok()) {
      native::BeginFrame(&out, native::kSnapshotEnd);
      native::EndFrame(&out, 0);
      s = send(out);
    }
    if (s.ok()) LOG(INFO) << "Snapshot sent to kvrocks replica " << peer << ": " << records << " records";
    next = snap->GetSequenceNumber() + 1;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    replicas_[id].online = true;
    replicas_[id].acked = next - 1;
    replicas_[id].last_ack_ms = MonotonicMs();
  }
  if (ack_listener_) ack_listener_();

  AckReader acks(fd);
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  uint64_t last_send_ms = MonotonicMs(), last_ack_ms = MonotonicMs();
  uint64_t acks_asked = ack_requests_.load();
  // While a 'G' is out: the sequence number its answer will cover.
  bool ack_out = false;
  uint64_t ack_awaited = 0;
  // Times in a row the log seemed to skip a batch (see below).
  constexpr int kGapRetries = 100;
  int gap_retries = 0;
  std::string out;
  while (s.ok()) {
    uint64_t acked = 0;
    bool got = false;
    if (!(s = acks.Poll(&acked, &got)).ok()) break;
    const uint64_t now = MonotonicMs();
    if (got) {
      last_ack_ms = now;
      if (acked >= ack_awaited) ack_out = false;
      {
        std::lock_guard<std::mutex> g(mu_);
        replicas_[id].acked = acked;
        replicas_[id].last_ack_ms = now;
      }
      if (ack_listener_) ack_listener_();
    } else if (now - last_ack_ms > static_cast<uint64_t>(req.timeout_s) * 1000) {
      s = Status::TimedOut("no acknowledgement from the replica for " + std::to_string(req.timeout_s) + " s");
      break;
    }
    // The gate stops writes: closed only when there is something to read.
    std::optional<WalReadGate::Reading> reading;
    if (db->GetLatestSequenceNumber() >= next) reading.emplace(storage_->wal_gate());
    if (storage_->wal_generation() != generation) {
      s = HistoryChanged();
      break;
    }
    if (reading && it && !it->Valid() && it->status().ok()) {
      // The iterator stopped at the end of what was written then: it reads on in
      // its files (a new one re-seeks from the start of the file holding next,
      // which costs the file's size).
      it->Next();
      if (!it->Valid()) it.reset();
    }
    if (reading && !it) {
      rocksdb::Status rs = db->GetUpdatesSince(next, &it);
      if (!rs.ok()) {
        s = Status::IOError("the write-ahead log no longer holds sequence " + std::to_string(next) + ": " +
                            rs.ToString());
        break;
      }
    }
    bool gap_seen = false;
    while (reading && it && it->Valid() && out.size() < native::kChunkBytes) {
      rocksdb::BatchResult b = it->GetBatch();
      if (b.sequence + b.writeBatchPtr->Count() <= next) {  // sent already (a reseek from before next)
        it->Next();
        continue;
      }
      if (b.sequence != next) {
        // RocksDB's log iterator can pass over the newest batches of a file it reads
        // while a flush switches to the next file, or miss a file being archived:
        // read again from next a little later, and give up only if the gap stays.
        if (b.sequence < next || ++gap_retries > kGapRetries) {
          s = Status::Corruption("the write-ahead log skips from " + std::to_string(next) + " to " +
                                 std::to_string(b.sequence));
        }
        it.reset();
        gap_seen = true;
        break;
      }
      gap_retries = 0;
      const size_t start = out.size();
      native::BeginFrame(&out, native::kBatch);
      PutBE64(&out, b.sequence);
      out.append(b.writeBatchPtr->Data());
      native::EndFrame(&out, start);
      next = b.sequence + b.writeBatchPtr->Count();
      it->Next();
    }
    reading.reset();
    if (!s.ok()) break;
    if (it && !it->Valid() && !it->status().ok()) it.reset();  // a new iterator once more is written
    if (gap_seen && out.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (const uint64_t asked = ack_requests_.load(); asked != acks_asked) {
      acks_asked = asked;
      const size_t start = out.size();
      native::BeginFrame(&out, native::kGetAck);
      native::EndFrame(&out, start);
      ack_out = true;
      ack_awaited = next - 1;
    }
    if (!out.empty()) {
      s = send(out);
      out.clear();
      last_send_ms = now;
      continue;
    }
    if (now - last_send_ms >= 1000) {
      native::AppendU64Frame(&out, native::kHeartbeat, next - 1);
      s = send(out);
      out.clear();
      last_send_ms = now;
    }
    if (!s.ok()) break;
    if (ack_out) {
      // The answer to a 'G' is awaited: watch the socket closely, writes a little less.
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, 2);
    } else {
      storage_->WaitForWrites(next - 1, 100);
    }
  }
  if (!s.IsAborted() || !cancel->load()) {
    LOG(WARNING) << "Stream to kvrocks replica " << peer << " ended: " << s.message();
  }
}

}  // namespace kvrocks
