// The sorted set's live edges: walks from either end start at the first (last)
// live member, so pops and removals do not leave ever more tombstones for the
// next walk to step over; and whatever writes do (including to sets written
// before the edges were kept), walks see exactly the live members.
#include <gtest/gtest.h>

#include "temp_storage.h"

#include <rocksdb/perf_context.h>

#include <cmath>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "storage/key_encoding.h"
#include "types/redis_zset.h"

using namespace kvrocks;

namespace {

using Model = std::set<std::pair<double, std::string>>;

class RedisZSetTest : public TempStorageTest {
 protected:
  template <typename Fn>
  void Write(Fn fn, bool commit = true) {
    WithDb(
        [&](Database& db) {
          RedisZSet z(&db);
          fn(z);
        },
        commit);
  }
  template <typename Fn>
  void Read(Fn fn) {
    Write(fn, false);
  }
  // Drops the edges from key's metadata, as sets written before them had it.
  void ForgetEdges(std::string_view key) {
    WithDb([&](Database& db) {
      LoadedKey lk;
      Metadata meta;
      ASSERT_TRUE(db.Load(key, &lk).ok() && lk.live && meta.Decode(lk.raw).ok());
      meta.payload.resize(1);
      db.Restamp(&lk, meta.Encode());
    });
  }
  // Checks the whole set both ways, the first and last few by rank, and a range by score.
  void Check(const Model& model, std::mt19937_64& rng) {
    Read([&](RedisZSet& z) {
      std::vector<ZMember> out;
      ASSERT_TRUE(z.RangeByRank("z", 0, -1, false, &out).ok());
      ASSERT_EQ(out.size(), model.size());
      auto m = model.begin();
      for (const auto& o : out) {
        EXPECT_EQ(o.member, m->second);
        EXPECT_EQ(o.score, m->first);
        ++m;
      }
      ASSERT_TRUE(z.RangeByRank("z", 0, 2, true, &out).ok());
      auto r = model.rbegin();
      for (const auto& o : out) EXPECT_EQ(o.member, (r++)->second);
      if (model.empty()) return;
      double lo = std::next(model.begin(), static_cast<long>(rng() % model.size()))->first;
      ScoreBound min{lo, false}, max{lo + 5, false};
      ASSERT_TRUE(z.RangeByScore("z", min, max, false, 0, -1, &out).ok());
      size_t expected = 0;
      for (const auto& e : model) expected += e.first >= lo && e.first <= lo + 5;
      EXPECT_EQ(out.size(), expected);
    });
  }
};

// Random writes of every kind against a model, with long members (whose edges
// are cut) that end in 0xff bytes, equal scores, -inf/+inf, and now and then the
// edges dropped as on a set from an older version.
TEST_F(RedisZSetTest, WalksSeeExactlyTheLiveMembers) {
  std::mt19937_64 rng(7);
  Model model;
  auto member = [&]() {
    std::string m = "m" + std::to_string(rng() % 300);
    if (rng() % 4 == 0) m = std::string(70 + rng() % 10, static_cast<char>(0xff)) + m + std::string(rng() % 3, '\xff');
    return m;
  };
  auto score_of = [&](const std::string& m) -> std::optional<double> {
    for (const auto& e : model) {
      if (e.second == m) return e.first;
    }
    return std::nullopt;
  };
  for (int round = 0; round < 3000; round++) {
    int op = static_cast<int>(rng() % 10);
    if (op <= 3) {  // ZADD
      std::string m = member();
      double score = rng() % 20 == 0 ? (rng() % 2 ? INFINITY : -INFINITY) : static_cast<double>(rng() % 50);
      Write([&](RedisZSet& z) {
        int64_t n;
        std::optional<double> incr;
        ASSERT_TRUE(z.Add("z", {{m, score}}, {}, &n, &incr).ok());
      });
      if (auto old = score_of(m)) model.erase({*old, m});
      model.insert({score, m});
    } else if (op == 4 || op == 5) {  // ZPOPMIN / ZPOPMAX of up to 3
      bool max = op == 5;
      int64_t count = 1 + static_cast<int64_t>(rng() % 3);
      Write([&](RedisZSet& z) {
        std::vector<ZMember> out;
        ASSERT_TRUE(z.RangeByRank("z", 0, count - 1, max, &out).ok());
        int64_t n;
        ASSERT_TRUE(z.RemoveMembers("z", out, &n, max ? RedisZSet::End::kMax : RedisZSet::End::kMin).ok());
      });
      for (int64_t i = 0; i < count && !model.empty(); i++) {
        model.erase(max ? std::prev(model.end()) : model.begin());
      }
    } else if (op == 6) {  // ZREM
      std::string m = member();
      Write([&](RedisZSet& z) {
        int64_t n;
        ASSERT_TRUE(z.Remove("z", {m}, &n).ok());
      });
      if (auto old = score_of(m)) model.erase({*old, m});
    } else if (op == 7) {  // ZREMRANGEBYSCORE from -inf
      double upto = static_cast<double>(rng() % 10);
      Write([&](RedisZSet& z) {
        std::vector<ZMember> out;
        ASSERT_TRUE(z.RangeByScore("z", {-INFINITY, false}, {upto, false}, false, 0, -1, &out).ok());
        int64_t n;
        ASSERT_TRUE(z.RemoveMembers("z", out, &n).ok());
      });
      while (!model.empty() && model.begin()->first <= upto) model.erase(model.begin());
    } else if (op == 8 && !model.empty() && rng() % 8 == 0) {
      ForgetEdges("z");
    }
    if (round % 25 == 0) Check(model, rng);
  }
  Check(model, rng);
}

// A drained set: after every pop, the next pop's walk steps over at most a
// bounded number of tombstones (RocksDB counts them), however many pops came before.
TEST_F(RedisZSetTest, PopsDoNotWalkOverEarlierPops) {
  Write([&](RedisZSet& z) {
    std::vector<ZMember> ms;
    for (int i = 0; i < 3000; i++) ms.push_back({"member-" + std::to_string(i), static_cast<double>(i % 700)});
    int64_t n;
    std::optional<double> incr;
    ASSERT_TRUE(z.Add("z", ms, {}, &n, &incr).ok());
  });
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  uint64_t worst = 0;
  for (int i = 0; i < 2000; i++) {
    bool max = i % 3 == 0;
    rocksdb::get_perf_context()->Reset();
    Write([&](RedisZSet& z) {
      std::vector<ZMember> out;
      ASSERT_TRUE(z.RangeByRank("z", 0, 0, max, &out).ok());
      ASSERT_EQ(out.size(), 1u);
      int64_t n;
      ASSERT_TRUE(z.RemoveMembers("z", out, &n, max ? RedisZSet::End::kMax : RedisZSet::End::kMin).ok());
    });
    worst = std::max(worst, rocksdb::get_perf_context()->internal_delete_skipped_count);
  }
  // ZREM of the lowest members (a queue's consumer): the edge is found again
  // every few removals rather than after each.
  for (int i = 0; i < 500; i++) {
    rocksdb::get_perf_context()->Reset();
    Write([&](RedisZSet& z) {
      std::vector<ZMember> out;
      ASSERT_TRUE(z.RangeByRank("z", 0, 0, false, &out).ok());
      ASSERT_EQ(out.size(), 1u);
      int64_t n;
      ASSERT_TRUE(z.Remove("z", {out[0].member}, &n).ok());
      ASSERT_EQ(n, 1);
    });
    worst = std::max(worst, rocksdb::get_perf_context()->internal_delete_skipped_count);
  }
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  EXPECT_LE(worst, 80u);  // two edges' worth of kMaxStale (32), not thousands
  Read([&](RedisZSet& z) {
    uint64_t size;
    ASSERT_TRUE(z.Card("z", &size).ok());
    EXPECT_EQ(size, 500u);
  });
}

// ZRANGEBYLEX and ZREVRANGEBYLEX seek to their bound among the members of one
// score (autocomplete over a big set), instead of walking up to it from an end.
TEST_F(RedisZSetTest, LexRangesSeekToTheirBound) {
  Write([&](RedisZSet& z) {
    std::vector<ZMember> ms;
    for (int i = 0; i < 20000; i++) ms.push_back({"w" + std::to_string(100000 + i), 0});
    int64_t n;
    std::optional<double> incr;
    ASSERT_TRUE(z.Add("z", ms, {}, &n, &incr).ok());
  });
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  for (bool rev : {false, true}) {
    rocksdb::get_perf_context()->Reset();
    std::vector<ZMember> out;
    Read([&](RedisZSet& z) {
      LexBound min{"w115000", false}, max{"w115004", true};
      ASSERT_TRUE(z.RangeByLex("z", min, max, rev, 0, -1, &out).ok());
    });
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[0].member, rev ? "w115003" : "w115000");
    uint64_t steps = rocksdb::get_perf_context()->next_on_memtable_count +
                     rocksdb::get_perf_context()->prev_on_memtable_count;
    EXPECT_LE(steps, 20u) << (rev ? "ZREVRANGEBYLEX" : "ZRANGEBYLEX");
  }
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
}

