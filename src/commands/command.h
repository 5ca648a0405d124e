// The command table: one row per Redis command with its name, arity, flags
// and key positions. Dispatch, COMMAND INFO/COUNT/LIST, MULTI queuing and the
// key locks all read this one table. Each cmd_*.cc file registers one group.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stats/latency_histogram.h"
#include "storage/context.h"

namespace kvrocks {

struct RedisCommandMeta;

class Server;
class Connection;

enum CommandFlag : uint32_t {
  kCmdWrite = 1 << 0,
  kCmdReadOnly = 1 << 1,
  kCmdAdmin = 1 << 2,
  kCmdFast = 1 << 3,
  kCmdNoAuth = 1 << 4,       // allowed before AUTH
  kCmdNoMulti = 1 << 5,      // executed at once even inside MULTI (EXEC, DISCARD, WATCH ...)
  kCmdExclusive = 1 << 6,    // needs every key lock (whole-database writes)
  kCmdLoading = 1 << 7,
  kCmdStale = 1 << 8,
  kCmdSkipMonitor = 1 << 9,
  kCmdSkipSlowlog = 1 << 10,
  kCmdDenyOOM = 1 << 11,
  kCmdBlocking = 1 << 12,
  kCmdNoScript = 1 << 13,
  kCmdSlow = 1 << 14,
  kCmdLocksKeys = 1 << 15,  // takes its keys' locks though it writes nothing (WATCH)
  kCmdSubscribedOk = 1 << 16,  // allowed to a RESP2 client in Pub/Sub mode
  kCmdAllowBusy = 1 << 17,     // runs while a script is past busy-reply-threshold
  kCmdDenyMulti = 1 << 18,     // refused inside MULTI (Redis' NO_MULTI: SAVE, SHUTDOWN)
  // Refused before anything else unless its enable-*-command option allows the
  // client (Redis' PROTECTED: DEBUG, MODULE LOAD/LOADEX/UNLOAD).
  kCmdProtected = 1 << 19,
  // Looks keys up without changing their last access time (Redis' LOOKUP_NOTOUCH
  // and direct dictionary reads: EXISTS, TYPE, TTL, OBJECT, MEMORY USAGE ...).
  kCmdNoTouch = 1 << 20,
  // Changes its key without Redis 7.0's signalModifiedKey (XSETID, consumer
  // groups: XGROUP, XREADGROUP, XACK, XCLAIM, XAUTOCLAIM): its keyspace events
  // are sent, but no WATCH fails, no client-side cache is invalidated and no
  // blocked client is woken by it. A creation (XGROUP CREATE ... MKSTREAM)
  // touches its key as kCreated, which is signalled.
  kCmdUnsignaled = 1 << 21,
};

// One execution of a command.
struct CommandCall {
  Server* server;
  Connection* conn;
  const std::vector<std::string>& args;
  Context* ctx;      // storage context; shared by all commands of one EXEC
  std::string* out;  // reply bytes
  bool in_exec;      // running inside EXEC
  int resp;          // the client's protocol version (2 or 3)
  // Runs holding the global lock exclusively (or as the replica's stream
  // apply does): every key is this call's without locking.
  bool exclusive = false;
  // Set by a handler that found it needs the exclusive lock (a script that
  // touched a key it could not lock) after undoing its writes: the
  // dispatcher discards its reply and runs it again with `exclusive`.
  bool rerun_exclusive = false;
  // Called by a script (redis.call), where Redis makes some replies deterministic.
  bool from_script = false;
  // A blocked command run again because its keys changed (Redis serves those
  // outside call(): some count no dirty changes there).
  bool served_blocked = false;
};

using CommandHandler = void (*)(CommandCall& call);

// Extra (logical db, key) pairs a command writes beyond its key positions
// (e.g. MOVE's and COPY's destination database).
using ExtraLockKeys = std::vector<std::pair<int, std::string>> (*)(const CommandCall& call);

// Call statistics of one command (INFO commandstats), updated without locks.
struct CommandCounters {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> usec{0};
  std::atomic<uint64_t> rejected_calls{0};
  std::atomic<uint64_t> failed_calls{0};
  LatencyHistogram latency;  // LATENCY HISTOGRAM, INFO latencystats (latency-tracking)
};

// A subcommand of a container command. Like Redis, the dispatcher checks its
// arity (and refuses an unknown subcommand) before the command runs or MULTI
// queues it; arity 0 marks a subcommand Redis does not list (DEBUG's), which
// its handler checks.
struct SubcommandSpec {
  std::string name;  // "config|get"
  int arity;         // >0 exact count, <0 minimum count (including the command's name), 0 unchecked
  std::shared_ptr<CommandCounters> counters = std::make_shared<CommandCounters>();  // INFO commandstats
  // The flags the subcommand runs with: Redis' for it (CONFIG HELP may run in
  // scripts, FUNCTION LOAD is a write), which CommandTable::Add fills in from
  // the recorded COMMAND INFO, with the kvrocks-only bits of the command's (or
  // of those given here, for subcommands Redis does not list).
  bool own_flags = false;
  uint32_t flags = 0;
};

// A subcommand with kvrocks-only flags of its own (kCmdExclusive, kCmdProtected).
inline SubcommandSpec SubcommandWithFlags(std::string name, int arity, uint32_t flags) {
  SubcommandSpec s{std::move(name), arity};
  s.own_flags = true;
  s.flags = flags;
  return s;
}

struct CommandSpec {
  const char* name;
  int arity;  // >0 exact count, <0 minimum count (including the name)
  uint32_t flags;
  int first_key, last_key, key_step;  // Redis' legacy key spec; last_key -1 = last arg
  CommandHandler handler;
  const char* group;    // "string", "generic", "server", "connection", "transactions"
  const char* summary;  // for COMMAND DOCS
  const char* since;
  ExtraLockKeys extra_keys = nullptr;
  std::vector<SubcommandSpec> subcommands = {};
  std::shared_ptr<CommandCounters> counters = std::make_shared<CommandCounters>();
};

class CommandTable {
 public:
  static CommandTable& Instance();
  // Case-insensitive lookup.
  const CommandSpec* Find(std::string_view name) const;
  const std::map<std::string, CommandSpec, std::less<>>& all() const { return commands_; }
  void Add(CommandSpec spec);
  // rename-command: `from` answers to `to` instead (to "" removes it); false
  // if there is no such command. Call before the server starts.
  bool Rename(const std::string& from, const std::string& to);
  // Argument indexes of the keys of a call.
  static std::vector<size_t> KeyIndexes(const CommandSpec& spec, size_t argc);
  // Whether a call of a container command names a subcommand Redis knows, with
  // that subcommand's number of arguments (kOk for commands without listed
  // subcommands, and for DEBUG, whose subcommands Redis does not list).
  enum class SubcommandCheck { kOk, kUnknown, kWrongArity };
  static SubcommandCheck CheckSubcommand(const CommandSpec& spec, const std::vector<std::string>& args);
  // The statistics a call counts in, as Redis keeps them: its subcommand's
  // ("config|get") for a container, nullptr for an unknown subcommand.
  static CommandCounters* CountersOf(const CommandSpec& spec, const std::vector<std::string>& args);
  // The flags a call runs with: its subcommand's where that has its own, else the command's.
  static uint32_t FlagsOf(const CommandSpec& spec, const std::vector<std::string>& args);

