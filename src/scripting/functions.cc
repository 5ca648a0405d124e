#include "scripting/functions.h"

#include <glog/logging.h>

#include <cstring>

#include "common/string_util.h"
#include "scripting/lua_engine.h"

namespace kvrocks::scripting {

namespace {

// Redis' scripts_flags_def, in its order.
const std::pair<const char*, uint32_t> kFlags[] = {
    {"no-writes", kFlagNoWrites},
    {"allow-oom", kFlagAllowOom},
    {"allow-stale", kFlagAllowStale},
    {"no-cluster", kFlagNoCluster},
    {"allow-cross-slot-keys", kFlagAllowCrossSlotKeys},
};

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

constexpr char kInvalidName[] =
    "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

}  // namespace

bool ParseScriptFlag(const std::string& name, uint32_t* flag) {
  for (const auto& [n, f] : kFlags) {
    if (name == n) {
      *flag = f;
      return true;
    }
  }
  return false;
}

std::vector<std::string> ScriptFlagNames(uint32_t flags) {
  std::vector<std::string> out;
  for (const auto& [n, f] : kFlags) {
    if (flags & f) out.emplace_back(n);
  }
  return out;
}

std::string ParseEvalShebang(const std::string& body, bool* has_shebang, uint32_t* flags) {
  *has_shebang = false;
  *flags = 0;
  if (body.compare(0, 2, "#!") != 0) return "";
  size_t end = body.find('\n');
  if (end == std::string::npos) return "ERR Invalid script shebang";
  std::vector<std::string> parts;
  if (!SplitArgs(body.substr(0, end), &parts) || parts.empty()) return "ERR Invalid engine in script shebang";
  if (parts[0] != "#!lua") return "ERR Unexpected engine in script shebang: " + parts[0];
  *has_shebang = true;
  for (size_t i = 1; i < parts.size(); i++) {
    if (parts[i].compare(0, 6, "flags=") != 0) return "ERR Unknown lua shebang option: " + parts[i];
    std::string list = parts[i].substr(6);
    size_t pos = 0;
    while (true) {
      size_t comma = list.find(',', pos);
      std::string name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      uint32_t f;
      if (!ParseScriptFlag(name, &f)) return "ERR Unexpected flag in script shebang: " + name;
      *flags |= f;
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return "";
}

std::string ParseLibraryHeader(const std::string& code, std::string* name) {
  if (code.compare(0, 2, "#!") != 0) return "ERR Missing library metadata";
  size_t end = code.find('\n');
  if (end == std::string::npos) return "ERR Invalid library metadata";
  std::vector<std::string> parts;
  if (!SplitArgs(code.substr(0, end), &parts) || parts.empty()) return "ERR Invalid library metadata";
  bool have_name = false;
  for (size_t i = 1; i < parts.size(); i++) {
    if (parts[i].size() >= 5 && TokenEquals(parts[i].substr(0, 5), "name=")) {
      if (have_name) return "ERR Invalid metadata value, name argument was given multiple times";
      *name = parts[i].substr(5);
      have_name = true;
      continue;
    }
    return "ERR Invalid metadata value given: " + parts[i];
  }
  if (!have_name) return "ERR Library name was not given";
  if (!ValidName(*name)) return kInvalidName;
  std::string engine = parts[0].substr(2);
  if (!EqualsIgnoreCase(engine, "lua")) return "ERR Engine '" + engine + "' not found";
  return "";
}

FunctionRegistry& FunctionRegistry::Instance() {
  static FunctionRegistry registry;
  return registry;
}

std::string FunctionRegistry::Build(const std::string& code, Library* lib) {
  std::string err = ParseLibraryHeader(code, &lib->name);
  if (!err.empty()) return err;
  lib->code = code;
  err = LuaEngine::ForThisThread().LoadLibrary(code, &lib->functions, false);
  if (!err.empty()) return err;
  if (lib->functions.empty()) return "ERR No functions registered";
  return "";
}

std::string FunctionRegistry::CheckConflicts(const Library& lib, bool replace,
                                             const std::map<std::string, Library>& libs, bool restore) {
  if (!replace && libs.count(lib.name)) {
    // Redis words this differently for LOAD and RESTORE.
    return restore ? "ERR Library " + lib.name + " already exists" : "ERR Library '" + lib.name + "' already exists";
  }
  for (const auto& [name, other] : libs) {
    if (name == lib.name) continue;  // being replaced
    for (const auto& f : other.functions) {
      for (const auto& mine : lib.functions) {
        // Function names are case-insensitive across libraries, as FCALL finds them.
        if (EqualsIgnoreCase(mine.name, f.name)) return "ERR Function " + mine.name + " already exists";
      }
    }
  }
  return "";
}

std::string FunctionRegistry::Add(const Library& lib, bool replace) { return Merge({lib}, replace, false); }

std::string FunctionRegistry::AddAll(const std::vector<Library>& libs, bool replace) {
  return Merge(libs, replace, true);
}

std::string FunctionRegistry::Merge(const std::vector<Library>& libs, bool replace, bool restore) {
  std::lock_guard<std::mutex> g(mu_);
  std::map<std::string, Library> next = libraries_;
  for (const auto& lib : libs) {
    std::string err = CheckConflicts(lib, replace, next, restore);
    if (!err.empty()) return err;
    next[lib.name] = lib;
  }
  libraries_.swap(next);
  generation_++;
  return "";
}

bool FunctionRegistry::Delete(const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  if (libraries_.erase(name) == 0) return false;
  generation_++;
  return true;
}

void FunctionRegistry::Reset(const std::vector<Library>& libs) {
  std::lock_guard<std::mutex> g(mu_);
  libraries_.clear();
  for (const auto& lib : libs) libraries_[lib.name] = lib;
  generation_++;
}

std::vector<Library> FunctionRegistry::Libraries() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<Library> out;
  for (const auto& [name, lib] : libraries_) out.push_back(lib);
  return out;
}

bool FunctionRegistry::FindFunction(const std::string& name, FunctionInfo* info) {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& [lname, lib] : libraries_) {
    for (const auto& f : lib.functions) {
      if (EqualsIgnoreCase(f.name, name)) {
        *info = f;
        return true;
      }
    }
  }
  return false;
}

size_t FunctionRegistry::MemoryBytes() {
  std::lock_guard<std::mutex> g(mu_);
  constexpr size_t kNode = sizeof(std::string) + sizeof(Library) + 4 * sizeof(void*);
  size_t n = 0;
  for (const auto& [name, lib] : libraries_) {
    n += kNode + name.capacity() + lib.name.capacity() + lib.code.capacity();
    for (const auto& f : lib.functions) n += sizeof(FunctionInfo) + f.name.capacity() + f.description.capacity();
  }
  return n;
}

size_t FunctionRegistry::NumFunctions() {
  std::lock_guard<std::mutex> g(mu_);
  size_t n = 0;
  for (const auto& [name, lib] : libraries_) n += lib.functions.size();
  return n;
}

std::string FunctionRegistry::Serialize() { return SerializeLibraries(Libraries()); }

std::vector<Library> FunctionRegistry::BuildAll(const std::vector<std::string>& codes) {
  std::vector<Library> libs;
  for (const auto& code : codes) {
    Library lib;
    std::string err = Build(code, &lib);
    if (!err.empty()) {
      LOG(ERROR) << "Skipping a function library that does not load: " << err;
      continue;
    }
    libs.push_back(std::move(lib));
  }
  return libs;
}

std::string FunctionRegistry::SerializeLibraries(const std::vector<Library>& libs) {
  std::string out;
  for (const auto& lib : libs) {
    uint32_t len = static_cast<uint32_t>(lib.code.size());
    char buf[4];
    for (int i = 0; i < 4; i++) buf[i] = static_cast<char>(len >> (8 * i));
    out.append(buf, 4);
    out.append(lib.code);
  }
  return out;
}

std::vector<std::string> FunctionRegistry::Deserialize(const std::string& data) {
  std::vector<std::string> codes;
  size_t pos = 0;
  while (pos + 4 <= data.size()) {
    uint32_t len = 0;
    for (int i = 0; i < 4; i++) len |= static_cast<uint32_t>(static_cast<unsigned char>(data[pos + i])) << (8 * i);
    pos += 4;
    if (pos + len > data.size()) break;
    codes.push_back(data.substr(pos, len));
    pos += len;
  }
  return codes;
}

}  // namespace kvrocks::scripting
