// MetadataMaster::MarkSuspect: a store rank a client found failing gets no new replicas until
// the mark expires or the rank's segment is removed (issue 27, item 6).
#include <gtest/gtest.h>

#include <set>

#include "store/master.h"

namespace mooncake::store {
namespace {

using std::chrono::seconds;

class MasterSuspectTest : public ::testing::Test {
 protected:
  MetadataMaster& Make(int ranks) {
    MasterConfig cfg;
    cfg.suspect_for = seconds(20);
    master_ = std::make_unique<MetadataMaster>(cfg, clock_);
    for (int r = 1; r <= ranks; ++r) EXPECT_TRUE(master_->AddSegment(Rank{r}, 1 << 20).ok());
    return *master_;
  }
  // The ranks `key`'s put was placed on (the put is ended, so the space stays taken).
  std::set<int> Place(const std::string& key, uint32_t replicas) {
    auto r = master_->PutStart(key, 1000, ReplicateConfig{.replicas = replicas});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::set<int> ranks;
    if (!r.ok()) return ranks;
    for (const auto& loc : *r) ranks.insert(loc.rank.value);
    EXPECT_TRUE(master_->PutEnd(key, 1).ok());
    return ranks;
  }
  ManualClock clock_;
  std::unique_ptr<MetadataMaster> master_;
};

TEST_F(MasterSuspectTest, ASuspectedRankGetsNoNewReplicaUntilTheMarkExpires) {
  auto& m = Make(3);
  // Rank 1 has the most free bytes from here on, as a dead rank that takes nothing new would,
  // so it takes puts (placement goes by free bytes, docs/STORE.md).
  ASSERT_TRUE(
      m.PutStart("a", 1000, ReplicateConfig{.replicas = 2, .preferred_ranks = {Rank{2}, Rank{3}}})
          .ok());
  auto lands_on_rank_1 = [&](const std::string& prefix) {
    bool landed = false;
    for (int i = 0; i < 3; ++i) landed |= Place(prefix + std::to_string(i), 1).count(1) > 0;
    return landed;
  };
  EXPECT_TRUE(lands_on_rank_1("unsuspected"));
  auto fresh = m.MarkSuspect(Rank{1});
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(*fresh);
  EXPECT_FALSE(*m.MarkSuspect(Rank{1}));  // already suspected
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Place("k" + std::to_string(i), 2), (std::set<int>{2, 3}));
  }
  clock_.Advance(seconds(21));
  EXPECT_TRUE(lands_on_rank_1("after"));  // used again
}

TEST_F(MasterSuspectTest, WithTwoRanksAndOneSuspectedPutsPlaceOneReplicaNotNone) {
  auto& m = Make(2);
  ASSERT_TRUE(m.MarkSuspect(Rank{2}).ok());
  EXPECT_EQ(Place("k", 2), (std::set<int>{1}));
}

TEST_F(MasterSuspectTest, WhenEveryRankIsSuspectedTheyAreUsedRatherThanRefusingThePut) {
  auto& m = Make(2);
  ASSERT_TRUE(m.MarkSuspect(Rank{1}).ok());
  ASSERT_TRUE(m.MarkSuspect(Rank{2}).ok());
  EXPECT_EQ(Place("k", 2), (std::set<int>{1, 2}));
}

TEST_F(MasterSuspectTest, RemovingTheSegmentClearsTheMarkAndUnknownRanksAreNotFound) {
  auto& m = Make(3);
  ASSERT_TRUE(m.MarkSuspect(Rank{3}).ok());
  ASSERT_TRUE(m.RemoveSegment(Rank{3}).ok());
  EXPECT_EQ(m.MarkSuspect(Rank{3}).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(m.MarkSuspect(Rank{9}).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(Place("k", 2), (std::set<int>{1, 2}));
}

}  // namespace
}  // namespace mooncake::store
