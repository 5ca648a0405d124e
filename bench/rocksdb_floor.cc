// rocksdb_floor: what RocksDB alone costs per SET on this machine, with no
// server around it (no sockets, no parsing, no key locks): the floor under
// kvrocks' CPU per write, to set beside redis-server's whole cost per write.
//
// Writes `writes` random keys (1M key space, kvrocks' metadata key layout) with
// `size`-byte values in atomic batches of `batch`, through the WAL, with
// kvrocks' default options (64 MB write buffers, memtable bloom filter,
// pipelined writes, zstd WAL, blob files from 4 KiB). Optionally sorts each
// batch (as kvrocks' Context does) and first looks every key up with one
// MultiGet (what keeps kvrocks' key counts exact). Prints the CPU time per
// write of the writing thread, and of the whole process including the flush
// of everything written.
//
//   cmake --build build --target rocksdb_floor
//   build/rocksdb_floor [--batch 64] [--size 100] [--writes 1000000]
//                       [--lookup] [--unsorted] [--no-wal-compression] [--dir /tmp/rocksdb_floor]
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

double CpuSeconds(int who) {
  rusage ru{};
  getrusage(who, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Args {
  int batch = 64;
  int size = 100;
  int writes = 1000000;
  bool lookup = false;
  bool sorted = true;
  bool wal_compression = true;
  std::string dir = "/tmp/rocksdb_floor";
};

bool Parse(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; i++) {
    std::string f = argv[i];
    bool has_value = i + 1 < argc;
    if (f == "--batch" && has_value) {
      a->batch = std::atoi(argv[++i]);
    } else if (f == "--size" && has_value) {
      a->size = std::atoi(argv[++i]);
    } else if (f == "--writes" && has_value) {
      a->writes = std::atoi(argv[++i]);
    } else if (f == "--dir" && has_value) {
      a->dir = argv[++i];
    } else if (f == "--lookup") {
      a->lookup = true;
    } else if (f == "--unsorted") {
      a->sorted = false;
    } else if (f == "--no-wal-compression") {
      a->wal_compression = false;
    } else {
      return false;
    }
  }
  return a->batch > 0 && a->size >= 0 && a->writes > 0;
}

rocksdb::Options KvrocksLikeOptions(const Args& a) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 20;
  o.max_write_buffer_number = 4;
  o.memtable_whole_key_filtering = true;
  o.memtable_prefix_bloom_size_ratio = 0.1;
  o.enable_pipelined_write = true;
  o.allow_concurrent_memtable_write = false;
  o.compression = rocksdb::kNoCompression;
  if (a.wal_compression) o.wal_compression = rocksdb::kZSTD;
  o.enable_blob_files = true;
  o.min_blob_size = 4096;
  o.blob_compression_type = rocksdb::kLZ4Compression;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = rocksdb::NewLRUCache(512 << 20);
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10, false));
  t.checksum = rocksdb::kXXH3;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!Parse(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: %s [--batch N] [--size BYTES] [--writes N] [--lookup] [--unsorted] "
                 "[--no-wal-compression] [--dir PATH]\n",
                 argv[0]);
    return 2;
  }
  rocksdb::Options options = KvrocksLikeOptions(a);
  rocksdb::Status s = rocksdb::DestroyDB(a.dir, options);
  rocksdb::DB* raw = nullptr;
  if (s.ok()) s = rocksdb::DB::Open(options, a.dir, &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "open %s: %s\n", a.dir.c_str(), s.ToString().c_str());
    return 1;
  }
  std::unique_ptr<rocksdb::DB> db(raw);

  std::mt19937_64 rng(42);
  // Values of random letters: compressible about as much as text, unlike
  // redis-benchmark's runs of 'x', which blob compression shrinks to nothing.
  std::string value(static_cast<size_t>(a.size), 'x');
  for (char& c : value) c = static_cast<char>('a' + rng() % 26);
  std::vector<std::string> keys(static_cast<size_t>(a.batch));
  std::vector<rocksdb::Slice> key_slices(keys.size());
  std::vector<rocksdb::PinnableSlice> found(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  rocksdb::WriteBatch batch;

  double thread0 = CpuSeconds(RUSAGE_THREAD), process0 = CpuSeconds(RUSAGE_SELF);
  for (int done = 0; done < a.writes; done += a.batch) {
    for (std::string& k : keys) {
      char user_key[32];
      int n = std::snprintf(user_key, sizeof user_key, "key:%012llu", static_cast<unsigned long long>(rng() % 1000000));
      uint16_t slot = static_cast<uint16_t>(rng() % 16384);
      k.assign(1, '\0');  // db 0, then the slot, big-endian, then the user key
      k.push_back(static_cast<char>(slot >> 8));
      k.push_back(static_cast<char>(slot & 0xff));
      k.append(user_key, static_cast<size_t>(n));
    }
    if (a.sorted) std::sort(keys.begin(), keys.end());
    if (a.lookup) {
      for (size_t i = 0; i < keys.size(); i++) key_slices[i] = keys[i];
      db->MultiGet(rocksdb::ReadOptions(), db->DefaultColumnFamily(), keys.size(), key_slices.data(), found.data(),
                   statuses.data(), a.sorted);
      for (auto& f : found) f.Reset();
    }
    batch.Clear();
    for (const std::string& k : keys) batch.Put(k, value);
    s = db->Write(rocksdb::WriteOptions(), &batch);
    if (!s.ok()) {
      std::fprintf(stderr, "write: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  double thread1 = CpuSeconds(RUSAGE_THREAD);
  s = db->Flush(rocksdb::FlushOptions());
  double process1 = CpuSeconds(RUSAGE_SELF);
  if (!s.ok()) {
    std::fprintf(stderr, "flush: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("batch %d size %d%s%s%s: %.2f us CPU per write in the writing thread, %.2f us in the process "
              "(flush included)\n",
              a.batch, a.size, a.sorted ? " sorted" : " unsorted", a.lookup ? " lookup" : "",
              a.wal_compression ? " zstd-wal" : "", (thread1 - thread0) * 1e6 / a.writes,
              (process1 - process0) * 1e6 / a.writes);
  db.reset();
  rocksdb::DestroyDB(a.dir, options);
  return 0;
}
