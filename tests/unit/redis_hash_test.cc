// The hash type's field order: a listpack hash answers in insertion order, as
// Redis' listpack does, through every write that keeps, moves or drops a field;
// a hash that becomes a hashtable stops paying for it.
#include <gtest/gtest.h>
#include <rocksdb/perf_context.h>

#include "temp_storage.h"

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/encoding.h"
#include "common/time_util.h"
#include "storage/key_encoding.h"
#include "types/rank_index.h"
#include "types/redis_hash.h"

using namespace kvrocks;

namespace {

using FieldValues = std::vector<std::pair<std::string, std::string>>;

class RedisHashTest : public TempStorageTest {
 protected:
  FieldValues All(std::string_view key) {
    Context ctx(storage_.get());
    Database db(&ctx, 0);
    FieldValues fvs;
    EXPECT_TRUE(RedisHash(&db).GetAll(key, &fvs).ok());
    return fvs;
  }
  // Runs fn on a hash of a fresh context and commits.
  template <typename Fn>
  void Write(Fn fn) {
    Context ctx(storage_.get());
    Database db(&ctx, 0);
    RedisHash hash(&db);
    fn(hash);
    ASSERT_TRUE(ctx.Commit().ok());
  }
  // Writes fields f0..f<n-1> with values 0..n-1 to key; returns them.
  FieldValues WriteNumbered(std::string_view key, int n) {
    FieldValues fvs;
    for (int i = 0; i < n; i++) fvs.emplace_back("f" + std::to_string(i), std::to_string(i));
    std::vector<std::pair<std::string_view, std::string_view>> views(fvs.begin(), fvs.end());
    Write([&](RedisHash& h) {
      int64_t added;
      ASSERT_TRUE(h.Set(key, views, false, &added).ok());
    });
    return fvs;
  }
  std::string Encoding(std::string_view key) {
    Context ctx(storage_.get());
    Database db(&ctx, 0);
    LoadedKey lk;
    Metadata meta;
    EXPECT_TRUE(db.Load(key, &lk).ok() && meta.Decode(lk.raw).ok());
    return RedisHash::Encoding(meta);
  }
  // The values of key's fields exactly as stored (version from its metadata).
  std::vector<std::string> StoredValues(std::string_view key) {
    Context ctx(storage_.get());
    Database db(&ctx, 0);
    LoadedKey lk;
    Metadata meta;
    EXPECT_TRUE(db.Load(key, &lk).ok() && meta.Decode(lk.raw).ok());
    SubkeyBounds bounds(0, key, meta.version);
    std::vector<std::string> values;
    auto it = ctx.NewIterator(ColumnFamily::kSubkey, bounds.options());
    for (it->SeekToFirst(); it->Valid(); it->Next()) values.push_back(it->value().ToString());
    return values;
  }
  // The stored field names of key in key order, the levels of its rank index and its version.
  std::vector<std::string> StoredFields(Context* ctx, std::string_view key, int* levels, uint64_t* version) {
    Database db(ctx, 0);
    LoadedKey lk;
    Metadata meta;
    std::vector<std::string> fields;
    EXPECT_TRUE(db.Load(key, &lk).ok() && meta.Decode(lk.raw).ok());
    *levels = RankIndex::LevelsOf(meta);
    *version = meta.version;
    SubkeyBounds bounds(0, key, meta.version);
    auto it = ctx->NewIterator(ColumnFamily::kSubkey, bounds.options());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      fields.push_back(it->key().ToString().substr(bounds.prefix().size()));
    }
    return fields;
  }
};

// Random HSET / HSETNX / HDEL / HINCRBY on a small hash against an
// insertion-ordered model: an updated field keeps its place, a deleted and
// re-added one goes last.
TEST_F(RedisHashTest, ListpackKeepsInsertionOrder) {
  std::mt19937_64 rng(11);
  FieldValues model;
  auto find = [&](const std::string& f) {
    return std::find_if(model.begin(), model.end(), [&](const auto& fv) { return fv.first == f; });
  };
  for (int round = 0; round < 400; round++) {
    std::string f = "f" + std::to_string(rng() % 40), g = "f" + std::to_string(rng() % 40);
    std::string v = std::to_string(rng() % 1000);
    int op = static_cast<int>(rng() % 4);
    Write([&](RedisHash& hash) {
      int64_t n;
      if (op <= 1) {
        ASSERT_TRUE(hash.Set("h", {{f, v}, {g, v}}, op == 1, &n).ok());
      } else if (op == 2) {
        ASSERT_TRUE(hash.Delete("h", {f}, &n).ok());
      } else {
        ASSERT_TRUE(hash.IncrBy("h", f, 1, &n).ok());
      }
    });
    if (op <= 1) {
      for (const std::string& name : {f, g}) {
        auto it = find(name);
        if (it == model.end()) {
          model.emplace_back(name, v);
        } else if (op == 0) {
          it->second = v;
        }
      }
    } else if (op == 2) {
      if (find(f) != model.end()) model.erase(find(f));
    } else if (find(f) == model.end()) {
      model.emplace_back(f, "1");
    } else {
      find(f)->second = std::to_string(std::stoll(find(f)->second) + 1);
    }
    ASSERT_EQ(All("h"), model) << "round " << round;
  }
  EXPECT_EQ(Encoding("h"), "listpack");
}

