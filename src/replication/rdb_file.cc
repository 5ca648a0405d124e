#include "replication/rdb_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/time_util.h"
#include "common/version.h"
#include "replication/rdb_object.h"
#include "replication/rdb_writer.h"
#include "scripting/functions.h"
#include "storage/context.h"
#include "storage/lock_manager.h"
#include "types/database.h"

namespace kvrocks {

namespace {

class FileSource : public rdb::Source {
 public:
  explicit FileSource(FILE* f) : f_(f) {}
  Status Read(char* buf, size_t n) override {
    if (n > 0 && fread(buf, 1, n, f_) != n) return Status::Corruption("RDB: unexpected end of file");
    return Status::OK();
  }

 private:
  FILE* f_;
};

// An RDB file being written: buffered, with the running CRC64 of what it holds.
class RdbOut {
 public:
  ~RdbOut() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return Errno("open " + path);
    return Status::OK();
  }
  std::string* buf() { return &buf_; }
  // Writes the buffer out once it is large.
  Status MaybeFlush() { return buf_.size() >= kFlushBytes ? Flush() : Status::OK(); }
  Status Flush() {
    if (checksum_) crc_ = rdb::Crc64(crc_, buf_.data(), buf_.size());
    Status s = WriteAll(buf_.data(), buf_.size());
    buf_.clear();
    return s;
  }
  // The CRC64 of what was flushed; 0 (an RDB without a checksum) with rdbchecksum no.
  uint64_t crc() const { return crc_; }
  bool checksum() const { return checksum_; }
  // Replaces the 9-byte header at the start of the file; the CRC is computed
  // again over the whole file.
  Status RewriteHeader(const std::string& header, const std::string& path) {
    if (::pwrite(fd_, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size())) {
      return Errno("write " + path);
    }
    if (!checksum_) return Status::OK();
    int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) return Errno("open " + path);
    crc_ = 0;
    std::string chunk(kFlushBytes, '\0');
    ssize_t n;
    while ((n = ::read(in, chunk.data(), chunk.size())) > 0) {
      crc_ = rdb::Crc64(crc_, chunk.data(), static_cast<size_t>(n));
    }
    ::close(in);
    return n < 0 ? Errno("read " + path) : Status::OK();
  }
  Status SyncAndClose() {
    int fd = fd_;
    fd_ = -1;
    if (::fsync(fd) != 0) {
      ::close(fd);
      return Errno("fsync");
    }
    return ::close(fd) == 0 ? Status::OK() : Errno("close");
  }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  static Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }
  Status WriteAll(const char* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return Errno("write");
      p += w;
      n -= static_cast<size_t>(w);
    }
    return Status::OK();
  }
  int fd_ = -1;
  std::string buf_;
  uint64_t crc_ = 0;
  const bool checksum_ = rdb::Reader::file_checksums();
};

std::string Header(int version) {
  char h[16];
  std::snprintf(h, sizeof(h), "REDIS%04d", version);
  return h;
}

void PutAux(std::string* out, const std::string& key, const std::string& value) {
  out->push_back(static_cast<char>(rdb::kOpAux));
  rdb::PutString(out, key);
  rdb::PutString(out, value);
}

// Writes the keys of one database, those already expired but not yet deleted
// included (the caller ignores expiry); *max_version is raised to the RDB
// version a value needs.
Status WriteDatabase(Context* ctx, Storage* storage, int logical, RdbOut* out, int* max_version, uint64_t* keys,
                     const std::atomic<bool>* cancel) {
  uint8_t physical = storage->PhysicalDb(logical);
  if (storage->KeyCount(physical) <= 0) return Status::OK();
  std::string* buf = out->buf();
  buf->push_back(static_cast<char>(rdb::kOpSelectDb));
  rdb::PutLen(buf, static_cast<uint64_t>(logical));
  // Sizes are hints for the loader's hash tables (Redis writes them the same way).
  buf->push_back(static_cast<char>(rdb::kOpResizeDb));
  rdb::PutLen(buf, static_cast<uint64_t>(storage->KeyCount(physical)));
  rdb::PutLen(buf, static_cast<uint64_t>(std::max<int64_t>(0, storage->ExpireCount(physical))));
  Database db(ctx, physical);
  std::string cursor, next;
  std::vector<std::string> batch;
  std::string value;  // one key's type byte and value, the buffer reused
  do {
    if (cancel != nullptr && cancel->load()) return Status::Aborted("RDB write cancelled");
    batch.clear();
    Status s = db.Scan(cursor, 1000, "*", RedisType::kNone, &batch, &next);
    if (!s.ok()) return s;
    for (const auto& key : batch) {
      LoadedKey lk;
      if (!(s = db.Load(key, &lk)).ok()) return s;
      if (!lk.live) continue;
      value.clear();
      if (!(s = rdb::SerializeObject(&db, key, lk, &value, max_version)).ok()) return s;
      if (lk.expire_ms != 0) {
        buf->push_back(static_cast<char>(rdb::kOpExpireTimeMs));
        rdb::PutMillis(buf, lk.expire_ms);
      }
      // The type byte, the key, the value.
      buf->push_back(value[0]);
      rdb::PutString(buf, key);
      buf->append(value, 1, std::string::npos);
      ++*keys;
      if (!(s = out->MaybeFlush()).ok()) return s;
    }
    cursor = next;
  } while (!cursor.empty());
  return Status::OK();
}

