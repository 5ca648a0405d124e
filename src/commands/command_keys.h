// The keys of a command call and how the command uses each, found as Redis 7.0
// finds them (getKeysFromCommandWithSpecs): from the command's key
// specifications as COMMAND INFO lists them (redis_command_meta.h), falling
// back to Redis' argument parsers for the commands whose specs cannot say
// (SORT's STORE, SET's GET, a numkeys of 0 ...). COMMAND GETKEYS and
// GETKEYSANDFLAGS answer from it, and the ACL key permissions check each key
// against the access its flags imply.
//
// kvrocks' own command table (CommandSpec's key positions and extra_keys)
// stays what the key locks use: it also covers keys Redis does not list
// (ZRANGESTORE's source ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kvrocks {

struct CommandSpec;

// Key specification flags, in the order Redis writes their names.
enum KeyFlag : uint32_t {
  kKeyRO = 1 << 0,
  kKeyRW = 1 << 1,
  kKeyOW = 1 << 2,
  kKeyRM = 1 << 3,
  kKeyAccess = 1 << 4,
  kKeyUpdate = 1 << 5,
  kKeyInsert = 1 << 6,
  kKeyDelete = 1 << 7,
  kKeyNotKey = 1 << 8,
  kKeyIncomplete = 1 << 9,
  kKeyVariableFlags = 1 << 10,
};

// The names of a key's flags ("RW", "access" ...), in Redis' order.
std::vector<std::string> KeyFlagNames(uint32_t flags);

struct KeyReference {
  size_t pos;      // index in the call's arguments (0 is the command's name)
  uint32_t flags;  // KeyFlag bits; 0 when Redis' parser does not say
};

// What one call (args[0] the command's name) is, for finding its keys: the
// command or, for a container, the subcommand args[1] names. Not valid when
// the container has no such subcommand (Redis: "Invalid command specified").
class CommandKeyFinder {
 public:
  CommandKeyFinder(const CommandSpec& spec, const std::vector<std::string>& args);

  bool valid() const { return info_ != nullptr; }
  // Its lower-case name, "container|sub" for a subcommand.
  const std::string& name() const;
  // The command's (or subcommand's) arity, as Redis checks it.
  int arity() const;
  // Whether the command can have keys at all (Redis' doesCommandHaveKeys).
  bool may_have_keys() const;
  // Whether a call without keys is well formed (EVAL with 0 keys; Redis'
  // no_mandatory_keys).
  bool keys_optional() const;
  // Redis' "admin" flag of the command or subcommand (MONITOR does not show those).
  bool admin() const;
  // The keys of the call, in Redis' order; empty when its arguments are not
  // well formed enough to say (the command itself reports the error).
  std::vector<KeyReference> Find(const std::vector<std::string>& args) const;

  // The names of those keys (none for a call Find cannot parse or an invalid finder).
  std::vector<std::string> Names(const std::vector<std::string>& args) const;

  struct Info;  // a command's parsed key specifications and parser, built once

 private:
  const Info* info_ = nullptr;
};

}  // namespace kvrocks
