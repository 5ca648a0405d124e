// Pub/Sub commands: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB.
#include "commands/helpers.h"
#include "server/pubsub.h"

namespace kvrocks {

namespace {

// Subscriptions counted in (un)subscribe replies: channels and patterns
// together, shard channels on their own (Redis 7).
size_t SubscriptionCount(const Connection* conn, PubSubKind kind) {
  if (kind == PubSubKind::kShard) return conn->subscription_count[2];
  return conn->subscription_count[0] + conn->subscription_count[1];
}

// [kind-name, name, count] as a push in RESP3.
void ReplySubscription(CommandCall& call, const char* type, const std::string* name, PubSubKind kind) {
  size_t start = call.out->size();
  call.out->append(call.resp == 3 ? ">3\r\n" : "*3\r\n");
  reply::Bulk(call.out, type);
  if (name != nullptr) {
    reply::Bulk(call.out, *name);
  } else {
    reply::Null(call.out, call.resp);
  }
  reply::Integer(call.out, static_cast<int64_t>(SubscriptionCount(call.conn, kind)));
  if (call.out == call.conn->output()) call.conn->NotePush(start);
}

void SubscribeAll(CommandCall& call, PubSubKind kind, const char* type) {
  PubSub& ps = call.server->pubsub();
  for (size_t i = 1; i < call.args.size(); i++) {
    ps.Subscribe(kind, call.conn, call.args[i]);
    ReplySubscription(call, type, &call.args[i], kind);
  }
}

void UnsubscribeAll(CommandCall& call, PubSubKind kind, const char* type) {
  PubSub& ps = call.server->pubsub();
  if (call.args.size() > 1) {
    for (size_t i = 1; i < call.args.size(); i++) {
      ps.Unsubscribe(kind, call.conn, call.args[i]);
      ReplySubscription(call, type, &call.args[i], kind);
    }
    return;
  }
  auto names = call.conn->subscriptions[static_cast<int>(kind)];
  for (const auto& name : names) {
    ps.Unsubscribe(kind, call.conn, name);
    ReplySubscription(call, type, &name, kind);
  }
  if (names.empty()) ReplySubscription(call, type, nullptr, kind);
}

void Subscribe(CommandCall& call) { SubscribeAll(call, PubSubKind::kChannel, "subscribe"); }
void PSubscribe(CommandCall& call) { SubscribeAll(call, PubSubKind::kPattern, "psubscribe"); }
void SSubscribe(CommandCall& call) {
  // Redis refuses it to a client that must get a reply per command (EXEC sets
  // CLIENT_DENY_BLOCKING); SUBSCRIBE and PSUBSCRIBE keep an old exception for MULTI.
  if (call.in_exec) return ReplyError(call, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
  SubscribeAll(call, PubSubKind::kShard, "ssubscribe");
}
void Unsubscribe(CommandCall& call) { UnsubscribeAll(call, PubSubKind::kChannel, "unsubscribe"); }
void PUnsubscribe(CommandCall& call) { UnsubscribeAll(call, PubSubKind::kPattern, "punsubscribe"); }
void SUnsubscribe(CommandCall& call) { UnsubscribeAll(call, PubSubKind::kShard, "sunsubscribe"); }

void Publish(CommandCall& call) {
  int64_t n = call.server->pubsub().Publish(PubSubKind::kChannel, call.args[1], call.args[2], call.conn);
  reply::Integer(call.out, n);
}

void SPublish(CommandCall& call) {
  int64_t n = call.server->pubsub().Publish(PubSubKind::kShard, call.args[1], call.args[2], call.conn);
  reply::Integer(call.out, n);
}

void PubSubCommand(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  PubSub& ps = call.server->pubsub();
  if (TokenEquals(sub, "help") && a.size() == 2) {
    return ReplyHelp(call, {"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                            "CHANNELS [<pattern>]",
                            "    Return the currently active channels matching a <pattern> (default: '*').",
                            "NUMPAT",
                            "    Return number of subscriptions to patterns.",
                            "NUMSUB [<channel> ...]",
                            "    Return the number of subscribers for the specified channels, excluding",
                            "    pattern subscriptions(default: no channels).",
                            "SHARDCHANNELS [<pattern>]",
                            "    Return the currently active shard level channels matching a <pattern> (default: '*').",
                            "SHARDNUMSUB [<shardchannel> ...]",
                            "    Return the number of subscribers for the specified shard level channel(s)",
                            "HELP",
                            "    Prints this help."});
  }
  bool shard = TokenEquals(sub, "shardchannels") || TokenEquals(sub, "shardnumsub");
  PubSubKind kind = shard ? PubSubKind::kShard : PubSubKind::kChannel;
  if (TokenEquals(sub, "channels") || TokenEquals(sub, "shardchannels")) {
    if (a.size() > 3) {
      return ReplySubcommandSyntaxError(call);
    }
    return reply::BulkArray(call.out, ps.Channels(kind, a.size() == 3 ? a[2] : std::string()));
  }
  if (TokenEquals(sub, "numsub") || TokenEquals(sub, "shardnumsub")) {
    reply::ArrayHeader(call.out, 2 * (a.size() - 2));  // a flat array in RESP3 too, as in Redis 7.0
    for (size_t i = 2; i < a.size(); i++) {
      reply::Bulk(call.out, a[i]);
      reply::Integer(call.out, static_cast<int64_t>(ps.NumSubscribers(kind, a[i])));
    }
    return;
  }
  if (TokenEquals(sub, "numpat")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    return reply::Integer(call.out, static_cast<int64_t>(ps.NumPatterns()));
  }
  ReplyUnknownSubcommand(call, "PUBSUB");
}

}  // namespace

void RegisterPubSubCommands(CommandTable* t) {
  constexpr uint32_t sub = kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedOk;
  constexpr uint32_t pub = kCmdLoading | kCmdStale | kCmdFast;
  t->Add({"subscribe", -2, sub, 0, 0, 0, Subscribe, "pubsub", "Listens for messages published to channels.", "2.0.0"});
  t->Add({"psubscribe", -2, sub, 0, 0, 0, PSubscribe, "pubsub",
          "Listens for messages published to channels that match one or more patterns.", "2.0.0"});
  t->Add({"ssubscribe", -2, sub, 1, -1, 1, SSubscribe, "pubsub", "Listens for messages published to shard channels.",
          "7.0.0"});
  t->Add({"unsubscribe", -1, sub, 0, 0, 0, Unsubscribe, "pubsub",
          "Stops listening to messages posted to channels.", "2.0.0"});
  t->Add({"punsubscribe", -1, sub, 0, 0, 0, PUnsubscribe, "pubsub",
          "Stops listening to messages published to channels that match one or more patterns.", "2.0.0"});
  t->Add({"sunsubscribe", -1, sub, 1, -1, 1, SUnsubscribe, "pubsub",
          "Stops listening to messages posted to shard channels.", "7.0.0"});
  t->Add({"publish", 3, pub, 0, 0, 0, Publish, "pubsub", "Posts a message to a channel.", "2.0.0"});
  t->Add({"spublish", 3, pub, 1, 1, 1, SPublish, "pubsub", "Post a message to a shard channel", "7.0.0"});
  t->Add({"pubsub", -2, kCmdLoading | kCmdStale, 0, 0, 0, PubSubCommand, "pubsub",
          "A container for Pub/Sub commands.", "2.8.0", nullptr,
          {{"pubsub|channels", -2}, {"pubsub|numpat", 2}, {"pubsub|numsub", -2}, {"pubsub|shardchannels", -2},
           {"pubsub|shardnumsub", -2}, {"pubsub|help", 2}}});
}

}  // namespace kvrocks
