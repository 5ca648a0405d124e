// Redis 7 functions: FCALL, FCALL_RO and FUNCTION (LOAD DELETE FLUSH LIST
// DUMP RESTORE KILL STATS HELP). Libraries live in scripting::FunctionRegistry
// and are persisted in one key of the state column family, written in the
// same batch as the command's reply (see scripting/functions.h).
#include "commands/helpers.h"
#include "commands/script_runner.h"
#include "replication/rdb_reader.h"
#include "replication/rdb_writer.h"
#include "replication/replica.h"
#include "scripting/functions.h"
#include "server/worker.h"
#include "server/write_batcher.h"

namespace kvrocks {

namespace {

using scripting::FunctionInfo;
using scripting::FunctionRegistry;
using scripting::Library;
using scripting::RunningScripts;

void FcallGeneric(CommandCall& call, bool ro_command) {
  const auto& a = call.args;
  int64_t numkeys;
  std::string err;
  FunctionInfo info;
  if (!FunctionRegistry::Instance().FindFunction(a[1], &info)) return ReplyError(call, "ERR Function not found");
  if (!ScriptNumKeys(a, &numkeys, &err, "ERR Bad number of keys provided")) return ReplyError(call, err);
  err = CheckScriptFlags(call, info.flags, ro_command);
  if (!err.empty()) return ReplyError(call, err);
  std::string body;
  scripting::EvalRequest req;
  req.sha = &info.name;  // as registered: FCALL finds it whatever the case
  req.body = &body;
  req.function = true;
  req.keys.assign(a.begin() + 3, a.begin() + 3 + numkeys);
  req.argv.assign(a.begin() + 3 + numkeys, a.end());
  RunScript(call, &req, ro_command || (info.flags & scripting::kFlagNoWrites));
}

void Fcall(CommandCall& call) { FcallGeneric(call, false); }
void FcallRo(CommandCall& call) { FcallGeneric(call, true); }

// Serializes changes of the libraries and makes them durable with the reply.
class FunctionsChange {
 public:
  explicit FunctionsChange(CommandCall& call) : call_(call) {
    if (!call.exclusive) {
      call.conn->worker()->batcher()->Lock({LockManager::KeyHash(0, std::string_view("\0functions", 10))});
    }
  }
  // Writes the registry's current libraries.
  void Persist() {
    call_.ctx->Put(ColumnFamily::kState, FunctionRegistry::kStateKey, FunctionRegistry::Instance().Serialize());
  }