// ZRANDMEMBER of a big set picks random ranks through the rank index (built by
// the first pick): a few seeks a pick, not a walk over the set.
TEST_F(RedisZSetTest, RandomPicksOfABigSetSelectRanks) {
  Write([&](RedisZSet& z) {
    std::vector<ZMember> ms;
    for (int i = 0; i < 20000; i++) ms.push_back({"m" + std::to_string(i), static_cast<double>(i)});
    int64_t n;
    std::optional<double> incr;
    ASSERT_TRUE(z.Add("z", ms, {}, &n, &incr).ok());
  });
  std::vector<ZMember> out;
  Write([&](RedisZSet& z) { ASSERT_TRUE(z.RandomMembers("z", 1, false, &out).ok()); });
  ASSERT_EQ(out.size(), 1u);
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  Read([&](RedisZSet& z) { ASSERT_TRUE(z.RandomMembers("z", 50, false, &out).ok()); });
  uint64_t steps = rocksdb::get_perf_context()->next_on_memtable_count +
                   rocksdb::get_perf_context()->prev_on_memtable_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  // About 60 a pick here (blocks of the index and members within one); reading the
  // set would take 20000.
  EXPECT_LE(steps, 50u * 150);
  ASSERT_EQ(out.size(), 50u);
  std::set<std::string> distinct;
  for (const auto& m : out) {
    distinct.insert(m.member);
    EXPECT_EQ("m" + std::to_string(static_cast<int>(m.score)), m.member);
  }
  EXPECT_EQ(distinct.size(), 50u);
  Read([&](RedisZSet& z) { ASSERT_TRUE(z.RandomMembers("z", 30000, false, &out).ok()); });
  ASSERT_EQ(out.size(), 20000u);
  EXPECT_EQ(out.front().member, "m19999");  // the whole set, greatest member first
  EXPECT_EQ(out.back().member, "m0");
}

