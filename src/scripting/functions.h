// Redis 7 functions: libraries of Lua functions loaded with FUNCTION LOAD and
// called with FCALL. The registry holds every library's code and the
// functions it registered (name, flags, description), for all threads; each
// thread's LuaEngine loads the libraries into its own Lua state when the
// registry's generation changes. The libraries are persisted, all together,
// in one key of the state column family (FunctionRegistry::kStateKey).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kvrocks::scripting {

// Script flags (FUNCTION flags, or "#!lua flags=..." of EVAL scripts).
enum ScriptFlag : uint32_t {
  kFlagNoWrites = 1 << 0,
  kFlagAllowOom = 1 << 1,
  kFlagAllowStale = 1 << 2,
  kFlagNoCluster = 1 << 3,
  kFlagAllowCrossSlotKeys = 1 << 4,
};
// Parses one flag name ("no-writes" ...); false if unknown.
bool ParseScriptFlag(const std::string& name, uint32_t* flag);
// The names of the flags set in flags, in Redis' order.
std::vector<std::string> ScriptFlagNames(uint32_t flags);

// The "#!lua flags=..." first line of an EVAL script. Returns "" or the error
// reply text; *has_shebang tells whether there was one (then the script has
// flags, even none, and is not a legacy script).
std::string ParseEvalShebang(const std::string& body, bool* has_shebang, uint32_t* flags);

struct FunctionInfo {
  std::string name;
  std::string description;  // empty: none
  bool has_description = false;
  uint32_t flags = 0;
};

struct Library {
  std::string name;
  std::string code;
  std::vector<FunctionInfo> functions;
};

// The library name of "#!lua name=<name>\n..." code; "" or the error text.
std::string ParseLibraryHeader(const std::string& code, std::string* name);

class FunctionRegistry {
 public:
  static constexpr char kStateKey[] = "functions";

  static FunctionRegistry& Instance();

  // Compiles and runs code (on this thread's engine) to learn the functions
  // it registers; "" or the error reply text of FUNCTION LOAD.
  static std::string Build(const std::string& code, Library* lib);

  // Adds lib. Without replace, an existing library of that name is an error;
  // a function name registered by another library always is.
  std::string Add(const Library& lib, bool replace);
  // Adds several (FUNCTION RESTORE): all or none.
  std::string AddAll(const std::vector<Library>& libs, bool replace);
  bool Delete(const std::string& name);
  // Replaces every library (FUNCTION FLUSH with none, full sync, startup).
  void Reset(const std::vector<Library>& libs);

  // Libraries by name.
  std::vector<Library> Libraries();
  bool FindFunction(const std::string& name, FunctionInfo* info);
  size_t NumFunctions();
  // Bytes the registry holds: the libraries' code, names and function
  // descriptions (INFO used_memory_functions, MEMORY STATS functions.caches).
  size_t MemoryBytes();
  uint64_t generation() const { return generation_.load(); }

  // The persisted form of all libraries (their code), and back.
  std::string Serialize();
  static std::string SerializeLibraries(const std::vector<Library>& libs);
  static std::vector<std::string> Deserialize(const std::string& data);
  // Builds the libraries of codes (persisted, or from an RDB), logging and
  // skipping any that fails.
  static std::vector<Library> BuildAll(const std::vector<std::string>& codes);

 private:
  std::string Merge(const std::vector<Library>& libs, bool replace, bool restore);
  std::string CheckConflicts(const Library& lib, bool replace, const std::map<std::string, Library>& libs,
                             bool restore);

  std::mutex mu_;
  std::map<std::string, Library> libraries_;
  std::atomic<uint64_t> generation_{1};
};

}  // namespace kvrocks::scripting
