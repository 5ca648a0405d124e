// libFuzzer target: arbitrary bytes as what a kvrocks master sends its
// replicas (replication/native_frames.h): a write batch of its WAL, which
// TranslateReplicatedBatch copies for the replica's storage, and the records
// of a snapshot chunk. Malformed input must be refused with an error, never
// crash, and a batch that is accepted must describe what it holds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_env.h"
#include "replication/native_frames.h"
#include "storage/replicated_batch.h"

using namespace kvrocks;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzEnv* env = new FuzzEnv();  // lives for the whole run
  std::string input(reinterpret_cast<const char*>(data), size);
  ReplicatedBatch rb;
  if (TranslateReplicatedBatch(env->storage.get(), input, &rb).ok()) {
    // Everything copied is counted, and nothing is copied that the master did not write.
    if (rb.batch.Count() > rb.master_count) __builtin_trap();
  }
  std::string_view chunk(input), key, value;
  size_t pos = 0, records = 0;
  while (native::NextRecord(chunk, &pos, &key, &value)) {
    if (pos > chunk.size()) __builtin_trap();
    records++;
  }
  (void)records;
  return 0;
}
