#include "replication/native_follower.h"

#include <glog/logging.h>

#include <chrono>
#include <future>
#include <optional>
#include <set>
#include <vector>

#include "common/encoding.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "replication/master_link.h"
#include "replication/native_frames.h"
#include "scripting/functions.h"
#include "server/server.h"
#include "storage/context.h"
#include "storage/key_encoding.h"
#include "storage/lock_manager.h"
#include "storage/replicated_batch.h"

namespace kvrocks {

namespace {

// The position record in the state column family: wal-id(40) seq(8, BE).
const char kStateKey[] = "native-replication";
constexpr size_t kWalIdSize = 40;

std::string EncodePosition(const std::string& wal_id, uint64_t seq) {
  std::string v = wal_id;
  PutBE64(&v, seq);
  return v;
}

// Commands answer -LOADING while it lives.
class Loading {
 public:
  explicit Loading(Server* server) : server_(server) { server_->set_loading(true); }
  ~Loading() { server_->set_loading(false); }
  Loading(const Loading&) = delete;
  Loading& operator=(const Loading&) = delete;

 private:
  Server* server_;
};

}  // namespace

Status NativeFollower::LoadState() {
  Storage* st = server_->storage();
  std::string v;
  rocksdb::Status rs = st->db()->Get(rocksdb::ReadOptions(), st->cf(ColumnFamily::kState), kStateKey, &v);
  if (rs.IsNotFound()) return Status::OK();
  if (!rs.ok()) return Status::IOError(rs.ToString());
  if (v.size() != kWalIdSize + 8) return Status::Corruption("bad kvrocks replication state");
  std::lock_guard<std::mutex> g(mu_);
  wal_id_ = v.substr(0, kWalIdSize);
  seq_ = DecodeBE64(v.data() + kWalIdSize);
  return Status::OK();
}

Status NativeFollower::ForgetState() {
  Storage* st = server_->storage();
  rocksdb::WriteBatch batch;
  batch.Delete(st->cf(ColumnFamily::kState), kStateKey);
  Status s = st->Write(&batch);
  if (s.ok()) {
    std::lock_guard<std::mutex> g(mu_);
    wal_id_ = "?";
    seq_ = 0;
  }
  return s;
}

std::string NativeFollower::wal_id() {
  std::lock_guard<std::mutex> g(mu_);
  return wal_id_;
}

Status NativeFollower::Follow(MasterLink* link, const std::atomic<bool>* stop, std::function<void(Phase)> on_phase) {
  on_phase_ = std::move(on_phase);
  bool full = false;
  Status s = Handshake(link, &full);
  if (s.ok() && full) s = LoadSnapshot(link, stop);
  if (!s.ok()) return s;
  on_phase_(Phase::kStream);
  return Stream(link, stop);
}

Status NativeFollower::Handshake(MasterLink* link, bool* full) {
  const int timeout = server_->config()->repl_timeout * 1000;
  const std::string asked = wal_id();
  Status s = link->SendCommand({"KPSYNC", asked, std::to_string(seq_.load() + 1)});
  std::string line;
  do {
    if (s.ok()) s = link->ReadLine(&line, timeout);
  } while (s.ok() && line.empty());
  if (!s.ok()) return s;
  if (line.rfind("+CONTINUE ", 0) == 0 && line.substr(10) == asked) {
    LOG(INFO) << "kvrocks master continues at sequence " << seq_.load() + 1;
    partial_syncs_++;
    *full = false;
    return Status::OK();
  }
  char id[kWalIdSize + 1] = {0};
  unsigned long long at = 0;
  if (line.rfind("+FULLSYNC ", 0) == 0 && sscanf(line.c_str(), "+FULLSYNC %40s %llu", id, &at) == 2 &&
      std::strlen(id) == kWalIdSize) {
    // Following itself would empty the data set before copying it from itself.
    if (id == server_->storage()->wal_id()) return Status::InvalidArgument("the master is this server itself");
    LOG(INFO) << "Full sync from the kvrocks master (history " << id << ", sequence " << at << ")";
    // The position the snapshot stands for, taken once it is loaded.
    pending_wal_id_ = id;
    pending_seq_ = at;
    *full = true;
    return Status::OK();
  }
  return Status::IOError("the master refused KPSYNC (is it kvrocks?): " + line);
}

Status NativeFollower::Wipe() {
  Storage* st = server_->storage();
  MultiLockGuard all(st->locks());
  for (int p = 0; p < Storage::kMaxDatabases; p++) {
    Status s = st->FlushDb(static_cast<uint8_t>(p));
    if (!s.ok()) return s;
  }
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> it(st->db()->NewIterator(rocksdb::ReadOptions(), st->cf(ColumnFamily::kState)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!Storage::IsLocalStateKey(it->key())) batch.Delete(st->cf(ColumnFamily::kState), it->key());
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  // A load cut short leaves no position: the next link asks for a full sync again.
  batch.Delete(st->cf(ColumnFamily::kState), kStateKey);
  Status s = st->Write(&batch);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> g(mu_);
    wal_id_ = "?";
    seq_ = 0;
  }
  server_->ForgetOwnExpiries();
  return st->ReloadState();
}

Status NativeFollower::LoadSnapshot(MasterLink* link, const std::atomic<bool>* stop) {
  on_phase_(Phase::kSync);
  Storage* st = server_->storage();
  const uint64_t timeout_ms = static_cast<uint64_t>(server_->config()->repl_timeout) * 1000;
  Loading loading(server_);
  sync_read_bytes_ = 0;
  // Watched keys of the data set that goes (Redis' emptyData touches them all).
  std::vector<std::pair<uint8_t, std::string>> watched;
  for (int p = 0; p < Storage::kMaxDatabases; p++) {
    for (auto& k : server_->WatchedKeys(static_cast<uint8_t>(p))) watched.emplace_back(p, std::move(k));
  }
  Status s = Wipe();
  if (!s.ok()) return s;
  uint64_t records = 0, last_io = MonotonicMs();
  std::string payload;
  while (true) {
    if (stop->load()) return Status::Aborted("stopping");
    char type = 0;
    bool have = false;
    if (!(s = ReadFrame(link, 100, &type, &payload, &have)).ok()) return s;
    if (!have) {
      if (MonotonicMs() - last_io > timeout_ms) return Status::TimedOut("timeout: the master's snapshot stalled");
      continue;
    }
    last_io = MonotonicMs();
    sync_read_bytes_ += static_cast<int64_t>(payload.size() + native::kHeaderSize);
    if (type == native::kSnapshotEnd) break;
    if (type != native::kChunk || payload.empty() ||
        static_cast<uint8_t>(payload[0]) >= static_cast<uint8_t>(ColumnFamily::kCount)) {
      return Status::Corruption("a bad frame in the master's snapshot");
    }
    std::vector<std::pair<rocksdb::Slice, rocksdb::Slice>> kvs;
    std::string_view body(payload), key, value;
    size_t pos = 1;
    while (native::NextRecord(body, &pos, &key, &value)) {
      kvs.emplace_back(rocksdb::Slice(key.data(), key.size()), rocksdb::Slice(value.data(), value.size()));
    }
    if (pos != body.size()) return Status::Corruption("a short record in the master's snapshot");
    records += kvs.size();
    if (!(s = st->IngestSorted(static_cast<ColumnFamily>(payload[0]), kvs)).ok()) return s;
  }
  // The data and the position it stands for, visible together.
  MultiLockGuard all(st->locks());
  rocksdb::WriteBatch batch;
  batch.Put(st->cf(ColumnFamily::kState), kStateKey, EncodePosition(pending_wal_id_, pending_seq_));
  if (!(s = st->Write(&batch)).ok()) return s;
  if (!(s = st->ReloadState()).ok()) return s;
  ReloadStateModules(true, true);
  {
    std::lock_guard<std::mutex> g(mu_);
    wal_id_ = pending_wal_id_;
    seq_ = pending_seq_;
  }
  for (const auto& [db, key] : watched) {
    server_->TouchWatchedInDbChange(db, key, Server::WatchedState::kLive, Server::WatchedState::kAbsent);
  }
  server_->tracking().InvalidateAll();
  full_syncs_++;
  LOG(INFO) << "Loaded the kvrocks master's snapshot: " << records << " records, at sequence " << pending_seq_;
  return Status::OK();
}

void NativeFollower::ReloadStateModules(bool functions, bool moved) {
  Storage* st = server_->storage();
  if (functions) {
    std::string data;
    rocksdb::Status rs = st->db()->Get(rocksdb::ReadOptions(), st->cf(ColumnFamily::kState),
                                       scripting::FunctionRegistry::kStateKey, &data);
    scripting::FunctionRegistry::Instance().Reset(
        rs.ok() ? scripting::FunctionRegistry::BuildAll(scripting::FunctionRegistry::Deserialize(data))
                : std::vector<scripting::Library>{});
  }
  if (moved) st->NoteMovedSubkeys();
}

Status NativeFollower::ReadFrame(MasterLink* link, int timeout_ms, char* type, std::string* payload, bool* have) {
  *have = false;
  std::string& buf = link->buffer();
  size_t& pos = link->buffer_pos();
  for (int round = 0; round < 2; round++) {
    if (buf.size() - pos >= native::kHeaderSize) {
      const uint32_t len = DecodeBE32(buf.data() + pos + 1);
      if (len > native::kMaxFrame) return Status::Corruption("a frame of " + std::to_string(len) + " bytes");
      if (buf.size() - pos >= native::kHeaderSize + len) {
        *type = buf[pos];
        payload->assign(buf, pos + native::kHeaderSize, len);
        pos += native::kHeaderSize + len;
        link->Compact();
        *have = true;
        return Status::OK();
      }
    }
    if (round == 1) break;
    size_t got = 0;
    Status s = link->Fill(timeout_ms, &got);
    if (!s.ok()) return s;
    if (got == 0) break;
  }
  return Status::OK();
}

Status NativeFollower::SendAck(MasterLink* link) {
  std::string out;
  native::AppendU64Frame(&out, native::kAck, seq_.load());
  return link->Send(out, server_->config()->repl_timeout * 1000);
}

Status NativeFollower::Stream(MasterLink* link, const std::atomic<bool>* stop) {
  const uint64_t timeout_ms = static_cast<uint64_t>(server_->config()->repl_timeout) * 1000;
  uint64_t last_ack = 0, last_io = MonotonicMs();
  std::string payload;
  Status s;
  while (!stop->load()) {
    const uint64_t now = MonotonicMs();
    if (now - last_ack >= 1000) {
      if (!(s = SendAck(link)).ok()) return s;
      last_ack = now;
    }
    char type = 0;
    bool have = false;
    if (!(s = ReadFrame(link, 100, &type, &payload, &have)).ok()) return s;
    if (!have) {
      if (MonotonicMs() - last_io > timeout_ms) {
        return Status::TimedOut("timeout: no data from master for " + std::to_string(timeout_ms / 1000) + " s");
      }
      continue;
    }
    last_io = MonotonicMs();
    if (type == native::kBatch && payload.size() >= 8) {
      if (!(s = Apply(DecodeBE64(payload.data()), payload.substr(8))).ok()) return s;
    } else if (type == native::kGetAck) {
      if (!(s = SendAck(link)).ok()) return s;
      last_ack = MonotonicMs();
    } else if (type != native::kHeartbeat) {
      return Status::Corruption("a bad frame in the master's stream");
    }
  }
  return Status::Aborted("stopping");
}

Status NativeFollower::Apply(uint64_t seq, const std::string& data) {
  if (seq != seq_.load() + 1) {
    return Status::Corruption("the master's stream skips from sequence " + std::to_string(seq_.load() + 1) + " to " +
                              std::to_string(seq));
  }
  Storage* st = server_->storage();
  ReplicatedBatch rb;
  Status s = TranslateReplicatedBatch(st, data, &rb);
  if (!s.ok()) return s;
  const uint64_t last = seq + rb.master_count - 1;
  rb.batch.Put(st->cf(ColumnFamily::kState), kStateKey, EncodePosition(wal_id(), last));
  std::future<void> served;
  {
    MultiLockGuard all(st->locks());
    if (!(s = st->Write(&rb.batch)).ok()) return s;
    seq_ = last;
    served = AfterWrite(rb);
  }
  // As a Redis replica serves its blocked clients after each command of its master.
  while (served.valid() && served.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (server_->stopping()) break;
  }
  return Status::OK();
}

std::future<void> NativeFollower::AfterWrite(const ReplicatedBatch& rb) {
  Storage* st = server_->storage();
  for (const auto& [db, d] : rb.counts) st->ApplyCountDeltas(db, d);
  if (!rb.state_keys.empty()) {
    Status s = st->ReloadState();
    if (!s.ok()) LOG(WARNING) << "Reloading the state after a replicated batch: " << s.message();
    bool functions = false;
    for (const auto& k : rb.state_keys) functions |= k == scripting::FunctionRegistry::kStateKey;
    ReloadStateModules(functions, rb.moved_noted);
  }
  st->ObserveVersion(rb.max_version);
  Context ctx(st);
  std::set<std::pair<uint8_t, std::string>> seen;
  auto touch = [&](uint8_t db, std::string key) {
    if (!seen.emplace(db, key).second) return;
    // Only XREAD blocks on a read-only replica, and a stream's news is for all its readers.
    ctx.WakeAllWaiters(db, key);
    ctx.Touch(db, key, Context::TouchKind::kModified, true);
  };
  for (const auto& [db, key] : rb.keys) touch(db, key);
  for (const auto& [element, version] : rb.element_keys) {
    if (seen.count(element) != 0) continue;
    // Elements written under a name the key no longer has (RENAME, MOVE): the moved record names it.
    std::string where;
    rocksdb::Status rs =
        st->db()->Get(rocksdb::ReadOptions(), st->cf(ColumnFamily::kState), EncodeMovedKey(version), &where);
    if (rs.ok() && !where.empty()) {
      touch(static_cast<uint8_t>(where[0]), where.substr(1));
    } else {
      touch(element.first, element.second);
    }
  }
  for (uint8_t db : rb.flushed_dbs) {
    for (auto& key : server_->WatchedKeys(db)) {
      server_->TouchWatchedInDbChange(db, key, Server::WatchedState::kLive, Server::WatchedState::kAbsent);
    }
  }
  if (!rb.flushed_dbs.empty()) server_->tracking().InvalidateAll();
  if (ctx.touched().empty()) return {};
  std::future<void> served = server_->TouchKeysServed(ctx);
  server_->KeysChanged(ctx.touched(), 0);
  return served;
}

}  // namespace kvrocks
