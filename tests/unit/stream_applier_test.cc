// StreamApplier: framing and offsets of a master's replication stream.
#include "replication/stream_applier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/connection.h"
#include "server/server.h"
#include "server/worker.h"
#include "storage/context.h"
#include "storage/key_encoding.h"
#include "temp_storage.h"

namespace kvrocks {
namespace {

std::string Cmd(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

const char kReplId[] = "0123456789012345678901234567890123456789";

class StreamApplierTest : public TempStorageTest {
 protected:
  void SetUp() override {
    TempStorageTest::SetUp();
    server_ = std::make_unique<Server>(&cfg_, storage_.get());
    worker_ = std::make_unique<Worker>(server_.get(), 0);
    master_ = std::make_unique<Connection>(worker_.get(), -1, 1, "master", "");
    master_->is_master = true;
    applier_ = std::make_unique<StreamApplier>(server_.get(), "replication-test");
    applier_->set_master_client(master_.get());
    applier_->Reset(kReplId, 100, 0, 0);
  }
  void TearDown() override {
    applier_.reset();
    master_.reset();
    worker_.reset();
    server_.reset();
    TempStorageTest::TearDown();
  }

  std::string Get(const std::string& key, int db = 0) {
    Context ctx(storage_.get());
    std::string v;
    return ctx.Get(ColumnFamily::kMetadata, EncodeMetaKey(storage_->PhysicalDb(db), key), &v).ok() ? v.substr(9)
                                                                                                   : "(nil)";
  }
  static std::string State(uint64_t offset, int db, uint32_t applied = 0) {
    return StreamApplier::EncodeState(kReplId, {offset, db, applied});
  }
  // What a start of kvrocks does: read the state back, a new applier there.
  void Restart() {
    std::string replid;
    StreamApplier::Position at;
    ASSERT_TRUE(StreamApplier::DecodeState(PersistedState(), &replid, &at));
    master_->db = 0;
    applier_ = std::make_unique<StreamApplier>(server_.get(), "replication-test");
    applier_->set_master_client(master_.get());
    applier_->Reset(replid, at.offset, at.db, at.applied);
  }
  std::string PersistedState() {
    std::string v;
    storage_->db()->Get(rocksdb::ReadOptions(), storage_->cf(ColumnFamily::kState), "replication-test", &v);
    return v;
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<Connection> master_;
  std::unique_ptr<StreamApplier> applier_;
};

TEST_F(StreamApplierTest, CountsEveryByteAndLeavesPartialCommands) {
  std::string set = Cmd({"SET", "a", "1"});
  std::string stream = "\n" + set + Cmd({"PING"}) + set.substr(0, 7);
  StreamApplier::Batch b;
  ASSERT_TRUE(applier_->Apply(stream, &b).ok());
  EXPECT_EQ(b.consumed, stream.size() - 7);
  EXPECT_EQ(applier_->offset(), 100 + stream.size() - 7);
  EXPECT_EQ(applier_->read_offset(), applier_->offset());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(PersistedState(), State(applier_->offset(), 0));
}

TEST_F(StreamApplierTest, ExpiryInThePastKeepsTheKeyUntilTheMastersDel) {
  // The master sent these while their times were ahead; they arrive late. A Redis
  // replica writes them anyway (checkAlreadyExpired is false on a replica) and
  // waits for the master's DEL.
  StreamApplier::Batch b;
  ASSERT_TRUE(applier_->Apply(Cmd({"SET", "late", "v", "PXAT", "1000"}) + Cmd({"SET", "k", "v"}) +
                                  Cmd({"PEXPIREAT", "k", "1000"}) + Cmd({"GETEX", "k", "PXAT", "1000"}),
                              &b)
                  .ok());
  const uint8_t db = storage_->PhysicalDb(0);
  EXPECT_EQ(storage_->KeyCount(db), 2);
  EXPECT_EQ(storage_->ExpireCount(db), 2);
  ASSERT_TRUE(applier_->Apply(Cmd({"DEL", "late", "k"}), &b).ok());
  EXPECT_EQ(storage_->KeyCount(db), 0);
}

TEST_F(StreamApplierTest, OffsetStaysAtMultiUntilExec) {
  std::string head = Cmd({"MULTI"}) + Cmd({"SET", "a", "1"});
  StreamApplier::Batch b;
  ASSERT_TRUE(applier_->Apply(head, &b).ok());
  EXPECT_EQ(b.consumed, head.size());
  EXPECT_EQ(applier_->offset(), 100u);  // a link broken here resumes from the MULTI
  EXPECT_EQ(applier_->read_offset(), 100 + head.size());
  EXPECT_EQ(Get("a"), "(nil)");
  EXPECT_EQ(PersistedState(), State(100, 0));
  std::string tail = Cmd({"SET", "b", "2"}) + Cmd({"EXEC"});
  ASSERT_TRUE(applier_->Apply(tail, &b).ok());
  EXPECT_EQ(applier_->offset(), 100 + head.size() + tail.size());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "2");
}

TEST_F(StreamApplierTest, ResetDropsAnOpenMulti) {
  StreamApplier::Batch b;
  ASSERT_TRUE(applier_->Apply(Cmd({"MULTI"}) + Cmd({"SET", "a", "1"}), &b).ok());
  applier_->Reset(kReplId, applier_->offset(), applier_->db(), 0);
  std::string again = Cmd({"MULTI"}) + Cmd({"SET", "a", "2"}) + Cmd({"EXEC"});
  ASSERT_TRUE(applier_->Apply(again, &b).ok());
  EXPECT_EQ(applier_->offset(), 100 + again.size());
  EXPECT_EQ(Get("a"), "2");
}

TEST_F(StreamApplierTest, GetAckIsAnsweredWithTheOffsetWhereItStood) {
  std::string before = Cmd({"SET", "a", "1"});
  std::string getack = Cmd({"REPLCONF", "GETACK", "*"});
  std::string after = Cmd({"SET", "b", "1"});
  StreamApplier::Batch b;
  ASSERT_TRUE(applier_->Apply(before + getack + after, &b).ok());
  EXPECT_TRUE(b.ack_requested);
  EXPECT_EQ(b.ack_offset, 100 + before.size());
  EXPECT_EQ(applier_->offset(), 100 + before.size() + getack.size() + after.size());
}

TEST_F(StreamApplierTest, FailedBatchMovesNoOffset) {
  cfg_.replica_apply_errors = "disconnect";
  StreamApplier::Batch b;
  Status s = applier_->Apply(Cmd({"SET", "a", "1"}) + Cmd({"NOSUCHCOMMAND"}), &b);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(applier_->offset(), 100u);
  EXPECT_EQ(applier_->read_offset(), 100u);
  EXPECT_EQ(Get("a"), "(nil)");  // received again after the reconnect
  EXPECT_EQ(applier_->apply_errors(), 1u);
}

TEST_F(StreamApplierTest, SelectedDatabaseIsPersistedWithTheOffset) {
  // A master resuming the stream (PSYNC) sends no SELECT for the database it
  // already has selected: a replica that restarts must start in it.
  StreamApplier::Batch b;
  std::string first = Cmd({"SELECT", "3"}) + Cmd({"SET", "a", "1"});
  ASSERT_TRUE(applier_->Apply(first, &b).ok());
  EXPECT_EQ(applier_->db(), 3);
  EXPECT_EQ(PersistedState(), State(100 + first.size(), 3));
  // Inside an open MULTI the persisted position (and its db) stays at the MULTI.
  std::string head = Cmd({"MULTI"}) + Cmd({"SELECT", "5"}) + Cmd({"SET", "b", "1"});
  ASSERT_TRUE(applier_->Apply(head, &b).ok());
  EXPECT_EQ(PersistedState(), State(100 + first.size(), 3));
  std::string tail = Cmd({"EXEC"});
  ASSERT_TRUE(applier_->Apply(tail, &b).ok());
  EXPECT_EQ(applier_->db(), 5);
  EXPECT_EQ(PersistedState(), State(100 + first.size() + head.size() + tail.size(), 5));

  Restart();
  ASSERT_TRUE(applier_->Apply(Cmd({"SET", "c", "1"}), &b).ok());
  EXPECT_EQ(Get("a", 3), "1");
  EXPECT_EQ(Get("b", 5), "1");
  EXPECT_EQ(Get("c", 5), "1");
  EXPECT_EQ(Get("c", 0), "(nil)");
}

TEST_F(StreamApplierTest, FailedBatchKeepsTheDatabaseOfItsOffset) {
  cfg_.replica_apply_errors = "disconnect";
  StreamApplier::Batch b;
  EXPECT_FALSE(applier_->Apply(Cmd({"SELECT", "2"}) + Cmd({"NOSUCHCOMMAND"}), &b).ok());
  EXPECT_EQ(applier_->offset(), 100u);
  EXPECT_EQ(applier_->db(), 0);
}

TEST_F(StreamApplierTest, StateRecordsWithoutADatabaseDecodeWithDatabaseZero) {
  std::string record = StreamApplier::EncodeState(kReplId, {12345, 7, 2});
  std::string replid;
  StreamApplier::Position at;
  ASSERT_TRUE(StreamApplier::DecodeState(record, &replid, &at));
  EXPECT_EQ(replid, kReplId);
  EXPECT_EQ(at.offset, 12345u);
  EXPECT_EQ(at.db, 7);
  EXPECT_EQ(at.applied, 2u);
  ASSERT_TRUE(StreamApplier::DecodeState(record.substr(0, 48), &replid, &at));  // written before session 71
  EXPECT_EQ(at.offset, 12345u);
  EXPECT_EQ(at.db, 0);
  EXPECT_EQ(at.applied, 0u);
  EXPECT_FALSE(StreamApplier::DecodeState(record.substr(0, 47), &replid, &at));
}

// SWAPDB writes storage directly; a replay of it would swap the databases back.
// Each test below stops where a kill -9 could: the swap is durable, what follows
// it in the batch is not (Apply fails on a later command, as a crash would end it).
TEST_F(StreamApplierTest, SwapdbCutShortIsNotAppliedTwice) {
  StreamApplier::Batch b;
  std::string set = Cmd({"SET", "a", "1"});
  std::string swap = Cmd({"SWAPDB", "0", "1"});
  cfg_.replica_apply_errors = "disconnect";
  EXPECT_FALSE(applier_->Apply(set + swap + Cmd({"SET", "b", "1"}) + Cmd({"NOSUCHCOMMAND"}), &b).ok());
  EXPECT_EQ(PersistedState(), State(100 + set.size(), 0, 1));  // the swap counts itself
  cfg_.replica_apply_errors = "log";
  Restart();
  ASSERT_TRUE(applier_->Apply(swap + Cmd({"SET", "b", "1"}), &b).ok());
  EXPECT_EQ(Get("a", 1), "1");
  EXPECT_EQ(Get("a", 0), "(nil)");
  EXPECT_EQ(Get("b", 0), "1");
  EXPECT_EQ(PersistedState(), State(100 + set.size() + swap.size() + Cmd({"SET", "b", "1"}).size(), 0));
}

TEST_F(StreamApplierTest, ExecBlockCutShortAfterSwapdbResumesPastWhatItApplied) {
  StreamApplier::Batch b;
  std::string block = Cmd({"MULTI"}) + Cmd({"INCR", "n"}) + Cmd({"SELECT", "2"}) + Cmd({"INCR", "n"}) +
                      Cmd({"SWAPDB", "2", "3"}) + Cmd({"INCR", "n"});
  cfg_.replica_apply_errors = "disconnect";
  EXPECT_FALSE(applier_->Apply(block + Cmd({"NOSUCHCOMMAND"}) + Cmd({"EXEC"}), &b).ok());
  // The commands before the swap, and the swap, are durable: four of the block's five.
  EXPECT_EQ(PersistedState(), State(100, 0, 4));
  EXPECT_EQ(Get("n", 0), "1");
  EXPECT_EQ(Get("n", 3), "1");
  cfg_.replica_apply_errors = "log";
  Restart();
  std::string rest = Cmd({"SELECT", "0"}) + Cmd({"INCR", "n"});
  ASSERT_TRUE(applier_->Apply(block + Cmd({"EXEC"}) + rest, &b).ok());
  EXPECT_EQ(Get("n", 0), "2");  // INCR, then the last INCR after SELECT 0
  EXPECT_EQ(Get("n", 2), "1");  // the INCR after the swap (SELECT 2 applied again)
  EXPECT_EQ(Get("n", 3), "1");  // the INCR before the swap, moved by it
  EXPECT_EQ(applier_->applied(), 0u);
  EXPECT_EQ(PersistedState(), State(100 + block.size() + Cmd({"EXEC"}).size() + rest.size(), 0));
}

TEST_F(StreamApplierTest, FlushallInABlockCutShortIsReplayedWithoutWhatCameBefore) {
  StreamApplier::Batch b;
  ASSERT_TRUE(applier_->Apply(Cmd({"SET", "old", "1"}), &b).ok());
  const uint64_t at = applier_->offset();
  std::string block = Cmd({"MULTI"}) + Cmd({"INCR", "n"}) + Cmd({"FLUSHALL"}) + Cmd({"INCR", "m"});
  cfg_.replica_apply_errors = "disconnect";
  EXPECT_FALSE(applier_->Apply(block + Cmd({"NOSUCHCOMMAND"}) + Cmd({"EXEC"}), &b).ok());
  EXPECT_EQ(PersistedState(), State(at, 0, 1));  // FLUSHALL does not count itself: replayed
  cfg_.replica_apply_errors = "log";
  Restart();
  ASSERT_TRUE(applier_->Apply(block + Cmd({"EXEC"}), &b).ok());
  EXPECT_EQ(Get("old"), "(nil)");
  EXPECT_EQ(Get("n"), "(nil)");
  EXPECT_EQ(Get("m"), "1");
}

TEST_F(StreamApplierTest, MalformedStreamIsAnError) {
  StreamApplier::Batch b;
  EXPECT_FALSE(applier_->Apply("*2\r\n$3\r\nGET\r\nxx\r\n", &b).ok());
}

}  // namespace
}  // namespace kvrocks
