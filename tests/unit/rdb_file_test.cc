// Whole-data-set RDB files: what WriteRdbFile writes parses back to the same
// keys, expiries and functions, with Redis 7.0's version unless a value needs a
// later one.
#include "replication/rdb_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "storage/context.h"
#include "temp_storage.h"
#include "types/redis_hash.h"
#include "types/redis_string.h"

using namespace kvrocks;

namespace {

struct Collected : rdb::Handler {
  int db = 0;
  std::map<std::pair<int, std::string>, std::pair<rdb::Object, int64_t>> keys;
  std::vector<std::string> functions;
  Status OnSelectDb(uint64_t d) override {
    db = static_cast<int>(d);
    return Status::OK();
  }
  Status OnKey(std::string key, rdb::Object obj, int64_t expire_ms) override {
    keys[{db, key}] = {std::move(obj), expire_ms};
    return Status::OK();
  }
  Status OnFunction(const std::string& code) override {
    functions.push_back(code);
    return Status::OK();
  }
};

std::string FileHeader(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string h(9, '\0');
  f.read(h.data(), 9);
  return h;
}

}  // namespace

class RdbFileTest : public TempStorageTest {
 protected:
  std::string Path() const { return (dir_ / "dump.rdb").string(); }
};

TEST_F(RdbFileTest, WritesEveryDatabaseKeyExpiryAndFunction) {
  const uint64_t expire = NowMs() + 100000;
  {
    Context ctx(storage_.get());
    Database db0(&ctx, storage_->PhysicalDb(0)), db2(&ctx, storage_->PhysicalDb(2));
    bool done;
    RedisString::SetOptions with_ttl;
    with_ttl.expire_ms = expire;
    ASSERT_TRUE(RedisString(&db0).Set("s", "v", {}, &done, nullptr).ok());
    ASSERT_TRUE(RedisString(&db0).Set("t", "w", with_ttl, &done, nullptr).ok());
    int64_t added;
    ASSERT_TRUE(RedisHash(&db2).Set("h", {{"f", "1"}, {"g", "2"}}, false, &added).ok());
    ASSERT_TRUE(ctx.Commit().ok());
  }
  uint64_t keys = 0;
  ASSERT_TRUE(WriteRdbFile(storage_.get(), 16, {"#!lua name=lib\nreturn 1"}, Path(), &keys).ok());
  EXPECT_EQ(keys, 3u);
  EXPECT_EQ(FileHeader(Path()), "REDIS0010");

  Collected got;
  ASSERT_TRUE(ReadRdbFile(Path(), &got).ok());  // the CRC64 at the end is checked
  ASSERT_EQ(got.keys.size(), 3u);
  EXPECT_EQ((got.keys[{0, "s"}].first.str), "v");
  EXPECT_EQ((got.keys[{0, "s"}].second), -1);
  EXPECT_EQ((got.keys[{0, "t"}].second), static_cast<int64_t>(expire));
  const rdb::Object& h = got.keys[{2, "h"}].first;
  EXPECT_EQ(h.type, RedisType::kHash);
  EXPECT_EQ(h.pairs.size(), 2u);
  EXPECT_EQ(got.functions, std::vector<std::string>{"#!lua name=lib\nreturn 1"});
}

TEST_F(RdbFileTest, HashFieldTtlsRaiseTheVersionAndKeepTheChecksum) {
  {
    Context ctx(storage_.get());
    Database db(&ctx, storage_->PhysicalDb(0));
    RedisHash hash(&db);
    int64_t added;
    ASSERT_TRUE(hash.Set("h", {{"f", "1"}, {"g", "2"}}, false, &added).ok());
    std::vector<int64_t> results;
    ASSERT_TRUE(hash.ExpireFields("h", {"f"}, NowMs() + 100000, RedisHash::ExpireCond::kAlways, &results).ok());
    ASSERT_TRUE(ctx.Commit().ok());
  }
  uint64_t keys = 0;
  ASSERT_TRUE(WriteRdbFile(storage_.get(), 16, {}, Path(), &keys).ok());
  EXPECT_EQ(FileHeader(Path()), "REDIS0012");
  Collected got;
  ASSERT_TRUE(ReadRdbFile(Path(), &got).ok());
  const rdb::Object& h = got.keys[{0, "h"}].first;
  ASSERT_EQ(h.field_expires.size(), 2u);
  EXPECT_NE(h.field_expires[0] == 0, h.field_expires[1] == 0);  // one field has a TTL
}

TEST_F(RdbFileTest, AMissingFileIsAnError) {
  Collected got;
  EXPECT_FALSE(ReadRdbFile(Path(), &got).ok());
}

TEST_F(RdbFileTest, ACancelledWriteLeavesNoFile) {
  {
    Context ctx(storage_.get());
    Database db0(&ctx, storage_->PhysicalDb(0));
    bool done;
    ASSERT_TRUE(RedisString(&db0).Set("s", "v", {}, &done, nullptr).ok());
    ASSERT_TRUE(ctx.Commit().ok());
  }
  std::atomic<bool> cancel{true};
  uint64_t keys = 0;
  Status s = WriteRdbFile(storage_.get(), 16, {}, Path(), &keys, &cancel);
  EXPECT_TRUE(s.IsAborted()) << s.message();
  EXPECT_FALSE(std::filesystem::exists(Path()));
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find("dump.rdb"), std::string::npos) << entry.path();
  }
}
