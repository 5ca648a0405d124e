// libFuzzer target: arbitrary bytes as a master's replication stream, fed to
// the replica's StreamApplier in pieces (the first input byte picks the piece
// size, so commands arrive split at every possible point). The applier must
// frame RESP, MULTI/EXEC, REPLCONF GETACK and keep-alives without crashing,
// reject a malformed stream with an error, and keep its offsets consistent:
// the consumed bytes are exactly what read_offset counts, the applied offset
// never passes it, and a GETACK is answered with an applied offset.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command.h"
#include "common/string_util.h"
#include "fuzz_env.h"
#include "replication/stream_applier.h"
#include "server/resp_parser.h"

using namespace kvrocks;

namespace {

// Whether the stream holds a command that acts on the process (see ActsOnProcess).
bool TouchesProcess(std::string_view stream) {
  RespParser parser;
  RespParser::Limits limits;
  limits.max_bulk_len = INT64_MAX;
  size_t pos = 0;
  std::vector<std::string> args;
  std::string error;
  while (parser.Parse(stream, &pos, limits, &args, &error) == RespParser::Result::kCommand) {
    if (args.empty()) continue;
    const CommandSpec* spec = CommandTable::Instance().Find(args[0]);
    if (spec != nullptr && ActsOnProcess(ToLower(spec->name))) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzEnv* env = new FuzzEnv();  // lives for the whole run
  static StreamApplier* applier = [] {
    auto* a = new StreamApplier(env->server.get(), "replication-fuzz");
    a->set_master_client(env->conn.get());
    return a;
  }();
  if (size < 1) return 0;
  const size_t step = 1 + data[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  if (TouchesProcess(stream)) return 0;

  applier->Reset("fuzz", 0, 0, 0);  // the master client back in database 0
  std::string buf;
  size_t fed = 0;
  uint64_t consumed = 0;
  while (true) {
    if (fed < stream.size()) {
      size_t n = std::min(step, stream.size() - fed);
      buf.append(stream.substr(fed, n));
      fed += n;
    }
    StreamApplier::Batch batch;
    if (!applier->Apply(buf, &batch).ok()) break;  // a malformed stream: the replica drops the link
    if (batch.consumed > buf.size()) __builtin_trap();
    buf.erase(0, batch.consumed);
    consumed += batch.consumed;
    if (applier->read_offset() != consumed) __builtin_trap();
    if (applier->offset() > applier->read_offset()) __builtin_trap();
    if (batch.ack_requested && batch.ack_offset > applier->offset()) __builtin_trap();
    if (batch.consumed == 0 && !batch.more && fed == stream.size()) break;
  }
  return 0;
}
