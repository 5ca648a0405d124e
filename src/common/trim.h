// Reused containers that give back what one huge use made them grow to.
#pragma once

#include <cstddef>

namespace kvrocks {

// How many elements a reused container of a batch or connection keeps between
// uses: more than a group commit of pipelined commands holds, less than a huge
// command's.
inline constexpr size_t kTrimKeepEntries = 1 << 16;

// Empties c. A container whose capacity grew past `keep` elements is replaced
// by an empty one, so that one huge command (an MSET of a million keys) does not
// leave its room allocated for as long as the reusing object lives.
template <typename C>
void ClearAndTrim(C* c, size_t keep) {
  if (c->capacity() > keep) {
    C().swap(*c);
  } else {
    c->clear();
  }
}

}  // namespace kvrocks
