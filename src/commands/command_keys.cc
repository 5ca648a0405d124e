#include "commands/command_keys.h"

#include <cstdlib>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "commands/command.h"
#include "commands/redis_command_meta.h"
#include "common/string_util.h"

namespace kvrocks {

namespace {

constexpr std::pair<uint32_t, const char*> kKeyFlagNames[] = {
    {kKeyRO, "RO"},         {kKeyRW, "RW"},         {kKeyOW, "OW"},
    {kKeyRM, "RM"},         {kKeyAccess, "access"}, {kKeyUpdate, "update"},
    {kKeyInsert, "insert"}, {kKeyDelete, "delete"}, {kKeyNotKey, "not_key"},
    {kKeyIncomplete, "incomplete"}, {kKeyVariableFlags, "variable_flags"}};

// One element of the recorded RESP3 text; a map's items alternate key, value.
struct RespNode {
  char type = 0;
  std::string_view text;  // simple and bulk strings
  int64_t number = 0;     // integers
  std::vector<RespNode> items;

  const RespNode* Get(std::string_view key) const {
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      if (items[i].text == key) return &items[i + 1];
    }
    return nullptr;
  }
  int64_t Int(std::string_view key) const {
    const RespNode* n = Get(key);
    return n != nullptr ? n->number : 0;
  }
  std::string_view Str(std::string_view key) const {
    const RespNode* n = Get(key);
    return n != nullptr ? n->text : std::string_view();
  }
};

// Parses the element at *pos of text written by scripts/gen_command_meta.py.
RespNode ParseNode(std::string_view in, size_t* pos) {
  RespNode node;
  size_t eol = in.find("\r\n", *pos);
  if (eol == std::string_view::npos) {
    *pos = in.size();
    return node;
  }
  node.type = in[*pos];
  std::string_view header = in.substr(*pos + 1, eol - *pos - 1);
  *pos = eol + 2;
  int64_t n = 0;
  ParseInt64(header, &n);
  switch (node.type) {
    case '$':
      node.text = in.substr(*pos, static_cast<size_t>(n));
      *pos += static_cast<size_t>(n) + 2;
      break;
    case ':':
      node.number = n;
      break;
    case '*':
    case '~':
    case '%':
      for (int64_t i = 0; i < (node.type == '%' ? 2 * n : n) && *pos < in.size(); i++) {
        node.items.push_back(ParseNode(in, pos));
      }
      break;
    default:  // '+'
      node.text = header;
  }
  return node;
}

}  // namespace

// One of a command's key specifications (COMMAND INFO's key_specs); not in the
// anonymous namespace, as CommandKeyFinder::Info holds them.
struct KeySpec {
  uint32_t flags = 0;
  enum class Begin { kIndex, kKeyword, kUnknown } begin = Begin::kUnknown;
  int index = 0;            // kIndex
  std::string keyword;      // kKeyword
  int startfrom = 0;        // kKeyword: where the search starts; < 0 counts from the end, backwards
  enum class Find { kRange, kKeynum, kUnknown } find = Find::kUnknown;
  int lastkey = 0, keystep = 1, limit = 0;  // kRange
  int keynumidx = 0, firstkey = 0;          // kKeynum (keystep too)
};