TEST_F(RedisHashTest, UpdatesKeepPlacesAndReAddsGoLast) {
  Write([](RedisHash& h) {
    int64_t n;
    ASSERT_TRUE(h.Set("h", {{"z", "1"}, {"a", "2"}, {"m", "3"}}, false, &n).ok());
  });
  Write([](RedisHash& h) {
    int64_t n;
    ASSERT_TRUE(h.Set("h", {{"a", "20"}, {"b", "4"}}, false, &n).ok());
    ASSERT_TRUE(h.Delete("h", {"z"}, &n).ok());
    ASSERT_TRUE(h.IncrBy("h", "m", 5, &n).ok());
    ASSERT_TRUE(h.Set("h", {{"z", "9"}}, true, &n).ok());
    ASSERT_TRUE(h.IncrBy("h", "c", 1, &n).ok());
  });
  EXPECT_EQ(All("h"), (FieldValues{{"a", "20"}, {"m", "8"}, {"b", "4"}, {"z", "9"}, {"c", "1"}}));
  // Field TTLs add their own prefix: the order survives setting and removing them.
  Write([](RedisHash& h) {
    std::vector<int64_t> r;
    ASSERT_TRUE(h.ExpireFields("h", {"m", "b"}, NowMs() + 100000, RedisHash::ExpireCond::kAlways, &r).ok());
    ASSERT_TRUE(h.PersistFields("h", {"b"}, &r).ok());
  });
  Write([](RedisHash& h) {
    int64_t n;
    ASSERT_TRUE(h.IncrBy("h", "m", 1, &n).ok());
    ASSERT_TRUE(h.Set("h", {{"d", "5"}}, false, &n).ok());
  });
  EXPECT_EQ(All("h"), (FieldValues{{"a", "20"}, {"m", "9"}, {"b", "4"}, {"z", "9"}, {"c", "1"}, {"d", "5"}}));
  std::vector<std::string> ordered_stored = StoredValues("h");
  EXPECT_NE(ordered_stored[0], "20");  // a value carries its prefixes
}

// A hash that becomes a hashtable answers in field order and stores bare values.
TEST_F(RedisHashTest, HashtableDropsTheOrder) {
  Write([](RedisHash& h) {
    int64_t n;
    ASSERT_TRUE(h.Set("h", {{"z", "1"}, {"a", "2"}}, false, &n).ok());
  });
  Write([](RedisHash& h) {
    int64_t n;
    ASSERT_TRUE(h.Set("h", {{"m", std::string(100, 'x')}}, false, &n).ok());
  });
  EXPECT_EQ(Encoding("h"), "hashtable");
  EXPECT_EQ(All("h"), (FieldValues{{"a", "2"}, {"m", std::string(100, 'x')}, {"z", "1"}}));
  EXPECT_EQ(StoredValues("h"), (std::vector<std::string>{"2", std::string(100, 'x'), "1"}));
  // HINCRBY past the entry limit converts too; a new big hash starts as a hashtable.
  FieldValues many;
  for (int i = 0; i < 600; i++) many.emplace_back("f" + std::to_string(600 - i), "v");
  Write([&](RedisHash& h) {
    std::vector<std::pair<std::string_view, std::string_view>> fvs(many.begin(), many.end());
    int64_t n;
    ASSERT_TRUE(h.Set("big", fvs, false, &n).ok());
    EXPECT_EQ(n, 600);
  });
  EXPECT_EQ(Encoding("big"), "hashtable");
  EXPECT_EQ(StoredValues("big"), std::vector<std::string>(600, "v"));
  // 600 names of which 3 distinct: still a listpack, in first-seen order.
  Write([](RedisHash& h) {
    std::vector<std::pair<std::string_view, std::string_view>> fvs;
    for (int i = 0; i < 600; i++) fvs.emplace_back(i % 3 == 0 ? "c" : i % 3 == 1 ? "b" : "a", "v");
    int64_t n;
    ASSERT_TRUE(h.Set("dups", fvs, false, &n).ok());
  });
  EXPECT_EQ(Encoding("dups"), "listpack");
  EXPECT_EQ(All("dups"), (FieldValues{{"c", "v"}, {"b", "v"}, {"a", "v"}}));
}

