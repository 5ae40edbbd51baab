#include <gtest/gtest.h>

#include <set>

#include "eval/sweep.h"

namespace mooncake::eval {
namespace {

TEST(Sweep, SpecSplitsKeyAndValues) {
  auto a = ParseSweepSpec("conductor.policy=random,cache_aware");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->key, "conductor.policy");
  EXPECT_EQ(a->values, (std::vector<std::string>{"random", "cache_aware"}));
  EXPECT_FALSE(ParseSweepSpec("novalue=").ok());
  EXPECT_FALSE(ParseSweepSpec("noequals").ok());
  EXPECT_FALSE(ParseSweepSpec("k=a,,b").ok());
}

TEST(Sweep, CartesianProductFirstAxisSlowest) {
  auto pts = CartesianPoints({{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}});
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[0], (SweepPoint{{"a", "1"}, {"b", "x"}}));
  EXPECT_EQ(pts[5], (SweepPoint{{"a", "2"}, {"b", "z"}}));
  EXPECT_EQ(CartesianPoints({}).size(), 1u);
}

TEST(Sweep, RanksPartitionThePointsExactlyOnce) {
  for (int size : {1, 2, 3, 7}) {
    std::multiset<size_t> seen;
    for (int rank = 0; rank < size; ++rank) {
      auto mine = PointsForRank(64, rank, size);
      // Balanced: no rank has more than one point above another.
      EXPECT_LE(mine.size(), 64u / size + 1);
      EXPECT_GE(mine.size(), 64u / size);
      seen.insert(mine.begin(), mine.end());
    }
    ASSERT_EQ(seen.size(), 64u);
    for (size_t i = 0; i < 64; ++i) EXPECT_EQ(seen.count(i), 1u) << "size " << size;
  }
  EXPECT_TRUE(PointsForRank(5, 3, 2).empty());
}

TEST(Sweep, SerialCommGathersItsOwnText) {
  SweepComm c = SerialSweepComm();
  EXPECT_EQ(c.rank, 0);
  EXPECT_EQ(c.size, 1);
  EXPECT_EQ(c.gather("rows"), std::vector<std::string>{"rows"});
}

}  // namespace
}  // namespace mooncake::eval