// ZCOUNT and ZLEXCOUNT past kRankBuildOffset members, and range reads that skip
// as many, go through the rank index (built by the first of them) instead of
// walking the members they count or skip.
TEST_F(RedisZSetTest, CountsAndOffsetsOfBigRangesUseRanks) {
  Write([&](RedisZSet& z) {
    std::vector<ZMember> ms;
    for (int i = 0; i < 20000; i++) ms.push_back({"m" + std::to_string(100000 + i), static_cast<double>(i)});
    int64_t n;
    std::optional<double> incr;
    ASSERT_TRUE(z.Add("z", ms, {}, &n, &incr).ok());
  });
  uint64_t n = 0;
  ScoreBound min{10, true}, max{19000, false};
  Write([&](RedisZSet& z) { ASSERT_TRUE(z.CountByScore("z", min, max, &n).ok()); });
  EXPECT_EQ(n, 18990u);
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  auto steps = [] {
    return rocksdb::get_perf_context()->next_on_memtable_count + rocksdb::get_perf_context()->prev_on_memtable_count;
  };
  rocksdb::get_perf_context()->Reset();
  Read([&](RedisZSet& z) { ASSERT_TRUE(z.CountByScore("z", min, max, &n).ok()); });
  EXPECT_EQ(n, 18990u);
  EXPECT_LE(steps(), 1500u);  // the first 257 members, then two ranks; not 18990
  std::vector<ZMember> out;
  for (bool rev : {false, true}) {
    rocksdb::get_perf_context()->Reset();
    Read([&](RedisZSet& z) { ASSERT_TRUE(z.RangeByScore("z", min, max, rev, 15000, 2, &out).ok()); });
    EXPECT_LE(steps(), 1000u);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].score, rev ? 19000 - 15000 : 11 + 15000);
  }
  LexBound lo{"m100000", false}, hi;
  hi.pos_inf = true;
  rocksdb::get_perf_context()->Reset();
  Read([&](RedisZSet& z) { ASSERT_TRUE(z.RangeByLex("z", lo, hi, false, 12345, 1, &out).ok()); });
  EXPECT_LE(steps(), 1000u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].member, "m112345");
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
}

}  // namespace
