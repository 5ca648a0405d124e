#include "server/tracking.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "server/connection.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/worker.h"

namespace kvrocks {

namespace {

// What Invalidate walks for BCAST clients when told to leave them out.
const std::map<std::string, std::map<uint64_t, uint64_t>> kNoPrefixes;

bool PrefixesOverlap(const std::string& a, const std::string& b) {
  size_t n = std::min(a.size(), b.size());
  return a.compare(0, n, b, 0, n) == 0;
}

std::string KeyArray(const std::vector<const std::string*>& keys) {
  std::string out;
  reply::ArrayHeader(&out, keys.size());
  for (const std::string* k : keys) reply::Bulk(&out, *k);
  return out;
}

// The push (RESP3) or Pub/Sub message (a RESP2 redirect target in Pub/Sub
// mode) that carries payload to c; empty when c cannot receive it.
std::string Frame(const Connection* c, const std::string& payload, bool redirected) {
  std::string out;
  if (c->resp == 3) {
    out = ">2\r\n$10\r\ninvalidate\r\n";
  } else if (redirected && c->subscribed()) {
    out = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
  } else {
    return out;  // RESP2 has no pushes on the same connection
  }
  out += payload;
  return out;
}

}  // namespace

std::string Tracking::Validate(Connection* conn, const Options& o) {
  if (!o.bcast && !o.prefixes.empty()) return "ERR PREFIX option requires BCAST mode to be enabled";
  if (conn->tracking && conn->tracking_bcast != o.bcast) {
    return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling "
           "it with a different mode.";
  }
  if (o.bcast && (o.optin || o.optout)) return "ERR OPTIN and OPTOUT are not compatible with BCAST";
  if (o.optin && o.optout) return "ERR You can't specify both OPTIN mode and OPTOUT mode";
  if (conn->tracking && ((o.optin && conn->tracking_optout) || (o.optout && conn->tracking_optin))) {
    return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling "
           "it with a different mode.";
  }
  if (!o.bcast) return "";
  std::lock_guard<std::mutex> g(mu_);
  auto it = clients_.find(conn->id());
  for (size_t i = 0; i < o.prefixes.size(); i++) {
    if (it != clients_.end()) {
      for (const auto& mine : it->second.prefixes) {
        if (PrefixesOverlap(mine, o.prefixes[i])) {
          return "ERR Prefix '" + o.prefixes[i] + "' overlaps with an existing prefix '" + mine +
                 "'. Prefixes for a single client must not overlap.";
        }
      }
    }
    for (size_t j = i + 1; j < o.prefixes.size(); j++) {
      if (PrefixesOverlap(o.prefixes[i], o.prefixes[j])) {
        return "ERR Prefix '" + o.prefixes[i] + "' overlaps with another provided prefix '" + o.prefixes[j] +
               "'. Prefixes for a single client must not overlap.";
      }
    }
  }
  return "";
}

void Tracking::Enable(Connection* conn, const Options& o) {
  conn->tracking = true;
  conn->tracking_bcast = o.bcast;
  conn->tracking_optin = o.optin;
  conn->tracking_optout = o.optout;
  conn->tracking_noloop = o.noloop;
  conn->tracking_redirect = o.redirect;
  std::lock_guard<std::mutex> g(mu_);
  auto [it, added] = clients_.try_emplace(conn->id());
  if (added) tracking_clients_++;
  ClientState& st = it->second;
  st.worker = conn->worker();
  st.resp = conn->resp;
  st.bcast = o.bcast;
  st.noloop = o.noloop;
  st.broken_redirect = false;
  st.redirect = o.redirect;
  if (!o.bcast) return;
  std::vector<std::string> wanted = o.prefixes;
  if (wanted.empty()) wanted.emplace_back();  // BCAST alone: every key
  const uint64_t since = clock_.fetch_add(1, std::memory_order_relaxed) + 1;
  for (auto& p : wanted) {
    if (st.prefixes.insert(p).second) prefix_clients_[p].emplace(conn->id(), since);
  }
}

void Tracking::Disable(Connection* conn) {
  if (!conn->tracking) return;
  conn->tracking = conn->tracking_bcast = conn->tracking_optin = conn->tracking_optout = false;
  conn->tracking_noloop = conn->tracking_caching = false;
  std::lock_guard<std::mutex> g(mu_);
  ForgetLocked(conn->id());
}

void Tracking::Forget(uint64_t id) {
  std::lock_guard<std::mutex> g(mu_);
  ForgetLocked(id);
}

void Tracking::ForgetLocked(uint64_t id) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  for (const auto& p : it->second.prefixes) {
    auto pc = prefix_clients_.find(p);
    if (pc == prefix_clients_.end()) continue;
    pc->second.erase(id);
    if (pc->second.empty()) prefix_clients_.erase(pc);
  }
  clients_.erase(it);
  tracking_clients_--;
  // Its entries in the key table stay until their keys change, as in Redis.
}

