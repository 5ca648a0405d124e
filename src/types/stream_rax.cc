#include "types/stream_rax.h"

#include <algorithm>
#include <array>

namespace kvrocks::stream {

namespace {

constexpr int kKeyLen = 16;
using KeyBytes = std::array<uint8_t, kKeyLen>;

KeyBytes ToBytes(const StreamID& id) {
  KeyBytes b;
  for (int i = 0; i < 8; i++) {
    b[i] = static_cast<uint8_t>(id.ms >> (56 - 8 * i));
    b[8 + i] = static_cast<uint8_t>(id.seq >> (56 - 8 * i));
  }
  return b;
}

StreamID FromBytes(const KeyBytes& b) {
  StreamID id;
  for (int i = 0; i < 8; i++) {
    id.ms = (id.ms << 8) | b[i];
    id.seq = (id.seq << 8) | b[8 + i];
  }
  return id;
}

int CommonPrefix(const KeyBytes& a, const KeyBytes& b) {
  int l = 0;
  while (l < kKeyLen && a[l] == b[l]) l++;
  return l;
}

// The ids that start with the first `len` bytes of k: [lo, hi].
void PrefixRange(const KeyBytes& k, int len, StreamID* lo, StreamID* hi) {
  KeyBytes l = k, h = k;
  std::fill(l.begin() + len, l.end(), 0x00);
  std::fill(h.begin() + len, h.end(), 0xff);
  *lo = FromBytes(l);
  *hi = FromBytes(h);
}

// Whether the ids of `set` that start with the first `len` bytes of k differ
// in byte `len`, i.e. the tree branches there.
Status Branches(RaxKeySet* set, const KeyBytes& k, int len, bool* branches) {
  StreamID lo, hi;
  PrefixRange(k, len, &lo, &hi);
  std::optional<StreamID> first, last;
  Status s = set->First(lo, hi, &first);
  if (s.ok() && first) s = set->Last(lo, hi, &last);
  if (!s.ok()) return s;
  *branches = first && last && ToBytes(*first)[len] != ToBytes(*last)[len];
  return Status::OK();
}

}  // namespace

Status RaxInsertDelta(const StreamID& k, RaxKeySet* set, uint64_t* delta) {
  std::optional<StreamID> pred, succ;
  StreamID below = k, above = k;
  Status s = Status::OK();
  if (below.Decr()) s = set->Last(StreamID::Min(), below, &pred);
  if (s.ok() && above.Incr()) s = set->First(above, StreamID::Max(), &succ);
  if (!s.ok()) return s;
  if (!pred && !succ) {
    *delta = 1;  // the root's run now leads to k's leaf
    return Status::OK();
  }
  const KeyBytes key = ToBytes(k);
  const int with_pred = pred ? CommonPrefix(ToBytes(*pred), key) : -1;
  const int with_succ = succ ? CommonPrefix(key, ToBytes(*succ)) : -1;
  // k leaves the rest of the tree at depth m: the prefix q = key[0, m) is where
  // its own child (and, unless that child is its leaf, the leaf) hangs.
  const int m = std::max(with_pred, with_succ);
  const uint64_t own = m == kKeyLen - 1 ? 1 : 2;
  bool q_branches = with_pred == with_succ;  // pred and succ differ from k, and each other, at m
  if (!q_branches) {
    s = Branches(set, key, m, &q_branches);
    if (!s.ok()) return s;
  }
  if (q_branches) {
    *delta = own;
    return Status::OK();
  }
  // q had one child; now it branches. It is a node already if it is the root or
  // a child of a branching prefix; its old child (the neighbour's byte m) is a
  // node already if it is a leaf or branches itself.
  const KeyBytes other = ToBytes(with_pred == m ? *pred : *succ);
  bool q_was_node = m == 0;
  if (!q_was_node) {
    s = Branches(set, key, m - 1, &q_was_node);
    if (!s.ok()) return s;
  }
  bool child_was_node = m == kKeyLen - 1;
  if (!child_was_node) {
    s = Branches(set, other, m + 1, &child_was_node);
    if (!s.ok()) return s;
  }
  *delta = own + (q_was_node ? 0 : 1) + (child_was_node ? 0 : 1);
  return Status::OK();
}

namespace {

// The first n ids of a sorted vector.
class PrefixOfVector : public RaxKeySet {
 public:
  explicit PrefixOfVector(const std::vector<StreamID>& ids) : ids_(ids) {}
  void set_size(size_t n) { n_ = n; }

  Status First(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) override {
    auto end = ids_.begin() + static_cast<std::ptrdiff_t>(n_);
    auto it = std::lower_bound(ids_.begin(), end, lo);
    *out = it != end && *it <= hi ? std::optional<StreamID>(*it) : std::nullopt;
    return Status::OK();
  }
  Status Last(const StreamID& lo, const StreamID& hi, std::optional<StreamID>* out) override {
    auto end = ids_.begin() + static_cast<std::ptrdiff_t>(n_);
    auto it = std::upper_bound(ids_.begin(), end, hi);
    *out = it != ids_.begin() && *std::prev(it) >= lo ? std::optional<StreamID>(*std::prev(it)) : std::nullopt;
    return Status::OK();
  }

 private:
  const std::vector<StreamID>& ids_;
  size_t n_ = 0;
};

}  // namespace

uint64_t RaxNodes(const std::vector<StreamID>& ids) {
  PrefixOfVector set(ids);
  uint64_t nodes = kEmptyRaxNodes;
  for (size_t i = 0; i < ids.size(); i++) {
    set.set_size(i);
    uint64_t delta = 0;
    (void)RaxInsertDelta(ids[i], &set, &delta);  // lookups in memory do not fail
    nodes += delta;
  }
  return nodes;
}

}  // namespace kvrocks::stream
