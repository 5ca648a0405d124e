#include "replication/replica.h"

#include <glog/logging.h>
#include <pthread.h>

#include <cstring>
#include <ctime>
#include <random>

#include "common/encoding.h"
#include "common/socket_address.h"
#include "common/string_util.h"
#include "common/time_util.h"
#include "replication/apply_priority.h"
#include "replication/master_link.h"
#include "replication/native_follower.h"
#include "replication/native_frames.h"
#include "replication/rdb_loader.h"
#include "replication/stream_applier.h"
#include "scripting/functions.h"
#include "server/connection.h"
#include "server/oom_score.h"
#include "server/server.h"
#include "server/supervision.h"
#include "server/worker.h"
#include "storage/lock_manager.h"

namespace kvrocks {

namespace {

const char kStateKey[] = "replication";
constexpr uint64_t kBackoffMinMs = 200, kBackoffMaxMs = 5000;

// Publishes a pointer under a mutex for as long as it lives.
class Watched {
 public:
  Watched(std::mutex* mu, ApplyPriority** slot, ApplyPriority* p) : mu_(mu), slot_(slot) {
    std::lock_guard<std::mutex> g(*mu_);
    *slot_ = p;
  }
  ~Watched() {
    std::lock_guard<std::mutex> g(*mu_);
    *slot_ = nullptr;
  }
  Watched(const Watched&) = delete;
  Watched& operator=(const Watched&) = delete;

 private:
  std::mutex* mu_;
  ApplyPriority** slot_;
};

std::string RandomReplId() {
  static const char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::mt19937_64 rng(rd());
  std::string id(40, '0');
  for (auto& c : id) c = kHex[rng() & 15];
  return id;
}

// Lists the master client among the server's clients for as long as it lives.
class ListedMaster {
 public:
  ListedMaster(Server* server, Connection* master) : server_(server), master_(master) {
    server_->ListMasterClient(master_);
  }
  ~ListedMaster() { server_->UnlistMasterClient(master_); }
  ListedMaster(const ListedMaster&) = delete;
  ListedMaster& operator=(const ListedMaster&) = delete;

 private:
  Server* server_;
  Connection* master_;
};

// The RDB payload of a full sync as a byte source: `$<len>` bounds it; with
// `$EOF:<mark>` the RDB parser itself finds the end and the mark follows.
class PayloadSource : public rdb::Source {
 public:
  PayloadSource(MasterLink* link, int64_t limit, int timeout_ms, std::atomic<int64_t>* read)
      : link_(link), limit_(limit), timeout_ms_(timeout_ms), read_(read) {}
  Status Read(char* buf, size_t n) override {
    if (limit_ >= 0 && static_cast<int64_t>(n) > limit_ - consumed_) {
      return Status::Corruption("RDB: payload shorter than the RDB it should hold");
    }
    Status s = link_->ReadExact(buf, n, timeout_ms_);
    if (s.ok()) {
      consumed_ += static_cast<int64_t>(n);
      read_->store(consumed_);
    }
    return s;
  }
  int64_t consumed() const { return consumed_; }