 private:
  CommandCall& call_;
};

void FunctionLoad(CommandCall& call) {
  const auto& a = call.args;
  bool replace = false;
  size_t pos = 2;
  for (; pos + 1 < a.size(); pos++) {
    if (!TokenEquals(a[pos], "replace")) return ReplyError(call, "ERR Unknown option given: " + CString(a[pos]));
    replace = true;
  }
  if (pos >= a.size()) return ReplyError(call, "ERR Function code is missing");
  Library lib;
  std::string err = FunctionRegistry::Build(a[pos], &lib);
  if (!err.empty()) return ReplyError(call, err);
  FunctionsChange change(call);
  err = FunctionRegistry::Instance().Add(lib, replace);
  if (!err.empty()) return ReplyError(call, err);
  change.Persist();
  reply::Bulk(call.out, lib.name);
}

void FunctionDelete(CommandCall& call) {
  if (call.args.size() != 3) return ReplySubcommandSyntaxError(call);
  FunctionsChange change(call);
  if (!FunctionRegistry::Instance().Delete(call.args[2])) return ReplyError(call, "ERR Library not found");
  change.Persist();
  reply::Ok(call.out);
}

void FunctionFlush(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() > 3) return ReplySubcommandSyntaxError(call);
  if (a.size() == 3 && !TokenEquals(a[2], "sync") && !TokenEquals(a[2], "async")) {
    return ReplyError(call, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  }
  FunctionsChange change(call);
  FunctionRegistry::Instance().Reset({});
  change.Persist();
  reply::Ok(call.out);
}

void FunctionList(CommandCall& call) {
  const auto& a = call.args;
  bool with_code = false, have_pattern = false;
  std::string pattern;
  for (size_t i = 2; i < a.size(); i++) {
    if (!with_code && TokenEquals(a[i], "withcode")) {
      with_code = true;
    } else if (!have_pattern && TokenEquals(a[i], "libraryname")) {
      if (i + 1 >= a.size()) return ReplyError(call, "ERR library name argument was not given");
      pattern = a[++i];
      have_pattern = true;
    } else {
      return ReplyError(call, "ERR Unknown argument " + CString(a[i]));
    }
  }
  std::vector<Library> libs;
  for (auto& lib : FunctionRegistry::Instance().Libraries()) {
    if (!have_pattern || StringMatch(pattern, lib.name, true)) libs.push_back(std::move(lib));
  }
  std::string* out = call.out;
  reply::ArrayHeader(out, libs.size());
  for (const auto& lib : libs) {
    reply::MapHeader(out, with_code ? 4 : 3, call.resp);
    reply::Bulk(out, "library_name");
    reply::Bulk(out, lib.name);
    reply::Bulk(out, "engine");
    reply::Bulk(out, "LUA");
    reply::Bulk(out, "functions");
    reply::ArrayHeader(out, lib.functions.size());
    for (const auto& f : lib.functions) {
      reply::MapHeader(out, 3, call.resp);
      reply::Bulk(out, "name");
      reply::Bulk(out, f.name);
      reply::Bulk(out, "description");
      if (f.has_description) {
        reply::Bulk(out, f.description);
      } else {
        reply::Null(out, call.resp);
      }
      reply::Bulk(out, "flags");
      auto names = scripting::ScriptFlagNames(f.flags);
      reply::SetHeader(out, names.size(), call.resp);
      for (const auto& n : names) reply::Simple(out, n);
    }
    if (with_code) {
      reply::Bulk(out, "library_code");
      reply::Bulk(out, lib.code);
    }
  }
}

void FunctionDump(CommandCall& call) {
  if (call.args.size() != 2) return ReplySubcommandSyntaxError(call);
  std::string body;
  for (const auto& lib : FunctionRegistry::Instance().Libraries()) {
    body.push_back(static_cast<char>(rdb::kOpFunction2));
    rdb::PutString(&body, lib.code);
  }
  reply::Bulk(call.out, rdb::FinishDump(std::move(body)));
}

void FunctionRestore(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() > 4) return ReplySubcommandSyntaxError(call);
  enum { kAppend, kReplace, kFlush } policy = kAppend;
  if (a.size() == 4) {
    if (TokenEquals(a[3], "append")) {
      policy = kAppend;
    } else if (TokenEquals(a[3], "replace")) {
      policy = kReplace;
    } else if (TokenEquals(a[3], "flush")) {
      policy = kFlush;
    } else {
      return ReplyError(call, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
    }
  }
  std::vector<std::string> codes;
  Status s = rdb::Reader::ParseFunctionDump(a[2], &codes);
  if (!s.ok()) return ReplyError(call, s.message());
  std::vector<Library> libs;
  for (const auto& code : codes) {
    Library lib;
    std::string err = FunctionRegistry::Build(code, &lib);
    if (!err.empty()) return ReplyError(call, err);
    for (const auto& other : libs) {
      if (other.name == lib.name) return ReplyError(call, "ERR Library '" + lib.name + "' already exists");
    }
    libs.push_back(std::move(lib));
  }
  FunctionsChange change(call);
  FunctionRegistry& registry = FunctionRegistry::Instance();
  if (policy == kFlush) {
    registry.Reset(libs);
  } else {
    std::string err = registry.AddAll(libs, policy == kReplace);
    if (!err.empty()) return ReplyError(call, err);
  }
  change.Persist();
  reply::Ok(call.out);
}

void FunctionStats(CommandCall& call) {
  if (call.args.size() != 2) return ReplySubcommandSyntaxError(call);
  std::string* out = call.out;
  reply::MapHeader(out, 2, call.resp);
  reply::Bulk(out, "running_script");
  std::string name;
  std::vector<std::string> command;
  int64_t duration_ms;
  if (RunningScripts::RunningFunction(&name, &command, &duration_ms)) {
    reply::MapHeader(out, 3, call.resp);
    reply::Bulk(out, "name");
    reply::Bulk(out, name);
    reply::Bulk(out, "command");
    reply::BulkArray(out, command);
    reply::Bulk(out, "duration_ms");
    reply::Integer(out, duration_ms);
  } else {
    reply::Null(out, call.resp);
  }
  FunctionRegistry& registry = FunctionRegistry::Instance();
  reply::Bulk(out, "engines");
  reply::MapHeader(out, 1, call.resp);
  reply::Bulk(out, "LUA");
  reply::MapHeader(out, 2, call.resp);
  reply::Bulk(out, "libraries_count");
  reply::Integer(out, static_cast<int64_t>(registry.Libraries().size()));
  reply::Bulk(out, "functions_count");
  reply::Integer(out, static_cast<int64_t>(registry.NumFunctions()));
}

void Function(CommandCall& call) {
  const auto& a = call.args;
  const std::string& sub = a[1];
  if (TokenEquals(sub, "help") && a.size() == 2) {
    return ReplyHelp(
        call,
        {"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
         "LOAD [REPLACE] <FUNCTION CODE>",
         "    Create a new library with the given library name and code.",
         "DELETE <LIBRARY NAME>",
         "    Delete the given library.",
         "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
         "    Return general information on all the libraries:",
         "    * Library name",
         "    * The engine used to run the Library",
         "    * Library description",
         "    * Functions list",
         "    * Library code (if WITHCODE is given)",
         "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
         "STATS",
         "    Return information about the current function running:",
         "    * Function name",
         "    * Command used to run the function",
         "    * Duration in MS that the function is running",
         "    If no function is running, return nil",
         "    In addition, returns a list of available engines.",
         "KILL",
         "    Kill the current running function.",
         "FLUSH [ASYNC|SYNC]",
         "    Delete all the libraries.",
         "    When called without the optional mode argument, the behavior is determined by the",
         "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
         "    * ASYNC: Asynchronously flush the libraries.",
         "    * SYNC: Synchronously flush the libraries.",
         "DUMP",
         "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
         "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
         "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
         "    control how to handle existing libraries (default APPEND):",
         "    * FLUSH: delete all existing libraries.",
         "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
         "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
         "      libraries with the new libraries (notice that even on this option there is a chance of failure",
         "      in case of functions name collision with another library).",
         "HELP",
         "    Prints this help."});
  }
  if (TokenEquals(sub, "load")) {
    if (a.size() < 3) return ReplySubcommandSyntaxError(call);
    return FunctionLoad(call);
  }
  if (TokenEquals(sub, "delete")) return FunctionDelete(call);
  if (TokenEquals(sub, "flush")) return FunctionFlush(call);
  if (TokenEquals(sub, "list")) return FunctionList(call);
  if (TokenEquals(sub, "dump")) return FunctionDump(call);
  if (TokenEquals(sub, "restore")) {
    if (a.size() < 3) return ReplySubcommandSyntaxError(call);
    return FunctionRestore(call);
  }
  if (TokenEquals(sub, "stats")) return FunctionStats(call);
  if (TokenEquals(sub, "kill")) {
    if (a.size() != 2) return ReplySubcommandSyntaxError(call);
    std::string err = RunningScripts::KillBusy(true);
    if (!err.empty()) return ReplyError(call, err);
    return reply::Ok(call.out);
  }
  ReplyUnknownSubcommand(call, "FUNCTION");
}

}  // namespace

void RegisterFunctionCommands(CommandTable* t) {
  const uint32_t f = kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdLocksKeys | kCmdSlow;
  t->Add({"fcall", -3, f, 0, 0, 0, Fcall, "scripting", "Invokes a function.", "7.0.0", ScriptKeys});
  t->Add({"fcall_ro", -3, f | kCmdReadOnly, 0, 0, 0, FcallRo, "scripting", "Invokes a read-only function.", "7.0.0",
          ScriptKeys});
  t->Add({"function", -2, kCmdNoScript, 0, 0, 0, Function, "scripting", "A container for function commands.",
          "7.0.0", nullptr,
          {{"function|delete", 3}, {"function|dump", 2}, {"function|flush", -2}, {"function|help", 2},
           {"function|kill", 2}, {"function|list", -2}, {"function|load", -3}, {"function|restore", -3},
           {"function|stats", 2}}});
}

}  // namespace kvrocks
