// What SLOWLOG and MONITOR show of a command's arguments: secrets replaced by
// "(redacted)", as Redis' redactClientCommandArgument does.
#pragma once

#include <string>
#include <vector>

namespace kvrocks {

// args, or (in *storage) a copy with the passwords of AUTH, HELLO ... AUTH and
// MIGRATE AUTH/AUTH2, every argument after the user of ACL SETUSER and the values
// of sensitive CONFIG SET options (masteruser, masterauth, requirepass) redacted.
const std::vector<std::string>& ShownArgs(const std::vector<std::string>& args, std::vector<std::string>* storage);

}  // namespace kvrocks
