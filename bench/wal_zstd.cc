// wal_zstd: what RocksDB's WAL compression costs per value on this machine.
//
// RocksDB 7.8 compresses each WAL record (one write batch) as its own zstd frame
// with a checksum, at zstd's default level (3; the level is not an option). This
// compresses records shaped like kvrocks' batches of big SETs (a key, the value,
// a small metadata record per SET) the same way, at several levels, and prints
// the time per record and per value and the compressed size. The value is
// redis-benchmark's (`genBenchmarkRandomData`: one 64-symbol pseudo-random
// string, sent for every request), so a batch of several SETs repeats it.
//
//   cmake --build build --target wal_zstd && build/wal_zstd [--size 8192] [--iters 20000]
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// redis-benchmark's genBenchmarkRandomData.
std::string BenchmarkValue(size_t n) {
  std::string d(n, '\0');
  uint32_t state = 1234;
  for (size_t i = 0; i < n; i++) {
    state = state * 1103515245 + 12345;
    d[i] = static_cast<char>('0' + ((state >> 16) & 63));
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  size_t size = 8192;
  int iters = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--size") == 0) size = strtoull(argv[i + 1], nullptr, 10);
    if (strcmp(argv[i], "--iters") == 0) iters = atoi(argv[i + 1]);
  }
  const std::string value = BenchmarkValue(size);
  for (int values : {1, 3}) {
    std::string record;
    for (int v = 0; v < values; v++) {
      record += "key:" + std::string(12, '0' + v);
      record += value;
      record += std::string(40, 'm');  // the key's metadata record
    }
    std::vector<char> out(ZSTD_compressBound(record.size()));
    for (int level : {3, 1, -1, -3}) {
      ZSTD_CCtx* cctx = ZSTD_createCCtx();
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
      size_t compressed = 0;
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; i++) {
        ZSTD_inBuffer in{record.data(), record.size(), 0};
        ZSTD_outBuffer o{out.data(), out.size(), 0};
        ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end);
        compressed = o.pos;
      }
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / iters;
      printf("%d value(s) a record, level %2d: %6.2f us a record, %5.2f us a value, %zu -> %zu bytes\n", values, level,
             us, us / values, record.size(), compressed);
      ZSTD_freeCCtx(cctx);
    }
  }
  return 0;
}