void Tracking::SetResp(Connection* conn) {
  if (!conn->tracking) return;
  std::lock_guard<std::mutex> g(mu_);
  auto it = clients_.find(conn->id());
  if (it != clients_.end()) it->second.resp = conn->resp;
}

void Tracking::Remember(Connection* conn, const std::vector<std::string>& keys) {
  if (!conn->tracking || conn->tracking_bcast || keys.empty()) return;
  if ((conn->tracking_optin && !conn->tracking_caching) || (conn->tracking_optout && conn->tracking_caching)) return;
  std::vector<Message> out;
  {
    std::lock_guard<std::mutex> g(mu_);
    const uint64_t now = clock_.fetch_add(1, std::memory_order_relaxed) + 1;
    for (const auto& k : keys) {
      auto [it, added] = table_[k].try_emplace(conn->id(), Reads{now, now});
      if (added) {
        items_++;
      } else {
        it->second.last = now;
      }
    }
    keys_.store(table_.size());
    EnforceLimit(&out);
  }
  Post(std::move(out));
}

void Tracking::AddMessage(uint64_t id, const ClientState& st, std::string payload, std::vector<Message>* out) {
  out->push_back(Message{id, st.redirect != 0 ? st.redirect : id, std::move(payload), st.redirect != 0,
                         !flush_pending_.empty() && flush_pending_.count(id) != 0});
}

void Tracking::InvalidateReaders(const std::vector<std::pair<uint8_t, std::string>>& keys, uint64_t by,
                                 const std::vector<uint64_t>* marks, std::vector<Message>* out) {
  auto stamp = [&](size_t i) { return marks != nullptr ? (*marks)[i] : ~kByScript; };
  for (size_t i = 0; i < keys.size(); i++) {
    const std::string& key = keys[i].second;
    auto it = table_.find(key);
    if (it == table_.end()) continue;
    const uint64_t written = stamp(i) & ~kByScript;
    const std::string payload = KeyArray({&key});
    for (auto reader = it->second.begin(); reader != it->second.end();) {
      const uint64_t id = reader->first;
      Reads& reads = reader->second;
      const bool read_before = id != by || reads.first <= written;
      if (id == by && reads.last > written) {
        // Still remembered for its reads after the write: from the last one if
        // this write invalidates, else (all came after it) as they are, for a
        // later write of the same command to find them.
        if (read_before) reads.first = reads.last;
        ++reader;
      } else {
        reader = it->second.erase(reader);
        items_--;
      }
      if (!read_before) continue;
      auto c = clients_.find(id);
      // A client that stopped tracking, or switched to BCAST, gets nothing.
      if (c == clients_.end() || c->second.bcast) continue;
      if (c->second.noloop && id == by) continue;
      AddMessage(id, c->second, payload, out);
    }
    if (it->second.empty()) table_.erase(it);
  }
  keys_.store(table_.size());
}

void Tracking::InvalidateBeforeFlush(const std::vector<std::pair<uint8_t, std::string>>& keys, uint64_t by,
                                     const std::vector<uint64_t>& marks, Connection* current) {
  std::vector<Message> out;
  {
    std::lock_guard<std::mutex> g(mu_);
    InvalidateReaders(keys, by, &marks, &out);
  }
  PostAround(std::move(out), current);
}

