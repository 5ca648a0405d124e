// libFuzzer target: the RDB parser (whole files and DUMP payloads) must never
// crash or read out of bounds on any input; bad input is a Corruption status.
// The writer's LZF compressor must give back what it was given, for any output bound.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "replication/rdb_containers.h"
#include "replication/rdb_reader.h"
#include "replication/rdb_writer.h"

namespace {

class NullHandler : public kvrocks::rdb::Handler {
 public:
  kvrocks::Status OnSelectDb(uint64_t) override { return kvrocks::Status::OK(); }
  kvrocks::Status OnKey(std::string, kvrocks::rdb::Object, int64_t) override { return kvrocks::Status::OK(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // As a file: prefixed with a valid header half of the time so that the fuzzer reaches the opcodes.
  std::string file = (size % 2 == 0) ? "REDIS0011" + std::string(in) : std::string(in);
  kvrocks::rdb::StringSource src(file);
  NullHandler handler;
  kvrocks::rdb::Reader(&src).ReadRdb(&handler);
  // As a DUMP payload, with its checksum made valid so that the object parser runs.
  if (size > 0) {
    std::string payload(in);
    payload += std::string("\x0a\x00", 2);
    uint64_t crc = kvrocks::rdb::Crc64(0, payload.data(), payload.size());
    for (int i = 0; i < 8; i++) payload.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
    kvrocks::rdb::Object obj;
    kvrocks::rdb::Reader::ParseDump(payload, &obj);
    std::string compressed, back;
    size_t cap = data[0] % 2 == 0 ? size : size / 2 + 1;
    if (kvrocks::rdb::LzfCompress(in, cap, &compressed) > 0 &&
        (compressed.size() > cap || !kvrocks::rdb::LzfDecompress(compressed, size, &back) || back != in)) {
      abort();
    }
  }
  return 0;
}
