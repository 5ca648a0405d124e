// XINFO's radix-tree-nodes: the incremental count (RaxInsertDelta) and the whole
// count (RaxNodes) agree with the positions of a compressed radix tree over the
// 16-byte node ids, counted directly, through random inserts and removals of ids
// that share long and short prefixes. Redis' own counts for such sequences are
// compared in tests/integration/test_stream_diff.py.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "types/stream_rax.h"

using namespace kvrocks;

namespace {

std::string Bytes(const StreamID& id) {
  std::string b;
  for (int i = 7; i >= 0; i--) b.push_back(static_cast<char>(id.ms >> (8 * i)));
  for (int i = 7; i >= 0; i--) b.push_back(static_cast<char>(id.seq >> (8 * i)));
  return b;
}

// The tree's nodes: the root, every prefix where the keys branch, every child of
// such a prefix, every key.
uint64_t CountPositions(const std::set<StreamID>& ids) {
  std::vector<std::string> keys;
  for (const auto& id : ids) keys.push_back(Bytes(id));
  std::set<std::string> positions{""};
  std::set<std::string> branching;
  for (size_t i = 0; i + 1 < keys.size(); i++) {
    size_t l = 0;
    while (keys[i][l] == keys[i + 1][l]) l++;
    branching.insert(keys[i].substr(0, l));
  }
  for (const auto& k : keys) {
    positions.insert(k);
    for (const auto& b : branching) {
      if (k.compare(0, b.size(), b) == 0) positions.insert(k.substr(0, b.size() + 1));
    }
  }
  positions.insert(branching.begin(), branching.end());
  return positions.size();
}

class SetOfIds : public stream::RaxKeySet {
 public:
  std::set<StreamID> ids;

  Status First(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) override {
    auto it = ids.lower_bound(lo);
    *out = it != ids.end() && *it <= hi ? std::optional<StreamID>(*it) : std::nullopt;
    return Status::OK();
  }
  Status Last(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) override {
    auto it = ids.upper_bound(hi);
    *out = it != ids.begin() && *std::prev(it) >= lo ? std::optional<StreamID>(*std::prev(it)) : std::nullopt;
    return Status::OK();
  }
};

TEST(StreamRaxTest, SmallTrees) {
  EXPECT_EQ(stream::RaxNodes({}), 1u);
  EXPECT_EQ(stream::RaxNodes({{5, 0}}), 2u);
  // Ids differing in the last byte: root run, the branching node, two leaves.
  EXPECT_EQ(stream::RaxNodes({{5, 0}, {5, 1}}), 4u);
  // Differing in the first byte: the root branches, each child run ends in a leaf.
  EXPECT_EQ(stream::RaxNodes({{0, 0}, {UINT64_MAX, 0}}), 5u);
  EXPECT_EQ(stream::RaxNodes({{1, 0}, {1, 1}, {1, 2}}), 5u);
}

TEST(StreamRaxTest, IncrementalCountMatchesTheTree) {
  std::mt19937_64 rng(7);
  const uint64_t ms_bases[] = {0, 1, 255, 256, 1ull << 40, 3ull << 40, UINT64_MAX - 1};
  const uint64_t offsets[] = {0, 1, 256, 65536};
  const uint64_t seqs[] = {0, 1, 2, 255, 256, 1ull << 33, UINT64_MAX};
  for (int round = 0; round < 300; round++) {
    std::vector<StreamID> pool(1 + rng() % 40);
    for (auto& id : pool) id = StreamID{ms_bases[rng() % 7] + offsets[rng() % 4], seqs[rng() % 7]};
    SetOfIds set;
    uint64_t count = stream::kEmptyRaxNodes;
    for (int step = 0; step < 150; step++) {
      const StreamID k = pool[rng() % pool.size()];
      uint64_t delta = 0;
      if (set.ids.erase(k) == 1) {
        ASSERT_TRUE(stream::RaxInsertDelta(k, &set, &delta).ok());
        count -= delta;
      } else {
        ASSERT_TRUE(stream::RaxInsertDelta(k, &set, &delta).ok());
        count += delta;
        set.ids.insert(k);
      }
      ASSERT_EQ(count, CountPositions(set.ids)) << "round " << round << " step " << step;
      ASSERT_EQ(stream::RaxNodes(std::vector<StreamID>(set.ids.begin(), set.ids.end())), count);
    }
  }
}

}  // namespace