 private:
  MasterLink* link_;
  int64_t limit_;
  int timeout_ms_;
  std::atomic<int64_t>* read_;
  int64_t consumed_ = 0;
};

}  // namespace

Replica::Replica(Server* server)
    : server_(server), native_(std::make_unique<NativeFollower>(server)), applier_(server, kStateKey) {}

Replica::~Replica() { Stop(); }

uint64_t Replica::offset() const { return follows_kvrocks() ? native_->seq() : applier_.offset(); }

Status Replica::LoadState() {
  Status ns = native_->LoadState();
  if (!ns.ok()) return ns;
  std::string v;
  rocksdb::ReadOptions ro;
  Storage* st = server_->storage();
  auto rs = st->db()->Get(ro, st->cf(ColumnFamily::kState), kStateKey, &v);
  std::lock_guard<std::mutex> g(mu_);
  if (rs.IsNotFound()) {
    replid_ = RandomReplId();
    applier_.Reset(replid_, 0, 0, 0);
    return Status::OK();
  }
  if (!rs.ok()) return Status::IOError(rs.ToString());
  StreamApplier::Position at;
  if (!StreamApplier::DecodeState(v, &replid_, &at)) return Status::Corruption("bad replication state");
  // A database we no longer have (databases lowered since): Redis' selectDb fails and leaves 0.
  if (at.db < 0 || at.db >= server_->config()->databases) at.db = 0;
  applier_.Reset(replid_, at.offset, at.db, at.applied);
  return Status::OK();
}

std::string Replica::replid() {
  std::lock_guard<std::mutex> g(mu_);
  return replid_;
}

void Replica::Follow(const std::string& host, int port, bool kvrocks) {
  {
    std::lock_guard<std::mutex> g(mu_);
    host_ = host;
    port_ = port;
    last_error_.clear();
  }
  kvrocks_ = kvrocks;
  following_ = true;
  DropMasterClient();
  ApplyOomScoreAdj(*server_->config(), true);
  // As a Redis replica: expired keys stay whole until the master deletes them.
  server_->storage()->KeepExpiredSubkeys(true);
  state_ = kConnect;
  Request(true, host, port, kvrocks);
}

void Replica::DropMasterClient() {
  // The session ends soon (the supervisor stops it); its client goes at once, as
  // Redis frees its master client within REPLICAOF.
  stop_ = true;
  server_->UnlistMasterClient(nullptr);
}

void Replica::Unfollow() {
  following_ = false;
  DropMasterClient();
  ApplyOomScoreAdj(*server_->config(), false);
  server_->storage()->KeepExpiredSubkeys(false);
  // A kvrocks master's expire index arrived around this server's bookkeeping:
  // the active-expire cycle scans it from its start again.
  for (int db = 0; db < Storage::kMaxDatabases; db++) server_->storage()->LowerExpireFloor(static_cast<uint8_t>(db), 0);
  state_ = kNone;
  {
    // A promoted replica starts its own history: a later PSYNC with the old id
    // must not resume on top of writes it accepted as a master.
    std::lock_guard<std::mutex> g(mu_);
    replid_ = RandomReplId();
    host_.clear();
    port_ = 0;
  }
  Request(false, "", 0, false);
}

void Replica::Request(bool follow, const std::string& host, int port, bool kvrocks) {
  std::lock_guard<std::mutex> g(req_mu_);
  if (!supervisor_.joinable()) {
    supervisor_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "replica-ctl");
      Supervise();
    });
  }
  requests_.push_back(Pending{follow, host, port, kvrocks});
  req_cv_.notify_all();
}

void Replica::NewMasterClient() {
  master_client_ = std::make_unique<Connection>(server_->NextWorker(), -1, server_->NextClientId(), "", "");
  master_client_->is_master = true;
  {
    std::lock_guard<std::mutex> g(master_client_->info_mu);
    master_client_->username = "(superuser)";  // Redis' name for a client without a user
  }
  applier_.set_master_client(master_client_.get());
}

void Replica::Supervise() {
  bool renew_master_client = true;
  std::unique_lock<std::mutex> g(req_mu_);
  while (true) {
    req_cv_.wait(g, [this] { return quit_ || !requests_.empty(); });
    if (quit_) break;
    Pending last = requests_.back();  // only the latest wish matters
    // ... but a promotion in between (REPLICAOF NO ONE, writes, KSLAVEOF) still
    // ends the kvrocks position: the writes it accepted are its own history.
    bool promoted = false;
    for (const Pending& p : requests_) promoted = promoted || !p.follow;
    requests_.clear();
    g.unlock();
    StopSession();
    replid_shifted_ = false;
    if (promoted) {
      // A promoted replica's writes are its own history: a later KSLAVEOF starts
      // with a full sync, and a later PSYNC with the id Unfollow gave it. (A Redis
      // master's data set is forgotten in the same way when its PSYNC reply comes.)
      Status fs = native_->ForgetState();
      if (!fs.ok()) LOG(WARNING) << "Forgetting the kvrocks replication position: " << fs.message();
      fs = PersistReplId(applier_.offset());
      if (!fs.ok()) LOG(WARNING) << "Persisting the new replication id: " << fs.message();
    }
    // REPLICAOF with a kvrocks master's position kept: presumed kvrocks (read-only
    // at once) until the master says what it is.
    native_link_ = last.follow && !last.kvrocks && native_->wal_id() != "?";
    if (!last.follow) {
      renew_master_client = true;
    } else {
      // As Redis' cached master made of itself when a master turns replica: the
      // first link gets a new client, which a resumed link (PSYNC) keeps.
      if (renew_master_client) NewMasterClient();
      renew_master_client = false;
      stop_ = false;
      thread_ = std::thread([this, last] {
        pthread_setname_np(pthread_self(), "replica");
        Run(last.host, last.port, last.kvrocks);
      });
    }
    g.lock();
  }
  g.unlock();
  StopSession();
}

