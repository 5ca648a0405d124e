// Loads an RDB into kvrocks without disturbing the data clients see: keys go to
// free physical databases in large batches without the WAL, and Finish()
// flushes them and switches every logical database over in one persisted step
// (Storage::ReplaceDatabases). If loading fails, Abort() drops the partial
// load and the previous data set stays as it was.
#pragma once

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include <rocksdb/write_batch.h>

#include "replication/rdb_reader.h"
#include "server/access_clock.h"
#include "storage/context.h"
#include "storage/storage.h"

namespace kvrocks {

class RdbLoader : public rdb::Handler {
 public:
  RdbLoader(Storage* storage, int databases) : storage_(storage), databases_(databases) {}
  ~RdbLoader();

  // Where the keys' last access times go: at Begin every key counts as fresh,
  // keys with an IDLE opcode get that idle time (as Redis' rdbLoad sets their
  // LRU clock), and at Finish the untouched ones count as loaded then.
  void set_access_clock(AccessClock* clock) { access_clock_ = clock; }
  // Where the RDB's "used-mem" aux field (the master's memory when it saved,
  // INFO's loading_rdb_used_mem) goes when the loader meets it.
  void set_used_mem_sink(std::atomic<uint64_t>* sink) { used_mem_sink_ = sink; }
  // Whether keys that arrive already expired are loaded (a replica's load) or
  // dropped and counted (a master's, the default). Redis' rdbLoad drops them only
  // when it is a master: a replica's master deletes them, and by the master's
  // clock they may still be alive and get written to (PERSIST, INCR).
  void set_keep_expired(bool keep) { keep_expired_ = keep; }
  // Picks and empties the staging databases. Busy if another load is staging.
  Status Begin();
  Status OnSelectDb(uint64_t db) override;
  Status OnKey(std::string key, rdb::Object obj, int64_t expire_ms) override;
  Status OnAux(const std::string& key, const std::string& value) override;
  Status OnFunction(const std::string& code) override;
  Status OnModuleAux(const std::string& module) override;
  // Writes everything loaded and makes it durable (call before Finish, without locks).
  Status Flush();
  // Flushes if needed and makes the loaded data set the visible one. The caller
  // holds every key lock (no client write may interleave with the switch).
  // state_puts go to the state CF in the same write as the switch.
  Status Finish(const std::vector<std::pair<std::string, std::string>>& state_puts = {});
  // Drops what was loaded so far.
  void Abort();

  uint64_t keys_loaded() const { return keys_loaded_; }
  uint64_t idle_times_set() const { return idle_times_set_; }
  uint64_t expired_skipped() const { return expired_skipped_; }
  uint64_t modules_skipped() const { return modules_skipped_; }
  const std::vector<std::string>& functions() const { return functions_; }
  // The RDB's "repl-stream-db" aux field: the database a master's command stream
  // has selected at the snapshot, where its replica's master client starts (as
  // Redis' readSyncBulkPayload selects it); 0 when the field is absent or names
  // no database of ours.
  int stream_db() const { return stream_db_; }

 private:
  // Writes gathered for one SST ingestion. Each key's writes to one column
  // family arrive sorted (a Context yields them in key order) and no other
  // key's writes sort between them, so a chunk is sorted run by run.
  struct Run {
    uint32_t start, len;
  };
  struct Chunk {
    Context::PendingWrites writes;
    std::vector<Run> runs;
    void clear() {
      writes.clear();
      runs.clear();
    }
  };
  using Counts = std::map<uint8_t, CountDeltas>;
  // Moves the current key's writes into bulk_, one run per column family.
  void TakePending();
  Status MaybeCommit();
  // Hands the gathered chunk to the writer thread (waiting while it is busy
  // with the previous one), so that parsing and writing overlap.
  Status HandOff();
  // Waits until the writer thread has written everything handed to it.
  Status Drain();
  void WriterLoop();
  // Sorts a chunk and ingests it as SST files; persists its counter deltas.
  Status WriteChunk(Chunk* chunk, Counts* counts);

  Storage* storage_;
  int databases_;
  std::unique_lock<std::mutex> staging_lock_;  // Storage::staging_mutex(), from Begin to Finish/Abort
  std::vector<uint8_t> staging_;
  std::unique_ptr<Context> ctx_;  // one key's writes (indexed, so the types layer reads its own writes)
  Chunk bulk_;  // keys written so far, ingested sorted every kBatchBytes
  size_t bulk_bytes_ = 0;
  Counts counts_;  // counter deltas per physical db
  // The writer thread and its one-chunk queue.
  std::thread writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool has_chunk_ = false, writing_ = false, quit_ = false;
  Chunk handed_;
  Chunk spare_;  // a written chunk handed back, so that its buffers are reused
  Counts handed_counts_;
  Status writer_status_;
  bool flushed_ = false;
  bool compactions_paused_ = false;
  bool keep_expired_ = false;
  void ResumeCompactions();
  int db_ = 0;
  int stream_db_ = 0;
  uint64_t keys_loaded_ = 0, expired_skipped_ = 0, modules_skipped_ = 0, idle_times_set_ = 0;
  AccessClock* access_clock_ = nullptr;
  std::atomic<uint64_t>* used_mem_sink_ = nullptr;
  std::vector<std::string> functions_;
};

}  // namespace kvrocks
