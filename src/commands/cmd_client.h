// CLIENT subcommands that control connections (PAUSE UNPAUSE REPLY UNBLOCK
// NO-EVICT, and client-side caching: TRACKING CACHING GETREDIR TRACKINGINFO), kept apart from the CLIENT container in cmd_connection.cc.
#pragma once

#include "commands/command.h"

namespace kvrocks {

// Handles call if it is one of these subcommands; false otherwise.
bool ClientControl(CommandCall& call);

}  // namespace kvrocks
