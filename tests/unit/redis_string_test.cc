// Type operations over a real RocksDB in a temporary directory.
#include "types/redis_string.h"
#include "types/redis_hash.h"

#include <gtest/gtest.h>

#include "temp_storage.h"

#include <rocksdb/perf_context.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/time_util.h"
#include "config/config.h"
#include "storage/storage.h"

using namespace kvrocks;

class StringTypeTest : public TempStorageTest {
 protected:

  // Runs fn in a fresh context on db 0 and commits.
  template <typename Fn>
  void Run(Fn fn) {
    Context ctx(storage_.get());
    Database db(&ctx, 0);
    RedisString str(&db);
    fn(db, str);
    ASSERT_TRUE(ctx.Commit().ok());
  }

};

TEST_F(StringTypeTest, SetGetAndCounts) {
  Run([](Database&, RedisString& s) {
    bool done;
    std::optional<std::string> old;
    ASSERT_TRUE(s.Set("k", "v", {}, &done, &old).ok());
    EXPECT_TRUE(done);
  });
  EXPECT_EQ(storage_->KeyCount(0), 1);
  Run([](Database&, RedisString& s) {
    std::string v;
    ASSERT_TRUE(s.Get("k", &v).ok());
    EXPECT_EQ(v, "v");
    EXPECT_TRUE(s.Get("missing", &v).IsNotFound());
  });
  // Overwriting does not change the count; deleting does.
  Run([](Database&, RedisString& s) {
    bool done;
    std::optional<std::string> old;
    RedisString::SetOptions o;
    o.get = true;
    ASSERT_TRUE(s.Set("k", "v2", o, &done, &old).ok());
    EXPECT_EQ(old.value(), "v");
  });
  EXPECT_EQ(storage_->KeyCount(0), 1);
  Run([](Database& db, RedisString&) {
    bool deleted;
    ASSERT_TRUE(db.Delete("k", &deleted).ok());
    EXPECT_TRUE(deleted);
  });
  EXPECT_EQ(storage_->KeyCount(0), 0);
}

TEST_F(StringTypeTest, NxXxAndReadYourWritesInOneContext) {
  Run([](Database&, RedisString& s) {
    bool done;
    std::optional<std::string> old;
    RedisString::SetOptions xx;
    xx.cond = RedisString::SetOptions::kXX;
    ASSERT_TRUE(s.Set("a", "1", xx, &done, &old).ok());
    EXPECT_FALSE(done);
    ASSERT_TRUE(s.Set("a", "1", {}, &done, &old).ok());
    RedisString::SetOptions nx;
    nx.cond = RedisString::SetOptions::kNX;
    ASSERT_TRUE(s.Set("a", "2", nx, &done, &old).ok());
    EXPECT_FALSE(done);
    int64_t r;
    ASSERT_TRUE(s.IncrBy("a", 41, &r).ok());
    EXPECT_EQ(r, 42);
  });
  EXPECT_EQ(storage_->KeyCount(0), 1);
}

TEST_F(StringTypeTest, IncrErrors) {
  Run([](Database&, RedisString& s) {
    bool done;
    std::optional<std::string> old;
    ASSERT_TRUE(s.Set("n", "9223372036854775807", {}, &done, &old).ok());
    int64_t r;
    Status st = s.IncrBy("n", 1, &r);
    EXPECT_EQ(st.ToRedisError(), "ERR increment or decrement would overflow");
    ASSERT_TRUE(s.Set("x", "abc", {}, &done, &old).ok());
    EXPECT_EQ(s.IncrBy("x", 1, &r).ToRedisError(), "ERR value is not an integer or out of range");
    std::string f;
    ASSERT_TRUE(s.IncrByFloat("f", 10.5L, &f).ok());
    EXPECT_EQ(f, "10.5");
  });
}