void Tracking::Invalidate(const std::vector<std::pair<uint8_t, std::string>>& keys, uint64_t by,
                          const std::vector<uint64_t>* marks) {
  Invalidate({Changes{&keys, by, marks}});
}

void Tracking::Invalidate(const std::vector<Changes>& batch, Parts parts) {
  std::vector<Message> out;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (parts != Parts::kPrefixes) {
      for (const Changes& ch : batch) InvalidateReaders(*ch.keys, ch.by, ch.marks, &out);
    }
    // BCAST: per prefix, the keys under it (sorted, as Redis' radix tree
    // lists them). Redis records each key with the client that changed it last.
    struct Change {
      const std::string* key;
      size_t order;  // keys are in the order of their writes
      uint64_t by;
      uint64_t written;
      bool by_script;
    };
    for (const auto& [prefix, subscribers] : parts != Parts::kReaders ? prefix_clients_ : kNoPrefixes) {
      std::vector<Change> matched;
      size_t order = 0;
      for (const Changes& ch : batch) {
        for (size_t i = 0; i < ch.keys->size(); i++, order++) {
          const std::string& key = (*ch.keys)[i].second;
          if (key.compare(0, prefix.size(), prefix) != 0) continue;
          const uint64_t stamp = ch.marks != nullptr ? (*ch.marks)[i] : ~kByScript;
          matched.push_back(Change{&key, order, ch.by, stamp & ~kByScript, (stamp & kByScript) != 0});
        }
      }
      if (matched.empty()) continue;
      std::sort(matched.begin(), matched.end(), [](const Change& a, const Change& b) {
        return *a.key != *b.key ? *a.key < *b.key : a.order > b.order;
      });
      matched.erase(std::unique(matched.begin(), matched.end(),
                                [](const Change& a, const Change& b) { return *a.key == *b.key; }),
                    matched.end());
      std::vector<const std::string*> all_keys;
      for (const Change& m : matched) all_keys.push_back(m.key);
      const std::string all = KeyArray(all_keys);
      for (const auto& [id, since] : subscribers) {
        auto c = clients_.find(id);
        if (c == clients_.end()) continue;
        auto changed_by_id = [id = id](const Change& m) { return m.by == id; };
        if (std::none_of(matched.begin(), matched.end(), changed_by_id)) {
          AddMessage(id, c->second, all, &out);
          continue;
        }
        std::vector<const std::string*> picked;
        for (const Change& m : matched) {
          if (m.by != id) {
            picked.push_back(m.key);
            continue;
          }
          // NOLOOP spares a client its own changes; a script's are its own
          // client's in Redis.
          if (c->second.noloop && !m.by_script) continue;
          // `by` registered the prefix after this write, in the transaction
          // that made it: Redis records a change under a prefix only while the
          // prefix has clients, so `by` gets it only if another client had the
          // prefix then. (Another writer's change still reaches a client that
          // joined before its commit: that client may have read the old value.)
          bool recorded = m.written >= since;
          for (auto other = subscribers.begin(); !recorded && other != subscribers.end(); ++other) {
            recorded = other->first != id && other->second <= m.written;
          }
          if (recorded) picked.push_back(m.key);
        }
        if (picked.size() == matched.size()) {
          AddMessage(id, c->second, all, &out);
        } else if (!picked.empty()) {
          AddMessage(id, c->second, KeyArray(picked), &out);
        }
      }
    }
  }
  Post(std::move(out));
}

// A flush's message: the null of the tracking client's protocol.
static const char* FlushNull(int resp) { return resp == 3 ? "_\r\n" : "$-1\r\n"; }