namespace {

KeySpec ParseKeySpec(const RespNode& map) {
  KeySpec s;
  if (const RespNode* flags = map.Get("flags")) {
    for (const RespNode& f : flags->items) {
      for (auto& [bit, name] : kKeyFlagNames) {
        if (f.text == name) s.flags |= bit;
      }
    }
  }
  const RespNode* bs = map.Get("begin_search");
  const RespNode* bs_spec = bs != nullptr ? bs->Get("spec") : nullptr;
  if (bs_spec != nullptr && bs->Str("type") == "index") {
    s.begin = KeySpec::Begin::kIndex;
    s.index = static_cast<int>(bs_spec->Int("index"));
  } else if (bs_spec != nullptr && bs->Str("type") == "keyword") {
    s.begin = KeySpec::Begin::kKeyword;
    s.keyword = std::string(bs_spec->Str("keyword"));
    s.startfrom = static_cast<int>(bs_spec->Int("startfrom"));
  }
  const RespNode* fk = map.Get("find_keys");
  const RespNode* fk_spec = fk != nullptr ? fk->Get("spec") : nullptr;
  if (fk_spec != nullptr && fk->Str("type") == "range") {
    s.find = KeySpec::Find::kRange;
    s.lastkey = static_cast<int>(fk_spec->Int("lastkey"));
    s.keystep = static_cast<int>(fk_spec->Int("keystep"));
    s.limit = static_cast<int>(fk_spec->Int("limit"));
  } else if (fk_spec != nullptr && fk->Str("type") == "keynum") {
    s.find = KeySpec::Find::kKeynum;
    s.keynumidx = static_cast<int>(fk_spec->Int("keynumidx"));
    s.firstkey = static_cast<int>(fk_spec->Int("firstkey"));
    s.keystep = static_cast<int>(fk_spec->Int("keystep"));
  }
  return s;
}

using Args = std::vector<std::string>;
using Keys = std::vector<KeyReference>;

// Redis' getkeys procedures (db.c), for the commands whose key specs cannot
// say where the keys are, or how each is used.

// COMMAND [destkey] <numkeys> <key> ... (ZUNIONSTORE, EVAL, LMPOP ...); Redis
// reads numkeys with atoi, and flags come from the specs, not from here.
Keys NumkeysKeys(const Args& a, size_t store, size_t count, size_t first) {
  if (count >= a.size()) return {};
  int num = std::atoi(a[count].c_str());
  if (num < 1 || num > static_cast<int>(a.size()) - static_cast<int>(first)) return {};
  Keys keys;
  for (int i = 0; i < num; i++) keys.push_back({first + static_cast<size_t>(i), 0});
  if (store != 0) keys.push_back({store, 0});
  return keys;
}

Keys ZUnionInterDiffStoreKeys(const Args& a) { return NumkeysKeys(a, 1, 2, 3); }
Keys NumkeysAt1Keys(const Args& a) { return NumkeysKeys(a, 0, 1, 2); }
Keys NumkeysAt2Keys(const Args& a) { return NumkeysKeys(a, 0, 2, 3); }

Keys SortRoKeys(const Args&) { return {{1, kKeyRO | kKeyAccess}}; }

Keys SortKeys(const Args& a) {
  // Options take no argument unless listed; the last STORE wins, as in SORT.
  static const std::pair<const char*, size_t> kSkip[] = {{"limit", 2}, {"get", 1}, {"by", 1}};
  size_t store = 0;
  for (size_t i = 2; i < a.size(); i++) {
    for (auto& [name, skip] : kSkip) {
      if (TokenEquals(a[i], name)) {
        i += skip;
        break;
      }
      if (TokenEquals(a[i], "store") && i + 1 < a.size()) {
        store = i + 1;
        break;
      }
    }
  }
  Keys keys = {{1, kKeyRO | kKeyAccess}};
  if (store != 0) keys.push_back({store, kKeyOW | kKeyUpdate});
  return keys;
}

Keys GeoRadiusKeys(const Args& a) {
  Keys keys = {{1, 0}};
  size_t stored = 0;
  for (size_t i = 5; i < a.size(); i++) {
    // STORE and STOREDIST: the last one wins, as in GEORADIUS.
    if ((TokenEquals(a[i], "store") || TokenEquals(a[i], "storedist")) && i + 1 < a.size()) {
      stored = i + 1;
      i++;
    }
  }
  if (stored != 0) keys.push_back({stored, 0});
  return keys;
}

Keys XReadKeys(const Args& a) {
  // The first STREAMS option (a group, a consumer or a key may be called "streams").
  size_t streams = 0;
  for (size_t i = 1; i < a.size(); i++) {
    if (TokenEquals(a[i], "block") || TokenEquals(a[i], "count")) {
      i++;
    } else if (TokenEquals(a[i], "group")) {
      i += 2;
    } else if (TokenEquals(a[i], "noack")) {
      continue;
    } else {
      if (TokenEquals(a[i], "streams")) streams = i;
      break;
    }
  }
  size_t num = streams != 0 ? a.size() - streams - 1 : 0;
  if (num == 0 || num % 2 != 0) return {};
  Keys keys;
  for (size_t i = streams + 1; i < a.size() - num / 2; i++) keys.push_back({i, 0});
  return keys;
}

Keys SetKeys(const Args& a) {
  for (size_t i = 3; i < a.size(); i++) {
    if (TokenEquals(a[i], "get")) return {{1, kKeyRW | kKeyAccess | kKeyUpdate}};
  }
  return {{1, kKeyOW | kKeyUpdate}};
}

Keys BitfieldKeys(const Args& a) {
  bool readonly = true;
  for (size_t i = 2; i < a.size(); i++) {
    size_t rest = a.size() - i - 1;
    if (TokenEquals(a[i], "get") && rest >= 2) {
      i += 2;
    } else if ((TokenEquals(a[i], "set") || TokenEquals(a[i], "incrby")) && rest >= 3) {
      readonly = false;
      break;
    } else if (TokenEquals(a[i], "overflow") && rest >= 1) {
      i += 1;
    } else {
      readonly = false;  // a syntax error: assume a write
      break;
    }
  }
  return {{1, readonly ? kKeyRO | kKeyAccess : kKeyRW | kKeyAccess | kKeyUpdate}};
}

// Redis' migrateGetKeys: the key argument, or with KEYS (and an empty key
// argument) what follows it; none when KEYS comes with a key argument.
Keys MigrateKeys(const Args& a) {
  size_t first = 3, num = 1;
  static const std::pair<const char*, size_t> kSkip[] = {{"copy", 0}, {"replace", 0}, {"auth", 1}, {"auth2", 2}};
  for (size_t i = 6; i < a.size(); i++) {
    if (TokenEquals(a[i], "keys")) {
      if (!a[3].empty()) {
        num = 0;  // a syntax error MIGRATE reports
      } else {
        first = i + 1;
        num = a.size() - first;
      }
      break;
    }
    for (auto& [name, skip] : kSkip) {
      if (TokenEquals(a[i], name)) {
        i += skip;
        break;
      }
    }
  }
  Keys keys;
  for (size_t i = 0; i < num; i++) keys.push_back({first + i, kKeyRW | kKeyAccess | kKeyDelete});
  return keys;
}

using Parser = Keys (*)(const Args&);

Parser FindParser(std::string_view name) {
  static const std::unordered_map<std::string_view, Parser> kParsers = {
      {"bitfield", BitfieldKeys},
      {"sort", SortKeys},
      {"sort_ro", SortRoKeys},
      {"georadius", GeoRadiusKeys},
      {"georadiusbymember", GeoRadiusKeys},
      {"blmpop", NumkeysAt2Keys},
      {"bzmpop", NumkeysAt2Keys},
      {"lmpop", NumkeysAt1Keys},
      {"zmpop", NumkeysAt1Keys},
      {"eval", NumkeysAt2Keys},
      {"evalsha", NumkeysAt2Keys},
      {"eval_ro", NumkeysAt2Keys},
      {"evalsha_ro", NumkeysAt2Keys},
      {"fcall", NumkeysAt2Keys},
      {"fcall_ro", NumkeysAt2Keys},
      {"sintercard", NumkeysAt1Keys},
      {"zdiff", NumkeysAt1Keys},
      {"zinter", NumkeysAt1Keys},
      {"zintercard", NumkeysAt1Keys},
      {"zunion", NumkeysAt1Keys},
      {"zdiffstore", ZUnionInterDiffStoreKeys},
      {"zinterstore", ZUnionInterDiffStoreKeys},
      {"zunionstore", ZUnionInterDiffStoreKeys},
      {"xread", XReadKeys},
      {"xreadgroup", XReadKeys},
      {"set", SetKeys},
      {"migrate", MigrateKeys},
  };
  auto it = kParsers.find(name);
  return it == kParsers.end() ? nullptr : it->second;
}

// Redis' getKeysUsingKeySpecs: false when a spec cannot be followed (an
// unknown or incomplete spec, a bad numkeys, keys past the end).
bool KeysFromSpecs(const std::vector<KeySpec>& specs, int arity, const Args& a, Keys* keys) {
  int argc = static_cast<int>(a.size());
  for (const KeySpec& spec : specs) {
    if (spec.flags & kKeyNotKey) continue;
    int first = 0;
    if (spec.begin == KeySpec::Begin::kIndex) {
      first = spec.index;
    } else if (spec.begin == KeySpec::Begin::kKeyword) {
      // As Redis: the search stops before end (the last argument forwards, the
      // second backwards).
      int start = spec.startfrom > 0 ? spec.startfrom : argc + spec.startfrom;
      int end = spec.startfrom > 0 ? argc - 1 : 1;
      for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (TokenEquals(a[static_cast<size_t>(i)], spec.keyword)) {
          first = i + 1;
          break;
        }
      }
      if (first == 0) continue;  // the keyword is absent: no keys from this spec
    } else {
      return false;
    }
    int last = 0;
    if (spec.find == KeySpec::Find::kRange) {
      if (spec.lastkey >= 0) {
        last = first + spec.lastkey;
      } else if (spec.limit == 0) {
        last = argc + spec.lastkey;
      } else {
        last = first + ((argc - first) / spec.limit + spec.lastkey);
      }
    } else if (spec.find == KeySpec::Find::kKeynum) {
      int64_t numkeys = 0;
      if (spec.keynumidx >= argc || first + spec.keynumidx >= argc ||
          !ParseInt64(a[static_cast<size_t>(first + spec.keynumidx)], &numkeys) || numkeys < 0) {
        return false;
      }
      first += spec.firstkey;
      last = first + static_cast<int>(numkeys) - 1;  // Redis truncates numkeys to an int here
    } else {
      return false;
    }
    if (last >= argc || last < first || first >= argc || spec.keystep < 1) return false;
    for (int i = first; i <= last; i += spec.keystep) {
      if (i >= argc || i < first) {
        if (arity < 0) continue;
        return false;
      }
      keys->push_back({static_cast<size_t>(i), spec.flags});
    }
    if (spec.flags & kKeyIncomplete) return false;
  }
  return true;
}

}  // namespace

