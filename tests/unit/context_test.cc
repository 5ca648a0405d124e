// Context keeps its pending writes in a plain batch until a read needs them
// indexed; both forms must behave the same.
#include "storage/context.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "temp_storage.h"

namespace kvrocks {
namespace {

class ContextTest : public TempStorageTest {
 protected:
  std::string Stored(ColumnFamily cf, const std::string& key) {
    std::string v;
    rocksdb::Status s = storage_->db()->Get(rocksdb::ReadOptions(), storage_->cf(cf), key, &v);
    return s.ok() ? v : "<none>";
  }
  static std::string Read(Context& ctx, ColumnFamily cf, const std::string& key) {
    std::string v;
    Status s = ctx.Get(cf, key, &v);
    return s.ok() ? v : "<none>";
  }
  static std::vector<std::string> Scan(Context& ctx, ColumnFamily cf) {
    std::vector<std::string> out;
    auto it = ctx.NewIterator(cf, rocksdb::ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) out.push_back(it->key().ToString() + "=" + it->value().ToString());
    return out;
  }
};

// Storage's options must leave RocksDB's snapshots on (no family with
// inplace_update_support): MGET and the RDB snapshot rely on them.
TEST_F(ContextTest, ASnapshotScopeReadsWhatWasThereWhenItBegan) {
  Context writer(storage_.get());
  writer.Put(ColumnFamily::kMetadata, "a", "1");
  ASSERT_TRUE(writer.Commit().ok());
  Context reader(storage_.get());
  Context::SnapshotScope snapshot(&reader);
  Context later(storage_.get());
  later.Put(ColumnFamily::kMetadata, "a", "2");
  later.Put(ColumnFamily::kMetadata, "b", "2");
  ASSERT_TRUE(later.Commit().ok());
  EXPECT_EQ(Read(reader, ColumnFamily::kMetadata, "a"), "1");
  EXPECT_EQ(Read(reader, ColumnFamily::kMetadata, "b"), "<none>");
  EXPECT_EQ(Scan(reader, ColumnFamily::kMetadata), std::vector<std::string>{"a=1"});
}

TEST_F(ContextTest, LastWriteOfAKeyWinsAndCommitsInOrder) {
  Context ctx(storage_.get());
  ctx.Put(ColumnFamily::kSubkey, "b", "1");
  ctx.Put(ColumnFamily::kSubkey, "a", "1");
  ctx.Put(ColumnFamily::kSubkey, "b", "2");
  ctx.Delete(ColumnFamily::kSubkey, "a");
  ctx.Put(ColumnFamily::kMetadata, "a", "m");
  ctx.Put(ColumnFamily::kSubkey, "c", "1");
  ctx.Delete(ColumnFamily::kSubkey, "c");
  ctx.Put(ColumnFamily::kSubkey, "c", "3");
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "a"), "<none>");
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "b"), "2");
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "c"), "3");
  EXPECT_EQ(Stored(ColumnFamily::kMetadata, "a"), "m");
  EXPECT_FALSE(ctx.HasWrites());
}

// Big values to distinct keys commit as written (no sorted copy); a key
// written several times still commits its last write, once.
TEST_F(ContextTest, BigValuesCommitAsWrittenButOneKeyOnce) {
  const std::string big1(4096, 'x'), big2(4096, 'y'), big3(5000, 'z');
  Context ctx(storage_.get());
  ctx.Put(ColumnFamily::kSubkey, "m", big1);
  ctx.Put(ColumnFamily::kSubkey, "a", big2);
  ctx.Put(ColumnFamily::kMetadata, "z", big3);
  rocksdb::SequenceNumber before = storage_->db()->GetLatestSequenceNumber();
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(storage_->db()->GetLatestSequenceNumber() - before, 3u);
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "m"), big1);
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "a"), big2);
  EXPECT_EQ(Stored(ColumnFamily::kMetadata, "z"), big3);

  for (int i = 0; i < 10; i++) ctx.Put(ColumnFamily::kSubkey, "hot", i % 2 ? big1 : big2);
  ctx.Put(ColumnFamily::kSubkey, "hot", big3);
  ctx.Delete(ColumnFamily::kSubkey, "m");
  before = storage_->db()->GetLatestSequenceNumber();
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(storage_->db()->GetLatestSequenceNumber() - before, 2u);  // hot once, m once
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "hot"), big3);
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "m"), "<none>");
}

