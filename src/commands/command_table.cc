#include "commands/command.h"

#include <algorithm>

#include "commands/redis_command_meta.h"
#include "common/string_util.h"

namespace kvrocks {

const char kSyntaxError[] = "ERR syntax error";
const char kNotIntegerError[] = "ERR value is not an integer or out of range";
const char kNotFloatError[] = "ERR value is not a valid float";

CommandTable& CommandTable::Instance() {
  static CommandTable table;
  return table;
}

CommandTable::CommandTable() {
  RegisterStringCommands(this);
  RegisterHashCommands(this);
  RegisterSetCommands(this);
  RegisterListCommands(this);
  RegisterZSetCommands(this);
  RegisterSortCommands(this);
  RegisterBitmapCommands(this);
  RegisterHyperLogLogCommands(this);
  RegisterGeoCommands(this);
  RegisterStreamCommands(this);
  RegisterDumpCommands(this);
  RegisterReplicationCommands(this);
  RegisterHashTtlCommands(this);
  RegisterKeyspaceCommands(this);
  RegisterServerCommands(this);
  RegisterConnectionCommands(this);
  RegisterTransactionCommands(this);
  RegisterPubSubCommands(this);
  RegisterScriptCommands(this);
  RegisterFunctionCommands(this);
  RegisterDebugCommands(this);
  RegisterAclCommands(this);
  RegisterClusterCommands(this);
  RegisterModuleCommands(this);
  RegisterLolwutCommands(this);
}

void CommandTable::Add(CommandSpec spec) {
  for (SubcommandSpec& s : spec.subcommands) {
    const RedisCommandMeta* meta = s.arity == 0 ? nullptr : FindRedisCommandMeta(s.name);
    if (meta == nullptr) continue;
    s.flags = ((s.own_flags ? s.flags : spec.flags) & ~kRedisFlagBits) | RecordedFlags(*meta);
    s.own_flags = true;
  }
  commands_.emplace(spec.name, std::move(spec));
}

bool CommandTable::Rename(const std::string& from, const std::string& to) {
  auto it = commands_.find(ToLower(from));
  if (it == commands_.end()) return false;
  // The spec keeps its name: errors and statistics name the command as Redis does.
  CommandSpec spec = std::move(it->second);
  commands_.erase(it);
  if (!to.empty()) commands_.insert_or_assign(ToLower(to), std::move(spec));
  return true;
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  char lower[64];
  if (name.size() > sizeof(lower)) {
    auto it = commands_.find(ToLower(name));
    return it == commands_.end() ? nullptr : &it->second;
  }
  for (size_t i = 0; i < name.size(); i++) {
    char c = name[i];
    lower[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  auto it = commands_.find(std::string_view(lower, name.size()));
  return it == commands_.end() ? nullptr : &it->second;
}

CommandTable::SubcommandCheck CommandTable::CheckSubcommand(const CommandSpec& spec,
                                                            const std::vector<std::string>& args) {
  bool container = std::any_of(spec.subcommands.begin(), spec.subcommands.end(),
                               [](const SubcommandSpec& s) { return s.arity != 0; });
  if (!container || args.size() < 2) return SubcommandCheck::kOk;
  // By the part after '|': rename-command changes the command's name, not its subcommands'.
  std::string sub = ToLower(args[1]);
  for (const auto& s : spec.subcommands) {
    if (std::string_view(s.name).substr(s.name.find('|') + 1) != sub) continue;
    auto argc = static_cast<int>(args.size());
    bool ok = s.arity > 0 ? argc == s.arity : argc >= -s.arity;
    return ok ? SubcommandCheck::kOk : SubcommandCheck::kWrongArity;
  }
  return SubcommandCheck::kUnknown;
}

CommandCounters* CommandTable::CountersOf(const CommandSpec& spec, const std::vector<std::string>& args) {
  if (args.size() < 2) return spec.counters.get();
  bool container = false;
  for (const auto& s : spec.subcommands) {
    if (s.arity == 0) continue;  // DEBUG's subcommands count as DEBUG
    container = true;
    if (EqualsIgnoreCase(std::string_view(s.name).substr(s.name.find('|') + 1), args[1])) return s.counters.get();
  }
  return container ? nullptr : spec.counters.get();
}

uint32_t CommandTable::FlagsOf(const CommandSpec& spec, const std::vector<std::string>& args) {
  if (args.size() < 2) return spec.flags;
  for (const auto& s : spec.subcommands) {
    if (s.own_flags && EqualsIgnoreCase(std::string_view(s.name).substr(s.name.find('|') + 1), args[1])) {
      return s.flags;
    }
  }
  return spec.flags;
}

std::vector<size_t> CommandTable::KeyIndexes(const CommandSpec& spec, size_t argc) {
  std::vector<size_t> out;
  if (spec.first_key <= 0) return out;
  int last = spec.last_key < 0 ? static_cast<int>(argc) + spec.last_key : spec.last_key;
  for (int i = spec.first_key; i <= last && i < static_cast<int>(argc); i += spec.key_step) {
    out.push_back(static_cast<size_t>(i));
  }
  return out;
}

}  // namespace kvrocks
