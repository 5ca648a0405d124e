// Encodings of the collection types: the order-preserving score encoding of
// sorted sets and the index arithmetic of lists.
#include <gtest/gtest.h>

#include "temp_storage.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <vector>

#include "common/time_util.h"
#include "config/config.h"
#include "storage/storage.h"
#include "types/redis_list.h"
#include "types/redis_zset.h"

using namespace kvrocks;

TEST(ScoreEncoding, ByteOrderIsNumericOrder) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> scores = {-inf, -1e308, -2.5, -1, -1e-300, -0.0, 0.0, 1e-300, 1, 2.5, 1e308, inf};
  for (size_t i = 0; i + 1 < scores.size(); i++) {
    std::string a = EncodeScore(scores[i]), b = EncodeScore(scores[i + 1]);
    if (scores[i] == scores[i + 1]) {
      EXPECT_EQ(a, b) << scores[i] << " and " << scores[i + 1] << " must encode alike (-0 sorts with 0)";
    } else {
      EXPECT_LT(a, b) << scores[i] << " < " << scores[i + 1];
    }
  }
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> dist(-1e6, 1e6);
  for (int i = 0; i < 10000; i++) {
    double x = dist(rng), y = dist(rng);
    EXPECT_EQ(x < y, EncodeScore(x) < EncodeScore(y));
    EXPECT_EQ(DecodeScore(EncodeScore(x).data()), x);
  }
  EXPECT_EQ(DecodeScore(EncodeScore(inf).data()), inf);
  EXPECT_EQ(DecodeScore(EncodeScore(-inf).data()), -inf);
}

using ListIndexTest = TempStorageTest;

// Pushes on both ends grow the list outward from the middle; indexes, ranges
// and trims agree with a deque model, including negative indexes.
TEST_F(ListIndexTest, BothEndsAgreeWithAModel) {
  std::mt19937_64 rng(9);
  std::vector<std::string> model;
  for (int round = 0; round < 300; round++) {
    Context ctx(storage_.get());
    Database db(&ctx, 0);
    RedisList list(&db);
    std::string v = "v" + std::to_string(round);
    int op = static_cast<int>(rng() % 4);
    int64_t len;
    if (op == 0) {
      ASSERT_TRUE(list.Push("l", {v}, true, false, &len).ok());
      model.insert(model.begin(), v);
    } else if (op == 1) {
      ASSERT_TRUE(list.Push("l", {v}, false, false, &len).ok());
      model.push_back(v);
    } else if (op == 2 && !model.empty()) {
      std::vector<std::string> popped;
      bool left = rng() & 1;
      ASSERT_TRUE(list.Pop("l", left, 1, &popped).ok());
      ASSERT_EQ(popped.size(), 1u);
      EXPECT_EQ(popped[0], left ? model.front() : model.back());
      if (left) {
        model.erase(model.begin());
      } else {
        model.pop_back();
      }
    } else if (!model.empty()) {
      int64_t n = static_cast<int64_t>(model.size());
      int64_t idx = static_cast<int64_t>(rng() % (2 * n)) - n;  // [-n, n)
      std::string got;
      ASSERT_TRUE(list.Index("l", idx, &got).ok());
      EXPECT_EQ(got, model[static_cast<size_t>(idx < 0 ? idx + n : idx)]);
      std::vector<std::string> range;
      ASSERT_TRUE(list.Range("l", -3, -1, &range).ok());
      std::vector<std::string> expect(model.end() - std::min<int64_t>(3, n), model.end());
      EXPECT_EQ(range, expect);
    }
    ASSERT_TRUE(ctx.Commit().ok());
  }
  Context ctx(storage_.get());
  Database db(&ctx, 0);
  std::vector<std::string> all;
  ASSERT_TRUE(RedisList(&db).Range("l", 0, -1, &all).ok());
  EXPECT_EQ(all, model);
}