TEST_F(ContextTest, ReadsSeeEarlierWritesOfTheBatch) {
  ASSERT_TRUE(storage_->db()->Put(rocksdb::WriteOptions(), storage_->cf(ColumnFamily::kSubkey), "old", "db").ok());
  Context ctx(storage_.get());
  ctx.Put(ColumnFamily::kSubkey, "x", "1");
  EXPECT_EQ(Read(ctx, ColumnFamily::kSubkey, "old"), "db");      // not written: straight from RocksDB
  EXPECT_EQ(Read(ctx, ColumnFamily::kMetadata, "x"), "<none>");  // same key, other column family
  EXPECT_EQ(Read(ctx, ColumnFamily::kSubkey, "x"), "1");         // indexes the batch
  ctx.Put(ColumnFamily::kSubkey, "y", "2");                      // into the index from now on
  ctx.Delete(ColumnFamily::kSubkey, "old");
  EXPECT_EQ(Read(ctx, ColumnFamily::kSubkey, "old"), "<none>");
  EXPECT_EQ(Scan(ctx, ColumnFamily::kSubkey), (std::vector<std::string>{"x=1", "y=2"}));
  ASSERT_TRUE(ctx.Commit().ok());
  // The next batch starts plain again, and an iterator alone indexes it.
  ctx.Put(ColumnFamily::kSubkey, "z", "3");
  EXPECT_EQ(Scan(ctx, ColumnFamily::kSubkey), (std::vector<std::string>{"x=1", "y=2", "z=3"}));
  ctx.Rollback();
  EXPECT_EQ(Scan(ctx, ColumnFamily::kSubkey), (std::vector<std::string>{"x=1", "y=2"}));
  EXPECT_FALSE(ctx.HasPendingWrite(ColumnFamily::kSubkey, "x"));
}

TEST_F(ContextTest, BatchOnlyReadsSeeOnlyTheBatch) {
  ASSERT_TRUE(storage_->db()->Put(rocksdb::WriteOptions(), storage_->cf(ColumnFamily::kSubkey), "k", "db").ok());
  Context ctx(storage_.get());
  ctx.set_batch_only_reads(true);
  EXPECT_EQ(Read(ctx, ColumnFamily::kSubkey, "k"), "<none>");
  ctx.Put(ColumnFamily::kSubkey, "k", "batch");
  EXPECT_EQ(Read(ctx, ColumnFamily::kSubkey, "k"), "batch");
  EXPECT_EQ(Read(ctx, ColumnFamily::kSubkey, "other"), "<none>");
}

// Savepoints set while the batch is plain survive its indexing, nested.
TEST_F(ContextTest, SavepointsAcrossIndexing) {
  Context ctx(storage_.get());
  ctx.Put(ColumnFamily::kSubkey, "a", "1");
  ctx.SetSavePoint();
  ctx.Put(ColumnFamily::kSubkey, "b", "1");
  ctx.SetSavePoint();
  ctx.SetSavePoint();  // two marks at one position
  ctx.Put(ColumnFamily::kSubkey, "c", "1");
  EXPECT_EQ(Read(ctx, ColumnFamily::kSubkey, "c"), "1");  // indexes the batch
  ctx.Put(ColumnFamily::kSubkey, "d", "1");
  ctx.RollbackToSavePoint();
  EXPECT_EQ(Scan(ctx, ColumnFamily::kSubkey), (std::vector<std::string>{"a=1", "b=1"}));
  ctx.Put(ColumnFamily::kSubkey, "e", "1");
  ctx.RollbackToSavePoint();
  EXPECT_EQ(Scan(ctx, ColumnFamily::kSubkey), (std::vector<std::string>{"a=1", "b=1"}));
  ctx.RollbackToSavePoint();
  EXPECT_EQ(Scan(ctx, ColumnFamily::kSubkey), (std::vector<std::string>{"a=1"}));

  // The same in a batch that stays plain, with PopSavePoint.
  ctx.Rollback();
  ctx.Put(ColumnFamily::kSubkey, "p", "1");
  ctx.SetSavePoint();
  ctx.Put(ColumnFamily::kSubkey, "q", "1");
  ctx.SetSavePoint();
  ctx.Put(ColumnFamily::kSubkey, "r", "1");
  ctx.PopSavePoint();
  ctx.RollbackToSavePoint();
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "p"), "1");
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "q"), "<none>");
  EXPECT_EQ(Stored(ColumnFamily::kSubkey, "r"), "<none>");
}

