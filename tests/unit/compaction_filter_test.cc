// The subkey compaction filter keeps exactly the subkeys of live keys' current
// versions. Its metadata lookups walk one iterator forward, so the cases mix
// key lengths within one slot (subkeys sort by length first, metadata by name:
// the lookups go backwards at times), absent keys between and after the live
// ones, and every way a key dies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/time_util.h"
#include "storage/compaction_filter.h"
#include "storage/key_encoding.h"
#include "storage/storage.h"
#include "temp_storage.h"
#include "types/redis_hash.h"

namespace kvrocks {
namespace {

class CompactionFilterTest : public TempStorageTest {
 protected:
  void PutMeta(const std::string& key, const std::string& value) {
    ASSERT_TRUE(storage_->db()->Put(wo_, storage_->cf(ColumnFamily::kMetadata), EncodeMetaKey(0, key), value).ok());
  }
  void PutSubkey(const std::string& key, uint64_t version, const std::string& field) {
    ASSERT_TRUE(storage_->db()
                    ->Put(wo_, storage_->cf(ColumnFamily::kSubkey), EncodeSubkeyPrefix(0, key, version) + field, "e")
                    .ok());
  }
  bool HasSubkey(const std::string& key, uint64_t version, const std::string& field) {
    std::string v;
    return storage_->db()
        ->Get(rocksdb::ReadOptions(), storage_->cf(ColumnFamily::kSubkey), EncodeSubkeyPrefix(0, key, version) + field,
              &v)
        .ok();
  }
  void CompactSubkeys() {
    rocksdb::CompactRangeOptions co;
    co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    ASSERT_TRUE(storage_->db()->CompactRange(co, storage_->cf(ColumnFamily::kSubkey), nullptr, nullptr).ok());
  }
  static std::string HashMeta(uint64_t version, uint64_t expire_ms = 0) {
    Metadata m;
    m.type = RedisType::kHash;
    m.version = version;
    m.size = 1;
    m.expire_ms = expire_ms;
    return m.Encode();
  }

