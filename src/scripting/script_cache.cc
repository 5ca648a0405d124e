// The script bodies of EVAL / SCRIPT LOAD, shared by every thread.
#include <map>
#include <mutex>

#include "scripting/functions.h"
#include "scripting/lua_engine.h"

namespace kvrocks::scripting {

struct ScriptCache::Impl {
  struct Entry {
    std::string body;
    bool has_shebang;
    uint32_t flags;
  };
  std::mutex mu;
  std::map<std::string, Entry> bodies;
};

ScriptCache::ScriptCache() : impl_(std::make_unique<Impl>()) {}

ScriptCache& ScriptCache::Instance() {
  static ScriptCache cache;
  return cache;
}

void ScriptCache::Add(const std::string& sha, const std::string& body) {
  std::lock_guard<std::mutex> g(impl_->mu);
  if (impl_->bodies.count(sha)) return;  // EVAL of a known script: nothing to copy
  Impl::Entry e{body, false, 0};
  ParseEvalShebang(body, &e.has_shebang, &e.flags);
  impl_->bodies.emplace(sha, std::move(e));
}

bool ScriptCache::GetFlags(const std::string& sha, bool* has_shebang, uint32_t* flags) {
  std::lock_guard<std::mutex> g(impl_->mu);
  auto it = impl_->bodies.find(sha);
  if (it == impl_->bodies.end()) return false;
  *has_shebang = it->second.has_shebang;
  *flags = it->second.flags;
  return true;
}

bool ScriptCache::Get(const std::string& sha, std::string* body) {
  std::lock_guard<std::mutex> g(impl_->mu);
  auto it = impl_->bodies.find(sha);
  if (it == impl_->bodies.end()) return false;
  *body = it->second.body;
  return true;
}

bool ScriptCache::Exists(const std::string& sha) {
  std::lock_guard<std::mutex> g(impl_->mu);
  return impl_->bodies.count(sha) > 0;
}

void ScriptCache::Flush() {
  std::lock_guard<std::mutex> g(impl_->mu);
  impl_->bodies.clear();
  generation_++;
}

size_t ScriptCache::size() {
  std::lock_guard<std::mutex> g(impl_->mu);
  return impl_->bodies.size();
}

size_t ScriptCache::MemoryBytes() {
  std::lock_guard<std::mutex> g(impl_->mu);
  // A std::map node: the key, the value and three pointers and a colour.
  constexpr size_t kNode = sizeof(std::string) + sizeof(Impl::Entry) + 4 * sizeof(void*);
  size_t n = 0;
  for (const auto& [sha, e] : impl_->bodies) n += kNode + sha.capacity() + e.body.capacity();
  return n;
}

}  // namespace kvrocks::scripting
