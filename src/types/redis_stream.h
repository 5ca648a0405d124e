// The stream type. Entries live in the `stream` column family keyed by id
// (`prefix(version) ms(8) seq(8)`), so ranges by id are seeks. Consumer groups,
// their consumers and pending entries (PEL) are subkeys of the same version in
// the subkey column family (see docs/encoding.md).
//
// Redis keeps entries in listpack "nodes" of at most stream-node-max-entries
// entries / stream-node-max-bytes bytes, and approximate trimming (`~`) removes
// whole nodes only. To give Redis' exact results for `~` (and XINFO's
// radix-tree-keys), kvrocks keeps one small record per emulated node with its
// live/deleted counts and its listpack size, computed with listpack's own
// encoding rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/database.h"

namespace kvrocks {

struct StreamID {
  uint64_t ms = 0, seq = 0;

  static StreamID Min() { return {0, 0}; }
  static StreamID Max() { return {UINT64_MAX, UINT64_MAX}; }
  bool IsZero() const { return ms == 0 && seq == 0; }
  bool operator==(const StreamID& o) const { return ms == o.ms && seq == o.seq; }
  bool operator!=(const StreamID& o) const { return !(*this == o); }
  bool operator<(const StreamID& o) const { return ms < o.ms || (ms == o.ms && seq < o.seq); }
  bool operator<=(const StreamID& o) const { return !(o < *this); }
  bool operator>(const StreamID& o) const { return o < *this; }
  bool operator>=(const StreamID& o) const { return !(*this < o); }
  std::string ToString() const;
  // The next / previous id; false at the end of the id space.
  bool Incr();
  bool Decr();
};

struct StreamEntry {
  StreamID id;
  std::vector<std::string> values;  // field, value, field, value ...
  bool missing = false;             // a pending id whose entry was deleted (XREADGROUP history)
};

// The stream's metadata (the payload after version and size).
struct StreamMeta {
  uint64_t version = 0;
  std::string owner;  // the name its subkeys are under when not its own (Metadata::owner)
  int owner_db = -1;  // the db they are in when not its own (Metadata::owner_db)
  uint64_t length = 0;
  StreamID last_id, first_id, max_deleted;
  uint64_t entries_added = 0;
  StreamID head_node, tail_node;  // ids of the first and last emulated nodes (valid if nodes > 0)
  uint64_t nodes = 0;
  uint64_t groups = 0;
  // Nodes of Redis' radix tree over the node ids (XINFO's radix-tree-nodes,
  // types/stream_rax.h); 0 when unknown (metadata written before kvrocks kept it).
  uint64_t rax_nodes = 1;
};

struct StreamTrim {
  enum Strategy { kNone, kMaxLen, kMinId } strategy = kNone;
  bool approx = false;
  uint64_t maxlen = 0;
  StreamID minid;
  int64_t limit = 0;  // 0 = unlimited
};

struct StreamNodeLimits {
  int64_t max_bytes = 4096;  // stream-node-max-bytes
  int64_t max_entries = 100;  // stream-node-max-entries
};

// A pending entry of a consumer group.
struct StreamPending {
  StreamID id;
  std::string consumer;
  uint64_t delivery_time = 0;  // unix ms
  uint64_t delivery_count = 0;
};

struct StreamConsumerInfo {
  std::string name;
  uint64_t seen_time = 0;
  uint64_t pending = 0;
};

struct StreamGroupInfo {
  std::string name;
  StreamID last_id;
  int64_t entries_read = -1;  // -1: unknown
  uint64_t pending = 0;
  uint64_t consumers = 0;
  StreamID pel_floor;  // no pending id is below it
};

// A whole stream as an RDB (or a DUMP payload) holds it: Redis' listpack nodes
// with their entries, and the consumer groups. Restore() writes it as is.
struct StreamNodeDump {
  StreamID master_id;
  std::vector<std::string> master_fields;
  std::vector<StreamEntry> entries;  // live entries only
  uint64_t deleted = 0;
  StreamID last_id;       // last entry of the node, deleted or not
  uint64_t lp_bytes = 0;  // the node's listpack size
};

struct StreamGroupDump {
  std::string name;
  StreamID last_id;
  int64_t entries_read = -1;
  struct Pending {
    StreamID id;
    uint64_t delivery_time = 0, delivery_count = 0;
    std::string consumer;  // filled from the consumers' PELs
  };
  std::vector<Pending> pel;
  struct Consumer {
    std::string name;
    uint64_t seen_time = 0;
    std::vector<StreamID> pel;
  };
  std::vector<Consumer> consumers;
};

struct StreamDump {
  std::vector<StreamNodeDump> nodes;
  uint64_t length = 0;
  StreamID last_id, first_id, max_deleted;
  uint64_t entries_added = 0;
  std::vector<StreamGroupDump> groups;
};

// Redis' streamEstimateDistanceFromFirstEverEntry: the logical read counter
// (entries read) of id in a stream of this shape, or -1 when it cannot be known.
// (Inline: the RDB parser, built alone for fuzzing, uses it too.)
inline int64_t StreamEstimateEntriesRead(uint64_t entries_added, uint64_t length, const StreamID& first_id,
                                         const StreamID& last_id, const StreamID& max_deleted, const StreamID& id) {
  if (entries_added == 0) return 0;
  if (length == 0 && id <= last_id) return static_cast<int64_t>(entries_added);
  if (id == last_id) return static_cast<int64_t>(entries_added);
  if (id > last_id) return -1;
  if (max_deleted.IsZero() || max_deleted < first_id) {
    if (id < first_id) return static_cast<int64_t>(entries_added - length);
    if (id == first_id) return static_cast<int64_t>(entries_added - length + 1);
  }
  return -1;
}

class RedisStream {
 public:
  explicit RedisStream(Database* db, StreamNodeLimits limits = {}) : db_(db), limits_(limits) {}

