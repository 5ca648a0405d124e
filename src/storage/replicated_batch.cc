#include "storage/replicated_batch.h"

#include <string_view>

#include "common/encoding.h"
#include "storage/key_encoding.h"

namespace kvrocks {

namespace {

// The record tags of RocksDB's WriteBatch format (its db/dbformat.h ValueType).
enum Tag : uint8_t {
  kDeletion = 0x0,
  kValue = 0x1,
  kMerge = 0x2,
  kLogData = 0x3,
  kCfDeletion = 0x4,
  kCfValue = 0x5,
  kCfMerge = 0x6,
  kSingleDeletion = 0x7,
  kCfSingleDeletion = 0x8,
  kNoop = 0xD,
  kCfRangeDeletion = 0xE,
  kRangeDeletion = 0xF,
};

// Copies the master's batch record by record into the replica's, by column
// family id (the same on both: every kvrocks creates its families in one
// order). The batch is parsed here, not with WriteBatch::Iterate: RocksDB
// asserts on some malformed batches, and these bytes come from the network.
class Translator {
 public:
  Translator(Storage* storage, ReplicatedBatch* out) : out_(out) {
    for (int i = 0; i < static_cast<int>(ColumnFamily::kCount); i++) {
      auto* h = storage->cf(static_cast<ColumnFamily>(i));
      by_id_[h->GetID()] = {h, static_cast<ColumnFamily>(i)};
    }
  }

  Status Run(std::string_view data) {
    Reader r(data.substr(12));
    while (!r.rest().empty()) {
      uint8_t tag;
      r.GetU8(&tag);
      uint64_t id = 0;
      const bool in_cf = tag == kCfDeletion || tag == kCfValue || tag == kCfMerge || tag == kCfSingleDeletion ||
                         tag == kCfRangeDeletion;
      if (in_cf && (!r.GetVarint64(&id) || id > UINT32_MAX)) return Malformed();
      std::string_view key, value;
      switch (tag) {
        case kValue:
        case kCfValue:
        case kMerge:
        case kCfMerge:
        case kRangeDeletion:
        case kCfRangeDeletion:
          if (!Bytes(&r, &key) || !Bytes(&r, &value)) return Malformed();
          break;
        case kDeletion:
        case kCfDeletion:
        case kSingleDeletion:
        case kCfSingleDeletion:
        case kLogData:
          if (!Bytes(&r, &key)) return Malformed();
          break;
        case kNoop:
          continue;
        default:
          return Status::Corruption("replicated batch: a record of type " + std::to_string(tag) +
                                    ", which kvrocks does not write");
      }
      if (tag == kLogData) continue;  // not an operation: no sequence number
      out_->master_count++;
      auto it = by_id_.find(static_cast<uint32_t>(id));
      if (it == by_id_.end()) {
        return Status::Corruption("a replicated batch names column family " + std::to_string(id) +
                                  ", which this server does not have");
      }
      Status s = Copy(tag, it->second.first, it->second.second, key, value);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

 private:
  static bool Bytes(Reader* r, std::string_view* out) {
    uint64_t n;
    return r->GetVarint64(&n) && n <= UINT32_MAX && r->GetBytes(static_cast<size_t>(n), out);
  }
  static Status Malformed() { return Status::Corruption("replicated batch: a record runs past its end"); }
  static Status Rocks(const rocksdb::Status& s) { return s.ok() ? Status::OK() : Status::Corruption(s.ToString()); }

  Status Copy(uint8_t tag, rocksdb::ColumnFamilyHandle* h, ColumnFamily c, std::string_view key,
              std::string_view value) {
    const rocksdb::Slice k(key.data(), key.size()), v(value.data(), value.size());
    switch (tag) {
      case kValue:
      case kCfValue:
      case kDeletion:
      case kCfDeletion:
      case kSingleDeletion:
      case kCfSingleDeletion:
        if (c == ColumnFamily::kState) {
          if (Storage::IsLocalStateKey(k)) return Status::OK();
          NoteState(k);
        } else {
          NoteKey(c, key);
        }
        if (tag == kValue || tag == kCfValue) return Rocks(out_->batch.Put(h, k, v));
        if (tag == kDeletion || tag == kCfDeletion) return Rocks(out_->batch.Delete(h, k));
        return Rocks(out_->batch.SingleDelete(h, k));
      case kMerge:
      case kCfMerge:
        if (c != ColumnFamily::kState || !Storage::DecodeCountMerge(k, v, &out_->counts)) {
          return Status::Corruption("replicated batch: a merge other than a counter's");
        }
        return Rocks(out_->batch.Merge(h, k, v));
      default:  // range deletions
        if (c == ColumnFamily::kState) return Status::Corruption("a range delete in the state column family");
        if (c == ColumnFamily::kMetadata && !key.empty()) out_->flushed_dbs.push_back(static_cast<uint8_t>(key[0]));
        return Rocks(out_->batch.DeleteRange(h, k, v));
    }
  }

  void NoteState(const rocksdb::Slice& key) {
    out_->state_keys.push_back(key.ToString());
    if (key.starts_with(kMovedKeyPrefix)) out_->moved_noted = true;
  }

  void NoteKey(ColumnFamily c, std::string_view raw) {
    uint8_t db;
    std::string_view user_key;
    uint64_t version;
    switch (c) {
      case ColumnFamily::kMetadata:
        if (DecodeMetaKey(raw, &db, &user_key)) out_->keys.emplace_back(db, std::string(user_key));
        break;
      case ColumnFamily::kSubkey:
      case ColumnFamily::kZSetScore:
      case ColumnFamily::kStream:
      case ColumnFamily::kZSetRank:
        if (DecodeSubkeyPrefix(raw, &db, &user_key, &version)) {
          if (version > out_->max_version) out_->max_version = version;
          if (last_element_db_ != db || last_element_version_ != version || last_element_ != user_key) {
            last_element_db_ = db;
            last_element_version_ = version;
            last_element_.assign(user_key);
            out_->element_keys.push_back({{db, last_element_}, version});
          }
        }
        break;
      default:
        break;  // the expire index names keys whose metadata the same batch writes
    }
  }

  ReplicatedBatch* out_;
  std::map<uint32_t, std::pair<rocksdb::ColumnFamilyHandle*, ColumnFamily>> by_id_;
  // The last element's key, so that a run of one collection's elements is noted once.
  int last_element_db_ = -1;
  uint64_t last_element_version_ = 0;
  std::string last_element_;
};

}  // namespace

Status TranslateReplicatedBatch(Storage* storage, const std::string& data, ReplicatedBatch* out) {
  if (data.size() < 12) return Status::Corruption("a replicated batch shorter than its header");
  Translator t(storage, out);
  Status s = t.Run(data);
  if (!s.ok()) return s;
  const uint32_t count = static_cast<uint32_t>(static_cast<uint8_t>(data[8])) |
                         static_cast<uint32_t>(static_cast<uint8_t>(data[9])) << 8 |
                         static_cast<uint32_t>(static_cast<uint8_t>(data[10])) << 16 |
                         static_cast<uint32_t>(static_cast<uint8_t>(data[11])) << 24;
  if (out->master_count != count) return Status::Corruption("replicated batch: its count does not match");
  return Status::OK();
}

}  // namespace kvrocks
