#include "config/config.h"

#include <glog/logging.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/string_util.h"

namespace kvrocks {

struct Config::Option {
  std::string name;
  bool mutable_at_runtime;
  std::function<std::string()> get;
  std::function<Status(const std::string&)> set;
  // The value as CONFIG REWRITE writes it to the file; unset: get(), quoted if needed.
  std::function<std::string()> file_value;
  std::string default_value;  // get() before the file and flags were applied
  SetHook hook;
  std::vector<std::string> aliases;
  // Redis' PROTECTED_CONFIG: CONFIG SET only as enable-protected-configs allows.
  bool is_protected = false;
  // Several lines of it in the config file add up (save); "" clears what came before.
  bool lines_add_up = false;
};

bool RedisMemToUll(const std::string& s, uint64_t* out) {
  if (!s.empty() && s[0] == '-') return false;
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') digits++;
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000 * 1000}, {"mb", 1024 * 1024},
      {"g", 1000ULL * 1000 * 1000}, {"gb", 1024ULL * 1024 * 1024}};
  uint64_t mul = 0;
  for (const auto& [unit, m] : kUnits) {
    if (TokenEquals(s.substr(digits), unit)) mul = m;
  }
  if (mul == 0 || digits >= 128) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < digits; i++) {
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) {
      v = UINT64_MAX;  // strtoull's ERANGE result, which memtoull takes
      break;
    }
    v = v * 10 + d;
  }
  *out = v * mul;
  return true;
}

