// Runs a Lua script or function for a command (EVAL*, FCALL*): the host that
// executes its redis.call's, key locking, and the exclusive re-run. See
// cmd_script.cc and docs/scripting.md.
#pragma once

#include "commands/command.h"
#include "scripting/lua_engine.h"

namespace kvrocks {

// Checks flags a script declared (EVAL shebang, function flags) before it
// runs; "" or the error reply text. ro_command: EVAL_RO / FCALL_RO.
std::string CheckScriptFlags(const CommandCall& call, uint32_t flags, bool ro_command);

// Runs req (keys, argv, sha/function filled in) and appends its reply. With
// read_only, write commands fail inside the script.
void RunScript(CommandCall& call, scripting::EvalRequest* req, bool read_only);

// The declared keys of "name script|function numkeys key... arg...": false
// (and the error text) if numkeys is bad; not_integer: the error when it is no
// integer (EVAL's generic one, FCALL's "Bad number of keys provided").
bool ScriptNumKeys(const std::vector<std::string>& args, int64_t* n, std::string* err,
                   const char* not_integer = kNotIntegerError);
// As extra lock keys for the dispatcher.
std::vector<std::pair<int, std::string>> ScriptKeys(const CommandCall& call);

// Whether an EVAL / EVALSHA / FCALL call runs a script that declared flags
// without writes ("#!lua flags=no-writes", a no-writes function): then, as in
// Redis, it neither writes nor may be propagated (CLIENT PAUSE WRITE lets it run).
bool ScriptDeclaresNoWrites(const std::vector<std::string>& args);

}  // namespace kvrocks
