#include "commands/redact.h"

#include "common/string_util.h"

namespace kvrocks {

namespace {

// The argument positions Redis redacts in a call (its commands' own rules).
std::vector<size_t> SecretPositions(const std::vector<std::string>& a) {
  std::vector<size_t> out;
  if (a.empty()) return out;
  const std::string& name = a[0];
  if (TokenEquals(name, "auth")) {
    if (a.size() == 2 || a.size() == 3) out.push_back(1);  // more is a syntax error, checked first
    if (a.size() == 3) out.push_back(2);
  } else if (TokenEquals(name, "hello")) {
    for (size_t j = 2; j < a.size(); j++) {
      size_t more = a.size() - 1 - j;
      if (TokenEquals(a[j], "auth") && more >= 2) {
        out.push_back(j + 1);
        out.push_back(j + 2);
        j += 2;
      } else if (TokenEquals(a[j], "setname") && more >= 1) {
        j++;
      } else {
        break;  // Redis stops at a syntax error
      }
    }
  } else if (TokenEquals(name, "acl")) {
    if (a.size() >= 3 && TokenEquals(a[1], "setuser")) {
      for (size_t j = 2; j < a.size(); j++) out.push_back(j);
    }
  } else if (TokenEquals(name, "config")) {
    if (a.size() >= 4 && TokenEquals(a[1], "set")) {
      for (size_t j = 2; j + 1 < a.size(); j += 2) {
        if (TokenEquals(a[j], "masteruser") || TokenEquals(a[j], "masterauth") ||
            TokenEquals(a[j], "requirepass")) {
          out.push_back(j + 1);
        }
      }
    }
  } else if (TokenEquals(name, "migrate")) {
    for (size_t j = 6; j < a.size(); j++) {
      size_t more = a.size() - 1 - j;
      if (TokenEquals(a[j], "auth") && more >= 1) {
        out.push_back(++j);
      } else if (TokenEquals(a[j], "auth2") && more >= 2) {
        out.push_back(++j);
        out.push_back(++j);
      } else if (TokenEquals(a[j], "keys")) {
        break;
      }
    }
  }
  return out;
}

}  // namespace

const std::vector<std::string>& ShownArgs(const std::vector<std::string>& args, std::vector<std::string>* storage) {
  std::vector<size_t> secrets = SecretPositions(args);
  if (secrets.empty()) return args;
  *storage = args;
  for (size_t j : secrets) (*storage)[j] = "(redacted)";
  return *storage;
}

}  // namespace kvrocks
