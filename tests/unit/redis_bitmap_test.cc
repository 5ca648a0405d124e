// Bitmaps in fragments: a bit write touches one fragment, missing fragments
// read as zeros, and reads agree with a plain in-memory model.
#include "types/redis_bitmap.h"

#include <gtest/gtest.h>

#include "temp_storage.h"

#include <filesystem>
#include <random>

#include "common/time_util.h"
#include "config/config.h"
#include "storage/storage.h"
#include "types/redis_string.h"

using namespace kvrocks;

class BitmapTest : public TempStorageTest {
 protected:

  template <typename Fn>
  void Run(Fn fn) {
    Context ctx(storage_.get());
    Database db(&ctx, 0);
    fn(db);
    ASSERT_TRUE(ctx.Commit().ok());
  }

  // Number of stored fragments of key's current version.
  size_t Fragments(const std::string& key) {
    size_t n = 0;
    Run([&](Database& db) {
      LoadedKey lk;
      ASSERT_TRUE(db.Load(key, &lk).ok());
      Metadata meta;
      ASSERT_TRUE(meta.Decode(lk.raw).ok());
      ASSERT_TRUE(meta.fragmented);
      std::string prefix = EncodeSubkeyPrefix(0, key, meta.version);
      auto it = db.ctx()->NewIterator(ColumnFamily::kSubkey, rocksdb::ReadOptions());
      for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) n++;
    });
    return n;
  }

};

TEST_F(BitmapTest, SparseBitsStoreOnlyTheirFragments) {
  const uint64_t far = (1ULL << 32) - 1;  // the last bit of a 512 MB string
  Run([&](Database& db) {
    int old;
    ASSERT_TRUE(RedisBitmap(&db).SetBit("b", 7, 1, &old).ok());
    ASSERT_TRUE(RedisBitmap(&db).SetBit("b", far, 1, &old).ok());
    EXPECT_EQ(old, 0);
  });
  EXPECT_EQ(Fragments("b"), 2u);
  Run([&](Database& db) {
    uint64_t len;
    ASSERT_TRUE(RedisString(&db).Strlen("b", &len).ok());
    EXPECT_EQ(len, 512ULL << 20);
    int bit;
    ASSERT_TRUE(RedisBitmap(&db).GetBit("b", far, &bit).ok());
    EXPECT_EQ(bit, 1);
    ASSERT_TRUE(RedisBitmap(&db).GetBit("b", far - 1, &bit).ok());
    EXPECT_EQ(bit, 0);
    std::string raw;
    ASSERT_TRUE(RedisString(&db).LoadForRead("b", &raw).ok());
    int64_t count;
    ASSERT_TRUE(RedisBitmap(&db).CountBits("b", raw, 0, far, &count).ok());
    EXPECT_EQ(count, 2);
    bool found;
    uint64_t pos;
    ASSERT_TRUE(RedisBitmap(&db).FindBit("b", raw, 1, 8, far, &found, &pos).ok());
    EXPECT_TRUE(found);
    EXPECT_EQ(pos, far);
    ASSERT_TRUE(RedisBitmap(&db).FindBit("b", raw, 0, 0, far, &found, &pos).ok());
    EXPECT_EQ(pos, 0u);
    // The zeros after the first fragment are a gap (no fragment stored).
    ASSERT_TRUE(RedisBitmap(&db).FindBit("b", raw, 0, 7, far, &found, &pos).ok());
    EXPECT_EQ(pos, 8u);
  });
  // Clearing the far bit deletes its fragment.
  Run([&](Database& db) {
    int old;
    ASSERT_TRUE(RedisBitmap(&db).SetBit("b", far, 0, &old).ok());
    EXPECT_EQ(old, 1);
  });
  EXPECT_EQ(Fragments("b"), 1u);
}

TEST_F(BitmapTest, RandomWritesMatchAModel) {
  std::mt19937_64 rng(42);
  std::string model;
  for (int round = 0; round < 400; round++) {
    uint64_t offset = rng() % (kStringFragmentBytes * 8 * 6);
    int bit = static_cast<int>(rng() & 1);
    Run([&](Database& db) {
      int old;
      ASSERT_TRUE(RedisBitmap(&db).SetBit("m", offset, bit, &old).ok());
      if (model.size() <= offset / 8) model.resize(offset / 8 + 1, '\0');
      uint8_t mask = static_cast<uint8_t>(1 << (7 - offset % 8));
      EXPECT_EQ(old, (model[offset / 8] & mask) ? 1 : 0);
      model[offset / 8] = static_cast<char>(bit ? (model[offset / 8] | mask) : (model[offset / 8] & ~mask));
    });
    if (round % 50 == 49) {
      Run([&](Database& db) {
        std::string v;
        ASSERT_TRUE(RedisString(&db).Get("m", &v).ok());
        EXPECT_EQ(v, model);
        std::string raw, range;
        ASSERT_TRUE(RedisString(&db).LoadForRead("m", &raw).ok());
        uint64_t from = rng() % model.size(), len = rng() % 3000;
        ASSERT_TRUE(RedisString(&db).ReadRange("m", raw, from, len, &range).ok());
        EXPECT_EQ(range, model.substr(from, len));
        uint64_t first = rng() % (model.size() * 8), last = first + rng() % (model.size() * 8 - first);
        int64_t count, expect = 0;
        for (uint64_t i = first; i <= last; i++) expect += (model[i / 8] >> (7 - i % 8)) & 1;
        ASSERT_TRUE(RedisBitmap(&db).CountBits("m", raw, first, last, &count).ok());
        EXPECT_EQ(count, expect);
      });
    }
  }
}

TEST_F(BitmapTest, BitfieldAcrossFragmentBoundary) {
  const uint64_t offset = kStringFragmentBytes * 8 * 3 - 20;  // a 64-bit field spanning two fragments
  Run([&](Database& db) {
    std::vector<std::optional<int64_t>> res;
    BitfieldOp set;
    set.kind = BitfieldOp::kSet;
    set.is_signed = true;
    set.bits = 64;
    set.offset = offset;
    set.value = -1234567890123LL;
    BitfieldOp get = set;
    get.kind = BitfieldOp::kGet;
    ASSERT_TRUE(RedisBitmap(&db).BitField("f", {set, get}, &res).ok());
    ASSERT_EQ(res.size(), 2u);
    EXPECT_EQ(*res[0], 0);
    EXPECT_EQ(*res[1], -1234567890123LL);
  });
  EXPECT_EQ(Fragments("f"), 2u);
}
