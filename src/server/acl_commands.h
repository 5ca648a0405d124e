// The command part of an ACL selector, as Redis 7.0 keeps it: one bit per
// command and subcommand of a fixed table, first arguments allowed for
// otherwise blocked commands ("+select|0"), and the rules regenerated from the
// bits (ACL LIST, GETUSER, SAVE) by Redis' best-fit walk over the categories.
//
// The table is Redis 7.0's own (every command and subcommand it has, served by
// kvrocks or not: Redis' ACL rules name the commands of its original table)
// plus kvrocks' commands that Redis lacks, so that rules, category counts and
// the regenerated text match Redis'.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kvrocks {

// The commands ACL rules can name, each with an id (its bit).
class AclCommandTable {
 public:
  struct Entry {
    std::string name;  // lower case: "get", "config|get"
    int parent = -1;   // the container's id, for a subcommand
    std::vector<int> subcommands;
    uint32_t categories = 0;  // bit i: category i of CategoryNames()
    bool in_redis = true;     // false: a command only kvrocks has
  };

  static const AclCommandTable& Instance();

  // The id of a command ("get") or subcommand ("config|get"), any case; -1 if none.
  int Find(std::string_view name) const;
  const Entry& entry(int id) const { return entries_[static_cast<size_t>(id)]; }
  size_t size() const { return entries_.size(); }
  // Commands that are not subcommands, in name order.
  const std::vector<int>& top_level() const { return top_level_; }

  // Redis' categories, in its order (ACLCommandCategories); -1 if unknown.
  static const std::vector<std::string>& CategoryNames();
  static int CategoryIndex(std::string_view name);

 private:
  AclCommandTable();
  std::vector<Entry> entries_;
  std::vector<int> top_level_;
  std::map<std::string, int, std::less<>> ids_;
};

class AclCommandRules {
 public:
  // Applies one rule: +@all -@all allcommands nocommands +@<category>
  // -@<category> +<command> -<command> +<command>|<subcommand or first arg>
  // -<command>|<subcommand>. Returns "" or Redis' error text for the rule.
  std::string Apply(const std::string& rule);

  // Whether a call of command id (a subcommand's own id for a container call)
  // with these arguments is allowed. no_auth commands (AUTH, HELLO, QUIT,
  // RESET) always are, as in Redis.
  bool Allows(int id, bool no_auth, const std::vector<std::string>& args) const;
  // Whether every command is allowed without looking at bits (no rule has
  // removed one since +@all).
  bool allows_all() const { return all_flag_; }

  // "+@all|-@all [+@cat|-@cat ...] [+cmd|-cmd|+cmd|arg ...]": the fewest
  // category rules that come close, then single commands, as Redis' ACLDescribeSelectorCommandRules.
  std::string Describe() const;

 private:
  bool Bit(int id) const;
  void SetBit(int id, bool on);
  // Redis' ACLChangeSelectorPerm: a command's bit with all its subcommands' bits.
  void ChangePerm(int id, bool allow);
  void ApplyCategory(int category, bool allow);

  std::vector<uint64_t> bits_;
  bool future_ = false;    // Redis' reserved "future commands" bit: set by +@all, cleared by -@all only
  bool all_flag_ = false;  // SELECTOR_FLAG_ALLCOMMANDS: set by +@all, cleared by clearing any bit
  std::map<int, std::vector<std::string>> first_args_;
};

}  // namespace kvrocks
