// Redis' HyperLogLog format: the empty value, sparse/dense equivalence, and
// counts that Redis 7.0 gives on the same input.
#include "types/hll_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace kvrocks;

TEST(HllFormat, EmptyValueIsRedisCreateHLLObject) {
  std::string v = hll::NewSparse();
  EXPECT_EQ(v, std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff", 18));
  EXPECT_TRUE(hll::IsValid(v));
  uint64_t card;
  ASSERT_TRUE(hll::Count(v, &card));
  EXPECT_EQ(card, 0u);
  EXPECT_TRUE(hll::CacheValid(v));
}

TEST(HllFormat, CountsMatchRedis) {
  // redis-server 7.0: PFADD d 1 2 ... 3000; PFCOUNT d -> 3005 (dense by then).
  std::string v = hll::NewSparse();
  for (int i = 1; i <= 3000; i++) ASSERT_GE(hll::Add(&v, std::to_string(i), 3000), 0);
  EXPECT_EQ(v.size(), hll::kDenseSize);
  uint64_t card;
  ASSERT_TRUE(hll::Count(v, &card));
  EXPECT_EQ(card, 3005u);
}

TEST(HllFormat, SparseAndDenseHoldTheSameRegisters) {
  std::string sparse = hll::NewSparse();
  for (int i = 0; i < 400; i++) hll::Add(&sparse, "m" + std::to_string(i * 7919), 1 << 20);
  ASSERT_EQ(sparse[4], static_cast<char>(hll::kSparse));
  std::string dense = sparse;
  ASSERT_TRUE(hll::ToDense(&dense));
  std::vector<uint8_t> a(hll::kRegisters), b(hll::kRegisters);
  ASSERT_TRUE(hll::MergeInto(sparse, a.data()));
  ASSERT_TRUE(hll::MergeInto(dense, b.data()));
  EXPECT_EQ(a, b);
  uint64_t c1, c2;
  ASSERT_TRUE(hll::Count(sparse, &c1));
  ASSERT_TRUE(hll::Count(dense, &c2));
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(hll::CountRegisters(a.data()), c1);
  // Adding the same elements again changes nothing.
  for (int i = 0; i < 400; i++) EXPECT_EQ(hll::Add(&dense, "m" + std::to_string(i * 7919), 0), 0);
}

TEST(HllFormat, CorruptValuesAreRejected) {
  std::string v = hll::NewSparse();
  v.resize(17);  // half an XZERO opcode: its missing byte reads as 0, 16128 registers
  uint64_t card;
  EXPECT_FALSE(hll::Count(v, &card));
  std::string overflow = std::string(hll::NewSparse(), 0, 16) + std::string(8, '\xff');
  EXPECT_FALSE(hll::Count(overflow, &card));
  EXPECT_EQ(hll::Add(&overflow, "x", 3000), -1);
  EXPECT_FALSE(hll::IsValid(std::string("HYLL\x00", 5)));
}

// Redis reads the second byte of an XZERO that ends the value from the sds
// terminator (0); ZERO runs of 64+64+64+63 and such an XZERO (16129) cover all
// registers, so Redis counts, and an edit inside it drops what would follow the end.
TEST(HllFormat, TrailingHalfXZeroReadsAsRedisDoes) {
  std::string v = std::string(hll::NewSparse(), 0, 16) + "\x3f\x3f\x3f\x3e\x7f";
  uint64_t card = 1;
  ASSERT_TRUE(hll::Count(v, &card));
  EXPECT_EQ(card, 0u);
  // Register 300 lies in the XZERO: ZERO(45) VAL(1,1) XZERO(16083), whose last byte falls off.
  ASSERT_EQ(hll::SetRegister(&v, 300, 1, 3000), 1);
  EXPECT_EQ(v.substr(16), std::string("\x3f\x3f\x3f\x3e\x2c\x80\x7e", 7));
}