  // Loads a stream's metadata: *exists=false if absent; WRONGTYPE for other types.
  Status Load(std::string_view key, LoadedKey* lk, StreamMeta* meta, bool* exists);
  // XINFO's radix-tree-nodes: meta.rax_nodes, or counted from the node records
  // when the metadata predates it.
  Status RaxNodes(std::string_view key, const StreamMeta& meta, uint64_t* nodes);

  struct AddArgs {
    bool nomkstream = false;
    bool id_given = false;
    bool seq_given = true;
    StreamID id;
    StreamTrim trim;
  };
  // XADD. NotFound when the key is absent and nomkstream; RedisError for an id
  // that is not greater than the top item or exhausts the id space.
  Status Add(std::string_view key, const AddArgs& args, const std::vector<std::string>& values, StreamID* id);
  // XTRIM: *deleted entries (0 if absent).
  Status Trim(std::string_view key, const StreamTrim& trim, int64_t* deleted);
  // XDEL.
  Status Delete(std::string_view key, const std::vector<StreamID>& ids, int64_t* deleted);
  // Entries with start <= id <= end, at most count (0 = all), reversed if rev.
  Status Range(std::string_view key, const StreamID& start, const StreamID& end, uint64_t count, bool rev,
               std::vector<StreamEntry>* out);
  // The same of a stream whose metadata the caller has loaded (no second lookup
  // of the key: Redis looks a key up once per command).
  Status Range(std::string_view key, const StreamMeta& meta, const StreamID& start, const StreamID& end,
               uint64_t count, bool rev, std::vector<StreamEntry>* out);
  // XSETID (arguments validated by the caller except those needing the stream).
  Status SetId(std::string_view key, const StreamID& id, int64_t entries_added, const StreamID& max_deleted);

  // Consumer groups.
  Status CreateGroup(std::string_view key, std::string_view group, const std::optional<StreamID>& id,
                     bool mkstream, int64_t entries_read);
  Status SetGroupId(std::string_view key, std::string_view group, const std::optional<StreamID>& id,
                    int64_t entries_read);
  Status DestroyGroup(std::string_view key, std::string_view group, bool* destroyed);
  Status CreateConsumer(std::string_view key, std::string_view group, std::string_view consumer, bool* created);
  Status DeleteConsumer(std::string_view key, std::string_view group, std::string_view consumer, int64_t* pending);
  // Group lookup: NotFound if the group does not exist.
  Status GetGroup(std::string_view key, const StreamMeta& meta, std::string_view group, StreamGroupInfo* info);

  // XREADGROUP of one stream. start = nullopt for ">" (new entries), else the
  // consumer's pending entries after start. *served tells whether there is a
  // reply for this stream (Redis' serve_synchronously).
  Status ReadGroup(std::string_view key, std::string_view group, std::string_view consumer,
                   const std::optional<StreamID>& start, uint64_t count, bool noack, bool* served,
                   std::vector<StreamEntry>* out);
  Status Ack(std::string_view key, std::string_view group, const std::vector<StreamID>& ids, int64_t* acked);
  // PEL entries in [start, end] (of one consumer if given), at most count, idle >= min_idle.
  Status PendingRange(std::string_view key, const StreamGroupInfo& group, const StreamID& start,
                      const StreamID& end, uint64_t count, const std::optional<std::string>& consumer,
                      uint64_t min_idle, std::vector<StreamPending>* out);
  // The whole PEL summary: first and last ids and the count per consumer.
  Status PendingSummary(std::string_view key, const StreamGroupInfo& group, std::vector<StreamPending>* edges,
                        std::vector<std::pair<std::string, uint64_t>>* per_consumer);

  struct ClaimArgs {
    uint64_t min_idle = 0;
    std::optional<uint64_t> delivery_time;  // IDLE / TIME
    std::optional<uint64_t> retry_count;
    bool force = false;
    bool justid = false;
    std::optional<StreamID> last_id;
  };
  // XCLAIM: claimed entries in order (justid: ids only).
  Status Claim(std::string_view key, std::string_view group, std::string_view consumer,
               const std::vector<StreamID>& ids, const ClaimArgs& args, std::vector<StreamEntry>* claimed);
  // XAUTOCLAIM: *next is the cursor, *deleted the ids dropped from the PEL.
  Status AutoClaim(std::string_view key, std::string_view group, std::string_view consumer, uint64_t min_idle,
                   const StreamID& start, uint64_t count, bool justid, std::vector<StreamEntry>* claimed,
                   StreamID* next, std::vector<StreamID>* deleted);

  Status Groups(std::string_view key, const StreamMeta& meta, std::vector<StreamGroupInfo>* out);
  Status Consumers(std::string_view key, const StreamMeta& meta, std::string_view group,
                   std::vector<StreamConsumerInfo>* out);
  // Pending entries of a group (of one consumer if given), at most count (0 = all).
  Status GroupPending(std::string_view key, const StreamMeta& meta, const StreamGroupInfo& group,
                      const std::string* consumer, uint64_t count, std::vector<StreamPending>* out);
  // Writes a whole stream (RDB load, RESTORE) under key, which must be absent.
  Status Restore(std::string_view key, const StreamDump& dump, uint64_t expire_ms);
  // The whole stream as Redis would serialize it (DUMP).
  Status Dump(std::string_view key, StreamDump* dump);

  // Redis' lag of a group (nullopt when it cannot be known).
  static std::optional<int64_t> Lag(const StreamMeta& meta, const StreamGroupInfo& group);

 private:
  friend class StreamWriter;
  Database* db_;
  StreamNodeLimits limits_;
};

}  // namespace kvrocks
