// The node count of the radix tree (Redis' rax.c) in which Redis indexes a
// stream's listpack nodes, keyed by each node's master id as 16 big-endian bytes:
// XINFO STREAM's `radix-tree-nodes`.
//
// rax keeps the tree compressed after every insert and delete, and no key of a
// stream's tree is a prefix of another (all are 16 bytes), so the count depends
// on the key set alone: one node for the root, one for every prefix at which the
// keys branch, one for every child of such a prefix (where a compressed run
// starts), and one leaf per key, each position counted once (docs/encoding.md,
// "Nodes"). kvrocks keeps the count in the stream's metadata and moves it by
// RaxInsertDelta whenever a node appears or goes, which needs a few seeks
// among the node ids around the one that changes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "types/redis_stream.h"

namespace kvrocks::stream {

// The count of an empty tree (rax's head node alone).
inline constexpr uint64_t kEmptyRaxNodes = 1;

// Ordered lookups in a set of node ids.
class RaxKeySet {
 public:
  virtual ~RaxKeySet() = default;
  // The least id in [lo, hi] into *out (nullopt if none).
  virtual Status First(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) = 0;
  // The greatest id in [lo, hi] into *out (nullopt if none).
  virtual Status Last(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) = 0;
};

// How many nodes the tree over `set` gains when k is inserted; `set` must not
// hold k. Removing k from a set takes away as many, computed on the set
// without k.
Status RaxInsertDelta(const StreamID& k, RaxKeySet* set, uint64_t* delta);

// The node count of the tree holding exactly `ids` (ascending, distinct).
uint64_t RaxNodes(const std::vector<StreamID>& ids);

}  // namespace kvrocks::stream