TEST_F(ContextTest, MovedWritesAreSortedWithTheLastOfEachKey) {
  Context ctx(storage_.get());
  ctx.Put(ColumnFamily::kSubkey, "b", "1");
  ctx.Put(ColumnFamily::kMetadata, "z", "m");
  ctx.Put(ColumnFamily::kSubkey, "a", "1");
  ctx.Put(ColumnFamily::kSubkey, "b", "2");
  Context::PendingWrites out;
  std::map<uint8_t, CountDeltas> counts;
  ctx.MovePendingTo(&out, &counts);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.key(out[0]).ToString() + out.value(out[0]).ToString(), "a1");
  EXPECT_EQ(out.key(out[1]).ToString() + out.value(out[1]).ToString(), "b2");
  EXPECT_EQ(out[2].cf, static_cast<uint8_t>(ColumnFamily::kMetadata));
  EXPECT_FALSE(ctx.HasWrites());
}

TEST_F(ContextTest, PrefetchedValuesServeOneReadUnlessWrittenSince) {
  auto db_put = [&](const std::string& k, const std::string& v) {
    ASSERT_TRUE(storage_->db()->Put(rocksdb::WriteOptions(), storage_->cf(ColumnFamily::kMetadata), k, v).ok());
  };
  db_put("a", "1");
  db_put("b", "2");
  db_put("w", "0");
  Context ctx(storage_.get());
  ctx.Put(ColumnFamily::kMetadata, "w", "batch");
  ctx.Prefetch(ColumnFamily::kMetadata, {"a", "b", "c", "w"});
  db_put("a", "changed");  // after the prefetch: the prefetched value serves the next read
  ctx.Put(ColumnFamily::kMetadata, "b", "3");
  EXPECT_EQ(Read(ctx, ColumnFamily::kMetadata, "a"), "1");
  EXPECT_EQ(Read(ctx, ColumnFamily::kMetadata, "a"), "changed");  // once
  EXPECT_EQ(Read(ctx, ColumnFamily::kMetadata, "b"), "3");        // written since
  EXPECT_EQ(Read(ctx, ColumnFamily::kMetadata, "c"), "<none>");
  EXPECT_EQ(Read(ctx, ColumnFamily::kMetadata, "w"), "batch");    // written before: not prefetched
  EXPECT_EQ(Read(ctx, ColumnFamily::kSubkey, "a"), "<none>");     // another column family
  ctx.Prefetch(ColumnFamily::kMetadata, {"a"});
  ASSERT_TRUE(ctx.Commit().ok());  // drops what was prefetched
  db_put("a", "after");
  EXPECT_EQ(Read(ctx, ColumnFamily::kMetadata, "a"), "after");
}

TEST_F(ContextTest, ForgottenTouchesKeepReadySignalsInPlace) {
  // An unsignaled command (XGROUP) forgets its touches but its creations; a key
  // it signalled (a wake of all readers, a flushed stream) keeps its place
  // among the touches left.
  Context ctx(storage_.get());
  ctx.Touch(0, "a", Context::TouchKind::kCreated, true);
  size_t from = ctx.touched().size();
  ctx.Touch(0, "b");
  ctx.WakeAllWaiters(0, "x");  // after b: before what follows b
  ctx.Touch(0, "c", Context::TouchKind::kCreated, true);
  ctx.Touch(0, "d", Context::TouchKind::kRemoved);
  ctx.SignalReady(0, "y", true);  // after d: at the end
  ctx.ForgetTouchesFrom(from);
  ASSERT_EQ(ctx.touched().size(), 2u);
  EXPECT_EQ(ctx.touched()[0].second, "a");
  EXPECT_EQ(ctx.touched()[1].second, "c");
  EXPECT_EQ(ctx.touch_ready(), (std::vector<uint8_t>{1, 1}));
  ASSERT_EQ(ctx.ready_signals().size(), 2u);
  EXPECT_EQ(ctx.ready_signals()[0].at, 1u);  // before c
  EXPECT_EQ(ctx.ready_signals()[1].at, 2u);  // after c
  EXPECT_TRUE(ctx.ready_signals()[0].all);
  EXPECT_FALSE(ctx.ready_signals()[0].removed);
  EXPECT_FALSE(ctx.ready_signals()[1].all);
  EXPECT_TRUE(ctx.ready_signals()[1].removed);
  ctx.ClearTouched();
  EXPECT_TRUE(ctx.ready_signals().empty());
  EXPECT_TRUE(ctx.touch_ready().empty());
}

}  // namespace
}  // namespace kvrocks
