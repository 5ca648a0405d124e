// List helpers shared by the list commands and their blocking forms.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/command.h"

namespace kvrocks {

// Pops one element from src and pushes it to dst (LMOVE). *moved is empty if src is absent.
Status MoveElement(CommandCall& call, const std::string& src, const std::string& dst, bool from_left, bool to_left,
                   std::optional<std::string>* moved);
// "LEFT" / "RIGHT".
bool ParseDirection(const std::string& arg, bool* left);

struct MPopArgs {
  std::vector<std::string> keys;
  bool left = true;
  int64_t count = 1;
  bool has_count = false;
};
// Parses "numkeys key... LEFT|RIGHT [COUNT n]" starting at args[numkeys_idx]; replies errors.
bool ParseMPop(CommandCall& call, size_t numkeys_idx, MPopArgs* out);
// Pops from the first non-empty list; NotFound if all are empty.
Status PopFirstNonEmpty(CommandCall& call, const MPopArgs& args, std::string* key, std::vector<std::string>* elems);
void ReplyMPop(CommandCall& call, const std::string& key, const std::vector<std::string>& elems);
// Parses a blocking timeout in seconds (a float, as since Redis 6) into ms; replies errors.
bool ParseTimeout(CommandCall& call, const std::string& arg, uint64_t* ms);
// Blocks the caller on keys, or answers a null array when it cannot block (in
// EXEC): a null bulk if null_bulk (BLMOVE and BRPOPLPUSH, Redis' addReplyNull;
// their timeout is still a null array, as Redis' replyToBlockedClientTimedOut).
void BlockOrNull(CommandCall& call, const std::vector<std::string>& keys, uint64_t timeout_ms,
                 bool null_bulk = false);
// The keys of a "numkeys key..." command, for locking.
std::vector<std::pair<int, std::string>> NumkeysLockKeys(const CommandCall& call, size_t numkeys_idx);

}  // namespace kvrocks
