#include "server/connection.h"

#include <glog/logging.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "commands/command.h"
#include "common/time_util.h"
#include "server/acl.h"
#include "server/dispatch.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/worker.h"
#include "server/write_batcher.h"
#include "storage/context.h"

namespace kvrocks {

Connection::Connection(Worker* worker, int fd, uint64_t id, std::string peer, std::string local)
    : worker_(worker), fd_(fd), id_(id), peer_(std::move(peer)), local_(std::move(local)) {
  int64_t now = static_cast<int64_t>(NowMs());
  created_ms = now;
  last_interaction_ms = now;
  SetUser(server()->acl().AutoUser());
}

void Connection::SetUser(std::shared_ptr<const AclUser> u) {
  authenticated = u != nullptr;
  acl_generation = server()->acl().generation();
  std::lock_guard<std::mutex> g(info_mu);
  username = u != nullptr ? u->name : "default";
  user = std::move(u);
}

Connection::~Connection() {
  if (!held_.empty() && !server()->stopping()) ResumeHeld(held_);
  if (block.timer != nullptr) event_free(block.timer);
  if (read_ev_ != nullptr) event_free(read_ev_);
  if (write_ev_ != nullptr) event_free(write_ev_);
  ::close(fd_);
}

Server* Connection::server() const { return worker_->server(); }

void Connection::Start() {
  read_ev_ = event_new(worker_->base(), fd_, EV_READ | EV_PERSIST, &Connection::OnEvent, this);
  write_ev_ = event_new(worker_->base(), fd_, EV_WRITE, &Connection::OnEvent, this);
  event_add(read_ev_, nullptr);
}

void Connection::OnEvent(evutil_socket_t, short what, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  if (what & EV_READ) {
    if (self->worker_->HasPosted()) {
      // What other workers posted before these bytes were sent (a message a PUBLISH
      // delivered, an invalidation) goes out before the reply to them, in the order a
      // single-threaded Redis keeps.
      Worker* worker = self->worker_;
      uint64_t id = self->id();
      worker->RunPosted();
      self = worker->Find(id);  // a posted task may have closed it
      if (self == nullptr) return;
    }
    Worker* worker = self->worker_;
    worker->BeginRead();
    self->OnReadable();  // may destroy self
    worker->EndRead();
    return;
  }
  if (what & EV_WRITE) self->OnWritable();
}

void Connection::OnReadable() {
  static constexpr size_t kReadChunk = 16 * 1024;
  server()->stats().total_reads_processed.fetch_add(1, std::memory_order_relaxed);
  ssize_t n;
  int64_t pending = parser_.pending_bulk();
  if (pending > static_cast<int64_t>(kReadChunk)) {
    // A big bulk string: read straight into the query buffer.
    size_t want = static_cast<size_t>(pending) + 2;
    size_t have = in_.size() - in_pos_;
    want = want > have ? std::max(want - have, kReadChunk) : kReadChunk;
    size_t old = in_.size();
    in_.resize(old + want);
    n = ReadStamped(in_.data() + old, want);
    in_.resize(old + static_cast<size_t>(std::max<ssize_t>(n, 0)));
  } else {
    // Small reads go through a stack buffer: no zero-filling of the query buffer.
    char buf[kReadChunk];
    n = ReadStamped(buf, sizeof(buf));
    if (n > 0) in_.append(buf, static_cast<size_t>(n));
  }
  if (n <= 0) {
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    worker_->Close(this);
    return;
  }
  server()->stats().net_input_bytes += static_cast<uint64_t>(n);
  last_interaction_ms = static_cast<int64_t>(NowMs());
  in_peak_ = std::max(in_peak_, in_.size());
  ProcessInput();
  read_arrival_ns_ = 0;  // what is left waits in the buffer
  if (closing_) {
    worker_->Close(this);
    return;
  }
  if (!awaiting_commit) Flush();
}

ssize_t Connection::ReadStamped(char* buf, size_t len) {
  iovec iov{buf, len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n = ::recvmsg(fd_, &msg, 0);
  read_arrival_ns_ = 0;
  if (n <= 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      memcpy(&ts, CMSG_DATA(c), sizeof(ts));
      read_arrival_ns_ = static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
    }
  }
  return n;
}

uint64_t Connection::CommandArrivalNs() const { return read_arrival_ns_ != 0 ? read_arrival_ns_ : RealtimeNs(); }

void Connection::RequestBlock(std::vector<std::pair<uint8_t, std::string>> keys, uint64_t timeout_ms,
                              std::vector<std::string> retry_args, std::string timeout_reply, bool claimable) {
  block.requested = true;
  if (block.active) return;  // a retry that found nothing again: keep queue places and deadline
  block.keys = std::move(keys);
  block.timeout_ms = timeout_ms;
  block.args = std::move(retry_args);
  block.timeout_reply = std::move(timeout_reply);
  block.claimable = claimable;
}

void Connection::UnblockWith(bool error) {
  if (!block.active) return;
  std::string reply = block.timeout_reply;
  if (error) {
    reply = "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n";
  } else if (block.ack_wait != 0) {
    reply::Integer(&reply, server()->ReplicasAcked(block.ack_seq));
  } else if (reply.empty()) {
    reply::NullArray(&reply, resp);
  }
  EndBlockWith(reply);
}

void Connection::EndServerWait(const std::string& reply) {
  if (block.active && !block.claimable) EndBlockWith(reply);
}

void Connection::EndAckWait(uint64_t serial, const std::string& reply) {
  if (block.active && block.ack_wait == serial) EndBlockWith(reply);
}

void Connection::EndBlockWith(const std::string& reply) {
  FinishBlocked(this, reply);
  EndBlock();
  Write(reply);
  if (!worker_->server()->HoldForWakes(this)) Resume();
}

void Connection::RunPostponed() {
  if (!postponed) return;
  server()->EndPostpone(this);
  std::vector<std::string> args = std::move(postponed_args);
  postponed_args.clear();
  processing_ = true;
  read_arrival_ns_ = postponed_arrival_ns;
  postponed_arrival_ns = 0;
  Dispatch(this, args);
  read_arrival_ns_ = 0;
  processing_ = false;
  Resume();
}

void Connection::EndOwnMessagesWait() {
  Worker* w = worker_;
  w->Post([w, id = id_] {
    Connection* c = w->Find(id);
    if (c != nullptr && --c->awaiting_own_messages == 0) c->Resume();
  });
}

void Connection::OnBlockTimeout(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  self->UnblockWith(false);
}

void Connection::ArmBlockTimer() {
  if (block.timeout_ms == 0) return;
  block.timer = evtimer_new(worker_->base(), &Connection::OnBlockTimeout, this);
  timeval tv{static_cast<time_t>(block.timeout_ms / 1000), static_cast<suseconds_t>((block.timeout_ms % 1000) * 1000)};
  evtimer_add(block.timer, &tv);
}

void Connection::EndBlock() {
  if (!block.active) return;
  block.active = false;
  argv_mem.store(0, std::memory_order_relaxed);
  if (block.timer != nullptr) {
    event_free(block.timer);
    block.timer = nullptr;
  }
  server()->Unblock(this);
  block.serving = nullptr;
  block.keys.clear();
  block.args.clear();
  block.sent_args.clear();
  block.claimable = true;
  if (block.ack_wait != 0) {
    server()->ForgetReplicaAckWait(this);
    block.ack_wait = 0;
  }
}

void Connection::RetryBlocked(const std::pair<uint8_t, std::string>& ready, bool key_removed) {
  if (!block.active) return;
  std::vector<std::string> args = block.args;
  processing_ = true;  // the connection must survive its own command
  block.key_removed = key_removed;
  block.serving = &ready;
  bool ran;
  {
    ExpiryTimeFreeze frozen;
    ran = RetryBlockedCommand(this, args, ready);
  }
  block.key_removed = false;
  block.serving = nullptr;
  // The key is gone or of another type: Redis ends the wait of every
  // XREADGROUP on such a stream, even behind a client that stays blocked.
  if (!ran) worker_->server()->WakeGroupReaders({ready});
  processing_ = false;
  if (closing_) {
    worker_->Close(this);
    return;
  }
  if (!block.active && !worker_->server()->HoldForWakes(this)) Resume();
}

void Connection::Resume() {
  if (closing_) {
    worker_->Close(this);
    return;
  }
  ProcessInput();
  if (closing_) {
    worker_->Close(this);
    return;
  }
  if (!awaiting_commit) Flush();
}

void Connection::ResumeHeld(const std::vector<ClientRef>& clients) {
  if (clients.empty()) return;
  // One after another, in the order they were freed, as Redis' processUnblockedClients
  // runs each one's whole input: the first carries the rest and lets them go when its
  // batch is done, behind the clients its own commands free.
  auto [w, id] = clients.front();
  std::vector<ClientRef> rest(clients.begin() + 1, clients.end());
  w->Post([w = w, id = id, rest = std::move(rest)]() mutable {
    if (Connection* c = w->Find(id)) {
      c->WakesServed(std::move(rest));
    } else {
      ResumeHeld(rest);
    }
  });
}

void Connection::WakesServed(std::vector<ClientRef> served) {
  awaiting_wakes = false;
  held_.insert(held_.end(), served.begin(), served.end());
  if (processing_) {
    // Reached from inside this connection's own command (posted tasks run there
    // too): carry on from the event loop.
    Worker* w = worker_;
    uint64_t id = id_;
    w->Post([w, id] {
      if (Connection* c = w->Find(id)) c->Resume();
    });
    return;
  }
  Resume();
}

void Connection::CloseSoon() {
  if (processing_) {
    closing_ = true;
  } else {
    worker_->Close(this);
  }
}

namespace {

// What the query buffer has allocated and not filled (the room inside a short
// string's own object is no allocation).
size_t QueryBufferFree(const std::string& in) {
  return in.capacity() > std::string().capacity() ? in.capacity() - in.size() : 0;
}

// s reallocated to hold exactly its bytes plus room for `keep` in all.
void Reallocate(std::string* s, size_t keep) {
  std::string fresh;
  fresh.reserve(std::max(keep, s->size()));
  fresh.append(*s);
  s->swap(fresh);
}

}  // namespace

void Connection::ProcessInput() {
  processing_ = true;
  Config* cfg = server()->config();
  size_t prefetched_run = 0;  // commands left that a GET prefetch covers
  // As Redis' qbuf: the commands being run stay in the query buffer until all
  // that was read has been processed.
  query_buffer_size = in_.size();
  while (!close_after_reply_ && !closing_ && !block.active && !postponed && !awaiting_wakes &&
         awaiting_own_messages == 0) {
    if (prefetched_run == 0 && !parser_.in_multibulk()) {  // peek only from the start of a command
      prefetched_run = PrefetchGets(this, std::string_view(in_).substr(in_pos_));
    }
    RespParser::Limits limits;
    limits.max_bulk_len = cfg->proto_max_bulk_len;
    limits.authenticated = authenticated;
    std::string error;
    auto r = parser_.Parse(in_, &in_pos_, limits, &args_, &error);
    if (r == RespParser::Result::kNeedMore) break;
    if (r == RespParser::Result::kError) {
      VLOG(1) << "Protocol error (" << error << ") from client " << peer_;  // Redis' LL_VERBOSE
      // As Redis' addReplyError: counted in errorstats, no CR or LF in the line.
      server()->stats().RecordError(error);
      reply::Error(&out_, error);
      close_after_reply_ = true;
      break;
    }
    Dispatch(this, args_);
    if (prefetched_run > 0 && --prefetched_run == 0) worker_->batcher()->ctx()->DropPrefetched();
    if (kill_requested.load()) close_after_reply_ = true;
  }
  if (prefetched_run > 0) worker_->batcher()->ctx()->DropPrefetched();
  if (in_pos_ > 0) {
    in_.erase(0, in_pos_);
    in_pos_ = 0;
  }
  query_buffer_size = in_.size();
  query_buffer_free.store(QueryBufferFree(in_), std::memory_order_relaxed);
  UpdateMemory();
  if (kill_requested.load()) closing_ = true;  // evicted (maxmemory-clients) or killed: nothing more runs
  if (static_cast<int64_t>(in_.size()) > cfg->client_query_buffer_limit) {
    LOG(WARNING) << "Closing client " << peer_ << " that reached max query buffer length (" << in_.size()
                 << " bytes)";
    closing_ = true;
  }
  processing_ = false;
  if (!awaiting_wakes && !held_.empty()) {  // this batch is done (or stopped)
    std::vector<ClientRef> held;
    held.swap(held_);
    ResumeHeld(held);
  }
}

void Connection::Write(std::string_view bytes) { out_.append(bytes); }

void Connection::UpdateMemory() {
  const size_t now = query_buffer_size.load(std::memory_order_relaxed) + output_buffer_size.load(std::memory_order_relaxed);
  if (now == reported_memory_) return;
  server()->AddClientMemory(static_cast<int64_t>(now) - static_cast<int64_t>(reported_memory_));
  reported_memory_ = now;
}

std::string* Connection::output() { return &out_; }

void Connection::TrimBuffers(int64_t now_ms) {
  if (processing_) return;
  // The query buffer (Redis' clientsCronResizeQueryBuffer): only when at least
  // 4 KB would come back; to what it holds after 2 s idle, else to the recent
  // peak (or the bulk being read) when that is under half of it.
  static constexpr size_t kQueryResizeThreshold = 32 * 1024;  // Redis' PROTO_RESIZE_THRESHOLD
  const size_t bulk = static_cast<size_t>(parser_.pending_bulk());
  if (in_.capacity() - in_.size() > 4096) {
    if (now_ms - last_interaction_ms.load() > 2000) {
      Reallocate(&in_, in_.size());
    } else if (in_.capacity() > kQueryResizeThreshold && in_.capacity() / 2 > in_peak_) {
      Reallocate(&in_, std::max(in_peak_, bulk + 2));
    }
    query_buffer_free.store(QueryBufferFree(in_), std::memory_order_relaxed);
  }
  in_peak_ = std::max(in_.size(), bulk);
  // A big reply's buffer, once sent.
  static constexpr size_t kReplyKeep = 16 * 1024;  // Redis' PROTO_REPLY_CHUNK_BYTES
  if (out_pos_ == 0 && out_.capacity() > kReplyKeep && out_peak_ < out_.capacity() / 2) {
    Reallocate(&out_, out_peak_ > kReplyKeep ? out_peak_ : 0);
    server()->stats().reply_buffer_shrinks.fetch_add(1, std::memory_order_relaxed);
  }
  out_peak_ = out_.size();
  reply_buffer_size.store(out_.capacity(), std::memory_order_relaxed);
  reply_buffer_peak.store(out_peak_, std::memory_order_relaxed);
  // The arguments of a big command (the parser reuses them), unless one is being read.
  if (!parser_.in_multibulk()) {
    static constexpr size_t kKeepArgs = 1024;
    if (args_.capacity() > kKeepArgs) std::vector<std::string>().swap(args_);
    if (!in_multi && queued.capacity() > kKeepArgs) std::vector<std::vector<std::string>>().swap(queued);
    for (auto& a : args_) {
      if (a.capacity() > kReplyKeep) std::string().swap(a);
    }
  }
}

void Connection::Flush() {
  awaiting_commit = false;
  flush_pending = false;
  if (awaiting_wakes && !close_after_reply_ && !closing_) return;  // WakesServed sends it
  if (awaiting_own_null > 0 && !close_after_reply_ && !closing_) return;  // the null's task sends it
  if (out_pos_ < out_.size()) server()->stats().total_writes_processed.fetch_add(1, std::memory_order_relaxed);
  if (out_.size() > out_peak_) {
    out_peak_ = out_.size();
    reply_buffer_peak.store(out_peak_, std::memory_order_relaxed);
    reply_buffer_size.store(out_.capacity(), std::memory_order_relaxed);
  }
  while (out_pos_ < out_.size()) {
    ssize_t n = ::write(fd_, out_.data() + out_pos_, out_.size() - out_pos_);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        size_t pending = out_.size() - out_pos_;
        output_buffer_size = pending;
        UpdateMemory();
        if (OverOutputLimit(pending)) {
          LOG(WARNING) << "Client " << peer_ << " closed for overcoming of output buffer limits.";
          CloseSoon();
          return;
        }
        event_add(write_ev_, nullptr);
        return;
      }
      CloseSoon();
      return;
    }
    server()->stats().net_output_bytes += static_cast<uint64_t>(n);
    out_pos_ += static_cast<size_t>(n);
  }
  out_.clear();
  out_pos_ = 0;
  output_buffer_size = 0;
  UpdateMemory();
  soft_limit_since_ms_ = 0;
  if (close_after_reply_) CloseSoon();
}