  rocksdb::WriteOptions wo_;
};

TEST_F(CompactionFilterTest, KeepsExactlyTheLiveVersions) {
  // {t} puts every key in one slot; names of several lengths interleave.
  std::vector<std::string> live, other_version, deleted, expired, inline_string;
  const uint64_t long_ago = NowMs() - SubkeyFilterFactory::kExpiredGraceMs - 1000;
  for (int i = 0; i < 300; i++) {
    std::string key = "{t}" + std::string(1 + i % 7, static_cast<char>('a' + i % 26)) + std::to_string(i);
    switch (i % 6) {
      case 0:
        live.push_back(key);
        PutMeta(key, HashMeta(100 + i));
        break;
      case 5:
        live.push_back(key);  // expired a moment ago: a script or EXEC may still see it
        PutMeta(key, HashMeta(100 + i, NowMs() - 1000));
        break;
      case 1:
        other_version.push_back(key);
        PutMeta(key, HashMeta(5000 + i));  // re-created: subkeys of 100 + i are old
        break;
      case 2:
        deleted.push_back(key);  // no metadata at all
        break;
      case 3:
        expired.push_back(key);
        PutMeta(key, HashMeta(100 + i, long_ago));
        break;
      case 4:
        inline_string.push_back(key);
        PutMeta(key, EncodeStringValue("small", 0));
        break;
    }
    for (const char* field : {"f1", "f2", "f3"}) PutSubkey(key, 100 + i, field);
  }
  // Keys in another slot, and one sorting after every metadata record.
  PutMeta("other", HashMeta(7));
  PutSubkey("other", 7, "x");
  PutSubkey("zzzz-no-metadata", 9, "x");
  ASSERT_TRUE(storage_->db()->Flush(rocksdb::FlushOptions(), storage_->cf(ColumnFamily::kSubkey)).ok());
  CompactSubkeys();

  auto version_of = [](const std::string& key) {
    return 100 + static_cast<uint64_t>(std::stoi(key.substr(key.find_first_of("0123456789", 3))));
  };
  for (const auto& k : live) {
    for (const char* f : {"f1", "f2", "f3"}) EXPECT_TRUE(HasSubkey(k, version_of(k), f)) << k;
  }
  for (const auto* dead : {&other_version, &deleted, &expired, &inline_string}) {
    for (const auto& k : *dead) EXPECT_FALSE(HasSubkey(k, version_of(k), "f1")) << k;
  }
  EXPECT_TRUE(HasSubkey("other", 7, "x"));
  EXPECT_FALSE(HasSubkey("zzzz-no-metadata", 9, "x"));
}

// A replica keeps expired keys whole until its master deletes them: the master
// may still PERSIST or change a key the replica's clock shows expired.
TEST_F(CompactionFilterTest, AReplicaKeepsTheElementsOfExpiredKeys) {
  storage_->KeepExpiredSubkeys(true);
  PutMeta("{r}expired", HashMeta(10, NowMs() - SubkeyFilterFactory::kExpiredGraceMs - 1000));
  PutSubkey("{r}expired", 10, "f");
  PutMeta("{r}old-version", HashMeta(12));
  PutSubkey("{r}old-version", 11, "f");
  PutSubkey("{r}deleted", 13, "f");
  ASSERT_TRUE(storage_->db()->Flush(rocksdb::FlushOptions(), storage_->cf(ColumnFamily::kSubkey)).ok());
  CompactSubkeys();
  storage_->KeepExpiredSubkeys(false);
  EXPECT_TRUE(HasSubkey("{r}expired", 10, "f"));
  EXPECT_FALSE(HasSubkey("{r}old-version", 11, "f"));  // what the master's writes made garbage still goes
  EXPECT_FALSE(HasSubkey("{r}deleted", 13, "f"));
  // Back to a master: the same compaction drops them.
  CompactSubkeys();
  EXPECT_FALSE(HasSubkey("{r}expired", 10, "f"));
}

// With active expiry off (DEBUG SET-ACTIVE-EXPIRE 0) Redis keeps an expired key
// whole until a lookup deletes it, and DEBUG DIGEST reads its value: so do compactions.
TEST_F(CompactionFilterTest, ActiveExpiryOffKeepsTheElementsOfExpiredKeys) {
  cfg_.active_expire = false;
  PutMeta("{a}expired", HashMeta(10, NowMs() - SubkeyFilterFactory::kExpiredGraceMs - 1000));
  PutSubkey("{a}expired", 10, "f");
  PutSubkey("{a}deleted", 13, "f");
  ASSERT_TRUE(storage_->db()->Flush(rocksdb::FlushOptions(), storage_->cf(ColumnFamily::kSubkey)).ok());
  CompactSubkeys();
  EXPECT_TRUE(HasSubkey("{a}expired", 10, "f"));
  EXPECT_FALSE(HasSubkey("{a}deleted", 13, "f"));
  cfg_.active_expire = true;
  CompactSubkeys();
  EXPECT_FALSE(HasSubkey("{a}expired", 10, "f"));
}

// Few keys with subkeys among many without (the lookups then Seek instead of
// stepping), followed by a stretch where every key has subkeys (stepping pays
// again): the verdicts stay exact through both.
TEST_F(CompactionFilterTest, SparseThenDenseLookups) {
  std::vector<std::string> live, dead;
  for (int i = 0; i < 3000; i++) {
    char name[16];
    snprintf(name, sizeof(name), "{s}k%05d", i);
    std::string key = name;
    bool sparse = i < 2000;
    if (sparse && i % 37 != 0 && i % 37 != 5) {
      PutMeta(key, EncodeStringValue("small", 0));  // no subkeys
      continue;
    }
    if (i % 3 == 0) {
      live.push_back(key);
      PutMeta(key, HashMeta(100 + i));
    } else {
      dead.push_back(key);
      PutMeta(key, HashMeta(9000 + i));
    }
    PutSubkey(key, 100 + i, "f");
  }
  ASSERT_TRUE(storage_->db()->Flush(rocksdb::FlushOptions(), storage_->cf(ColumnFamily::kSubkey)).ok());
  CompactSubkeys();
  auto version_of = [](const std::string& key) { return 100 + static_cast<uint64_t>(std::stoi(key.substr(4))); };
  for (const auto& k : live) EXPECT_TRUE(HasSubkey(k, version_of(k), "f")) << k;
  for (const auto& k : dead) EXPECT_FALSE(HasSubkey(k, version_of(k), "f")) << k;
}

// RENAME of a collection moves only its metadata: the subkeys stay under the
// name they were written with, and the filter finds their metadata through the
// version's moved record, across renames, a new key under the old name, a
// rename back, and drops them once the renamed key is gone.
TEST_F(CompactionFilterTest, FollowsRenamedCollections) {
  auto hset = [&](const std::string& key, const std::string& field) {
    WithDb([&](Database& db) {
      int64_t n;
      ASSERT_TRUE(RedisHash(&db).Set(key, {{field, "v"}}, false, &n).ok());
    });
  };
  auto rename = [&](const std::string& from, const std::string& to) {
    WithDb([&](Database& db) {
      bool renamed;
      ASSERT_TRUE(db.Rename(from, to, false, &renamed).ok());
      ASSERT_TRUE(renamed);
    });
  };
  auto value = [&](const std::string& key, const std::string& field) {
    std::string v;
    WithDb([&](Database& db) { RedisHash(&db).Get(key, field, &v); }, false);
    return v;
  };
  auto version_of = [&](const std::string& key) {
    uint64_t version = 0;
    WithDb(
        [&](Database& db) {
          LoadedKey lk;
          Metadata meta;
          ASSERT_TRUE(db.Load(key, &lk).ok() && meta.Decode(lk.raw).ok());
          version = meta.version;
        },
        false);
    return version;
  };
  hset("a", "f");
  hset("b", "g");
  const uint64_t va = version_of("a"), vb = version_of("b");
  rename("a", "a2");
  rename("a2", "a3");  // subkeys still under "a"
  hset("a", "new");    // a new key under the owner's name
  rename("b", "b2");
  rename("b2", "b");  // back home: no moved record
  EXPECT_EQ(MovedRecords(), 1u);
  ASSERT_TRUE(storage_->db()->Flush(rocksdb::FlushOptions(), storage_->cf(ColumnFamily::kSubkey)).ok());
  CompactSubkeys();
  EXPECT_TRUE(HasSubkey("a", va, "f"));
  EXPECT_TRUE(HasSubkey("b", vb, "g"));
  EXPECT_EQ(value("a3", "f"), "v");
  EXPECT_EQ(value("a", "new"), "v");
  EXPECT_EQ(value("b", "g"), "v");
  // The renamed key goes: its moved record with it, its subkeys at the next compaction.
  WithDb([&](Database& db) {
    bool deleted;
    ASSERT_TRUE(db.Delete("a3", &deleted).ok() && deleted);
  });
  EXPECT_EQ(MovedRecords(), 0u);
  CompactSubkeys();
  EXPECT_FALSE(HasSubkey("a", va, "f"));
  EXPECT_EQ(value("a", "new"), "v");
  EXPECT_TRUE(HasSubkey("b", vb, "g"));
}

// A filter's metadata view is taken when it starts; a key may come home (RENAME
// back, MOVE back to the database its subkeys are in) while it runs, which
// deletes the moved record. Its subkeys must stay: the moved lookup's own
// snapshot finds the metadata back under their name.
TEST_F(CompactionFilterTest, KeepsAKeyThatCameHomeDuringTheCompaction) {
  auto rename = [&](const std::string& from, const std::string& to) {
    WithDb([&](Database& db) {
      bool renamed;
      ASSERT_TRUE(db.Rename(from, to, false, &renamed).ok());
      ASSERT_TRUE(renamed);
    });
  };
  WithDb([&](Database& db) {
    int64_t n;
    ASSERT_TRUE(RedisHash(&db).Set("a", {{"f", "v"}}, false, &n).ok());
    ASSERT_TRUE(RedisHash(&db).Set("b", {{"g", "v"}}, false, &n).ok());
  });
  uint64_t va = 0, vb = 0;
  WithDb(
      [&](Database& db) {
        for (auto [key, version] : {std::pair<const char*, uint64_t*>{"a", &va}, {"b", &vb}}) {
          LoadedKey lk;
          Metadata meta;
          ASSERT_TRUE(db.Load(key, &lk).ok() && meta.Decode(lk.raw).ok());
          *version = meta.version;
        }
      },
      false);
  rename("b", "b2");
  auto factory = storage_->db()->GetOptions(storage_->cf(ColumnFamily::kSubkey)).compaction_filter_factory;
  ASSERT_NE(factory, nullptr);
  rocksdb::CompactionFilter::Context context;
  context.is_full_compaction = true;
  context.is_manual_compaction = true;
  context.column_family_id = storage_->cf(ColumnFamily::kSubkey)->GetID();
  auto filter = factory->CreateCompactionFilter(context);
  std::string new_value;
  bool changed = false;
  // The filter's first lookup takes its view: "b" is away as "b2".
  EXPECT_FALSE(filter->Filter(1, EncodeSubkeyPrefix(0, "a", va) + "f", "e", &new_value, &changed));
  rename("b2", "b");
  EXPECT_EQ(MovedRecords(), 0u);
  EXPECT_FALSE(filter->Filter(1, EncodeSubkeyPrefix(0, "b", vb) + "g", "e", &new_value, &changed));
}

}  // namespace
}  // namespace kvrocks
