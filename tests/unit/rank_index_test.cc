// The sorted sets' rank index: counts stay exact and the tree stays within its
// bounds through random inserts, removals, builds and drops (a small fanout
// makes many levels), and the sorted set type answers ranks and ranges by rank
// through it exactly as a walk would.
#include <gtest/gtest.h>

#include "temp_storage.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/encoding.h"
#include "storage/key_encoding.h"
#include "types/redis_zset.h"
#include "types/rank_index.h"

using namespace kvrocks;

namespace {

class ZSetRankTest : public TempStorageTest {
 protected:
  static constexpr uint32_t kFanout = 4;
  const std::string prefix_ = EncodeSubkeyPrefix(0, "k", 7);

  // The set's metadata: without it the records would be orphans, which the
  // compaction filter drops (and rank walks over overwritten records ask for
  // a compaction of them, rank_index.cc).
  void SetUp() override {
    TempStorageTest::SetUp();
    Metadata meta;
    meta.type = RedisType::kZSet;
    meta.version = 7;
    meta.size = 1;
    Context ctx(storage_.get());
    ctx.Put(ColumnFamily::kMetadata, EncodeMetaKey(0, "k"), meta.Encode());
    ASSERT_TRUE(ctx.Commit().ok());
  }

  // A score-index suffix for member i (8 bytes of "score", then the member).
  static std::string Suffix(uint32_t i) {
    std::string s;
    PutBE64(&s, 0x8000000000000000ULL + i / 3);  // three members per score
    s += "m" + std::to_string(i);
    return s;
  }
  // The i of Suffix(i).
  static uint32_t Number(const std::string& suffix) { return static_cast<uint32_t>(std::stoul(suffix.substr(9))); }

  // Every record of the index, by level.
  std::map<int, std::vector<std::pair<std::string, uint64_t>>> Records() {
    std::map<int, std::vector<std::pair<std::string, uint64_t>>> out;
    rocksdb::ReadOptions ro;
    std::unique_ptr<rocksdb::Iterator> it(storage_->db()->NewIterator(ro, storage_->cf(ColumnFamily::kZSetRank)));
    for (it->Seek(prefix_); it->Valid() && it->key().starts_with(prefix_); it->Next()) {
      int level;
      std::string boundary;
      std::string_view k(it->key().data(), it->key().size());
      EXPECT_TRUE(RankIndex::ParseKey(k.substr(prefix_.size()), &level, &boundary));
      out[level].emplace_back(boundary, DecodeBE64(it->value().data()));
    }
    // Keys sort from the greatest boundary down.
    for (auto& [level, records] : out) {
      EXPECT_TRUE(std::is_sorted(records.rbegin(), records.rend())) << "level " << level;
      std::reverse(records.begin(), records.end());
    }
    return out;
  }

  // The tree's rules (rank_index.h) against the members it counts.
  void CheckShape(const std::set<std::string>& members, int levels) {
    auto records = Records();
    if (levels == 0) {
      EXPECT_TRUE(records.empty());
      return;
    }
    ASSERT_EQ(static_cast<int>(records.size()), levels);
    for (int k = 1; k <= levels; k++) {
      const auto& level = records[k];
      ASSERT_FALSE(level.empty());
      EXPECT_EQ(level[0].first, "");
      uint64_t total = 0;
      for (size_t i = 0; i < level.size(); i++) {
        total += level[i].second;
        std::string end = i + 1 < level.size() ? level[i + 1].first : std::string(1, '\xff');
        uint64_t counted = 0;
        if (k == 1) {
          for (auto m = members.lower_bound(level[i].first); m != members.end() && *m < end; ++m) counted++;
          EXPECT_LE(level[i].second, 2 * kFanout);
        } else {
          size_t children = 0;
          for (const auto& c : records[k - 1]) {
            if (c.first >= level[i].first && c.first < end) {
              counted += c.second;
              children++;
            }
          }
          EXPECT_LE(children, 2 * kFanout);
          EXPECT_TRUE(std::any_of(records[k - 1].begin(), records[k - 1].end(),
                                  [&](const auto& c) { return c.first == level[i].first; }));
        }
        EXPECT_EQ(level[i].second, counted) << "level " << k << " record " << i;
        bool used_above = k < levels && std::any_of(records[k + 1].begin(), records[k + 1].end(),
                                                    [&](const auto& p) { return p.first == level[i].first; });
        if (i > 0 && !used_above) EXPECT_GT(level[i].second, 0u) << "an empty record stayed";
      }
      EXPECT_EQ(total, members.size());
    }
    EXPECT_LE(records[levels].size(), 2 * kFanout);
  }