// A listpack hash written before insertion order was kept (flags 0, bare
// values) is numbered in field order by its first write, which then appends.
TEST_F(RedisHashTest, OlderListpackHashGetsNumbered) {
  {
    Context ctx(storage_.get());
    Metadata meta;
    meta.type = RedisType::kHash;
    meta.version = storage_->NewVersion();
    meta.size = 2;
    meta.payload.assign(1, '\0');
    ctx.Put(ColumnFamily::kMetadata, EncodeMetaKey(0, "old"), meta.Encode());
    std::string prefix = EncodeSubkeyPrefix(0, "old", meta.version);
    ctx.Put(ColumnFamily::kSubkey, prefix + "y", "1");
    ctx.Put(ColumnFamily::kSubkey, prefix + "b", "2");
    ASSERT_TRUE(ctx.Commit().ok());
  }
  EXPECT_EQ(All("old"), (FieldValues{{"b", "2"}, {"y", "1"}}));
  Write([](RedisHash& h) {
    int64_t n;
    ASSERT_TRUE(h.Set("old", {{"a", "3"}, {"y", "4"}}, false, &n).ok());
    EXPECT_EQ(n, 1);
  });
  EXPECT_EQ(All("old"), (FieldValues{{"b", "2"}, {"y", "4"}, {"a", "3"}}));
}

// HRANDFIELD of a big hash picks random ranks through a rank index over its
// fields (built by the first pick): a few seeks a pick, not a read of the hash.
TEST_F(RedisHashTest, RandomPicksOfABigHashSelectRanks) {
  FieldValues fvs;
  for (int i = 0; i < 20000; i++) fvs.emplace_back("f" + std::to_string(i), "v" + std::to_string(i));
  std::vector<std::pair<std::string_view, std::string_view>> views(fvs.begin(), fvs.end());
  Write([&](RedisHash& h) {
    int64_t n;
    ASSERT_TRUE(h.Set("h", views, false, &n).ok());
  });
  FieldValues out;
  Write([&](RedisHash& h) { ASSERT_TRUE(h.RandomFields("h", 1, false, &out).ok()); });
  ASSERT_EQ(out.size(), 1u);
  auto steps = [] {
    return rocksdb::get_perf_context()->next_on_memtable_count + rocksdb::get_perf_context()->prev_on_memtable_count;
  };
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  Write([&](RedisHash& h) { ASSERT_TRUE(h.RandomFields("h", 50, false, &out).ok()); });
  uint64_t distinct_steps = steps();
  rocksdb::get_perf_context()->Reset();
  FieldValues repeated;
  Write([&](RedisHash& h) { ASSERT_TRUE(h.RandomFields("h", 50, true, &repeated).ok()); });
  uint64_t repeated_steps = steps();
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  // About 60 a pick (blocks of the index, fields within one); a read of the hash takes 20000.
  EXPECT_LE(distinct_steps, 50u * 150);
  EXPECT_LE(repeated_steps, 50u * 150);
  ASSERT_EQ(out.size(), 50u);
  ASSERT_EQ(repeated.size(), 50u);
  std::set<std::string> distinct;
  for (const auto& [f, v] : out) {
    distinct.insert(f);
    EXPECT_EQ("v" + f.substr(1), v);
  }
  EXPECT_EQ(distinct.size(), 50u);
  for (const auto& [f, v] : repeated) EXPECT_EQ("v" + f.substr(1), v);
  Write([&](RedisHash& h) { ASSERT_TRUE(h.RandomFields("h", 30000, false, &out).ok()); });
  EXPECT_EQ(out, All("h"));  // the whole hash, in its order
}