bool ParseMemory(const std::string& s, int64_t* out) {
  uint64_t v;
  if (s.empty() || !RedisMemToUll(s, &v) || v > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

std::string FormatMemory(int64_t bytes) {
  static const std::pair<const char*, int64_t> kUnits[] = {
      {"gb", 1024LL * 1024 * 1024}, {"mb", 1024LL * 1024}, {"kb", 1024}};
  for (const auto& [suffix, unit] : kUnits) {
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + suffix;
  }
  return std::to_string(bytes);
}

namespace {

// How Redis' numeric configs (config.c, numericParseString and
// numericBoundaryCheck) read a value: as a memory size, a percentage (stored
// negated) or a plain integer, then bounds compared signed, or unsigned for
// Redis' UINT, SIZE_T and ULONG_LONG configs; with Redis' error texts.
struct NumericRule {
  int64_t lower, upper;
  bool is_unsigned = false;
  bool memory = false;
  bool percent = false;
};

Status ParseRedisNumeric(const NumericRule& r, const std::string& v, int64_t* out) {
  uint64_t u;
  int64_t n;
  bool parsed = false;
  if (r.memory && RedisMemToUll(v, &u)) {
    *out = static_cast<int64_t>(u);
    parsed = true;
  } else if (r.percent && v.size() > 1 && v.back() == '%' && ParseInt64(v.substr(0, v.size() - 1), &n) && n >= 0) {
    *out = -n;
    parsed = true;
  } else if (!r.memory && !r.percent && ParseInt64(v, &n)) {
    *out = n;
    parsed = true;
  }
  if (!parsed) {
    if (r.memory && r.percent) return Status::InvalidArgument("argument must be a memory or percent value");
    if (r.memory) return Status::InvalidArgument("argument must be a memory value");
    return Status::InvalidArgument("argument couldn't be parsed into an integer");
  }
  if (r.is_unsigned) {
    uint64_t x = static_cast<uint64_t>(*out);
    if (x > static_cast<uint64_t>(r.upper) || x < static_cast<uint64_t>(r.lower)) {
      return Status::InvalidArgument("argument must be between " + std::to_string(static_cast<uint64_t>(r.lower)) +
                                     " and " + std::to_string(static_cast<uint64_t>(r.upper)) + " inclusive");
    }
  } else if (r.percent && *out < 0) {
    if (*out < r.lower) {
      return Status::InvalidArgument("percentage argument must be less or equal to " + std::to_string(-r.lower));
    }
  } else if (*out > r.upper || *out < r.lower) {
    return Status::InvalidArgument("argument must be between " + std::to_string(r.lower) + " and " +
                                   std::to_string(r.upper) + " inclusive");
  }
  return Status::OK();
}

// One of Redis' numeric configs, as Redis defines it (type, bounds, memory units).
template <typename T>
std::unique_ptr<Config::Option> RedisNumeric(const char* name, Relaxed<T>* field, NumericRule rule, bool mut) {
  auto o = std::make_unique<Config::Option>();
  o->name = name;
  o->mutable_at_runtime = mut;
  o->get = [field] { return std::to_string(field->get()); };
  if (rule.memory) o->file_value = [field] { return FormatMemory(static_cast<int64_t>(field->get())); };
  o->set = [field, rule](const std::string& v) {
    int64_t n;
    Status s = ParseRedisNumeric(rule, v, &n);
    if (s.ok()) *field = static_cast<T>(n);
    return s;
  };
  return o;
}

constexpr int64_t kLongMax = INT64_MAX;  // Redis' LONG_MAX, LLONG_MAX and SSIZE_MAX here

NumericRule Signed(int64_t lower, int64_t upper) { return NumericRule{lower, upper}; }
NumericRule Unsigned(int64_t lower, int64_t upper) { return NumericRule{lower, upper, true}; }
NumericRule Memory(NumericRule r) {
  r.memory = true;
  return r;
}

std::unique_ptr<Config::Option> IntOption(const char* name, Relaxed<int>* field, int64_t min, int64_t max, bool mut) {
  auto o = std::make_unique<Config::Option>();
  o->name = name;
  o->mutable_at_runtime = mut;
  o->get = [field] { return std::to_string(field->get()); };
  o->set = [field, min, max, name](const std::string& v) {
    int64_t n;
    if (!ParseInt64(v, &n)) return Status::InvalidArgument("argument couldn't be parsed into an integer");
    if (n < min || n > max) {
      return Status::InvalidArgument("argument must be between " + std::to_string(min) + " and " +
                                     std::to_string(max) + " inclusive");
    }
    *field = static_cast<int>(n);
    return Status::OK();
  };
  return o;
}

std::unique_ptr<Config::Option> Int64Option(const char* name, Relaxed<int64_t>* field, int64_t min, bool memory,
                                            bool mut) {
  auto o = std::make_unique<Config::Option>();
  o->name = name;
  o->mutable_at_runtime = mut;
  o->get = [field] { return std::to_string(field->get()); };
  if (memory) o->file_value = [field] { return FormatMemory(field->get()); };
  o->set = [field, min, memory](const std::string& v) {
    int64_t n;
    bool ok = memory ? ParseMemory(v, &n) : ParseInt64(v, &n);
    if (!ok) return Status::InvalidArgument("argument couldn't be parsed into an integer");
    if (n < min) return Status::InvalidArgument("argument must be at least " + std::to_string(min));
    *field = n;
    return Status::OK();
  };
  return o;
}

std::unique_ptr<Config::Option> BoolOption(const char* name, Relaxed<bool>* field, bool mut) {
  auto o = std::make_unique<Config::Option>();
  o->name = name;
  o->mutable_at_runtime = mut;
  o->get = [field] { return std::string(field->get() ? "yes" : "no"); };
  o->set = [field](const std::string& v) {
    if (TokenEquals(v, "yes")) {
      *field = true;
    } else if (TokenEquals(v, "no")) {
      *field = false;
    } else {
      return Status::InvalidArgument("argument must be 'yes' or 'no'");
    }
    return Status::OK();
  };
  return o;
}

std::unique_ptr<Config::Option> StringOption(const char* name, std::string* field, bool mut,
                                             std::vector<std::string> allowed = {}) {
  auto o = std::make_unique<Config::Option>();
  o->name = name;
  o->mutable_at_runtime = mut;
  o->get = [field] { return *field; };
  o->set = [field, allowed](const std::string& v) {
    if (!allowed.empty()) {
      for (const auto& a : allowed) {
        if (TokenEquals(a, v)) {
          *field = a;
          return Status::OK();
        }
      }
      return Status::InvalidArgument("argument(s) must be one of the following: " + [&] {
        std::string s;
        for (size_t i = 0; i < allowed.size(); i++) s += (i ? ", " : "") + allowed[i];
        return s;
      }());
    }
    *field = v;
    return Status::OK();
  };
  return o;
}

// rocksdb.compression: one to seven of no, snappy, lz4, zstd separated by colons
// (levels 0 to 6, the last repeating), as given (storage/storage.cc reads them).
std::unique_ptr<Config::Option> CompressionLevelsOption(const char* name, std::string* field) {
  auto o = StringOption(name, field, true);
  o->set = [field](const std::string& v) {
    static const char* const kTypes[] = {"no", "snappy", "lz4", "zstd"};
    bool ok = std::count(v.begin(), v.end(), ':') < 7;
    for (size_t from = 0; ok && from <= v.size();) {
      size_t to = std::min(v.find(':', from), v.size());
      std::string_view level(v.data() + from, to - from);
      ok = std::any_of(std::begin(kTypes), std::end(kTypes), [&](const char* t) { return TokenEquals(level, t); });
      from = to + 1;
    }
    if (!ok) return Status::InvalidArgument("argument must be 1 to 7 of no, snappy, lz4, zstd separated by ':'");
    *field = v;
    return Status::OK();
  };
  return o;
}

std::unique_ptr<Config::Option> OutputBufferLimitOption(Config* cfg) {
  auto o = std::make_unique<Config::Option>();
  o->name = "client-output-buffer-limit";
  o->mutable_at_runtime = true;
  auto format = [cfg](std::string (*bytes)(int64_t)) {
    auto fmt = [bytes](const char* cls, const Config::OutputBufferLimit& l) {
      return std::string(cls) + " " + bytes(l.hard) + " " + bytes(l.soft) + " " + std::to_string(l.soft_seconds);
    };
    return fmt("normal", cfg->obl_normal) + " " + fmt("slave", cfg->obl_replica) + " " + fmt("pubsub", cfg->obl_pubsub);
  };
  o->get = [format] { return format([](int64_t n) { return std::to_string(n); }); };
  o->file_value = [format] { return format(FormatMemory); };
  o->set = [cfg](const std::string& v) {
    // As Redis (sdssplitlen on " "): every space separates, so two in a row make
    // an empty size (0), and "" names no class and changes nothing.
    std::vector<std::string> t;
    for (size_t start = 0; !v.empty();) {
      size_t sp = v.find(' ', start);
      t.push_back(v.substr(start, sp == std::string::npos ? std::string::npos : sp - start));
      if (sp == std::string::npos) break;
      start = sp + 1;
    }
    if (t.size() % 4 != 0) {
      return Status::InvalidArgument("Wrong number of arguments in buffer limit configuration.");
    }
    struct Update {
      Config::OutputBufferLimit* target;
      int64_t hard, soft, soft_seconds;
    };
    std::vector<Update> updates;
    for (size_t i = 0; i < t.size(); i += 4) {
      Config::OutputBufferLimit* target = nullptr;
      std::string cls = ToLower(t[i]);
      if (cls == "normal") target = &cfg->obl_normal;
      if (cls == "replica" || cls == "slave") target = &cfg->obl_replica;
      if (cls == "pubsub") target = &cfg->obl_pubsub;
      if (target == nullptr) {
        return Status::InvalidArgument("Invalid client class specified in buffer limit configuration.");
      }
      // Redis' memtoull for the sizes and strtoll for the seconds ("" is 0 for both).
      uint64_t hard, soft;
      char* end = nullptr;
      long long seconds = std::strtoll(t[i + 3].c_str(), &end, 10);
      if (!RedisMemToUll(t[i + 1], &hard) || !RedisMemToUll(t[i + 2], &soft) || seconds < 0 || *end != '\0') {
        return Status::InvalidArgument("Error in hard, soft or soft_seconds setting in buffer limit configuration.");
      }
      updates.push_back(
          {target, static_cast<int64_t>(hard), static_cast<int64_t>(soft), static_cast<int64_t>(seconds)});
    }
    for (const Update& u : updates) {
      u.target->hard = u.hard;
      u.target->soft = u.soft;
      u.target->soft_seconds = u.soft_seconds;
    }
    return Status::OK();
  };
  return o;
}

// A file name inside dir (Redis' isValidDBfilename: no path).
std::unique_ptr<Config::Option> FileNameOption(const char* name, std::string* field) {
  auto o = StringOption(name, field, true);
  o->set = [field](const std::string& v) {
    if (v.find('/') != std::string::npos || v.find('\\') != std::string::npos) {
      return Status::InvalidArgument("dbfilename can't be a path, just a filename");
    }
    *field = v;
    return Status::OK();
  };
  return o;
}

// A file mode in octal (unixsocketperm), parsed and shown as Redis' OCTAL_CONFIG.
std::unique_ptr<Config::Option> OctalOption(const char* name, Relaxed<int>* field, int max, bool mut) {
  auto o = std::make_unique<Config::Option>();
  o->name = name;
  o->mutable_at_runtime = mut;
  o->get = [field] {
    char buf[24];
    snprintf(buf, sizeof(buf), "%o", static_cast<unsigned>(field->get()));
    return std::string(buf);
  };
  o->set = [field, max](const std::string& v) {
    char* end = nullptr;
    errno = 0;
    long long n = v.empty() ? 0 : strtoll(v.c_str(), &end, 8);
    if (v.empty() || errno != 0 || *end != '\0') {
      return Status::InvalidArgument("argument couldn't be parsed as an octal number");
    }
    if (n < 0 || n > max) {
      char buf[80];
      snprintf(buf, sizeof(buf), "argument must be between 0 and %o inclusive", static_cast<unsigned>(max));
      return Status::InvalidArgument(buf);
    }
    *field = static_cast<int>(n);
    return Status::OK();
  };
  return o;
}

// save <seconds> <changes> [...], or "" for none, checked as Redis' setConfigSaveOption.
std::unique_ptr<Config::Option> SaveOption(Config* cfg) {
  auto o = std::make_unique<Config::Option>();
  o->name = "save";
  o->mutable_at_runtime = true;
  o->lines_add_up = true;  // as in redis.conf
  o->get = [cfg] {
    std::string s;
    for (const auto& p : cfg->SavePoints()) {
      s += (s.empty() ? "" : " ") + std::to_string(p.seconds) + " " + std::to_string(p.changes);
    }
    return s;
  };
  o->file_value = [get = o->get] {
    std::string s = get();
    return s.empty() ? std::string("\"\"") : s;
  };
  o->set = [cfg](const std::string& v) {
    std::vector<std::string> words;
    if (!SplitArgs(v, &words)) return Status::InvalidArgument("Invalid save parameters");
    if (words.size() == 1 && words[0].empty()) words.clear();
    if (words.size() % 2 != 0) return Status::InvalidArgument("Invalid save parameters");
    std::vector<Config::SavePoint> points;
    for (size_t i = 0; i < words.size(); i += 2) {
      Config::SavePoint p;
      if (!ParseInt64(words[i], &p.seconds) || p.seconds < 1 || !ParseInt64(words[i + 1], &p.changes) ||
          p.changes < 0) {
        return Status::InvalidArgument("Invalid save parameters");
      }
      points.push_back(p);
    }
    cfg->SetSavePoints(std::move(points));
    return Status::OK();
  };
  return o;
}

// The words of a multi-argument config's value as Redis' CONFIG SET splits them:
// at each single space (a word may come out empty: an address that fails to
// bind, a percentile that is no number), "" is no word.
std::vector<std::string> MultiArgWords(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  for (size_t sp; (sp = s.find(' ', start)) != std::string::npos; start = sp + 1) {
    out.push_back(s.substr(start, sp - start));
  }
  out.push_back(s.substr(start));
  return out;
}

std::unique_ptr<Config::Option> PercentilesOption(Config* cfg) {
  auto o = std::make_unique<Config::Option>();
  o->name = "latency-tracking-info-percentiles";
  o->mutable_at_runtime = true;
  o->get = [cfg] {
    std::string s;
    for (double p : cfg->LatencyPercentiles()) s += (s.empty() ? "" : " ") + FormatTrimmedDouble(p);
    return s;
  };
  o->file_value = [get = o->get] {
    std::string s = get();
    return s.empty() ? std::string("\"\"") : s;  // an empty list, not the defaults
  };
  o->set = [cfg](const std::string& v) {
    std::vector<double> p;
    for (const auto& w : MultiArgWords(v)) {
      double d;
      if (!ParseDouble(w, &d)) return Status::InvalidArgument("Invalid latency-tracking-info-percentiles parameters");
      if (d > 100.0 || d < 0.0) {
        return Status::InvalidArgument("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
      }
      p.push_back(d);
    }
    cfg->SetLatencyPercentiles(std::move(p));
    return Status::OK();
  };
  return o;
}

// oom-score-adj: "relative" is another name for yes, which CONFIG GET shows (Redis'
// enum gives the first name of a value).
std::unique_ptr<Config::Option> OomScoreAdjOption(Config* cfg) {
  auto o = StringOption("oom-score-adj", &cfg->oom_score_adj, true, {"no", "yes", "relative", "absolute"});
  o->set = [cfg, set = o->set](const std::string& v) {
    Status s = set(v);
    if (s.ok() && cfg->oom_score_adj == "relative") cfg->oom_score_adj = "yes";
    return s;
  };
  return o;
}

// oom-score-adj-values: master, replica and background-child scores, as Redis'
// setConfigOOMScoreAdjValuesOption parses them.
std::unique_ptr<Config::Option> OomScoreValuesOption(Config* cfg) {
  auto o = std::make_unique<Config::Option>();
  o->name = "oom-score-adj-values";
  o->mutable_at_runtime = true;
  o->get = [cfg] {
    const auto& v = cfg->oom_score_adj_values;
    return std::to_string(v[0]) + " " + std::to_string(v[1]) + " " + std::to_string(v[2]);
  };
  o->file_value = o->get;
  o->set = [cfg](const std::string& v) {
    std::vector<std::string> words = MultiArgWords(v);
    if (words.size() != 3) return Status::InvalidArgument("wrong number of arguments");
    std::array<int, 3> values;
    for (size_t i = 0; i < 3; i++) {
      char* end = nullptr;
      long long n = std::strtoll(words[i].c_str(), &end, 10);
      if (*end != '\0' || n < -2000 || n > 2000) {
        return Status::InvalidArgument("Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
      }
      values[i] = static_cast<int>(n);
    }
    if (values[1] < values[0] || values[2] < values[1]) {
      LOG(WARNING) << "The oom-score-adj-values configuration may not work for non-privileged processes! "
                      "Please consult the documentation.";
    }
    for (size_t i = 0; i < 3; i++) cfg->oom_score_adj_values[i] = values[i];
    return Status::OK();
  };
  return o;
}

// shutdown-on-sigint / shutdown-on-sigterm: one or more of default, save, nosave,
// now, force (Redis' multi-argument enum of bits; CONFIG GET names the bits set).
std::unique_ptr<Config::Option> ShutdownFlagsOption(const char* name, std::atomic<int>* field) {
  static const std::pair<const char*, int> kNames[] = {{"default", 0},
                                                       {"save", Config::kShutdownSave},
                                                       {"nosave", Config::kShutdownNoSave},
                                                       {"now", Config::kShutdownNow},
                                                       {"force", Config::kShutdownForce}};
  auto o = std::make_unique<Config::Option>();
  o->name = name;
  o->mutable_at_runtime = true;
  o->get = [field] {
    const int bits = field->load();
    std::string names;
    for (const auto& [n, bit] : kNames) {
      if (bits == bit) return std::string(n);
      if (bit != 0 && (bits & bit)) names += (names.empty() ? "" : " ") + std::string(n);
    }
    return names;
  };
  o->file_value = o->get;
  o->set = [field](const std::string& v) {
    const std::vector<std::string> words = MultiArgWords(v);
    bool known = !words.empty();
    int bits = 0;
    for (const auto& w : words) {
      auto it = std::find_if(std::begin(kNames), std::end(kNames),
                             [&](const auto& n) { return TokenEquals(w, n.first); });
      if (it == std::end(kNames)) known = false;
      if (!known) break;
      bits |= it->second;
    }
    if (!known) {
      return Status::InvalidArgument("argument(s) must be one of the following: default, save, nosave, now, force");
    }
    if ((bits & Config::kShutdownSave) && (bits & Config::kShutdownNoSave)) {
      return Status::InvalidArgument("shutdown options SAVE and NOSAVE can't be used simultaneously");
    }
    field->store(bits);
    return Status::OK();
  };
  return o;
}

std::unique_ptr<Config::Option> Protected(std::unique_ptr<Config::Option> o) {
  o->is_protected = true;
  return o;
}

std::unique_ptr<Config::Option> WithAlias(std::unique_ptr<Config::Option> o, const char* alias) {
  o->aliases.emplace_back(alias);
  return o;
}

// An option whose value is a list of words ("bind 127.0.0.1 ::1", "replicaof host
// port"): written to the file as words, as Redis does, not as one quoted string; an
// empty list (a master's replicaof) is no line at all (FileLine).
std::unique_ptr<Config::Option> Words(std::unique_ptr<Config::Option> o) {
  o->file_value = o->get;
  return o;
}

// bind: as Redis' setConfigBindOption, at most 16 addresses.
std::unique_ptr<Config::Option> BindOption(Config* cfg) {
  auto o = Words(StringOption("bind", &cfg->bind, true));
  o->set = [cfg](const std::string& v) {
    if (static_cast<int>(MultiArgWords(v).size()) > Config::kMaxBindAddresses) {
      return Status::InvalidArgument("Too many bind addresses specified.");
    }
    cfg->bind = v;
    return Status::OK();
  };
  return o;
}

std::unique_ptr<Config::Option> NotifyEventsOption(Config* cfg) {
  static const std::pair<char, uint32_t> kLetters[] = {
      {'g', kNotifyGeneric}, {'$', kNotifyString}, {'l', kNotifyList},   {'s', kNotifySet},
      {'h', kNotifyHash},    {'z', kNotifyZSet},   {'x', kNotifyExpired}, {'e', kNotifyEvicted},
      {'t', kNotifyStream},  {'d', kNotifyModule}, {'n', kNotifyNew},     {'K', kNotifyKeyspace},
      {'E', kNotifyKeyevent}, {'m', kNotifyKeyMiss}};
  auto o = std::make_unique<Config::Option>();
  o->name = "notify-keyspace-events";
  o->mutable_at_runtime = true;
  o->get = [cfg] {
    // Redis' keyspaceEventsFlagsToString.
    uint32_t f = cfg->notify_keyspace_events.load();
    std::string s;
    if ((f & kNotifyAll) == kNotifyAll) {
      s = "A";
    } else {
      for (const auto& [c, bit] : kLetters) {
        if (bit != kNotifyKeyspace && bit != kNotifyKeyevent && bit != kNotifyKeyMiss && (f & bit)) s.push_back(c);
      }
    }
    if (f & kNotifyKeyspace) s.push_back('K');
    if (f & kNotifyKeyevent) s.push_back('E');
    if (f & kNotifyKeyMiss) s.push_back('m');
    return s;
  };
  o->set = [cfg](const std::string& v) {
    uint32_t f = 0;
    for (char c : v) {
      if (c == 'A') {
        f |= kNotifyAll;
        continue;
      }
      bool known = false;
      for (const auto& [letter, bit] : kLetters) {
        if (letter == c) {
          f |= bit;
          known = true;
        }
      }
      if (!known) return Status::InvalidArgument("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
    }
    cfg->notify_keyspace_events = f;
    return Status::OK();
  };
  return o;
}

}  // namespace

std::vector<std::string> Config::BindAddresses() const { return MultiArgWords(bind); }

Config::Config() {
  Add(BindOption(this));
  Add(IntOption("port", &port, 0, 65535, true));
  Add(StringOption("unixsocket", &unixsocket, false));
  Add(BoolOption("protected-mode", &protected_mode, true));
  Add(OctalOption("unixsocketperm", &unixsocketperm, 0777, false));
  Add(IntOption("workers", &workers, 1, 256, false));
  Add(Protected(StringOption("dir", &dir, false)));
  Add(Protected(FileNameOption("dbfilename", &dbfilename)));
  Add(BoolOption("rdbcompression", &rdbcompression, true));
  Add(BoolOption("rdbchecksum", &rdbchecksum, false));
  Add(BoolOption("crash-log-enabled", &crash_log_enabled, true));
  Add(StringOption("bind-source-addr", &bind_source_addr, true));
  Add(StringOption("supervised", &supervised, false, {"upstart", "systemd", "auto", "no"}));
  Add(ShutdownFlagsOption("shutdown-on-sigint", &shutdown_on_sigint));
  Add(ShutdownFlagsOption("shutdown-on-sigterm", &shutdown_on_sigterm));
  Add(StringOption("enable-protected-configs", &enable_protected_configs, false, {"yes", "no", "local"}));
  Add(BoolOption("daemonize", &daemonize, false));
  Add(StringOption("pidfile", &pidfile, false));
  Add(StringOption("log-dir", &log_dir, false));
  Add(StringOption("logfile", &logfile, false));
  // Redis' name; kvrocks.conf files written before it used log-level.
  Add(WithAlias(StringOption("loglevel", &log_level, true, {"debug", "verbose", "notice", "warning"}), "log-level"));
  Add(StringOption("requirepass", &requirepass, true));
  Add(IntOption("maxclients", &maxclients, 1, 1000000, true));
  Add(IntOption("timeout", &timeout, 0, INT32_MAX, true));
  Add(IntOption("databases", &databases, 1, 256, false));
  Add(IntOption("tcp-backlog", &tcp_backlog, 0, INT32_MAX, false));
  Add(BoolOption("jemalloc-bg-thread", &jemalloc_bg_thread, true));
  Add(OomScoreAdjOption(this));
  Add(OomScoreValuesOption(this));
  Add(IntOption("tcp-keepalive", &tcp_keepalive, 0, INT32_MAX, true));
  Add(RedisNumeric("proto-max-bulk-len", &proto_max_bulk_len, Memory(Signed(1024 * 1024, kLongMax)), true));
  Add(RedisNumeric("client-query-buffer-limit", &client_query_buffer_limit, Memory(Unsigned(1024 * 1024, kLongMax)),
                   true));
  {
    auto o = std::make_unique<Option>();
    o->name = "maxmemory-clients";
    o->mutable_at_runtime = true;
    auto show = [this](bool file) {
      int64_t v = maxmemory_clients.load();
      if (v < 0) return std::to_string(-v) + "%";
      return file ? FormatMemory(v) : std::to_string(v);
    };
    o->get = [show] { return show(false); };
    o->file_value = [show] { return show(true); };
    o->set = [this](const std::string& v) {
      // Redis' SSIZE_T config with MEMORY and PERCENT (a percentage stored negated).
      NumericRule rule = Memory(Signed(-100, kLongMax));
      rule.percent = true;
      int64_t n;
      Status s = ParseRedisNumeric(rule, v, &n);
      if (s.ok()) maxmemory_clients = n;
      return s;
    };
    Add(std::move(o));
  }
  Add(OutputBufferLimitOption(this));
  Add(NotifyEventsOption(this));
  Add(RedisNumeric("slowlog-log-slower-than", &slowlog_log_slower_than, Signed(-1, kLongMax), true));
  Add(RedisNumeric("slowlog-max-len", &slowlog_max_len, Signed(0, kLongMax), true));
  Add(RedisNumeric("tracking-table-max-keys", &tracking_table_max_keys, Unsigned(0, kLongMax), true));
  Add(Int64Option("access-clock-slots", &access_clock_slots, 1, false, false));
  Add(WithAlias(RedisNumeric("busy-reply-threshold", &busy_reply_threshold, Signed(0, kLongMax), true),
                "lua-time-limit"));
  Add(RedisNumeric("latency-monitor-threshold", &latency_monitor_threshold, Signed(0, kLongMax), true));
  Add(BoolOption("latency-tracking", &latency_tracking, true));
  Add(PercentilesOption(this));
  Add(SaveOption(this));
  {
    // As Redis' updateHZ: any int is taken, and kept within 1..500 (a hint, not a contract).
    auto o = RedisNumeric("hz", &hz, Signed(0, INT32_MAX), true);
    o->set = [this](const std::string& v) {
      int64_t n;
      Status s = ParseRedisNumeric(Signed(0, INT32_MAX), v, &n);
      if (s.ok()) hz = static_cast<int>(std::clamp<int64_t>(n, 1, 500));
      return s;
    };
    Add(std::move(o));
  }
  Add(RedisNumeric("hll-sparse-max-bytes", &hll_sparse_max_bytes, Memory(Unsigned(0, kLongMax)), true));
  Add(StringOption("load-rdb", &load_rdb, false));
  Add(WithAlias(Words(StringOption("replicaof", &replicaof, false)), "slaveof"));
  Add(Words(StringOption("kslaveof", &kslaveof, false)));
  Add(StringOption("masterauth", &masterauth, true));
  Add(StringOption("masteruser", &masteruser, true));
  Add(WithAlias(BoolOption("replica-read-only", &replica_read_only, true), "slave-read-only"));
  Add(WithAlias(BoolOption("replica-serve-stale-data", &replica_serve_stale_data, true), "slave-serve-stale-data"));
  Add(IntOption("repl-timeout", &repl_timeout, 1, INT32_MAX, true));
  Add(IntOption("replica-idle-apply-max-lag-ms", &replica_idle_apply_max_lag_ms, 0, INT32_MAX, true));
  Add(WithAlias(IntOption("repl-ping-replica-period", &repl_ping_replica_period, 1, INT32_MAX, true),
                "repl-ping-slave-period"));
  Add(WithAlias(StringOption("replica-announce-ip", &replica_announce_ip, true), "slave-announce-ip"));
  Add(WithAlias(IntOption("replica-announce-port", &replica_announce_port, 0, 65535, true), "slave-announce-port"));
  Add(WithAlias(IntOption("replica-priority", &replica_priority, 0, INT32_MAX, true), "slave-priority"));
  Add(BoolOption("replica-announced", &replica_announced, true));
  Add(WithAlias(IntOption("min-replicas-to-write", &min_replicas_to_write, 0, INT32_MAX, true), "min-slaves-to-write"));
  Add(WithAlias(IntOption("min-replicas-max-lag", &min_replicas_max_lag, 0, INT32_MAX, true), "min-slaves-max-lag"));
  Add(StringOption("replica-apply-errors", &replica_apply_errors, true, {"skip", "disconnect"}));
  Add(RedisNumeric("stream-node-max-bytes", &stream_node_max_bytes, Memory(Unsigned(0, kLongMax)), true));
  Add(RedisNumeric("stream-node-max-entries", &stream_node_max_entries, Signed(0, kLongMax), true));
  Add(WithAlias(RedisNumeric("hash-max-listpack-entries", &hash_max_listpack_entries, Unsigned(0, kLongMax), true),
                "hash-max-ziplist-entries"));
  Add(WithAlias(RedisNumeric("hash-max-listpack-value", &hash_max_listpack_value, Memory(Unsigned(0, kLongMax)), true),
                "hash-max-ziplist-value"));
  Add(RedisNumeric("set-max-intset-entries", &set_max_intset_entries, Unsigned(0, kLongMax), true));
  Add(WithAlias(RedisNumeric("zset-max-listpack-entries", &zset_max_listpack_entries, Unsigned(0, kLongMax), true),
                "zset-max-ziplist-entries"));
  Add(WithAlias(RedisNumeric("zset-max-listpack-value", &zset_max_listpack_value, Memory(Unsigned(0, kLongMax)), true),
                "zset-max-ziplist-value"));
  Add(WithAlias(IntOption("list-max-listpack-size", &list_max_listpack_size, INT32_MIN, INT32_MAX, true),
                "list-max-ziplist-size"));
  Add(IntOption("list-compress-depth", &list_compress_depth, 0, INT32_MAX, true));
  Add(BoolOption("active-expire", &active_expire, true));
  Add(BoolOption("disable-thp", &disable_thp, false));
  Add(StringOption("sched-policy", &sched_policy, false, {"normal", "batch"}));
  Add(StringOption("enable-debug-command", &enable_debug_command, false, {"yes", "no", "local"}));
  Add(StringOption("aclfile", &aclfile, false));
  Add(StringOption("acl-pubsub-default", &acl_pubsub_default, true, {"allchannels", "resetchannels"}));
  Add(RedisNumeric("acllog-max-len", &acllog_max_len, Signed(0, kLongMax), true));

  Add(Int64Option("rocksdb.block-cache-size", &rocksdb_block_cache_size, 0, true, true));
  Add(Int64Option("rocksdb.write-buffer-size", &rocksdb_write_buffer_size, 1024 * 1024, true, true));
  Add(IntOption("rocksdb.max-write-buffer-number", &rocksdb_max_write_buffer_number, 2, 64, true));
  Add(IntOption("rocksdb.max-background-jobs", &rocksdb_max_background_jobs, 1, 64, true));
  Add(IntOption("rocksdb.max-open-files", &rocksdb_max_open_files, 64, 1000000, false));
  Add(IntOption("rocksdb.bloom-filter-bits", &rocksdb_bloom_filter_bits, 0, 64, false));
  Add(CompressionLevelsOption("rocksdb.compression", &rocksdb_compression));
  Add(BoolOption("rocksdb.enable-blob-files", &rocksdb_enable_blob_files, false));
  Add(Int64Option("rocksdb.min-blob-size", &rocksdb_min_blob_size, 0, true, true));
  Add(StringOption("rocksdb.blob-compression", &rocksdb_blob_compression, false, {"no", "snappy", "lz4", "zstd"}));
  Add(IntOption("rocksdb.blob-compression-min-saving", &rocksdb_blob_compression_min_saving, 0, 100, true));
  Add(IntOption("rocksdb.blob-gc-age-cutoff", &rocksdb_blob_gc_age_cutoff, 0, 100, true));
  Add(IntOption("rocksdb.blob-gc-min-garbage-ratio", &rocksdb_blob_gc_min_garbage_ratio, 0, 100, true));
  Add(StringOption("rocksdb.wal-compression", &rocksdb_wal_compression, false, {"no", "zstd"}));
  Add(Int64Option("rocksdb.wal-ttl-seconds", &rocksdb_wal_ttl_seconds, 0, false, false));
  Add(Int64Option("rocksdb.wal-size-limit-mb", &rocksdb_wal_size_limit_mb, 0, false, false));
  Add(Int64Option("rocksdb.rate-limiter-bytes-per-sec", &rocksdb_rate_limiter_bytes_per_sec, 0, true, true));
  Add(BoolOption("rocksdb.use-direct-reads", &rocksdb_use_direct_reads, false));
  Add(BoolOption("rocksdb.use-direct-io-for-flush-and-compaction", &rocksdb_use_direct_io_for_flush_and_compaction,
                 false));
  Add(BoolOption("rocksdb.sync-writes", &rocksdb_sync_writes, true));
  Add(BoolOption("rocksdb.low-priority-compaction", &rocksdb_low_priority_compaction, false));
  Add(Int64Option("rocksdb.target-file-size-base", &rocksdb_target_file_size_base, 1024 * 1024, true, true));
  Add(IntOption("rocksdb.level0-slowdown-writes-trigger", &rocksdb_level0_slowdown_writes_trigger, 1, 1024, true));
  Add(IntOption("rocksdb.level0-stop-writes-trigger", &rocksdb_level0_stop_writes_trigger, 1, 1024, true));
  for (auto& o : options_) o->default_value = o->get();
}

Config::~Config() = default;

void Config::Add(std::unique_ptr<Option> opt) {
  by_name_[opt->name] = opt.get();
  for (const auto& alias : opt->aliases) by_name_[alias] = opt.get();
  options_.push_back(std::move(opt));
}

bool Config::IsProtected(const std::string& name) const {
  Option* o = Find(name);
  return o != nullptr && o->is_protected;
}

Config::Option* Config::Find(const std::string& name) const {
  auto it = by_name_.find(ToLower(name));
  return it == by_name_.end() ? nullptr : it->second;
}

void Config::OnSet(const std::string& name, SetHook hook) {
  if (Option* o = Find(name)) o->hook = std::move(hook);
}

Status Config::Set(const std::string& name, const std::string& value, bool at_startup) {
  if (!at_startup) return SetAtRuntime({{name, value}}, [](const std::string&) { return true; });
  if (TokenEquals(name, "rename-command")) {
    // From the command line: "--rename-command old new" (new may be omitted to disable old).
    std::vector<std::string> args;
    if (!SplitArgs(value, &args) || args.empty() || args.size() > 2) {
      return Status::InvalidArgument("rename-command needs a command and its new name");
    }
    rename_commands.emplace_back(args[0], args.size() == 2 ? args[1] : "");
    return Status::OK();
  }
  Option* o = Find(name);
  if (o == nullptr) return Status::InvalidArgument("Unknown option or number of arguments for CONFIG SET - '" + name + "'");
  return o->set(value);
}

Status Config::SetAtRuntime(const std::vector<std::pair<std::string, std::string>>& pairs,
                            const std::function<bool(const std::string&)>& protected_allowed) {
  auto failed = [](const std::string& arg, const std::string& why) {
    return Status::InvalidArgument("CONFIG SET failed (possibly related to argument '" + arg + "') - " + why);
  };
  // Redis registers an alias as an option of its own: errors name the option as
  // the name given calls it, and an alias next to its option is no repetition.
  auto registered = [](const Option* o, const std::string& given) {
    for (const auto& alias : o->aliases) {
      if (EqualsIgnoreCase(alias, given)) return alias;
    }
    return o->name;
  };
  // Redis' configSetCommand: every name is checked before anything is set, and
  // the first refusal (unknown, immutable or protected, repeated) is the reply.
  std::vector<Option*> opts;
  std::vector<std::string> names;
  Status refusal;
  for (const auto& [name, value] : pairs) {
    Option* o = Find(name);
    opts.push_back(o);
    names.push_back(o != nullptr ? registered(o, name) : name);
    if (!refusal.ok()) continue;
    if (o == nullptr) {
      refusal = Status::InvalidArgument("Unknown option or number of arguments for CONFIG SET - '" + CString(name) +
                                        "'");
    } else if (o->is_protected && !protected_allowed(name)) {
      refusal = failed(name, "can't set protected config");
    } else if (!o->mutable_at_runtime) {
      refusal = failed(name, "can't set immutable config");
    } else if (std::count(names.begin(), names.end() - 1, names.back()) > 0) {
      refusal = failed(name, "duplicate parameter");
    }
  }
  if (!refusal.ok()) return refusal;
  std::lock_guard<std::mutex> update(update_mu_);
  std::vector<std::string> old;
  for (Option* o : opts) old.push_back(o->get());
  auto restore = [&](size_t n) {
    std::unique_lock<std::shared_mutex> values(values_mu_);
    for (size_t i = n; i-- > 0;) opts[i]->set(old[i]);
  };
  for (size_t i = 0; i < opts.size(); i++) {
    Status s;
    {
      std::unique_lock<std::shared_mutex> values(values_mu_);
      s = opts[i]->set(pairs[i].second);
    }
    if (!s.ok()) {
      restore(i + 1);
      return failed(names[i], s.message());
    }
  }
  // Then what applies the new values, once each (Redis' apply functions); a
  // failure puts every old value back and applies them again.
  for (size_t i = 0; i < opts.size(); i++) {
    if (!opts[i]->hook || std::count(opts.begin(), opts.begin() + i, opts[i]) > 0) continue;
    Status hs = opts[i]->hook(*this);
    if (!hs.ok()) {
      // As Redis' restoreBackupConfig: the failed one too (a port change that failed
      // has closed the old listeners).
      restore(opts.size());
      for (size_t j = 0; j <= i; j++) {
        if (opts[j]->hook) opts[j]->hook(*this);
      }
      return failed(names[i], hs.message());
    }
  }
  return Status::OK();
}

std::string Config::Value(std::string Config::*field) const {
  std::shared_lock<std::shared_mutex> values(values_mu_);
  return this->*field;
}

void Config::SetValue(std::string Config::*field, std::string value) {
  std::lock_guard<std::mutex> update(update_mu_);
  std::unique_lock<std::shared_mutex> values(values_mu_);
  this->*field = std::move(value);
}

std::vector<std::pair<std::string, std::string>> Config::Get(const std::string& pattern) const {
  std::shared_lock<std::shared_mutex> values(values_mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& o : options_) {
    if (StringMatch(pattern, o->name, true)) out.emplace_back(o->name, o->get());
    // Redis answers for its older names too (CONFIG GET slaveof, lua-time-limit).
    for (const auto& alias : o->aliases) {
      if (StringMatch(pattern, alias, true)) out.emplace_back(alias, o->get());
    }
  }
  return out;
}

static std::string QuoteIfNeeded(const std::string& v) {
  if (v.empty()) return "\"\"";
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '\'' || c == '\\' || c < 32) {
      std::string q = "\"";
      for (char ch : v) {
        if (ch == '"' || ch == '\\') q.push_back('\\');
        q.push_back(ch);
      }
      return q + "\"";
    }
  }
  return v;
}

// The option's line in the file, or "" when it has none: as Redis does for a master's
// replicaof, an option whose file value is empty is left out (a blank line in place).
static std::string FileLine(const Config::Option& o) {
  if (!o.file_value) return o.name + " " + QuoteIfNeeded(o.get());
  std::string v = o.file_value();
  return v.empty() ? v : o.name + " " + v;
}

Status Config::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IOError("can't open config file '" + path + "'");
  config_file = path;
  std::string line;
  int lineno = 0;
  std::map<std::string, bool> seen_add_up;  // options whose lines add up, seen in this file
  while (std::getline(in, line)) {
    lineno++;
    std::vector<std::string> argv;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    if (!SplitArgs(line, &argv)) return Status::InvalidArgument("unbalanced quotes at line " + std::to_string(lineno));
    if (argv.empty()) continue;
    if (TokenEquals(argv[0], "user")) {
      acl_user_lines.push_back(line);
      continue;
    }
    if (TokenEquals(argv[0], "rename-command")) {
      if (argv.size() != 3) {
        return Status::InvalidArgument("config file " + path + " line " + std::to_string(lineno) +
                                       ": 'rename-command' needs a command and its new name (\"\" to disable it)");
      }
      rename_commands.emplace_back(argv[1], argv[2]);
      continue;
    }
    std::string value;
    for (size_t i = 1; i < argv.size(); i++) value += (i > 1 ? " " : "") + argv[i];
    Option* o = Find(argv[0]);
    if (o != nullptr && o->lines_add_up) {
      if (seen_add_up[o->name] && !value.empty()) value = o->get() + " " + value;
      seen_add_up[o->name] = true;
    }
    Status s = Set(argv[0], value, true);
    if (!s.ok()) {
      return Status::InvalidArgument("config file " + path + " line " + std::to_string(lineno) + ": '" + argv[0] +
                                     "': " + s.message());
    }
  }
  return Status::OK();
}

Status Config::Rewrite(const std::vector<std::string>& users) const {
  if (config_file.empty()) return Status::InvalidArgument("The server is running without a config file");
  // Values only change under update_mu_; holding it also keeps two rewrites of the file apart.
  std::lock_guard<std::mutex> update(update_mu_);
  std::vector<std::string> lines;
  {
    std::ifstream in(config_file);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  // With an aclfile the users live there, and user lines in this file would be an
  // error at the next start: they are dropped, as Redis drops them.
  const std::vector<std::string> no_users;
  const std::vector<std::string>& user_lines = aclfile.empty() ? users : no_users;
  size_t next_user = 0;
  std::vector<std::string> out;
  std::map<std::string, bool> written;
  for (const auto& line : lines) {
    size_t first = line.find_first_not_of(" \t\r");
    std::vector<std::string> argv;
    if (first == std::string::npos || line[first] == '#' || !SplitArgs(line, &argv) || argv.empty()) {
      out.push_back(line);
    } else if (TokenEquals(argv[0], "user")) {
      if (next_user < user_lines.size()) out.push_back(user_lines[next_user++]);
    } else if (Option* o = Find(argv[0])) {
      // An option keeps its first line (an alias's included); later ones are blanked.
      out.push_back(written[o->name] ? std::string() : FileLine(*o));
      written[o->name] = true;
    } else {
      out.push_back(line);
    }
  }
  std::vector<std::string> added;
  for (const auto& o : options_) {
    if (written[o->name] || o->get() == o->default_value) continue;
    std::string line = FileLine(*o);
    if (!line.empty()) added.push_back(std::move(line));
  }
  added.insert(added.end(), user_lines.begin() + static_cast<std::ptrdiff_t>(next_user), user_lines.end());
  const std::string kTail = "# Generated by CONFIG REWRITE";
  if (!added.empty() && std::find(out.begin(), out.end(), kTail) == out.end()) {
    if (!out.empty() && !out.back().empty()) out.emplace_back();
    out.push_back(kTail);
  }
  out.insert(out.end(), added.begin(), added.end());
  std::string tmp = config_file + ".tmp";
  {
    std::ofstream file(tmp, std::ios::trunc);
    if (!file) return Status::IOError("can't write " + tmp);
    // As in Redis, every run of blank lines is written as one.
    for (size_t i = 0; i < out.size(); i++) {
      if (out[i].empty() && i > 0 && out[i - 1].empty()) continue;
      file << out[i] << "\n";
    }
    if (!file.good()) return Status::IOError("write failed for " + tmp);
  }
  if (std::rename(tmp.c_str(), config_file.c_str()) != 0) return Status::IOError("rename failed for " + config_file);
  return Status::OK();
}

std::vector<double> Config::LatencyPercentiles() const {
  std::lock_guard<std::mutex> g(percentiles_mu_);
  return latency_percentiles_;
}

void Config::SetLatencyPercentiles(std::vector<double> p) {
  std::lock_guard<std::mutex> g(percentiles_mu_);
  latency_percentiles_ = std::move(p);
}

std::vector<Config::SavePoint> Config::SavePoints() const {
  std::lock_guard<std::mutex> g(save_points_mu_);
  return save_points_;
}

void Config::SetSavePoints(std::vector<SavePoint> points) {
  std::lock_guard<std::mutex> g(save_points_mu_);
  save_points_ = std::move(points);
}

}  // namespace kvrocks
