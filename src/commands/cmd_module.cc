// MODULE as a Redis 7.0 with no modules loaded and enable-module-command at its
// default "no" answers it: LIST is empty and LOAD, LOADEX and UNLOAD are
// refused by the dispatcher (they are protected, kCmdProtected). kvrocks cannot
// load Redis modules, which are built against Redis' in-memory module API;
// clients list modules to find out which features a server has.
#include "commands/helpers.h"

namespace kvrocks {

namespace {

void Module(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() == 2 && TokenEquals(a[1], "help")) {
    return ReplyHelp(call, {"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "LIST",
                            "    Return a list of loaded modules.", "LOAD <path> [<arg> ...]",
                            "    Load a module library from <path>, passing to it any optional arguments.",
                            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
                            "    Load a module library from <path>, while passing it module configurations and "
                            "optional arguments.",
                            "UNLOAD <name>", "    Unload a module.", "HELP", "    Prints this help."});
  }
  if (a.size() == 2 && TokenEquals(a[1], "list")) return reply::ArrayHeader(call.out, 0);
  ReplySubcommandSyntaxError(call);
}

}  // namespace

void RegisterModuleCommands(CommandTable* t) {
  t->Add({"module", -2, kCmdAdmin | kCmdNoScript, 0, 0, 0, Module, "server", "A container for module commands",
          "4.0.0", nullptr,
          {{"module|help", 2},
           {"module|list", 2},
           SubcommandWithFlags("module|load", -3, kCmdProtected),
           SubcommandWithFlags("module|loadex", -3, kCmdProtected),
           SubcommandWithFlags("module|unload", 3, kCmdProtected)}});
}

}  // namespace kvrocks