void Tracking::InvalidateAll(Connection* current) {
  std::vector<Message> out;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& [id, st] : clients_) AddMessage(id, st, FlushNull(st.resp), &out);
    table_.clear();
    items_ = 0;
    keys_.store(0);
    if (current != nullptr && clients_.count(current->id()) != 0) flush_pending_[current->id()]++;
  }
  // In the order Redis walks its clients (oldest first), not the table's.
  std::sort(out.begin(), out.end(), [](const Message& a, const Message& b) { return a.tracker < b.tracker; });
  bool current_tracks = false;
  if (current != nullptr) {
    auto own = [&](const Message& m) { return m.tracker == current->id(); };
    auto it = std::remove_if(out.begin(), out.end(), own);
    current_tracks = it != out.end();
    out.erase(it, out.end());
  }
  PostAround(std::move(out), current);
  if (!current_tracks) return;
  // The flusher's own message waits for the end of its command, as Redis' pending
  // invalidations do, and goes where its tracking points then: a CLIENT TRACKING
  // or HELLO later in the same transaction changes its redirect or protocol, and
  // tracking turned off keeps its last redirect (Redis' sendTrackingMessage looks
  // only at the redirect field, which OFF leaves). A task posted to its own
  // worker runs once the command has replied; what the client's tracking is
  // told meanwhile (behind_flush) is posted through that worker after it, and
  // the client's next commands wait for it (awaiting_own_messages), as Redis
  // writes the pending null before it runs them.
  auto sent = [this](uint64_t id) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = flush_pending_.find(id);
    if (it != flush_pending_.end() && --it->second == 0) flush_pending_.erase(it);
  };
  Worker* w = server_->WorkerOf(current->id());
  if (w == nullptr) return sent(current->id());
  current->awaiting_own_messages++;
  current->awaiting_own_null++;
  w->Post([this, w, id = current->id(), sent] {
    sent(id);
    Connection* c = w->Find(id);
    if (c == nullptr) return;  // closed meanwhile: Redis sends nothing then either
    c->awaiting_own_null--;
    ClientState now;
    now.resp = c->resp;
    now.redirect = c->tracking_redirect;
    std::vector<Message> out;
    AddMessage(id, now, FlushNull(now.resp), &out);
    out.back().behind_flush = false;  // it is the pending null (another may follow it)
    Post(std::move(out), c);          // to the client itself: written now, behind the reply
    c->EndOwnMessagesWait();          // behind what it queued (a broken redirect's message)
    // The replies go once the messages its batch told its tracking meanwhile
    // (behind_flush, queued behind this task) are on their way too.
    if (c->awaiting_own_null == 0) w->FlushAfterPosted(c);
  });
}

void Tracking::PostAround(std::vector<Message> out, Connection* current) {
  std::vector<Message> to_current;
  if (current != nullptr) {
    auto redirected_to_current = [&](const Message& m) {
      return m.receiver == current->id() && m.tracker != current->id();
    };
    std::copy_if(out.begin(), out.end(), std::back_inserter(to_current), redirected_to_current);
    out.erase(std::remove_if(out.begin(), out.end(), redirected_to_current), out.end());
  }
  Post(std::move(to_current), current);
  Post(std::move(out));
}

void Tracking::Trim(Connection* current) {
  int64_t max_keys = server_->config()->tracking_table_max_keys;
  if (max_keys <= 0 || keys_.load() <= static_cast<size_t>(max_keys)) return;
  std::vector<Message> out;
  {
    std::lock_guard<std::mutex> g(mu_);
    EnforceLimit(&out);
  }
  Post(std::move(out), current);
}

void Tracking::EnforceLimit(std::vector<Message>* out) {
  int64_t max_keys = server_->config()->tracking_table_max_keys;
  if (max_keys <= 0) return;
  // As Redis, forget keys as if they had changed; the hash order stands in
  // for its random walk.
  while (table_.size() > static_cast<size_t>(max_keys)) {
    auto it = table_.begin();
    const std::string payload = KeyArray({&it->first});
    for (const auto& reader : it->second) {
      uint64_t id = reader.first;
      auto c = clients_.find(id);
      if (c == clients_.end() || c->second.bcast) continue;
      AddMessage(id, c->second, payload, out);
    }
    items_ -= it->second.size();
    table_.erase(it);
  }
  keys_.store(table_.size());
}

