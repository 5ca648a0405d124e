#include "server/resp_parser.h"

#include <climits>
#include <cstring>

#include "common/string_util.h"

namespace kvrocks {

static constexpr size_t kInlineMax = 64 * 1024;

void RespParser::Reset() {
  multibulk_left_ = 0;
  bulk_len_ = -1;
  pending_.clear();
}

RespParser::Result RespParser::Parse(std::string_view buf, size_t* pos, const Limits& limits,
                                     std::vector<std::string>* args, std::string* error) {
  while (*pos < buf.size()) {
    if (multibulk_left_ == 0 && buf[*pos] != '*') {
      Result r = ParseInline(buf, pos, args, error);
      if (r == Result::kCommand && args->empty()) continue;  // empty line
      return r;
    }
    Result r = ParseMultibulk(buf, pos, limits, args, error);
    if (r == Result::kCommand && args->empty()) continue;  // "*0" or "*-1"
    return r;
  }
  return Result::kNeedMore;
}

// Where the line at the start of s ends (the first c), as Redis finds it with
// strchr on its NUL-terminated query buffer: a line with a NUL byte before its
// end has none yet (npos), so Redis waits for more input until the buffer passes
// the inline limit.
static size_t FindLineEnd(std::string_view s, char c) {
  size_t at = s.find(c);
  if (at != std::string_view::npos && std::memchr(s.data(), '\0', at) != nullptr) return std::string_view::npos;
  return at;
}

RespParser::Result RespParser::ParseInline(std::string_view buf, size_t* pos, std::vector<std::string>* args,
                                           std::string* error) {
  std::string_view rest = buf.substr(*pos);
  size_t nl = FindLineEnd(rest, '\n');
  if (nl == std::string_view::npos) {
    if (rest.size() > kInlineMax) {
      *error = "ERR Protocol error: too big inline request";
      return Result::kError;
    }
    return Result::kNeedMore;
  }
  std::string_view line = rest.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!SplitArgs(line, args)) {
    *error = "ERR Protocol error: unbalanced quotes in request";
    return Result::kError;
  }
  *pos += nl + 1;
  return Result::kCommand;
}

// Reads a "<prefix><integer>\r\n" line at buf[pos] (any byte after the CR ends
// it, as in Redis). Returns 1 on success, 0 if incomplete, -1 if the line is too
// long without a CR.
static int ReadLine(std::string_view buf, size_t pos, std::string_view* line, size_t* next) {
  std::string_view rest = buf.substr(pos);
  size_t cr = FindLineEnd(rest, '\r');
  if (cr == std::string_view::npos) return rest.size() > kInlineMax ? -1 : 0;
  if (cr + 1 >= rest.size()) return 0;  // need the '\n'
  *line = cr == 0 ? std::string_view() : rest.substr(1, cr - 1);
  *next = pos + cr + 2;
  return 1;
}

RespParser::Result RespParser::ParseMultibulk(std::string_view buf, size_t* pos, const Limits& limits,
                                              std::vector<std::string>* args, std::string* error) {
  if (multibulk_left_ == 0) {
    std::string_view line;
    size_t next;
    int r = ReadLine(buf, *pos, &line, &next);
    if (r < 0) {
      *error = "ERR Protocol error: too big mbulk count string";
      return Result::kError;
    }
    if (r == 0) return Result::kNeedMore;
    int64_t n;
    if (!ParseInt64(line, &n) || n > INT_MAX) {
      *error = "ERR Protocol error: invalid multibulk length";
      return Result::kError;
    }
    if (n > 10 && !limits.authenticated) {
      *error = "ERR Protocol error: unauthenticated multibulk length";
      return Result::kError;
    }
    *pos = next;
    if (n <= 0) {
      args->clear();
      return Result::kCommand;
    }
    multibulk_left_ = n;
    // pending_ takes turns with the caller's args (swapped below): the room of a
    // command of many arguments is not kept for the connection's life.
    if (pending_.capacity() > 1024) {
      std::vector<std::string>().swap(pending_);
    } else {
      pending_.clear();
    }
    pending_.reserve(static_cast<size_t>(n < 1024 ? n : 1024));
    bulk_len_ = -1;
  }
  while (multibulk_left_ > 0) {
    if (bulk_len_ < 0) {
      std::string_view line;
      size_t next;
      int r = ReadLine(buf, *pos, &line, &next);
      if (r < 0) {
        *error = "ERR Protocol error: too big bulk count string";
        return Result::kError;
      }
      if (r == 0) return Result::kNeedMore;
      // Redis looks at the first byte only once the whole line is in.
      if (buf[*pos] != '$') {
        *error = std::string("ERR Protocol error: expected '$', got '") + buf[*pos] + "'";
        return Result::kError;
      }
      int64_t n;
      if (!ParseInt64(line, &n) || n < 0 || n > limits.max_bulk_len) {
        *error = "ERR Protocol error: invalid bulk length";
        return Result::kError;
      }
      if (n > 16384 && !limits.authenticated) {
        *error = "ERR Protocol error: unauthenticated bulk length";
        return Result::kError;
      }
      *pos = next;
      bulk_len_ = n;
    }
    if (buf.size() - *pos < static_cast<size_t>(bulk_len_) + 2) return Result::kNeedMore;
    pending_.emplace_back(buf.data() + *pos, static_cast<size_t>(bulk_len_));
    *pos += static_cast<size_t>(bulk_len_) + 2;
    bulk_len_ = -1;
    multibulk_left_--;
  }
  args->swap(pending_);
  pending_.clear();
  Reset();
  return Result::kCommand;
}

}  // namespace kvrocks