  void CheckAnswers(const std::set<std::string>& members, int levels, std::mt19937& rng) {
    if (members.empty() || levels == 0) return;
    std::vector<std::string> sorted(members.begin(), members.end());
    WithDb(
        [&](Database& db) {
          RankIndex index(db.ctx(), prefix_, levels, ColumnFamily::kZSetScore, kFanout);
          for (int probe = 0; probe < 20; probe++) {
            uint64_t r = rng() % sorted.size(), below = 0;
            std::string found;
            ASSERT_TRUE(index.CountBelow(sorted[r], &below).ok());
            EXPECT_EQ(below, r);
            ASSERT_TRUE(index.Select(r, &found).ok());
            EXPECT_EQ(found, sorted[r]);
          }
        },
        false);
  }
};

// Record keys sort in the reverse order of their boundaries, prefixes and
// 0x00/0xff bytes included, and read back to them.
TEST(ZSetRankKeys, InvertedBoundariesSortBackwardsAndParse) {
  std::mt19937 rng(5);
  std::vector<std::string> boundaries = {"", std::string(1, '\0'), std::string(2, '\0'), "\xff", "a", "a\xff"};
  for (int i = 0; i < 300; i++) {
    std::string b;
    for (size_t n = rng() % 6; n > 0; n--) b.push_back("\x00\x01\x7f\xfe\xff"[rng() % 5]);
    boundaries.push_back(b);
  }
  for (const auto& a : boundaries) {
    std::string ka(1, '\3'), back;
    RankIndex::AppendInverted(&ka, a);
    int level = 0;
    ASSERT_TRUE(RankIndex::ParseKey(ka, &level, &back));
    EXPECT_EQ(level, 3);
    EXPECT_EQ(back, a);
    for (const auto& b : boundaries) {
      std::string kb(1, '\3');
      RankIndex::AppendInverted(&kb, b);
      EXPECT_EQ(a < b, ka > kb) << "boundaries of " << a.size() << " and " << b.size() << " bytes";
    }
  }
}

TEST_F(ZSetRankTest, CountsStayExactThroughRandomWrites) {
  std::mt19937 rng(12345);
  std::set<std::string> members;
  int levels = 0;
  for (uint32_t i = 0; i < 200; i++) members.insert(Suffix(i * 7));
  WithDb([&](Database& db) {
    for (const auto& m : members) db.ctx()->Put(ColumnFamily::kZSetScore, prefix_ + m, "");
    RankIndex index(db.ctx(), prefix_, 0, ColumnFamily::kZSetScore, kFanout);
    ASSERT_TRUE(index.Build().ok());
    levels = index.levels();
  });
  EXPECT_GE(levels, 3);
  CheckShape(members, levels);
  for (int round = 0; round < 60; round++) {
    WithDb([&](Database& db) {
      RankIndex index(db.ctx(), prefix_, levels, ColumnFamily::kZSetScore, kFanout);
      // Phases: growth, shrinking, then both; one batch holds many operations.
      int grow = round < 20 ? 80 : round < 40 ? 15 : 50;
      for (int op = 0; op < 60; op++) {
        if (rng() % 4 == 0 && members.size() > 1) {  // a member moves (a score update)
          auto it = std::next(members.begin(), static_cast<long>(rng() % members.size()));
          // Half of them far, half to a neighbour: a small ZINCRBY stays in its
          // block or its group, where the paths meet low.
          uint32_t near = Number(*it) + rng() % 25;
          std::string from = *it, to = Suffix(rng() % 2 ? rng() % 5000 : near < 12 ? near : near - 12);
          if (members.count(to)) continue;
          members.erase(it);
          members.insert(to);
          db.ctx()->Delete(ColumnFamily::kZSetScore, prefix_ + from);
          db.ctx()->Put(ColumnFamily::kZSetScore, prefix_ + to, "");
          ASSERT_TRUE(index.Move(from, to).ok());
        } else if (static_cast<int>(rng() % 100) < grow || members.size() < 2) {
          std::string m = Suffix(rng() % 5000);
          if (!members.insert(m).second) continue;
          db.ctx()->Put(ColumnFamily::kZSetScore, prefix_ + m, "");
          ASSERT_TRUE(index.Insert(m).ok());
        } else {
          auto it = std::next(members.begin(), static_cast<long>(rng() % members.size()));
          std::string m = *it;
          members.erase(it);
          db.ctx()->Delete(ColumnFamily::kZSetScore, prefix_ + m);
          ASSERT_TRUE(index.Remove(m).ok());
        }
      }
      levels = index.levels();
    });
    CheckShape(members, levels);
    CheckAnswers(members, levels, rng);
    if (HasFailure()) return;
  }
  // A rebuild gives the same answers; a drop leaves nothing.
  WithDb([&](Database& db) {
    RankIndex index(db.ctx(), prefix_, levels, ColumnFamily::kZSetScore, kFanout);
    ASSERT_TRUE(index.Build().ok());
    levels = index.levels();
  });
  CheckShape(members, levels);
  CheckAnswers(members, levels, rng);
  WithDb([&](Database& db) {
    RankIndex index(db.ctx(), prefix_, levels, ColumnFamily::kZSetScore, kFanout);
    ASSERT_TRUE(index.Drop().ok());
    EXPECT_EQ(index.levels(), 0);
  });
  CheckShape(members, 0);
}

// Through the type: a rank asked of a big set builds the index, writes keep it
// (member by member, or rebuilt by bulk writes) until the set shrinks past the
// size that drops it; ranks and ranges by rank in both directions always match
// the model, index or not.
TEST_F(ZSetRankTest, SortedSetRanksMatchAModel) {
  std::mt19937 rng(777);
  std::set<std::pair<double, std::string>> model;
  std::map<std::string, double> scores;
  auto check = [&]() {
    std::vector<std::pair<double, std::string>> sorted(model.begin(), model.end());
    WithDb(
        [&](Database& db) {
          RedisZSet z(&db);
          for (int probe = 0; probe < 15 && !sorted.empty(); probe++) {
            size_t r = rng() % sorted.size();
            std::optional<int64_t> rank;
            double score;
            ASSERT_TRUE(z.Rank("z", sorted[r].second, false, &rank, &score).ok());
            ASSERT_TRUE(rank.has_value());
            EXPECT_EQ(*rank, static_cast<int64_t>(r));
            ASSERT_TRUE(z.Rank("z", sorted[r].second, true, &rank, &score).ok());
            EXPECT_EQ(*rank, static_cast<int64_t>(sorted.size() - 1 - r));
            std::vector<ZMember> out;
            bool rev = rng() % 2;
            ASSERT_TRUE(z.RangeByRank("z", static_cast<int64_t>(r), static_cast<int64_t>(r) + 4, rev, &out).ok());
            for (size_t i = 0; i < out.size(); i++) {
              const auto& e = rev ? sorted[sorted.size() - 1 - r - i] : sorted[r + i];
              EXPECT_EQ(out[i].member, e.second);
              EXPECT_EQ(out[i].score, e.first);
            }
            EXPECT_EQ(out.size(), std::min<size_t>(5, sorted.size() - r));
          }
        });  // committed: the first rank asked of a big set builds its index
  };
  auto index_records = [&]() {
    rocksdb::ReadOptions ro;
    std::unique_ptr<rocksdb::Iterator> it(storage_->db()->NewIterator(ro, storage_->cf(ColumnFamily::kZSetRank)));
    size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    return n;
  };
  // Up past the build size one member at a time, then bulk, then down below the drop size.
  for (int step = 0; step < 2600; step++) {
    int phase = step < 1400 ? 0 : step < 1500 ? 1 : 2;
    WithDb([&](Database& db) {
      RedisZSet z(&db);
      int64_t result;
      std::optional<double> incr;
      if (phase == 0 || (phase == 1 && step % 2)) {
        std::vector<ZMember> add;
        size_t n = phase == 0 ? 1 + rng() % 3 : 300;
        for (size_t i = 0; i < n; i++) add.push_back(ZMember{"m" + std::to_string(rng() % 3000), double(rng() % 50)});
        ASSERT_TRUE(z.Add("z", add, RedisZSet::AddFlags{}, &result, &incr).ok());
        for (const auto& m : add) {
          if (scores.count(m.member)) model.erase({scores[m.member], m.member});
          scores[m.member] = m.score;
          model.insert({m.score, m.member});
        }
      } else if (!model.empty()) {
        std::vector<std::string> names;
        size_t n = phase == 1 ? 200 : 1 + rng() % 4;
        for (size_t i = 0; i < n && i < model.size(); i++) {
          names.push_back(std::next(model.begin(), static_cast<long>(rng() % model.size()))->second);
        }
        std::vector<std::string_view> views(names.begin(), names.end());
        int64_t removed;
        ASSERT_TRUE(z.Remove("z", views, &removed).ok());
        for (const auto& name : names) {
          if (scores.count(name)) {
            model.erase({scores[name], name});
            scores.erase(name);
          }
        }
      }
    });
    if (step % 50 == 0 || step == 2599) check();
    if (HasFailure()) return;
    if (step == 1399) EXPECT_GT(index_records(), 4u);  // built by the checks' ranks, kept by the writes
  }
  EXPECT_EQ(index_records(), 0u);  // dropped
  EXPECT_LT(model.size(), 256u);  // the drop size was crossed on the way down
}

}  // namespace

