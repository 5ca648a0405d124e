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

// One worker's share of a publish: the receivers' ids, each with the pattern
// it matched through (empty for a direct subscription).
struct Delivery {
  std::vector<std::pair<uint64_t, std::string>> receivers;
};

}  // namespace

std::map<std::string, std::set<Connection*>>& PubSub::Table(PubSubKind kind) {
  switch (kind) {
    case PubSubKind::kPattern: return patterns_;
    case PubSubKind::kShard: return shard_channels_;
    default: return channels_;
  }
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
  int64_t receivers = 0;
  auto add = [&](Connection* c, const std::string& pattern) {
    receivers++;
    if (c == from) {
      FormatMessage(from->output(), from->resp, kind, pattern, channel, message);
      return;
    }
    by_worker[c->worker()].receivers.emplace_back(c->id(), pattern);
  };
  std::lock_guard<std::mutex> g(mu_);
  auto& direct = kind == PubSubKind::kShard ? shard_channels_ : channels_;
  auto it = direct.find(channel);
  if (it != direct.end()) {
    for (Connection* c : it->second) add(c, std::string());
  }
  if (kind == PubSubKind::kChannel) {
    for (auto& [pattern, conns] : patterns_) {
      if (!StringMatch(pattern, channel)) continue;
      for (Connection* c : conns) add(c, pattern);
    }
  }
  if (by_worker.empty()) return receivers;
  auto payload = std::make_shared<const std::pair<std::string, std::string>>(channel, message);
  // Posting under mu_ keeps one global order of messages (see the header).
  for (auto& [worker, delivery] : by_worker) {
    worker->Post([worker, kind, payload, d = std::move(delivery)] {
      for (const auto& [id, pattern] : d.receivers) {
        Connection* c = worker->Find(id);
        if (c == nullptr) continue;
        FormatMessage(c->output(), c->resp, kind, pattern, payload->first, payload->second);
        if (!c->awaiting_commit) c->Flush();
      }
    });
  }
  return receivers;
}

std::vector<std::string> PubSub::Channels(PubSubKind kind, const std::string& pattern) {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [name, conns] : Table(kind)) {
    if (pattern.empty() || StringMatch(pattern, name)) out.push_back(name);
  }
  return out;
}

size_t PubSub::NumSubscribers(PubSubKind kind, const std::string& channel) {
  std::lock_guard<std::mutex> g(mu_);
  auto& table = Table(kind);
  auto it = table.find(channel);
  return it == table.end() ? 0 : it->second.size();
}

size_t PubSub::NumPatterns() {
  std::lock_guard<std::mutex> g(mu_);
  return patterns_.size();
}

size_t PubSub::NumChannels(PubSubKind kind) {
  std::lock_guard<std::mutex> g(mu_);
  return Table(kind).size();
}

}  // namespace kvrocks