void Connection::OnWritable() { Flush(); }

bool Connection::OverOutputLimit(size_t pending) {
  Config* cfg = server()->config();
  const Config::OutputBufferLimit& l = subscribed() ? cfg->obl_pubsub : cfg->obl_normal;
  auto bytes = static_cast<int64_t>(pending);
  if (l.hard > 0 && bytes >= l.hard) return true;
  if (l.soft > 0 && bytes >= l.soft) {
    int64_t now = static_cast<int64_t>(NowMs());
    if (soft_limit_since_ms_ == 0) soft_limit_since_ms_ = now;
    return now - soft_limit_since_ms_ > l.soft_seconds * 1000;
  }
  soft_limit_since_ms_ = 0;
  return false;
}

void Connection::CloseAfterReply() { close_after_reply_ = true; }

void Connection::SetLink(std::string peer, std::string local, int fd) {
  peer_ = std::move(peer);
  local_ = std::move(local);
  link_fd_ = fd;
}

std::string Connection::InfoLine() {
  int64_t now = static_cast<int64_t>(NowMs());
  // In Redis' order.
  std::string flags;
  int64_t redirect;
  if (monitor) flags += "O";
  if (is_master) flags += "M";
  if (subscribed()) flags += "P";
  if (in_multi) flags += "x";
  if (block.active) flags += "b";
  server()->tracking().ListFields(id_, &flags, &redirect);
  if (watch_dirty) flags += "d";
  if (unix_socket_) flags += "U";
  if (no_evict) flags += "e";
  if (flags.empty()) flags = "N";
  std::lock_guard<std::mutex> g(info_mu);
  std::string s;
  s += "id=" + std::to_string(id_);
  s += " addr=" + peer_;
  s += " laddr=" + local_;
  s += " fd=" + std::to_string(is_master ? link_fd_ : fd_);
  s += " name=" + name;
  s += " age=" + std::to_string((now - created_ms.load()) / 1000);
  s += " idle=" + std::to_string((now - last_interaction_ms.load()) / 1000);
  s += " flags=" + flags;
  s += " db=" + std::to_string(db);
  s += " sub=" + std::to_string(subscription_count[0].load());
  s += " psub=" + std::to_string(subscription_count[1].load());
  s += " ssub=" + std::to_string(subscription_count[2].load());
  s += " multi=" + std::to_string(in_multi ? static_cast<int64_t>(multi_count.load()) : -1);
  s += " qbuf=" + std::to_string(query_buffer_size.load());
  s += " qbuf-free=" + std::to_string(query_buffer_free.load());
  s += " argv-mem=" + std::to_string(argv_mem.load());
  s += " multi-mem=" + std::to_string(in_multi ? multi_mem.load() : 0);
  s += " rbs=" + std::to_string(reply_buffer_size.load());
  s += " rbp=" + std::to_string(reply_buffer_peak.load());
  // One reply buffer, no list of reply blocks: what waits to be sent is all in it.
  const size_t pending = output_buffer_size.load();
  s += " obl=" + std::to_string(pending) + " oll=0 omem=" + std::to_string(pending);
  s += " tot-mem=" + std::to_string(query_buffer_size.load() + pending);
  s += pending > 0 ? " events=rw" : " events=r";
  const char* last = last_command.load();
  s += std::string(" cmd=") + (last ? last : "NULL");
  s += " user=" + username + " redir=" + std::to_string(redirect) + " resp=" + std::to_string(resp);
  return s;
}

}  // namespace kvrocks