Status WriteRdbFileTo(Storage* storage, int databases, const std::vector<std::string>& function_codes,
                      const std::string& path, uint64_t* keys, const std::atomic<bool>* cancel) {
  RdbOut out;
  Status s = out.Open(path);
  if (!s.ok()) return s;
  std::string* buf = out.buf();
  buf->append(Header(rdb::kDumpVersion));
  // The auxiliary fields Redis 7.0 writes, but for used-mem (kvrocks' data is not in memory).
  PutAux(buf, "redis-ver", kRedisVersion);
  PutAux(buf, "redis-bits", std::to_string(sizeof(void*) * 8));
  PutAux(buf, "ctime", std::to_string(std::time(nullptr)));
  PutAux(buf, "aof-base", "0");
  for (const auto& code : function_codes) {
    buf->push_back(static_cast<char>(rdb::kOpFunction2));
    rdb::PutString(buf, code);
  }
  Context ctx(storage);
  Context::SnapshotScope snapshot(&ctx);
  // As Redis' rdbSave, every stored key goes in, expired or not: the loader
  // decides (a master drops and counts them, a replica keeps them for its
  // master to delete; a replica's RELOAD or a sub-replica's sync must not lose them).
  ExpiryTimeIgnore every_key;
  int max_version = rdb::kDumpVersion;
  *keys = 0;
  for (int j = 0; j < databases && s.ok(); j++) s = WriteDatabase(&ctx, storage, j, &out, &max_version, keys, cancel);
  if (!s.ok()) return s;
  if (!(s = out.Flush()).ok()) return s;
  if (max_version != rdb::kDumpVersion && !(s = out.RewriteHeader(Header(max_version), path)).ok()) return s;
  buf->push_back(static_cast<char>(rdb::kOpEof));
  // The checksum covers everything before it, the EOF byte included.
  rdb::PutCrc64(buf, out.checksum() ? rdb::Crc64(out.crc(), buf->data(), buf->size()) : 0);
  if (!(s = out.Flush()).ok()) return s;
  return out.SyncAndClose();
}

}  // namespace

Status WriteRdbFile(Storage* storage, int databases, const std::vector<std::string>& function_codes,
                    const std::string& path, uint64_t* keys, const std::atomic<bool>* cancel) {
  // Redis' rdbSave: a temporary file, renamed over the target once complete.
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  Status s = WriteRdbFileTo(storage, databases, function_codes, tmp, keys, cancel);
  if (s.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Status::IOError("rename " + tmp + ": " + std::strerror(errno));
  }
  if (!s.ok()) std::remove(tmp.c_str());
  return s;
}

Status ReadRdbFile(const std::string& path, rdb::Handler* handler) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  FileSource src(f);
  Status s = rdb::Reader(&src).ReadRdb(handler);
  fclose(f);
  return s;
}

Status StageRdbFile(RdbLoader* loader, const std::string& path) {
  Status s = ReadRdbFile(path, loader);
  return s.ok() ? loader->Flush() : s;
}

Status LoadRdbFile(Storage* storage, int databases, const std::string& path, AccessClock* access_clock,
                   bool keep_expired, uint64_t* keys, uint64_t* expired) {
  RdbLoader loader(storage, databases);
  loader.set_access_clock(access_clock);
  loader.set_keep_expired(keep_expired);
  Status s = loader.Begin();
  if (s.ok()) s = StageRdbFile(&loader, path);
  if (s.ok()) {
    std::vector<scripting::Library> functions = scripting::FunctionRegistry::BuildAll(loader.functions());
    MultiLockGuard all(storage->locks());
    s = loader.Finish({{scripting::FunctionRegistry::kStateKey,
                        scripting::FunctionRegistry::SerializeLibraries(functions)}});
  }
  if (!s.ok()) {
    loader.Abort();
    return s;
  }
  *keys = loader.keys_loaded();
  *expired = loader.expired_skipped();
  return Status::OK();
}

}  // namespace kvrocks
