#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "stats/latency.h"

namespace kvrocks {
namespace {

// The samples and the graph of a real redis-server 7.0 run (LATENCY HISTORY and
// LATENCY GRAPH command, read in the same second).
TEST(LatencyGraphTest, SparklineAsRedisDrawsIt) {
  std::vector<std::pair<double, std::string>> samples = {{10, "9s"}, {50, "8s"}, {100, "7s"}, {30, "5s"},
                                                         {2, "4s"},  {70, "3s"}, {45, "2s"},  {5, "1s"}};
  EXPECT_EQ(LatencyMonitor::Sparkline(samples, 80, 4),
            "  #     \n"
            "  |  #  \n"
            " #|_ |# \n"
            "_|||_||_\n"
            "        \n"
            "98754321\n"
            "ssssssss\n");
}

TEST(LatencyGraphTest, EqualValuesAndBlocksOfColumns) {
  std::vector<std::pair<double, std::string>> samples = {{7, "1s"}, {7, "1s"}, {7, "1s"}};
  // No spread: every value is the lowest step; two columns per block.
  EXPECT_EQ(LatencyMonitor::Sparkline(samples, 2, 2),
            "  \n__\n  \n11\nss\n"
            "\n"
            " \n_\n \n1\ns\n");
}

TEST(LatencyGraphTest, GraphOfAnEvent) {
  LatencyMonitor mon;
  std::string out;
  EXPECT_FALSE(mon.Graph("command", 1000, &out));
  mon.Add("command", 12);
  ASSERT_TRUE(mon.Graph("command", 2000000000, &out));
  EXPECT_EQ(out.substr(0, out.find('\n')), "command - high 12 ms, low 12 ms (all time high 12 ms)");
  EXPECT_NE(out.find(std::string(80, '-') + "\n"), std::string::npos);
}

}  // namespace
}  // namespace kvrocks
