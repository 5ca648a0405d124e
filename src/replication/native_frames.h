// The frames of kvrocks-to-kvrocks replication (KSLAVEOF), after the master's
// `+FULLSYNC <wal-id> <seq>` or `+CONTINUE <wal-id>` reply to KPSYNC:
//
//   frame   = type(1) | length(4, BE) | payload(length)
//   'K'  a chunk of the snapshot:  cf(1) | { klen(4, BE) key vlen(4, BE) value }...
//        (each column family's records in key order, families in order)
//   'E'  the snapshot is complete (empty payload); the stream follows
//   'B'  a write batch of the master's WAL: seq(8, BE) | WriteBatch data
//   'H'  a heartbeat while there is nothing to send: the master's last seq(8, BE)
//   'G'  acknowledge now (empty payload): a client WAITs for replicas
// and from the replica:
//   'A'  acknowledgement: the last sequence number applied (8, BE), every second
//        and after each 'G'
//
// A kvrocks replica told REPLICAOF (the Redis handshake) says `REPLCONF capa
// kvrocks` (Redis masters ignore capabilities they do not know); a kvrocks
// master answers its PSYNC with kUseKpsync, and the replica goes on with KPSYNC
// on the same link. So REPLICAOF of a kvrocks master is KSLAVEOF (Sentinel
// reconfigures replicas with REPLICAOF).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/encoding.h"

namespace kvrocks::native {

constexpr char kChunk = 'K', kSnapshotEnd = 'E', kBatch = 'B', kHeartbeat = 'H', kGetAck = 'G', kAck = 'A';
constexpr size_t kHeaderSize = 5;
// The error (without '-') a kvrocks master answers a kvrocks replica's PSYNC with.
constexpr char kUseKpsync[] = "KVROCKS this master streams its write-ahead log: follow it with KPSYNC";
// Frames longer than this are refused (a batch can hold a 512 MB bulk, and more).
constexpr uint32_t kMaxFrame = 1u << 31;
// The snapshot is cut into chunks of about this many bytes.
constexpr size_t kChunkBytes = 1 << 20;

inline void BeginFrame(std::string* out, char type) {
  out->push_back(type);
  out->append(4, '\0');
}
// Writes the length of the frame that starts at `start` in *out (everything after its header).
inline void EndFrame(std::string* out, size_t start) {
  const uint32_t n = static_cast<uint32_t>(out->size() - start - kHeaderSize);
  for (int i = 0; i < 4; i++) (*out)[start + 1 + i] = static_cast<char>(n >> (24 - 8 * i));
}
inline void AppendU64Frame(std::string* out, char type, uint64_t v) {
  const size_t start = out->size();
  BeginFrame(out, type);
  PutBE64(out, v);
  EndFrame(out, start);
}
inline void AppendRecord(std::string* out, std::string_view key, std::string_view value) {
  PutBE32(out, static_cast<uint32_t>(key.size()));
  out->append(key);
  PutBE32(out, static_cast<uint32_t>(value.size()));
  out->append(value);
}
// Reads the next record of a chunk's payload at *pos; false at its end or on a short record.
inline bool NextRecord(std::string_view payload, size_t* pos, std::string_view* key, std::string_view* value) {
  for (std::string_view* part : {key, value}) {
    if (payload.size() - *pos < 4) return false;
    const uint32_t n = DecodeBE32(payload.data() + *pos);
    *pos += 4;
    if (payload.size() - *pos < n) return false;
    *part = payload.substr(*pos, n);
    *pos += n;
  }
  return true;
}

}  // namespace kvrocks::native
