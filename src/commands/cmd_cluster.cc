// CLUSTER, READONLY, READWRITE and ASKING as a Redis started without
// cluster-enabled answers them: kvrocks is a standalone server, so every
// subcommand Redis knows, called with its number of arguments, replies
// "This instance has cluster support disabled" (unknown subcommands and wrong
// arities are refused by the dispatcher first, as in Redis). Clients probe
// with these commands to find out whether they talk to a cluster.
#include "commands/helpers.h"

namespace kvrocks {

namespace {

void ClusterDisabled(CommandCall& call) { ReplyError(call, "ERR This instance has cluster support disabled"); }

}  // namespace

void RegisterClusterCommands(CommandTable* t) {
  t->Add({"cluster", -2, kCmdStale, 0, 0, 0, ClusterDisabled, "cluster", "A container for cluster commands",
          "3.0.0", nullptr,
          {
              {"cluster|addslots", -3},
              {"cluster|addslotsrange", -4},
              {"cluster|bumpepoch", 2},
              {"cluster|count-failure-reports", 3},
              {"cluster|countkeysinslot", 3},
              {"cluster|delslots", -3},
              {"cluster|delslotsrange", -4},
              {"cluster|failover", -2},
              {"cluster|flushslots", 2},
              {"cluster|forget", 3},
              {"cluster|getkeysinslot", 4},
              {"cluster|help", 2},
              {"cluster|info", 2},
              {"cluster|keyslot", 3},
              {"cluster|links", 2},
              {"cluster|meet", -4},
              {"cluster|myid", 2},
              {"cluster|nodes", 2},
              {"cluster|replicas", 3},
              {"cluster|replicate", 3},
              {"cluster|reset", -2},
              {"cluster|saveconfig", 2},
              {"cluster|set-config-epoch", 3},
              {"cluster|setslot", -4},
              {"cluster|shards", 2},
              {"cluster|slaves", 3},
              {"cluster|slots", 2},
          }});
  t->Add({"readonly", 1, kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, ClusterDisabled, "cluster",
          "Enables read queries for a connection to a cluster replica node", "3.0.0"});
  t->Add({"readwrite", 1, kCmdLoading | kCmdStale | kCmdFast, 0, 0, 0, ClusterDisabled, "cluster",
          "Disables read queries for a connection to a cluster replica node", "3.0.0"});
  t->Add({"asking", 1, kCmdFast, 0, 0, 0, ClusterDisabled, "cluster",
          "Sent by cluster clients after an -ASK redirect", "3.0.0"});
}

}  // namespace kvrocks
