// Pub/Sub: the registry of channel, pattern and shard-channel subscriptions of
// all workers, and message fan-out.
//
// Subscriptions are registered under one mutex. PUBLISH looks up the receivers
// under that mutex and hands each worker one task with the message and its
// receivers' ids; the worker writes the messages. Because every publish posts
// while holding the mutex and a worker runs its tasks in order, all
// subscribers see the messages of all publishers in one and the same order,
// as they do in single-threaded Redis.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace kvrocks {

class Connection;

enum class PubSubKind { kChannel, kPattern, kShard };

class PubSub {
 public:
  // Adds conn to name's subscribers; false if it already was one. Updates the
  // connection's own subscription set.
  bool Subscribe(PubSubKind kind, Connection* conn, const std::string& name);
  // Removes conn from name's subscribers; false if it was not one.
  bool Unsubscribe(PubSubKind kind, Connection* conn, const std::string& name);
  // Delivers message to the subscribers of channel (and, for kChannel, of the
  // patterns matching it). Returns the number of receivers. `from` (may be
  // null) gets its own copy in place, before its reply, as in Redis.
  int64_t Publish(PubSubKind kind, const std::string& channel, const std::string& message, Connection* from);

  // PUBSUB CHANNELS / SHARDCHANNELS: active channels matching pattern (all if empty).
  std::vector<std::string> Channels(PubSubKind kind, const std::string& pattern);
  // PUBSUB NUMSUB / SHARDNUMSUB.
  size_t NumSubscribers(PubSubKind kind, const std::string& channel);
  // Distinct patterns with subscribers (PUBSUB NUMPAT).
  size_t NumPatterns();
  // Distinct channels with subscribers (INFO pubsub_channels).
  size_t NumChannels(PubSubKind kind);

  // A client was killed (CLIENT KILL), and it left the server (its worker
  // closed it). In between, its subscriptions are still registered but count
  // for nothing: Redis frees a killed client, subscriptions and all, at once.
  // Both are called under the server's client registry lock.
  void NoteKilled();
  void ForgetKilled();

  // The message as a subscriber with protocol `resp` receives it (pattern is
  // empty unless it matched through a pattern).
  static void FormatMessage(std::string* out, int resp, PubSubKind kind, const std::string& pattern,
                            const std::string& channel, const std::string& message);

 private:
  std::map<std::string, std::set<Connection*>>& Table(PubSubKind kind);
  // Whether c counts as a subscriber: not killed (mu_ held).
  bool Counts(const Connection* c) const;
  // Subscribers of one entry that count (mu_ held).
  size_t Counting(const std::set<Connection*>& conns) const;

  std::mutex mu_;
  std::map<std::string, std::set<Connection*>> channels_, patterns_, shard_channels_;
  // Killed clients not yet gone (NoteKilled): while there are none, every
  // registered subscriber counts and no lookup checks.
  std::atomic<size_t> killed_{0};
};

}  // namespace kvrocks