// Every write that adds or removes a field keeps the index exact: HSET, HSETNX,
// HINCRBY of new fields, HDEL, HEXPIRE in the past, expiry of due fields; a
// hash shrunk below RankIndex::kDropAt loses it, and the next pick builds it again.
TEST_F(RedisHashTest, RankIndexFollowsEveryWrite) {
  std::mt19937_64 rng(29);
  auto name = [&](uint64_t i) { return "field:" + std::to_string(i); };
  Write([&](RedisHash& h) {
    FieldValues fvs;
    for (int i = 0; i < 1500; i++) fvs.emplace_back(name(i), "1");
    std::vector<std::pair<std::string_view, std::string_view>> views(fvs.begin(), fvs.end());
    int64_t n;
    ASSERT_TRUE(h.Set("h", views, false, &n).ok());
  });
  FieldValues out;
  auto check = [&](int round) {
    Context ctx(storage_.get());
    int levels;
    uint64_t version;
    std::vector<std::string> fields = StoredFields(&ctx, "h", &levels, &version);
    if (levels == 0) return;
    RankIndex index(&ctx, EncodeSubkeyPrefix(0, "h", version), levels, ColumnFamily::kSubkey);
    for (uint64_t r = 0; r < fields.size(); r += 1 + rng() % 7) {
      std::string found, value;
      ASSERT_TRUE(index.Select(r, &found, &value).ok()) << "round " << round;
      ASSERT_EQ(found, fields[r]) << "round " << round << " rank " << r;
      uint64_t below = 0;
      ASSERT_TRUE(index.CountBelow(fields[r], &below).ok());
      ASSERT_EQ(below, r) << "round " << round;
    }
  };
  bool dropped = false;
  for (int round = 0; round < 300; round++) {
    if (round % 25 == 0) Write([&](RedisHash& h) { ASSERT_TRUE(h.RandomFields("h", 3, false, &out).ok()); });
    int op = static_cast<int>(rng() % 6);
    Write([&](RedisHash& h) {
      int64_t n;
      std::vector<std::string> names;
      for (int i = 0; i < 1 + static_cast<int>(rng() % 90); i++) names.push_back(name(rng() % 3000));
      std::vector<std::string_view> views(names.begin(), names.end());
      std::vector<int64_t> results;
      if (op <= 1) {
        std::vector<std::pair<std::string_view, std::string_view>> fvs;
        for (const auto& f : names) fvs.emplace_back(f, "2");
        ASSERT_TRUE(h.Set("h", fvs, op == 1, &n).ok());
      } else if (op == 2) {
        ASSERT_TRUE(h.IncrBy("h", names[0], 1, &n).ok());
      } else if (op == 3) {
        ASSERT_TRUE(h.Delete("h", views, &n).ok());
      } else if (op == 4) {
        ASSERT_TRUE(h.ExpireFields("h", views, 1, RedisHash::ExpireCond::kAlways, &results).ok());
      } else {
        ASSERT_TRUE(h.ExpireFields("h", views, NowMs() + 1000000, RedisHash::ExpireCond::kAlways, &results).ok());
        ExpiryTimeAt later(NowMs() + 2000000);
        ASSERT_TRUE(h.DeleteExpiredFields("h", &n).ok());
      }
    });
    check(round);
    if (round == 200) {
      // Down to at most 200 fields: the index goes (a pick of a small hash reads it whole).
      Write([&](RedisHash& h) {
        std::vector<std::string> names;
        for (int i = 200; i < 3000; i++) names.push_back(name(i));
        std::vector<std::string_view> views(names.begin(), names.end());
        int64_t n;
        ASSERT_TRUE(h.Delete("h", views, &n).ok());
      });
      Context ctx(storage_.get());
      int levels;
      uint64_t version;
      EXPECT_LT(StoredFields(&ctx, "h", &levels, &version).size(), RankIndex::kDropAt);
      EXPECT_EQ(levels, 0);
      dropped = true;
      Write([&](RedisHash& h) {
        FieldValues fvs;
        for (int i = 0; i < 3000; i++) fvs.emplace_back(name(i), "3");
        std::vector<std::pair<std::string_view, std::string_view>> views(fvs.begin(), fvs.end());
        int64_t n;
        ASSERT_TRUE(h.Set("h", views, false, &n).ok());
      });
    }
  }
  EXPECT_TRUE(dropped);
  Context ctx(storage_.get());
  int levels;
  uint64_t version;
  StoredFields(&ctx, "h", &levels, &version);
  EXPECT_GT(levels, 0);
}

