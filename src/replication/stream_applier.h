// Applies the command stream a Redis master sends its replicas after the RDB.
//
// The stream is RESP: every command the master propagates, MULTI ... EXEC
// blocks, SELECT, PING and REPLCONF GETACK. Each command is applied through
// the command table as the master client (replies are discarded; an error
// reply is logged and counted, and with replica-apply-errors disconnect ends
// the link). The offset counts every byte of the stream exactly as Redis
// counts it, keep-alive newlines included.
//
// Apply() takes the complete commands at the front of its input and commits
// them as one RocksDB batch under every key lock, together with the
// (replid, offset, db) state the batch brings the replica to, db being the
// database the stream has selected at that offset: a master resuming a stream
// (PSYNC) sends no SELECT for the database it is already in, so a replica that
// restarts must know it (Redis keeps it in its RDB as repl-stream-db). A
// MULTI/EXEC block is applied whole within one batch; while one is open, the
// persisted offset stays at the MULTI so that a restart replays the block
// from its start.
//
// Whole-database commands (SWAPDB, FLUSHDB, FLUSHALL) write storage directly,
// not through the batch: before one runs, what is pending is committed with a
// state that also counts the commands of its unit (the command, or the EXEC
// block it is in) already applied, and SWAPDB, which a replay would undo,
// writes the state counting itself in its own write. A restart or a resumed
// link receives the unit again and skips the commands counted (SELECTs among
// them are still applied: they only move the master client). FLUSHDB and
// FLUSHALL are replayed instead: a second time they change nothing.
//
// Not thread-safe: one thread applies; the offset getters may be read by any.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace kvrocks {

class Server;
class Connection;
class Context;

class StreamApplier {
 public:
  // state_key: where (replid, offset) is persisted in the state column family.
  StreamApplier(Server* server, const char* state_key) : server_(server), state_key_(state_key) {}
  StreamApplier(const StreamApplier&) = delete;
  StreamApplier& operator=(const StreamApplier&) = delete;

  // The connection whose identity (selected db, flags) the master's commands use.
  void set_master_client(Connection* c) { master_ = c; }

  // Starts a stream of replication id replid at offset, where the stream has
  // database db selected and the first `applied` commands of the unit at offset
  // are applied already: no MULTI open, the master client in db.
  void Reset(const std::string& replid, uint64_t offset, int db, uint32_t applied);
  // Changes the replication id without moving the offset (+CONTINUE <new id>).
  void set_replid(const std::string& replid) { replid_ = replid; }

  struct Batch {
    size_t consumed = 0;         // bytes of input applied (complete commands only)
    bool more = false;           // the batch hit its command limit: call again
    bool ack_requested = false;  // the master sent REPLCONF GETACK: answer with ack_offset
    uint64_t ack_offset = 0;     // the applied offset where the GETACK stood, as Redis answers it
  };
  // Applies the complete commands at the front of input (at most a fixed
  // number per batch; a partial command waits for more bytes). An error is a
  // malformed stream, a storage failure, or (replica-apply-errors disconnect)
  // a command that failed; nothing of the failing batch is committed then.
  Status Apply(std::string_view input, Batch* batch);

  // The stream offset applied and persisted: always at a command boundary
  // outside MULTI, as Redis' reploff (what ACKs report and PSYNC resumes from).
  uint64_t offset() const { return offset_.load(); }
  // The database the stream has selected at offset().
  int db() const { return db_.load(); }
  // The commands of the unit at offset() that are applied already.
  uint32_t applied() const { return applied_.load(); }
  // The stream offset consumed (past commands queued in an open MULTI).
  uint64_t read_offset() const { return read_offset_.load(); }
  // Commands the replica could not apply.
  uint64_t apply_errors() const { return apply_errors_.load(); }

  // A position in the stream: a command boundary outside MULTI, the database
  // selected there, and how many commands of the unit that starts there (one
  // command, or a MULTI/EXEC block's queued commands) are applied already.
  struct Position {
    uint64_t offset = 0;
    int db = 0;
    uint32_t applied = 0;
  };
  // The state record as stored under state_key: replid(40) offset(8) db(4)
  // applied(4), integers big-endian. A record of 48 bytes (written before
  // session 71) decodes with db 0 and nothing applied.
  static std::string EncodeState(const std::string& replid, Position at);
  static bool DecodeState(std::string_view record, std::string* replid, Position* at);

 private:
  // Adds the state record of at to ctx's batch.
  void PersistState(Context* ctx, Position at);
  // The position now committed.
  void SetCommitted(Position at);
  using ParsedCommand = std::pair<std::vector<std::string>, size_t>;  // arguments, bytes in the stream
  // Leaves an open MULTI (its queued commands dropped).
  void EndMulti();
  // Applies parsed commands to ctx, advancing pos (bytes taken) and safe (the
  // last boundary outside MULTI).
  Status ApplyParsed(Context* ctx, std::vector<ParsedCommand>* cmds, uint64_t* pos, Position* safe, Batch* batch);
  // at: the unit's position, at.applied the command's index in its unit; what
  // is pending is committed there first if the command writes storage directly.
  Status ApplyOne(Context* ctx, const std::vector<std::string>& args, bool in_exec, Position at);

  Server* server_;
  const char* state_key_;
  Connection* master_ = nullptr;
  std::string replid_;
  std::atomic<uint64_t> offset_{0};
  std::atomic<uint64_t> read_offset_{0};
  std::atomic<int> db_{0};
  std::atomic<uint32_t> applied_{0};
  std::atomic<uint64_t> apply_errors_{0};
  bool in_multi_ = false;
  std::vector<std::vector<std::string>> multi_;  // commands queued until EXEC
};

}  // namespace kvrocks