struct CommandKeyFinder::Info {
  std::string name;  // "get", "xgroup|create"
  int arity = 0;
  bool keys_optional = false;
  bool admin = false;
  std::vector<KeySpec> specs;
  Parser parser = nullptr;
};

namespace {

CommandKeyFinder::Info InfoFromMeta(const RedisCommandMeta& m) {
  CommandKeyFinder::Info info;
  info.name = m.name;
  std::string_view text = m.info;
  size_t pos = 0;
  std::vector<RespNode> fields;  // name, arity, flags, first, last, step, categories, tips, key specs
  while (pos < text.size() && fields.size() < 9) fields.push_back(ParseNode(text, &pos));
  if (fields.size() < 9) return info;
  info.arity = static_cast<int>(fields[1].number);
  for (const RespNode& f : fields[2].items) {
    if (f.text == "no_mandatory_keys") info.keys_optional = true;
    if (f.text == "admin") info.admin = true;
  }
  for (const RespNode& spec : fields[8].items) info.specs.push_back(ParseKeySpec(spec));
  info.parser = FindParser(m.name);
  return info;
}

// A command Redis 7.0 does not have (HEXPIRE & co, from Redis 7.4): one range
// spec from its key positions, read or written as its flags say.
CommandKeyFinder::Info InfoFromTable(const CommandSpec& c) {
  CommandKeyFinder::Info info;
  info.name = ToLower(c.name);
  info.arity = c.arity;
  info.admin = (c.flags & kCmdAdmin) != 0;
  if (c.first_key > 0) {
    KeySpec s;
    s.flags = (c.flags & kCmdWrite) ? kKeyRW | kKeyUpdate : kKeyRO | kKeyAccess;
    s.begin = KeySpec::Begin::kIndex;
    s.index = c.first_key;
    s.find = KeySpec::Find::kRange;
    s.lastkey = c.last_key < 0 ? c.last_key : c.last_key - c.first_key;
    s.keystep = c.key_step;
    info.specs.push_back(s);
  }
  return info;
}

// Every command's and subcommand's info, by lower-case name ("xgroup|create").
const CommandKeyFinder::Info* FindInfo(const std::string& name) {
  static const std::unordered_map<std::string, CommandKeyFinder::Info> kInfos = [] {
    std::unordered_map<std::string, CommandKeyFinder::Info> infos;
    for (size_t i = 0; i < kRedisCommandMetaCount; i++) {
      infos.emplace(kRedisCommandMeta[i].name, InfoFromMeta(kRedisCommandMeta[i]));
    }
    // emplace keeps Redis' entry for the commands both have.
    for (auto& [unused, c] : CommandTable::Instance().all()) infos.emplace(ToLower(c.name), InfoFromTable(c));
    return infos;
  }();
  auto it = kInfos.find(name);
  return it == kInfos.end() ? nullptr : &it->second;
}

}  // namespace

