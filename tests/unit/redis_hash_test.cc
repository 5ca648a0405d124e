// The hash type's field order: a listpack hash answers in insertion order, as
// Redis' listpack does, through every write that keeps, moves or drops a field;
// a hash that becomes a hashtable stops paying for it.
#include <gtest/gtest.h>

#include "temp_storage.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/encoding.h"
#include "common/time_util.h"
#include "storage/key_encoding.h"
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