void Replica::StopSession() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void Replica::Stop() {
  {
    std::lock_guard<std::mutex> g(req_mu_);
    quit_ = true;
    req_cv_.notify_all();
  }
  if (supervisor_.joinable()) supervisor_.join();
  StopSession();
}

void Replica::SetError(const std::string& e) {
  std::lock_guard<std::mutex> g(mu_);
  last_error_ = e;
}

Replica::Info Replica::GetInfo() {
  Info info;
  {
    std::lock_guard<std::mutex> g(mu_);
    info.host = host_;
    info.port = port_;
    info.replid = replid_;
    info.last_error = last_error_;
  }
  static const char* kStates[] = {"none", "connect", "connecting", "sync", "connected"};
  int st = state_.load();
  info.state = kStates[st];
  info.link_up = st == kConnected;
  info.sync_in_progress = st == kSync;
  uint64_t last = last_io_ms_.load();
  info.last_io_seconds_ago = last == 0 ? -1 : static_cast<int64_t>((MonotonicMs() - last) / 1000);
  info.offset = applier_.offset();
  info.read_offset = applier_.read_offset();
  info.full_syncs = full_syncs_.load();
  info.partial_syncs = partial_syncs_.load();
  info.apply_errors = applier_.apply_errors();
  info.sync_total_bytes = sync_total_bytes_.load();
  info.sync_read_bytes = sync_read_bytes_.load();
  info.loading_start_s = loading_start_s_.load();
  info.loading_used_mem = loading_used_mem_.load();
  if (follows_kvrocks()) {
    info.kvrocks = true;
    info.offset = info.read_offset = native_->seq();
    info.master_wal_id = native_->wal_id();
    info.full_syncs = native_->full_syncs();
    info.partial_syncs = native_->partial_syncs();
    info.sync_total_bytes = -1;
    info.sync_read_bytes = native_->sync_read_bytes();
  }
  return info;
}