// RENAME of a hash is O(1): it moves the metadata only, the fields stay where
// they were written (Metadata::owner), and every operation finds them there.
TEST_F(RedisHashTest, RenameMovesOnlyTheMetadata) {
  FieldValues fvs = WriteNumbered("h", 5000);
  auto subkeys = [&] { return CountEntries(ColumnFamily::kSubkey); };
  ASSERT_EQ(subkeys(), 5000u);
  WithDb([](Database& db) {
    bool renamed;
    ASSERT_TRUE(db.Rename("h", "other", false, &renamed).ok() && renamed);
  });
  EXPECT_EQ(subkeys(), 5000u);  // not one element copied
  FieldValues got = All("other");  // a hashtable: in field order
  std::sort(fvs.begin(), fvs.end());
  EXPECT_EQ(got, fvs);
  EXPECT_TRUE(All("h").empty());
  Write([](RedisHash& h) {
    int64_t n;
    ASSERT_TRUE(h.Set("other", {{"f1", "one"}, {"new", "x"}}, false, &n).ok());
    ASSERT_TRUE(h.Delete("other", {"f2"}, &n).ok());
  });
  EXPECT_EQ(subkeys(), 5000u);
  std::string v;
  WithDb([&](Database& db) { ASSERT_TRUE(RedisHash(&db).Get("other", "f1", &v).ok()); }, false);
  EXPECT_EQ(v, "one");
}

// MOVE to another database moves the metadata; the fields stay in the first
// database, and a FLUSHDB of that one copies them out first.
TEST_F(RedisHashTest, MoveMovesOnlyTheMetadata) {
  FieldValues fvs = WriteNumbered("h", 5000);
  std::sort(fvs.begin(), fvs.end());
  auto in_db = [&](uint8_t db, auto fn) {
    Context ctx(storage_.get());
    Database d(&ctx, db);
    fn(d);
    ASSERT_TRUE(ctx.Commit().ok());
  };
  auto all_in = [&](uint8_t db) {
    FieldValues got;
    in_db(db, [&](Database& d) { EXPECT_TRUE(RedisHash(&d).GetAll("h", &got).ok()); });
    return got;
  };
  auto move = [&](uint8_t from, uint8_t to) {
    in_db(from, [&](Database& d) {
      Context* ctx = d.ctx();
      Database dst(ctx, to);
      bool moved;
      ASSERT_TRUE(d.Move("h", &dst, &moved).ok() && moved);
    });
  };
  const size_t stored = CountEntries(ColumnFamily::kSubkey);
  move(0, 1);
  EXPECT_EQ(CountEntries(ColumnFamily::kSubkey), stored) << "not one field copied";
  EXPECT_EQ(MovedRecords(), 1u);
  EXPECT_EQ(all_in(1), fvs);
  EXPECT_TRUE(all_in(0).empty());
  move(1, 0);  // back home: no record
  EXPECT_EQ(MovedRecords(), 0u);
  EXPECT_EQ(all_in(0), fvs);
  move(0, 1);
  in_db(1, [&](Database& d) {
    int64_t n;
    ASSERT_TRUE(RedisHash(&d).Set("h", {{"f1", "one"}}, false, &n).ok());
  });
  fvs[std::find_if(fvs.begin(), fvs.end(), [](const auto& fv) { return fv.first == "f1"; }) - fvs.begin()].second =
      "one";
  // FLUSHDB of database 0, as the command does it.
  in_db(0, [&](Database& d) { ASSERT_TRUE(Database::CopyOutMovedSubkeys(d.ctx(), 0).ok()); });
  ASSERT_TRUE(storage_->FlushDb(0).ok());
  EXPECT_EQ(MovedRecords(), 0u);
  EXPECT_EQ(all_in(1), fvs);
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(storage_->db()->CompactRange(co, storage_->cf(ColumnFamily::kSubkey), nullptr, nullptr).ok());
  EXPECT_EQ(all_in(1), fvs);
  EXPECT_EQ(CountEntries(ColumnFamily::kSubkey), stored);
}

TEST(Varint, RoundTrips) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{16383}, uint64_t{16384},
                     uint64_t{1} << 35, UINT64_MAX}) {
    std::string s;
    PutVarint64(&s, v);
    s += "rest";
    Reader r(s);
    uint64_t got;
    ASSERT_TRUE(r.GetVarint64(&got));
    EXPECT_EQ(got, v);
    EXPECT_EQ(r.rest(), "rest");
  }
  Reader truncated(std::string_view("\x80\x80", 2));
  uint64_t v;
  EXPECT_FALSE(truncated.GetVarint64(&v));
}

}  // namespace
