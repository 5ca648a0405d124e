// libFuzzer target: the RESP request parser must never crash, never read out
// of bounds, and always make progress or ask for more input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/resp_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string buf(reinterpret_cast<const char*>(data), size);
  kvrocks::RespParser::Limits limits;
  limits.max_bulk_len = 1024 * 1024;
  limits.authenticated = size % 2 == 0;
  // Feed the input in two pieces to exercise the incremental state.
  size_t split = size ? data[0] % (size + 1) : 0;
  kvrocks::RespParser parser;
  std::string fed = buf.substr(0, split);
  size_t pos = 0;
  std::vector<std::string> args;
  std::string error;
  for (int round = 0; round < 2; round++) {
    while (true) {
      size_t before = pos;
      auto r = parser.Parse(fed, &pos, limits, &args, &error);
      if (r == kvrocks::RespParser::Result::kError) {
        if (error.empty()) __builtin_trap();
        return 0;
      }
      if (r == kvrocks::RespParser::Result::kNeedMore) break;
      if (pos <= before || args.empty()) __builtin_trap();  // a command must consume input
    }
    if (pos > fed.size()) __builtin_trap();
    fed = fed.substr(pos) + buf.substr(split);
    pos = 0;
    split = size;
  }
  return 0;
}
