// MetadataMaster's drain (issue 33, item 4): a draining rank takes nothing new, its objects are
// copied elsewhere by StartCopies, its replicas go once they are, and a region a get's lease may
// still be reading is held until the lease ends.
#include <gtest/gtest.h>

#include "store/master.h"

namespace mooncake::store {
namespace {

using std::chrono::seconds;

TEST(MasterDrainTest, ADrainedRankTakesNothingNewAndEndsEmptyOnceItsReadersAreDone) {
  ManualClock clock;
  MetadataMaster m(MasterConfig{}, clock);
  for (int r = 1; r <= 3; ++r) ASSERT_TRUE(m.AddSegment(Rank{r}, 1 << 20).ok());
  ASSERT_TRUE(m.PutStart("a", 1000, ReplicateConfig{.preferred_ranks = {Rank{1}}}).ok());
  ASSERT_TRUE(m.PutEnd("a", 1).ok());
  ASSERT_TRUE(
      m.PutStart("b", 1000, ReplicateConfig{.replicas = 2, .preferred_ranks = {Rank{1}, Rank{2}}})
          .ok());
  ASSERT_TRUE(m.PutEnd("b", 2).ok());
  ASSERT_TRUE(m.Get("a").ok());  // a reader holds a lease on a's only replica, on rank 1

  EXPECT_EQ(m.Drain(Rank{1}).status().code(), ErrorCode::kInvalidArgument);  // not draining
  ASSERT_TRUE(m.BeginDrain(Rank{1}).ok());
  EXPECT_EQ(m.BeginDrain(Rank{9}).code(), ErrorCode::kNotFound);
  EXPECT_EQ(m.Drain(Rank{1})->dram_replicas, 2u);
  EXPECT_EQ(m.RemoveDrained(Rank{1}).code(), ErrorCode::kBusy);
  for (int i = 0; i < 20; ++i) {
    auto where = m.PutStart("new" + std::to_string(i), 1000,
                            ReplicateConfig{.replicas = 2, .preferred_ranks = {Rank{1}}});
    ASSERT_TRUE(where.ok());
    for (const auto& loc : *where) EXPECT_NE(loc.rank, Rank{1}) << "a put on the draining rank";
  }

  auto orders = m.StartCopies(10);
  ASSERT_EQ(orders.size(), 2u);  // a (its only replica) and b (one of two) are copied
  for (const CopyOrder& order : orders) {
    EXPECT_NE(order.to.rank, Rank{1});
    if (order.key == "b") {
      EXPECT_NE(order.to.rank, Rank{2});  // b's other replica is there
    }
    ASSERT_TRUE(m.CompleteCopy(order.ticket, true).ok());
  }
  EXPECT_TRUE(m.StartCopies(10).empty());  // drops the replicas on rank 1
  auto state = *m.Drain(Rank{1});
  EXPECT_EQ(state.dram_replicas, 0u);
  EXPECT_GT(state.used_bytes, 0u);  // a's region: its reader's lease is still running
  EXPECT_FALSE(state.drained());
  for (const char* key : {"a", "b"}) {
    auto view = m.Get(key);
    ASSERT_TRUE(view.ok());
    EXPECT_EQ(view->replicas.size(), key == std::string("a") ? 1u : 2u) << key;
    for (const auto& loc : view->replicas) EXPECT_NE(loc.rank, Rank{1}) << key;
  }
  clock.Advance(seconds(11));
  EXPECT_TRUE(m.Drain(Rank{1})->drained());
  ASSERT_TRUE(m.RemoveDrained(Rank{1}).ok());
  EXPECT_EQ(m.SegmentStats(Rank{1}).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(m.Stats().objects_lost, 0u);
  EXPECT_EQ(m.Stats().removed_ranks, 0u);  // a leave, not a loss
}

}  // namespace
}  // namespace mooncake::store