 private:
  CommandTable();
  std::map<std::string, CommandSpec, std::less<>> commands_;
};

// ACL categories (without '@') of a command: what Redis 7.0 has for it
// (redis_command_meta.h), else derived from its group and flags. A container
// command's subcommands have categories of their own (RecordedAclCategories).
std::vector<std::string> CommandAclCategories(const CommandSpec& spec);

// Full names ("config|get") of the subcommands of a container command that
// Redis lists (DEBUG's are not listed).
std::vector<std::string> ListedSubcommandNames(const CommandSpec& spec);

// Whether a call writes or may be propagated to replicas (Redis' write and
// may-replicate commands: PUBLISH, PFCOUNT, scripts that did not declare
// no-writes ...): what CLIENT PAUSE WRITE holds and read-only scripts refuse.
bool CommandMayReplicate(const CommandSpec& spec, const std::vector<std::string>& args);

// The COMMAND INFO flag names of a command's flags, in Redis' order.
std::vector<std::string> CommandFlagNames(uint32_t flags);

// The bits of kvrocks' table that mean what Redis' flags of the same name mean.
constexpr uint32_t kRedisFlagBits = kCmdWrite | kCmdReadOnly | kCmdDenyOOM | kCmdAdmin | kCmdNoScript | kCmdBlocking |
                                    kCmdLoading | kCmdStale | kCmdFast | kCmdNoAuth | kCmdDenyMulti | kCmdAllowBusy;

// Those of Redis' recorded flags of a command or subcommand (its COMMAND INFO).
uint32_t RecordedFlags(const RedisCommandMeta& meta);

// Registration functions, one per command group file.
void RegisterStringCommands(CommandTable* table);
void RegisterHashCommands(CommandTable* table);
void RegisterSetCommands(CommandTable* table);
void RegisterListCommands(CommandTable* table);
void RegisterZSetCommands(CommandTable* table);
void RegisterSortCommands(CommandTable* table);
void RegisterBitmapCommands(CommandTable* table);
void RegisterHyperLogLogCommands(CommandTable* table);
void RegisterGeoCommands(CommandTable* table);
void RegisterStreamCommands(CommandTable* table);
void RegisterDumpCommands(CommandTable* table);
void RegisterReplicationCommands(CommandTable* table);
void RegisterHashTtlCommands(CommandTable* table);
void RegisterKeyspaceCommands(CommandTable* table);
void RegisterServerCommands(CommandTable* table);
void RegisterConnectionCommands(CommandTable* table);
void RegisterTransactionCommands(CommandTable* table);
void RegisterPubSubCommands(CommandTable* table);
void RegisterScriptCommands(CommandTable* table);
void RegisterFunctionCommands(CommandTable* table);
void RegisterDebugCommands(CommandTable* table);
void RegisterAclCommands(CommandTable* table);
void RegisterClusterCommands(CommandTable* table);
void RegisterModuleCommands(CommandTable* table);
void RegisterLolwutCommands(CommandTable* table);

// Shared reply texts.
extern const char kSyntaxError[];
extern const char kNotIntegerError[];
extern const char kNotFloatError[];

}  // namespace kvrocks