void Replica::Run(std::string host, int port, bool kvrocks) {
  uint64_t backoff = kBackoffMinMs;
  while (!stop_.load()) {
    stream_began_ms_ = 0;
    Status s = Session(host, port, kvrocks);
    if (stop_.load()) break;
    state_ = kConnect;
    // A link that streamed is retried at once, as Redis reconnects when it loses
    // its master (killed, or cut after a while); one that broke before it streamed,
    // or as soon as it did, waits longer each time, so that a link that cannot
    // stay up is no busy loop.
    uint64_t wait = backoff;
    if (stream_began_ms_ != 0 && (master_client_->kill_requested.load() || MonotonicMs() - stream_began_ms_ >= 1000)) {
      wait = 0;
      backoff = kBackoffMinMs;
    } else {
      backoff = std::min(backoff * 2, kBackoffMaxMs);
    }
    LOG(WARNING) << "Replication from " << host << ":" << port << " interrupted: " << s.message() << "; retrying in "
                 << wait << " ms";
    SetError(s.message());
    uint64_t until = MonotonicMs() + wait;
    while (!stop_.load() && MonotonicMs() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status Replica::Session(const std::string& host, int port, bool kvrocks) {
  const Config* cfg = server_->config();
  MasterLink link(&stop_, &server_->stats().net_repl_input_bytes);
  state_ = kConnecting;
  Status s = link.Connect(host, port, cfg->repl_timeout * 1000, cfg->Value(&Config::bind_source_addr));
  if (!s.ok()) return s;
  last_io_ms_ = MonotonicMs();
  s = Greet(&link);
  if (!s.ok()) return s;
  if (kvrocks) return FollowNative(&link);
  bool kvrocks_master = false;
  s = Handshake(&link, host, port, &kvrocks_master);
  if (!s.ok()) return s;
  if (kvrocks_master) {
    native_link_ = true;
    LOG(INFO) << "The master is kvrocks: following its write-ahead log (KPSYNC)";
    return FollowNative(&link);
  }
  return StreamCommands(&link);
}

Status Replica::FollowNative(MasterLink* link) {
  if (!replid_shifted_) {
    {
      std::lock_guard<std::mutex> g(mu_);
      replid_ = RandomReplId();
    }
    Status s = PersistReplId(0);
    if (!s.ok()) return s;
    replid_shifted_ = true;
  }
  return native_->Follow(link, &stop_, [this](NativeFollower::Phase phase) {
    if (phase == NativeFollower::Phase::kSync) {
      state_ = kSync;
      loading_start_s_ = static_cast<int64_t>(time(nullptr));
      return;
    }
    loading_start_s_ = 0;
    state_ = kConnected;
    SetError("");
    stream_began_ms_ = MonotonicMs();
  });
}

Status Replica::PersistReplId(uint64_t offset) {
  const std::string id = replid();
  Storage* st = server_->storage();
  rocksdb::WriteBatch batch;
  batch.Put(st->cf(ColumnFamily::kState), kStateKey, StreamApplier::EncodeState(id, {offset, 0, 0}));
  Status s = st->Write(&batch);
  if (s.ok()) applier_.Reset(id, offset, 0, 0);
  return s;
}

Status Replica::Greet(MasterLink* link) {
  const Config* cfg = server_->config();
  const int timeout = cfg->repl_timeout * 1000;
  std::string line;
  auto ask = [&](const std::vector<std::string>& cmd) { return link->Ask(cmd, &line, timeout); };
  Status s = ask({"PING"});
  if (!s.ok()) return s;
  // Like Redis, a master that wants AUTH first may answer the PING with NOAUTH.
  if (!line.empty() && line[0] == '-' && line.rfind("-NOAUTH", 0) != 0 && line.rfind("-NOPERM", 0) != 0 &&
      line.rfind("-ERR operation not permitted", 0) != 0) {
    return Status::IOError("error reply to PING from master: " + line);
  }
  // String options through Value(): CONFIG SET may change them on a worker meanwhile.
  const std::string masterauth = cfg->Value(&Config::masterauth), masteruser = cfg->Value(&Config::masteruser);
  if (!masterauth.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!masteruser.empty()) auth.push_back(masteruser);
    auth.push_back(masterauth);
    if (!(s = ask(auth)).ok()) return s;
    if (line != "+OK") return Status::IOError("unable to AUTH to MASTER: " + line);
  }
  int announce_port = cfg->replica_announce_port > 0 ? cfg->replica_announce_port : cfg->port;
  if (!(s = ask({"REPLCONF", "listening-port", std::to_string(announce_port)})).ok()) return s;
  if (line[0] == '-') LOG(WARNING) << "Master does not understand REPLCONF listening-port: " << line;
  const std::string announce_ip = cfg->Value(&Config::replica_announce_ip);
  if (!announce_ip.empty()) {
    if (!(s = ask({"REPLCONF", "ip-address", announce_ip})).ok()) return s;
  }
  return Status::OK();
}

Status Replica::Handshake(MasterLink* link, const std::string& host, int port, bool* kvrocks) {
  const Config* cfg = server_->config();
  const int timeout = cfg->repl_timeout * 1000;
  std::string line;
  Status s = link->Ask({"REPLCONF", "capa", "eof", "capa", "psync2", "capa", "kvrocks"}, &line, timeout);
  if (!s.ok()) return s;

  std::string replid;
  uint64_t offset = applier_.offset();
  {
    std::lock_guard<std::mutex> g(mu_);
    replid = replid_;
  }
  pre_psync_master_ = false;
  // PSYNC with the persisted position: a master that still has it continues from there.
  if (!(s = link->SendCommand({"PSYNC", replid, std::to_string(offset + 1)})).ok()) return s;
  do {
    if (!(s = link->ReadLine(&line, timeout)).ok()) return s;
  } while (line.empty());  // keep-alive newlines
  if (line.rfind(std::string("-") + native::kUseKpsync, 0) == 0) {
    *kvrocks = true;
    return Status::OK();
  }
  if (line.rfind("-NOMASTERLINK", 0) != 0 && line.rfind("-LOADING", 0) != 0) {
    // What comes now is a Redis master's data set.
    native_link_ = false;
    if (!(s = native_->ForgetState()).ok()) return s;
  }
  if (line.rfind("+FULLRESYNC", 0) == 0) {
    char id[41] = {0};
    unsigned long long off = 0;
    if (sscanf(line.c_str(), "+FULLRESYNC %40s %llu", id, &off) != 2) {
      return Status::IOError("bad FULLRESYNC reply from master: " + line);
    }
    LOG(INFO) << "Full resync from " << host << ":" << port << " (replid " << id << ", offset " << off << ")";
    s = ReceivePayload(link, id, off);
    if (s.ok()) {
      full_syncs_++;
      NotifySystemd(
          "STATUS=MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write mode.\n");
    }
    return s;
  }
  if (line.rfind("+CONTINUE", 0) == 0) {
    std::string new_id = line.size() > 10 ? line.substr(10) : "";
    if (new_id.size() == 40) {
      std::lock_guard<std::mutex> g(mu_);
      replid_ = new_id;
    }
    LOG(INFO) << "Partial resync from " << host << ":" << port << " at offset " << offset << " (database "
              << applier_.db() << ", " << applier_.applied() << " commands there applied)";
    partial_syncs_++;
    NotifySystemd(
        "STATUS=MASTER <-> REPLICA sync: Partial Resynchronization accepted. Ready to accept connections in read-write "
        "mode.\n");
    return Status::OK();
  }
  if (line.rfind("-NOMASTERLINK", 0) == 0 || line.rfind("-LOADING", 0) == 0) {
    return Status::IOError("master is not ready (" + line + "), retrying later");
  }
  // A master older than PSYNC (Redis < 2.8), or one in a state it cannot serve
  // PSYNC from: SYNC, without offsets, as Redis does for any other reply.
  if (line[0] == '-') {
    LOG(WARNING) << "Master does not support PSYNC or is in error state (" << line << "), falling back to SYNC";
  } else {
    LOG(WARNING) << "Unexpected reply to PSYNC from master: " << line << "; falling back to SYNC";
  }
  if (!(s = link->SendCommand({"SYNC"})).ok()) return s;
  s = ReceivePayload(link, "?", 0);
  if (s.ok()) {
    full_syncs_++;
    pre_psync_master_ = true;
  }
  return s;
}

Status Replica::ReceivePayload(MasterLink* link, const std::string& replid, uint64_t offset) {
  const Config* cfg = server_->config();
  const int timeout = cfg->repl_timeout * 1000;
  state_ = kSync;
  std::string line;
  Status s;
  do {  // the master sends newlines while it prepares the RDB
    if (!(s = link->ReadLine(&line, timeout)).ok()) return s;
    last_io_ms_ = MonotonicMs();
  } while (line.empty());
  if (line[0] != '$') return Status::IOError("bad bulk payload header from master: " + line);
  std::string eof_mark;
  int64_t len = -1;
  if (line.rfind("$EOF:", 0) == 0 && line.size() == 45) {
    eof_mark = line.substr(5);
  } else if (!ParseInt64(std::string_view(line).substr(1), &len) || len < 0) {
    return Status::IOError("bad bulk payload header from master: " + line);
  }
  sync_total_bytes_ = len;
  sync_read_bytes_ = 0;
  loading_used_mem_ = 0;
  loading_start_s_ = static_cast<int64_t>(time(nullptr));
  struct LoadingEnd {
    std::atomic<int64_t>* start;
    ~LoadingEnd() { start->store(0); }
  } loading_end{&loading_start_s_};
  PayloadSource src(link, len, timeout, &sync_read_bytes_);
  RdbLoader loader(server_->storage(), cfg->databases);
  loader.set_access_clock(&server_->access_clock());
  loader.set_used_mem_sink(&loading_used_mem_);
  loader.set_keep_expired(true);  // the master deletes them (and its clock decides when)
  s = loader.Begin();
  if (s.ok()) s = rdb::Reader(&src).ReadRdb(&loader);
  if (s.ok() && !eof_mark.empty()) {
    char mark[40];
    s = link->ReadExact(mark, 40, timeout);
    if (s.ok() && std::memcmp(mark, eof_mark.data(), 40) != 0) s = Status::Corruption("bad EOF mark after the RDB");
  } else if (s.ok() && len >= 0 && src.consumed() < len) {
    std::string rest(static_cast<size_t>(len - src.consumed()), '\0');
    s = link->ReadExact(rest.data(), rest.size(), timeout);
  }
  if (s.ok()) s = loader.Flush();
  std::vector<scripting::Library> functions;
  if (s.ok()) {
    // The switch to the new data set and the position it corresponds to are one write.
    MultiLockGuard all(server_->storage()->locks());
    // The master's function libraries replace ours, in the same write.
    functions = scripting::FunctionRegistry::BuildAll(loader.functions());
    s = loader.Finish(
        {{kStateKey, StreamApplier::EncodeState(replid, {offset, loader.stream_db(), 0})},
         {scripting::FunctionRegistry::kStateKey, scripting::FunctionRegistry::SerializeLibraries(functions)}});
    if (s.ok()) {
      scripting::FunctionRegistry::Instance().Reset(functions);
      server_->ForgetOwnExpiries();  // the data set they were in is gone (Redis' emptyData)
    }
  }
  if (!s.ok()) {
    loader.Abort();
    return s;
  }
  server_->NoteRdbLoaded(loader.keys_loaded(), loader.expired_skipped());
  NewMasterClient();  // as Redis creates its master client once the RDB is loaded
  LOG(INFO) << "Loaded " << loader.keys_loaded() << " keys from the master's RDB ("
            << loader.expired_skipped() << " already expired, " << loader.modules_skipped()
            << " module values skipped, " << loader.idle_times_set() << " idle times set)";
  {
    std::lock_guard<std::mutex> g(mu_);
    replid_ = replid;
  }
  applier_.Reset(replid, offset, loader.stream_db(), 0);
  return Status::OK();
}

Status Replica::StreamCommands(MasterLink* link) {
  const Config* cfg = server_->config();
  state_ = kConnected;
  SetError("");
  // A MULTI left open by a broken link is sent again. The master client goes back to
  // the database selected at the applied offset: a resumed stream (PSYNC) selects no
  // database it already had selected, and Redis' cached master keeps its db too.
  applier_.Reset(replid(), applier_.offset(), applier_.db(), applier_.applied());
  stream_began_ms_ = MonotonicMs();
  Connection* master = master_client_.get();
  master->SetLink(PeerAddress(link->fd()), LocalAddress(link->fd()), link->fd());
  master->kill_requested = false;
  master->last_interaction_ms = static_cast<int64_t>(NowMs());
  ListedMaster listed(server_, master);
  if (stop_.load()) return Status::Aborted("stopping");  // a REPLICAOF may have unlisted it already
  uint64_t last_ack = 0;
  ApplyPriority priority;
  Watched watched(&priority_mu_, &priority_, &priority);
  while (!stop_.load()) {
    if (master->kill_requested.load()) return Status::IOError("the master client was killed (CLIENT KILL)");
    bool more = false;
    Status s = ApplyBuffered(link, &more);
    if (!s.ok()) return s;
    uint64_t now = MonotonicMs();
    int max_lag_ms = cfg->replica_idle_apply_max_lag_ms;  // 0: no socket check needed
    priority.Update(max_lag_ms > 0 && !more && link->Unread() == 0, now, max_lag_ms);
    if (now - last_ack >= 1000 && !pre_psync_master_) {  // Redis' replicationCron; GETACK is answered
      if (!(s = link->SendCommand({"REPLCONF", "ACK", std::to_string(applier_.offset())})).ok()) return s;
      last_ack = now;
    }
    if (more) continue;
    size_t got;
    if (!(s = link->Fill(100, &got)).ok()) return s;
    if (got > 0) {
      last_io_ms_ = MonotonicMs();
      master->last_interaction_ms = static_cast<int64_t>(NowMs());  // CLIENT LIST idle=
    }
    if (MonotonicMs() - link->last_io_ms() > static_cast<uint64_t>(cfg->repl_timeout) * 1000) {
      return Status::IOError("timeout: no data from master for " + std::to_string(cfg->repl_timeout) + " s");
    }
  }
  return Status::Aborted("stopping");
}

void Replica::WatchApplier() {
  std::lock_guard<std::mutex> g(priority_mu_);
  if (priority_ != nullptr) priority_->RaiseIfLate(MonotonicMs(), server_->config()->replica_idle_apply_max_lag_ms);
}

Status Replica::ApplyBuffered(MasterLink* link, bool* more) {
  *more = false;
  std::string& buf = link->buffer();
  size_t& pos = link->buffer_pos();
  if (pos >= buf.size()) return Status::OK();
  StreamApplier::Batch batch;
  Status s = applier_.Apply(std::string_view(buf).substr(pos), &batch);
  if (!s.ok()) return s;
  *more = batch.more;
  if (batch.consumed == 0) return Status::OK();
  pos += batch.consumed;
  link->Compact();
  last_io_ms_ = MonotonicMs();
  if (batch.ack_requested) return link->SendCommand({"REPLCONF", "ACK", std::to_string(batch.ack_offset)});
  return Status::OK();
}

}  // namespace kvrocks