namespace {

// An index found inconsistent (here: its records deleted behind its back) does
// not make the set unwritable: the write rebuilds it, and ranks are right again.
TEST_F(ZSetRankTest, AWriteRebuildsAnInconsistentIndex) {
  std::vector<ZMember> members;
  for (int i = 0; i < 2000; i++) members.push_back(ZMember{"m" + std::to_string(i), double(i)});
  int64_t result;
  std::optional<double> incr;
  WithDb([&](Database& db) {
    RedisZSet z(&db);
    ASSERT_TRUE(z.Add("z", members, RedisZSet::AddFlags{}, &result, &incr).ok());
  });
  WithDb([&](Database& db) {  // builds the index
    std::optional<int64_t> rank;
    double score;
    ASSERT_TRUE(RedisZSet(&db).Rank("z", "m1500", false, &rank, &score).ok());
    EXPECT_EQ(rank, 1500);
  });
  // Point deletes, not a range tombstone: the family's counts are updated in
  // place, and an in-place update under a range tombstone stays hidden by it
  // (record keys carry their set's version, which nothing writes again after
  // FLUSHDB's range deletes).
  rocksdb::WriteBatch wipe;
  {
    std::unique_ptr<rocksdb::Iterator> it(
        storage_->db()->NewIterator(rocksdb::ReadOptions(), storage_->cf(ColumnFamily::kZSetRank)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) wipe.Delete(storage_->cf(ColumnFamily::kZSetRank), it->key());
  }
  ASSERT_GT(wipe.Count(), 0u);
  ASSERT_TRUE(storage_->Write(&wipe).ok());
  WithDb([&](Database& db) {
    RedisZSet z(&db);
    ASSERT_TRUE(z.Add("z", {ZMember{"a", -1}}, RedisZSet::AddFlags{}, &result, &incr).ok());
    EXPECT_EQ(result, 1);
  });
  WithDb([&](Database& db) {
    std::optional<int64_t> rank;
    double score;
    ASSERT_TRUE(RedisZSet(&db).Rank("z", "m1500", false, &rank, &score).ok());
    EXPECT_EQ(rank, 1501);
    std::vector<ZMember> out;
    ASSERT_TRUE(RedisZSet(&db).RangeByRank("z", 1000, 1000, true, &out).ok());
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].member, "m999");
  });
}

}  // namespace
