#include "server/pubsub.h"

#include <memory>
#include <unordered_map>

#include "common/string_util.h"
#include "server/connection.h"
#include "server/reply.h"
#include "server/worker.h"

namespace kvrocks {

namespace {

const char* MessageType(PubSubKind kind, bool via_pattern) {
  if (via_pattern) return "pmessage";
  return kind == PubSubKind::kShard ? "smessage" : "message";
}

// A published message, formatted once per (pattern it matched through,
// protocol): forms[2 * slot + (resp == 3)], slot 0 = direct subscribers.
struct Formatted {
  std::vector<std::string> forms;
};

// One worker's share of a publish: the receivers' ids and their form slots.
struct Delivery {
  std::vector<std::pair<uint64_t, uint32_t>> receivers;
};

}  // namespace

std::map<std::string, std::set<Connection*>>& PubSub::Table(PubSubKind kind) {
  switch (kind) {
    case PubSubKind::kPattern: return patterns_;
    case PubSubKind::kShard: return shard_channels_;
    default: return channels_;
  }
}

void PubSub::NoteKilled() { killed_.fetch_add(1, std::memory_order_relaxed); }

void PubSub::ForgetKilled() { killed_.fetch_sub(1, std::memory_order_relaxed); }

bool PubSub::Counts(const Connection* c) const {
  return killed_.load(std::memory_order_relaxed) == 0 || !c->kill_requested.load();
}

size_t PubSub::Counting(const std::set<Connection*>& conns) const {
  if (killed_.load(std::memory_order_relaxed) == 0) return conns.size();
  size_t n = 0;
  for (const Connection* c : conns) n += Counts(c) ? 1 : 0;
  return n;
}

bool PubSub::Subscribe(PubSubKind kind, Connection* conn, const std::string& name) {
  auto& mine = conn->subscriptions[static_cast<int>(kind)];
  if (!mine.insert(name).second) return false;
  conn->subscription_count[static_cast<int>(kind)] = mine.size();
  std::lock_guard<std::mutex> g(mu_);
  Table(kind)[name].insert(conn);
  return true;
}

bool PubSub::Unsubscribe(PubSubKind kind, Connection* conn, const std::string& name) {
  auto& mine = conn->subscriptions[static_cast<int>(kind)];
  if (mine.erase(name) == 0) return false;
  conn->subscription_count[static_cast<int>(kind)] = mine.size();
  std::lock_guard<std::mutex> g(mu_);
  auto& table = Table(kind);
  auto it = table.find(name);
  if (it != table.end()) {
    it->second.erase(conn);
    if (it->second.empty()) table.erase(it);
  }
  return true;
}

void PubSub::FormatMessage(std::string* out, int resp, PubSubKind kind, const std::string& pattern,
                           const std::string& channel, const std::string& message) {
  bool via_pattern = !pattern.empty();
  size_t n = via_pattern ? 4 : 3;
  out->push_back(resp == 3 ? '>' : '*');
  out->append(std::to_string(n));
  out->append("\r\n");
  reply::Bulk(out, MessageType(kind, via_pattern));
  if (via_pattern) reply::Bulk(out, pattern);
  reply::Bulk(out, channel);
  reply::Bulk(out, message);
}

int64_t PubSub::Publish(PubSubKind kind, const std::string& channel, const std::string& message, Connection* from) {
  std::unordered_map<Worker*, Delivery> by_worker;
  std::shared_ptr<Formatted> msg;  // made only if someone listens (notifications often go to nobody)
  int64_t receivers = 0;
  auto add_slot = [&](const std::string& pattern) {
    if (!msg) msg = std::make_shared<Formatted>();
    for (int resp : {2, 3}) {
      msg->forms.emplace_back();
      FormatMessage(&msg->forms.back(), resp, kind, pattern, channel, message);
    }
    return static_cast<uint32_t>(msg->forms.size() / 2 - 1);
  };
  auto add = [&](Connection* c, uint32_t slot) {
    if (!Counts(c)) return;
    receivers++;
    if (c == from) {
      size_t start = from->output()->size();
      from->Write(msg->forms[2 * slot + (from->resp == 3 ? 1 : 0)]);
      from->NotePush(start);
      return;
    }
    by_worker[c->worker()].receivers.emplace_back(c->id(), slot);
  };
  std::lock_guard<std::mutex> g(mu_);
  auto& direct = kind == PubSubKind::kShard ? shard_channels_ : channels_;
  auto it = direct.find(channel);
  if (it != direct.end()) {
    uint32_t slot = add_slot(std::string());
    for (Connection* c : it->second) add(c, slot);
  }
  if (kind == PubSubKind::kChannel) {
    for (auto& [pattern, conns] : patterns_) {
      if (!StringMatch(pattern, channel)) continue;
      uint32_t slot = add_slot(pattern);
      for (Connection* c : conns) add(c, slot);
    }
  }
  // Posting under mu_ keeps one global order of messages (see the header).
  for (auto& entry : by_worker) {
    Worker* worker = entry.first;
    worker->Post([worker, msg, d = std::move(entry.second)] {
      for (const auto& [id, slot] : d.receivers) {
        Connection* c = worker->Find(id);
        if (c == nullptr) continue;  // CLIENT REPLY OFF does not silence messages (Redis 7)
        c->Write(msg->forms[2 * slot + (c->resp == 3 ? 1 : 0)]);
        worker->FlushAfterPosted(c);
      }
    });
  }
  return receivers;
}

std::vector<std::string> PubSub::Channels(PubSubKind kind, const std::string& pattern) {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [name, conns] : Table(kind)) {
    if ((pattern.empty() || StringMatch(pattern, name)) && Counting(conns) > 0) out.push_back(name);
  }
  return out;
}

size_t PubSub::NumSubscribers(PubSubKind kind, const std::string& channel) {
  std::lock_guard<std::mutex> g(mu_);
  auto& table = Table(kind);
  auto it = table.find(channel);
  return it == table.end() ? 0 : Counting(it->second);
}

size_t PubSub::NumPatterns() { return NumChannels(PubSubKind::kPattern); }

size_t PubSub::NumChannels(PubSubKind kind) {
  std::lock_guard<std::mutex> g(mu_);
  const auto& table = Table(kind);
  if (killed_.load(std::memory_order_relaxed) == 0) return table.size();
  size_t n = 0;
  for (const auto& [name, conns] : table) n += Counting(conns) > 0 ? 1 : 0;
  return n;
}

}  // namespace kvrocks