std::vector<std::string> KeyFlagNames(uint32_t flags) {
  std::vector<std::string> out;
  for (auto& [bit, name] : kKeyFlagNames) {
    if (flags & bit) out.emplace_back(name);
  }
  return out;
}

CommandKeyFinder::CommandKeyFinder(const CommandSpec& spec, const std::vector<std::string>& args) {
  std::string name = ToLower(spec.name);
  bool container = false, listed = false;
  if (args.size() > 1) {
    std::string full = name + "|" + ToLower(args[1]);
    for (const SubcommandSpec& s : spec.subcommands) {
      if (s.arity == 0) continue;  // DEBUG's: Redis lists none
      container = true;
      listed = listed || s.name == full;
    }
    if (container && !listed) return;
    if (container) name = std::move(full);
  }
  info_ = FindInfo(name);
}

const std::string& CommandKeyFinder::name() const { return info_->name; }

int CommandKeyFinder::arity() const { return info_->arity; }

bool CommandKeyFinder::keys_optional() const { return info_->keys_optional; }

bool CommandKeyFinder::admin() const { return info_->admin; }

bool CommandKeyFinder::may_have_keys() const {
  if (info_->parser != nullptr) return true;
  for (const KeySpec& s : info_->specs) {
    if (!(s.flags & kKeyNotKey)) return true;
  }
  return false;
}

std::vector<std::string> CommandKeyFinder::Names(const std::vector<std::string>& args) const {
  std::vector<std::string> names;
  if (!valid()) return names;
  for (const KeyReference& k : Find(args)) names.push_back(args[k.pos]);
  return names;
}

std::vector<KeyReference> CommandKeyFinder::Find(const std::vector<std::string>& args) const {
  bool has_spec = false, variable_flags = false;
  for (const KeySpec& s : info_->specs) {
    has_spec = has_spec || !(s.flags & kKeyNotKey);
    variable_flags = variable_flags || (s.flags & kKeyVariableFlags);
  }
  // Specs first when their flags are reliable; Redis' parser when they cannot say.
  if (has_spec && !variable_flags) {
    Keys keys;
    if (KeysFromSpecs(info_->specs, info_->arity, args, &keys)) return keys;
  }
  if (info_->parser != nullptr) return info_->parser(args);
  return {};
}

}  // namespace kvrocks
