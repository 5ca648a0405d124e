#include "server/resp_parser.h"

#include <gtest/gtest.h>

using kvrocks::RespParser;

namespace {

struct Parsed {
  RespParser::Result result;
  std::vector<std::string> args;
  std::string error;
  size_t pos = 0;
};

Parsed ParseOnce(RespParser* p, const std::string& buf, size_t pos = 0, int64_t max_bulk = 512 * 1024 * 1024) {
  Parsed out;
  out.pos = pos;
  RespParser::Limits limits;
  limits.max_bulk_len = max_bulk;
  out.result = p->Parse(buf, &out.pos, limits, &out.args, &out.error);
  return out;
}

TEST(RespParser, Multibulk) {
  RespParser p;
  auto r = ParseOnce(&p, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n");
  ASSERT_EQ(r.result, RespParser::Result::kCommand);
  EXPECT_EQ(r.args, (std::vector<std::string>{"SET", "k", "hello"}));
}

TEST(RespParser, BinarySafeBulk) {
  RespParser p;
  std::string v("a\r\n\0b", 5);
  auto r = ParseOnce(&p, "*2\r\n$3\r\nGET\r\n$5\r\n" + v + "\r\n");
  ASSERT_EQ(r.result, RespParser::Result::kCommand);
  EXPECT_EQ(r.args[1], v);
}

TEST(RespParser, Inline) {
  RespParser p;
  auto r = ParseOnce(&p, "set k \"a b\\x41\"\r\n");
  ASSERT_EQ(r.result, RespParser::Result::kCommand);
  EXPECT_EQ(r.args, (std::vector<std::string>{"set", "k", "a bA"}));
}

TEST(RespParser, InlineUnbalancedQuotes) {
  RespParser p;
  auto r = ParseOnce(&p, "set k \"abc\r\n");
  ASSERT_EQ(r.result, RespParser::Result::kError);
  EXPECT_EQ(r.error, "ERR Protocol error: unbalanced quotes in request");
}

TEST(RespParser, IncrementalFeed) {
  RespParser p;
  std::string full = "*2\r\n$4\r\nECHO\r\n$10\r\n0123456789\r\n";
  std::string buf;
  size_t pos = 0;
  std::vector<std::string> args;
  std::string err;
  RespParser::Limits limits;
  for (size_t i = 0; i < full.size(); i++) {
    buf.push_back(full[i]);
    auto r = p.Parse(buf, &pos, limits, &args, &err);
    if (i + 1 < full.size()) {
      ASSERT_EQ(r, RespParser::Result::kNeedMore) << "at byte " << i;
    } else {
      ASSERT_EQ(r, RespParser::Result::kCommand);
    }
  }
  EXPECT_EQ(args, (std::vector<std::string>{"ECHO", "0123456789"}));
}

TEST(RespParser, Pipeline) {
  RespParser p;
  std::string buf = "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\nPING\r\n";
  size_t pos = 0;
  int n = 0;
  std::vector<std::string> args;
  std::string err;
  RespParser::Limits limits;
  while (p.Parse(buf, &pos, limits, &args, &err) == RespParser::Result::kCommand) n++;
  EXPECT_EQ(n, 3);
  EXPECT_EQ(pos, buf.size());
}

TEST(RespParser, ProtocolErrors) {
  struct Case {
    std::string in;
    std::string err;
  } cases[] = {
      {"*abc\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*3000000000\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*1\r\n+foo\r\n", "ERR Protocol error: expected '$', got '+'"},
      {"*1\r\n$-5\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$x\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$2000000\r\n", "ERR Protocol error: invalid bulk length"},
  };
  for (const auto& c : cases) {
    RespParser p;
    auto r = ParseOnce(&p, c.in, 0, 1024 * 1024);
    EXPECT_EQ(r.result, RespParser::Result::kError) << c.in;
    EXPECT_EQ(r.error, c.err) << c.in;
  }
}

TEST(RespParser, TooBigInline) {
  RespParser p;
  auto r = ParseOnce(&p, std::string(70 * 1024, 'a'));
  EXPECT_EQ(r.result, RespParser::Result::kError);
  EXPECT_EQ(r.error, "ERR Protocol error: too big inline request");
}

TEST(RespParser, UnauthenticatedLimits) {
  RespParser p;
  std::string buf = "*1\r\n$20000\r\n";
  size_t pos = 0;
  std::vector<std::string> args;
  std::string err;
  RespParser::Limits limits;
  limits.authenticated = false;
  EXPECT_EQ(p.Parse(buf, &pos, limits, &args, &err), RespParser::Result::kError);
  EXPECT_EQ(err, "ERR Protocol error: unauthenticated bulk length");
}

TEST(RespParser, UnauthenticatedMultibulkOfMoreThanTenArguments) {
  RespParser::Limits limits;
  limits.authenticated = false;
  std::vector<std::string> args;
  std::string err;
  RespParser p;
  std::string ten = "*10\r\n";
  size_t pos = 0;
  EXPECT_EQ(p.Parse(ten, &pos, limits, &args, &err), RespParser::Result::kNeedMore);
  RespParser q;
  std::string eleven = "*11\r\n";
  pos = 0;
  EXPECT_EQ(q.Parse(eleven, &pos, limits, &args, &err), RespParser::Result::kError);
  EXPECT_EQ(err, "ERR Protocol error: unauthenticated multibulk length");
}

// Redis finds line ends with strchr: a NUL before the end of an inline line or
// of a "*n"/"$n" line leaves the line incomplete (binary bulk data is not lines).
TEST(RespParser, NulBeforeTheLineEndLeavesTheLineIncomplete) {
  for (const std::string in : {std::string("PING\0\r\nPING\r\n", 12), std::string("\0\r\n", 3),
                               std::string("*1\0\r\n$4\r\nPING\r\n", 17),
                               std::string("*1\r\n$4\0\r\nPING\r\n", 17)}) {
    RespParser p;
    auto r = ParseOnce(&p, in);
    EXPECT_EQ(r.result, RespParser::Result::kNeedMore) << testing::PrintToString(in);
  }
  // Past the inline limit without a line end: Redis' errors.
  RespParser p;
  auto r = ParseOnce(&p, std::string("PING\0", 5) + std::string(70 * 1024, 'a') + "\r\n");
  EXPECT_EQ(r.result, RespParser::Result::kError);
  EXPECT_EQ(r.error, "ERR Protocol error: too big inline request");
  RespParser q;
  r = ParseOnce(&q, std::string("*1\r\n$4\0", 7) + std::string(70 * 1024, 'a') + "\r\n");
  EXPECT_EQ(r.result, RespParser::Result::kError);
  EXPECT_EQ(r.error, "ERR Protocol error: too big bulk count string");
}

// Redis reads the first byte of an argument's line only once the line is complete.
TEST(RespParser, ExpectedDollarOnlyOnceTheLineIsComplete) {
  RespParser p;
  auto r = ParseOnce(&p, "*1\r\nX");
  EXPECT_EQ(r.result, RespParser::Result::kNeedMore);
  RespParser q;
  r = ParseOnce(&q, "*1\r\n\r\n");
  EXPECT_EQ(r.result, RespParser::Result::kError);
  EXPECT_EQ(r.error, "ERR Protocol error: expected '$', got '\r'");  // the reply writes it as a space
}

TEST(RespParser, EmptyMultibulkIsSkipped) {
  RespParser p;
  auto r = ParseOnce(&p, "*0\r\n*-1\r\n\r\n*1\r\n$4\r\nPING\r\n");
  ASSERT_EQ(r.result, RespParser::Result::kCommand);
  EXPECT_EQ(r.args, (std::vector<std::string>{"PING"}));
}

}  // namespace
