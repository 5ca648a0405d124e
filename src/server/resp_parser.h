// Incremental parser of client requests: RESP multibulk and inline commands,
// with Redis' limits and Redis' protocol error texts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvrocks {

class RespParser {
 public:
  enum class Result {
    kCommand,   // *args holds one complete command
    kNeedMore,  // the buffer ends inside a command; call again with more data
    kError,     // protocol error; *error is the reply text (without '-'), close the connection
  };

  struct Limits {
    int64_t max_bulk_len = 512LL * 1024 * 1024;  // proto-max-bulk-len
    bool authenticated = true;                    // unauthenticated clients get tighter limits
  };

  // Parses from buf[*pos...]. Advances *pos past everything consumed (also on
  // kNeedMore, so the caller may discard buf[0..*pos)). State carries over
  // between calls, so a huge command is not re-parsed as its bytes arrive.
  Result Parse(std::string_view buf, size_t* pos, const Limits& limits, std::vector<std::string>* args,
               std::string* error);

  // Bytes still expected for the bulk being read (to size reads); 0 if unknown.
  int64_t pending_bulk() const { return bulk_len_ > 0 ? bulk_len_ : 0; }
  bool in_multibulk() const { return multibulk_left_ > 0; }

 private:
  Result ParseInline(std::string_view buf, size_t* pos, std::vector<std::string>* args, std::string* error);
  Result ParseMultibulk(std::string_view buf, size_t* pos, const Limits& limits, std::vector<std::string>* args,
                        std::string* error);
  void Reset();

  int64_t multibulk_left_ = 0;  // 0: at the start of a command
  int64_t bulk_len_ = -1;       // -1: expecting a $ line
  std::vector<std::string> pending_;
};

}  // namespace kvrocks