void Tracking::Post(std::vector<Message> out, Connection* current) {
  for (auto& m : out) {
    if (m.behind_flush) {
      Worker* tw = server_->WorkerOf(m.tracker);
      if (tw != nullptr) {
        m.behind_flush = false;
        tw->Post([this, m = std::move(m)]() mutable { Post({std::move(m)}); });
        continue;
      }
    }
    if (current != nullptr && m.receiver == current->id()) {
      std::string frame = Frame(current, m.payload, m.redirected);
      if (frame.empty()) continue;
      size_t start = current->output()->size();
      current->Write(frame);
      current->NotePush(start);  // CLIENT REPLY OFF silences the reply, not this
      continue;
    }
    Worker* w = server_->WorkerOf(m.receiver);
    if (w == nullptr) {
      // The replica's master client is a redirect target that takes nothing, as in
      // Redis (RESP2, no Pub/Sub); while its link is down, it is gone.
      if (m.redirected && !server_->IsListedMasterClient(m.receiver)) PostBrokenRedirect(m.tracker, m.receiver);
      continue;
    }
    w->Post([w, id = m.receiver, payload = std::move(m.payload), redirected = m.redirected] {
      Connection* c = w->Find(id);
      if (c == nullptr) return;
      std::string frame = Frame(c, payload, redirected);
      if (frame.empty()) return;
      c->Write(frame);
      w->FlushAfterPosted(c);
    });
  }
}

void Tracking::PostBrokenRedirect(uint64_t tracker, uint64_t redirect) {
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = clients_.find(tracker);
    if (it != clients_.end()) it->second.broken_redirect = true;
  }
  // Told even with tracking off since (a flush's deferred null, above), as Redis.
  Worker* w = server_->WorkerOf(tracker);
  if (w == nullptr) return;
  w->Post([w, tracker, redirect] {
    Connection* c = w->Find(tracker);
    if (c == nullptr || c->resp != 3) return;
    std::string frame = ">2\r\n$21\r\ntracking-redir-broken\r\n";
    reply::Integer(&frame, static_cast<int64_t>(redirect));
    c->Write(frame);
    w->FlushAfterPosted(c);
  });
}

size_t Tracking::items() {
  std::lock_guard<std::mutex> g(mu_);
  return items_;
}

size_t Tracking::prefixes() {
  std::lock_guard<std::mutex> g(mu_);
  return prefix_clients_.size();
}

Tracking::Info Tracking::InfoOf(Connection* conn) {
  Info info;
  info.flags.emplace_back(conn->tracking ? "on" : "off");
  if (conn->tracking_bcast) info.flags.emplace_back("bcast");
  if (conn->tracking_optin) {
    info.flags.emplace_back("optin");
    if (conn->tracking_caching) info.flags.emplace_back("caching-yes");
  }
  if (conn->tracking_optout) {
    info.flags.emplace_back("optout");
    if (conn->tracking_caching) info.flags.emplace_back("caching-no");
  }
  std::lock_guard<std::mutex> g(mu_);
  auto it = clients_.find(conn->id());
  if (it == clients_.end()) return info;
  if (it->second.noloop) info.flags.emplace_back("noloop");
  if (it->second.broken_redirect) info.flags.emplace_back("broken_redirect");
  info.redirect = static_cast<int64_t>(it->second.redirect);
  info.prefixes.assign(it->second.prefixes.begin(), it->second.prefixes.end());
  return info;
}

void Tracking::ListFields(uint64_t id, std::string* flags, int64_t* redirect) {
  *redirect = -1;
  if (tracking_clients_.load() == 0) return;  // CLIENT LIST of many clients takes no lock
  std::lock_guard<std::mutex> g(mu_);
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  *flags += "t";
  if (it->second.broken_redirect) *flags += "R";
  if (it->second.bcast) *flags += "B";
  *redirect = static_cast<int64_t>(it->second.redirect);
}

}  // namespace kvrocks