TEST_F(StringTypeTest, ExpiryIsLazyAndIndexed) {
  Run([](Database&, RedisString& s) {
    bool done;
    std::optional<std::string> old;
    RedisString::SetOptions o;
    o.expire_ms = NowMs() - 1;  // a time in the past: stored, and counted until found expired, as in Redis 7.0
    ASSERT_TRUE(s.Set("past", "v", o, &done, &old).ok());
    EXPECT_TRUE(done);
    o.expire_ms = NowMs() + 30;
    ASSERT_TRUE(s.Set("soon", "v", o, &done, &old).ok());
    o.expire_ms = NowMs() + 100000;
    ASSERT_TRUE(s.Set("later", "v", o, &done, &old).ok());
  });
  EXPECT_EQ(storage_->KeyCount(0), 3);
  EXPECT_EQ(storage_->ExpireCount(0), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  Run([](Database& db, RedisString& s) {
    std::string v;
    EXPECT_TRUE(s.Get("past", &v).IsNotFound());  // expired: invisible, still counted
    EXPECT_TRUE(s.Get("soon", &v).IsNotFound());
    EXPECT_TRUE(s.Get("later", &v).ok());
    bool removed;
    ASSERT_TRUE(db.Persist("later", &removed).ok());
    EXPECT_TRUE(removed);
  });
  EXPECT_EQ(storage_->KeyCount(0), 3);
  EXPECT_EQ(storage_->ExpireCount(0), 2);
}

TEST_F(StringTypeTest, PendingWritesAreVisibleToTheirContext) {
  Context ctx(storage_.get());
  Database db(&ctx, 0);
  RedisString s(&db);
  bool done;
  std::optional<std::string> old;
  ASSERT_TRUE(s.Set("a", "1", {}, &done, &old).ok());
  ASSERT_TRUE(s.Set("b", "2", {}, &done, &old).ok());
  bool deleted;
  ASSERT_TRUE(db.Delete("a", &deleted).ok());
  EXPECT_TRUE(deleted);
  std::string v;
  EXPECT_TRUE(s.Get("a", &v).IsNotFound());
  ASSERT_TRUE(s.Get("b", &v).ok());
  EXPECT_EQ(v, "2");
  std::vector<std::string> keys;
  ASSERT_TRUE(db.Keys("*", &keys).ok());  // iterators merge pending writes too
  EXPECT_EQ(keys, std::vector<std::string>{"b"});
  EXPECT_EQ(storage_->KeyCount(0), 0);  // counters move at commit
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(storage_->KeyCount(0), 1);
  Context fresh(storage_.get());
  Database db2(&fresh, 0);
  EXPECT_TRUE(RedisString(&db2).Get("b", &v).ok());
}

TEST_F(StringTypeTest, SetRangeAndAppend) {
  Run([](Database&, RedisString& s) {
    size_t len;
    ASSERT_TRUE(s.SetRange("r", 3, "ab", 1 << 20, &len).ok());
    EXPECT_EQ(len, 5u);
    ASSERT_TRUE(s.Append("r", "cd", 1 << 20, &len).ok());
    EXPECT_EQ(len, 7u);
    std::string v;
    ASSERT_TRUE(s.Get("r", &v).ok());
    EXPECT_EQ(v, std::string("\0\0\0abcd", 7));
    EXPECT_FALSE(s.SetRange("r", (1 << 20), "x", 1 << 20, &len).ok());
  });
}

TEST_F(StringTypeTest, CountersSurviveReopen) {
  Run([](Database&, RedisString& s) {
    bool done;
    std::optional<std::string> old;
    for (int i = 0; i < 10; i++) ASSERT_TRUE(s.Set("k" + std::to_string(i), "v", {}, &done, &old).ok());
  });
  storage_->Close();
  storage_ = std::make_unique<Storage>(&cfg_);
  ASSERT_TRUE(storage_->Open().ok());
  EXPECT_EQ(storage_->KeyCount(0), 10);
}

TEST_F(StringTypeTest, HashFieldsAndEncoding) {
  Context ctx(storage_.get());
  Database db(&ctx, 0);
  RedisHash h(&db);
  int64_t added;
  ASSERT_TRUE(h.Set("h", {{"a", "1"}, {"b", "2"}, {"a", "3"}}, false, &added).ok());
  EXPECT_EQ(added, 2);
  uint64_t size;
  ASSERT_TRUE(h.Size("h", &size).ok());
  EXPECT_EQ(size, 2u);
  std::string v;
  ASSERT_TRUE(h.Get("h", "a", &v).ok());
  EXPECT_EQ(v, "3");
  LoadedKey lk;
  ASSERT_TRUE(db.Load("h", &lk).ok());
  Metadata meta;
  ASSERT_TRUE(meta.Decode(lk.raw).ok());
  EXPECT_STREQ(RedisHash::Encoding(meta), "listpack");
  ASSERT_TRUE(h.Set("h", {{"long", std::string(65, 'x')}}, false, &added).ok());
  ASSERT_TRUE(db.Load("h", &lk).ok());
  ASSERT_TRUE(meta.Decode(lk.raw).ok());
  EXPECT_STREQ(RedisHash::Encoding(meta), "hashtable");
  int64_t deleted;
  ASSERT_TRUE(h.Delete("h", {"a", "b", "long", "zz"}, &deleted).ok());
  EXPECT_EQ(deleted, 3);
  ASSERT_TRUE(db.Load("h", &lk).ok());
  EXPECT_FALSE(lk.live);  // an empty hash does not exist
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(storage_->KeyCount(0), 0);
}

// RENAME copies subkeys that are still pending writes of the same context: the
// copy reads them through an iterator over the batch it is writing to, whose
// buffer each write may move (a use after free that ASan found in the fuzzer).
TEST_F(StringTypeTest, RenameCopiesSubkeysWrittenInTheSameContext) {
  Context ctx(storage_.get());
  Database db(&ctx, 0);
  RedisHash h(&db);
  std::vector<std::string> fields, values;
  // Long fields and short values: the batch's buffer grows while a Put appends a
  // key, before it copies the value.
  for (int i = 0; i < 2000; i++) {
    fields.push_back("field-" + std::to_string(i) + "-" + std::string(200, 'f'));
    values.push_back("v" + std::to_string(i));
  }
  std::vector<std::pair<std::string_view, std::string_view>> fvs;
  for (size_t i = 0; i < fields.size(); i++) fvs.emplace_back(fields[i], values[i]);
  int64_t added;
  ASSERT_TRUE(h.Set("h", fvs, false, &added).ok());
  bool renamed;
  ASSERT_TRUE(db.Rename("h", "h2", false, &renamed).ok());
  ASSERT_TRUE(renamed);
  auto expect_copy = [&](RedisHash& hash) {
    std::vector<std::pair<std::string, std::string>> got;
    ASSERT_TRUE(hash.GetAll("h2", &got).ok());
    ASSERT_EQ(got.size(), fields.size());
    for (const auto& [f, v] : got) {
      size_t i = std::stoul(f.substr(6, f.find('-', 6) - 6));
      EXPECT_EQ(v, values[i]) << f;
    }
  };
  expect_copy(h);
  ASSERT_TRUE(ctx.Commit().ok());
  Context ctx2(storage_.get());
  Database db2(&ctx2, 0);
  RedisHash h2(&db2);
  expect_copy(h2);
}

// A plain SET does not read the key it replaces when the context allows it:
// the counters and the old expire entry are settled by Commit.
TEST_F(StringTypeTest, ReplacingSetSettlesCountsAtCommit) {
  const uint64_t t1 = NowMs() + 100000, t2 = NowMs() + 200000;
  auto set = [](RedisString& s, const char* key, uint64_t expire_ms) {
    bool done;
    std::optional<std::string> old;
    RedisString::SetOptions o;
    o.expire_ms = expire_ms;
    ASSERT_TRUE(s.Set(key, "v", o, &done, &old).ok());
    ASSERT_TRUE(done);
  };
  auto expire_entry = [&](const char* key, uint64_t at) {
    std::string v;
    return storage_->db()
        ->Get(rocksdb::ReadOptions(), storage_->cf(ColumnFamily::kExpire), EncodeExpireKey(0, at, key), &v)
        .ok();
  };
  Run([&](Database&, RedisString& s) {
    set(s, "a", t1);
    set(s, "b", 0);
  });
  ASSERT_EQ(storage_->KeyCount(0), 2);
  ASSERT_EQ(storage_->ExpireCount(0), 1);

  Context ctx(storage_.get());
  ctx.set_unread_replace_ok(true);
  Database db(&ctx, 0);
  RedisString s(&db);
  set(s, "a", 0);   // had an expiry: its entry goes at commit
  set(s, "b", t2);  // gains one
  set(s, "c", 0);   // new
  set(s, "c", 0);   // written by this batch already: read from the batch
  bool done;
  ASSERT_TRUE(s.MSet({{"d", "1"}, {"d", "2"}}, false, &done).ok());
  EXPECT_EQ(storage_->KeyCount(0), 2);  // nothing settled before the commit
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(storage_->KeyCount(0), 4);
  EXPECT_EQ(storage_->ExpireCount(0), 1);
  EXPECT_FALSE(expire_entry("a", t1));
  EXPECT_TRUE(expire_entry("b", t2));

  // b loses its expiry to a replacing SET, then gets the same time back in the
  // same batch: the entry must survive the settling.
  set(s, "b", 0);
  set(s, "b", t2);
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(storage_->KeyCount(0), 4);
  EXPECT_EQ(storage_->ExpireCount(0), 1);
  EXPECT_TRUE(expire_entry("b", t2));

  // A savepoint rolled back takes its unread writes along.
  ctx.SetSavePoint();
  set(s, "e", 0);
  ctx.RollbackToSavePoint();
  set(s, "f", t1);
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(storage_->KeyCount(0), 5);
  EXPECT_EQ(storage_->ExpireCount(0), 2);
  std::string v;
  EXPECT_TRUE(RedisString(&db).Get("e", &v).IsNotFound());
}

// Blocks and big values share one cache of the configured size: a big value
// read from its blob file is kept there, and the next read is a cache hit.
TEST_F(StringTypeTest, BigValuesShareTheBlockCache) {
  auto cache = storage_->block_cache();
  EXPECT_EQ(cache->GetCapacity(), static_cast<size_t>(cfg_.rocksdb_block_cache_size));
  std::string big(64 * 1024, 'b');
  for (size_t i = 0; i < big.size(); i++) big[i] = static_cast<char>('a' + (i * 7919 % 26));
  Run([&](Database&, RedisString& s) {
    bool done;
    std::optional<std::string> old;
    ASSERT_TRUE(s.Set("big", big, {}, &done, &old).ok());
  });
  ASSERT_TRUE(storage_->FlushMemTables().ok());  // the value now lives in a blob file
  size_t before = cache->GetUsage();
  Run([&](Database&, RedisString& s) {
    std::string v;
    ASSERT_TRUE(s.Get("big", &v).ok());
    EXPECT_EQ(v, big);
  });
  EXPECT_GE(cache->GetUsage(), before + big.size());
  cfg_.rocksdb_block_cache_size = 16 << 20;  // CONFIG SET rocksdb.block-cache-size
  ASSERT_TRUE(storage_->ApplyOption("rocksdb.block-cache-size").ok());
  EXPECT_EQ(cache->GetCapacity(), static_cast<size_t>(16 << 20));
}

// APPEND and SETRANGE of a string past kEditInPlaceAt touch only the fragments
// they write: building a value by APPENDs is linear, not quadratic, and the
// value reads back whole.
TEST_F(StringTypeTest, AppendAndSetRangeOfABigStringEditInPlace) {
  std::string model;
  for (int i = 0; i < 300; i++) {
    std::string chunk(1000, static_cast<char>('a' + i % 26));
    model += chunk;
    Run([&](Database&, RedisString& s) {
      size_t len;
      ASSERT_TRUE(s.Append("log", chunk, 512 << 20, &len).ok());
      EXPECT_EQ(len, model.size());
    });
  }
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  Run([&](Database&, RedisString& s) {
    size_t len;
    ASSERT_TRUE(s.Append("log", "tail", 512 << 20, &len).ok());
    ASSERT_TRUE(s.SetRange("log", 150000, "mid", 512 << 20, &len).ok());
  });
  const auto& perf = *rocksdb::get_perf_context();
  uint64_t reads = perf.get_from_memtable_count + perf.next_on_memtable_count + perf.seek_on_memtable_count;
  uint64_t bytes = perf.get_read_bytes + perf.blob_read_byte + perf.iter_read_bytes;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  EXPECT_LE(reads, 20u) << "a few fragments and the metadata, not the 293 fragments of the value";
  EXPECT_LE(bytes, 20000u) << "a few fragments, not the 300 KB value";
  model += "tail";
  model.replace(150000, 3, "mid");
  Run([&](Database&, RedisString& s) {
    std::string v;
    ASSERT_TRUE(s.Get("log", &v).ok());
    EXPECT_TRUE(v == model) << v.size() << " bytes against " << model.size();
  });
}

// RENAME of a string stored out of line moves its metadata, not its value (whole
// or in fragments): reads and in-place edits after it use the old name's
// subkeys, compactions keep them while a key holds them, and drop them after.
TEST_F(StringTypeTest, RenameOfBigStringsMovesOnlyTheMetadata) {
  const std::string whole(6000, 'w');
  std::string frags(200000, 'f');
  Run([&](Database&, RedisString& s) {
    bool done;
    std::optional<std::string> old;
    ASSERT_TRUE(s.Set("whole", whole, {}, &done, &old).ok());
    ASSERT_TRUE(s.Set("frags", frags, {}, &done, &old).ok());
  });
  Run([&](Database&, RedisString& s) {
    size_t len;
    ASSERT_TRUE(s.Append("frags", "z", 512 << 20, &len).ok());  // past kEditInPlaceAt: into fragments
  });
  frags += "z";
  auto subkeys = [&] { return CountEntries(ColumnFamily::kSubkey); };
  const size_t before = subkeys();
  ASSERT_GT(before, 100u);
  auto rename = [&](const char* from, const char* to) {
    Run([&](Database& db, RedisString&) {
      bool renamed;
      ASSERT_TRUE(db.Rename(from, to, false, &renamed).ok() && renamed);
    });
  };
  rename("whole", "w2");
  rename("w2", "w3");
  rename("frags", "f2");
  EXPECT_EQ(subkeys(), before) << "not one byte of either value copied";
  EXPECT_EQ(MovedRecords(), 2u);
  Run([&](Database&, RedisString& s) {
    size_t len;
    ASSERT_TRUE(s.SetRange("f2", 100000, "mid", 512 << 20, &len).ok());
    ASSERT_TRUE(s.Append("f2", "tail", 512 << 20, &len).ok());
  });
  frags.replace(100000, 3, "mid");
  frags += "tail";
  auto expect_values = [&] {
    Run([&](Database&, RedisString& s) {
      std::string v;
      ASSERT_TRUE(s.Get("w3", &v).ok());
      EXPECT_TRUE(v == whole);
      ASSERT_TRUE(s.Get("f2", &v).ok());
      EXPECT_TRUE(v == frags) << v.size();
      EXPECT_TRUE(s.Get("whole", &v).IsNotFound());
      EXPECT_TRUE(s.Get("frags", &v).IsNotFound());
      std::string raw, range;
      ASSERT_TRUE(s.LoadForRead("f2", &raw).ok());
      ASSERT_TRUE(s.ReadRange("f2", raw, 99998, 7, &range).ok());
      EXPECT_EQ(range, "ffmidff");
    });
  };
  expect_values();
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(storage_->db()->Flush(rocksdb::FlushOptions(), storage_->cf(ColumnFamily::kSubkey)).ok());
  ASSERT_TRUE(storage_->db()->CompactRange(co, storage_->cf(ColumnFamily::kSubkey), nullptr, nullptr).ok());
  expect_values();
  Run([&](Database& db, RedisString&) {
    bool deleted;
    ASSERT_TRUE(db.Delete("w3", &deleted).ok() && deleted);
    ASSERT_TRUE(db.Delete("f2", &deleted).ok() && deleted);
  });
  EXPECT_EQ(MovedRecords(), 0u);
  ASSERT_TRUE(storage_->db()->CompactRange(co, storage_->cf(ColumnFamily::kSubkey), nullptr, nullptr).ok());
  EXPECT_EQ(subkeys(), 0u);
}

// A SET that replaces a renamed key without reading it (Context::PutUnread)
// drops the key's moved record at commit, as a replacing write that reads does.
TEST_F(StringTypeTest, UnreadReplaceOfARenamedKeyForgetsItsMovedRecord) {
  Run([&](Database& db, RedisString& s) {
    int64_t n;
    ASSERT_TRUE(RedisHash(&db).Set("h", {{"f", "v"}}, false, &n).ok());
    bool done;
    std::optional<std::string> old;
    ASSERT_TRUE(s.Set("big", std::string(9000, 'b'), {}, &done, &old).ok());
  });
  Run([&](Database& db, RedisString&) {
    bool renamed;
    ASSERT_TRUE(db.Rename("h", "h2", false, &renamed).ok() && renamed);
    ASSERT_TRUE(db.Rename("big", "big2", false, &renamed).ok() && renamed);
  });
  ASSERT_EQ(MovedRecords(), 2u);
  Context ctx(storage_.get());
  ctx.set_unread_replace_ok(true);
  Database db(&ctx, 0);
  RedisString s(&db);
  bool done;
  ASSERT_TRUE(s.MSet({{"h2", "x"}, {"big2", "y"}}, false, &done).ok());
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(MovedRecords(), 0u);
  EXPECT_EQ(storage_->KeyCount(0), 2);
}
