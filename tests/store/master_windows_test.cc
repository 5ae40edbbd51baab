// The master's protection windows: a region that someone may still read or write outside the
// master's sight (a re-replication's source, a revoked put's writer) goes to no new put before
// that reader's or writer's deadline.
#include <gtest/gtest.h>

#include "store/master.h"

namespace mooncake::store {
namespace {

using std::chrono::seconds;
constexpr uint64_t kObj = 64 * 1024;

bool Overlaps(const ReplicaLocation& a, const ReplicaLocation& b) {
  return a.rank == b.rank && a.tier == b.tier && a.offset < b.offset + b.length &&
         b.offset < a.offset + a.length;
}

class MasterWindowsTest : public ::testing::Test {
 protected:
  // Ranks 1..`ranks` of `slots` objects each; a 10 s lease, a 30 s put timeout.
  MetadataMaster& Make(int ranks, uint64_t slots) {
    MasterConfig cfg;
    cfg.lease = seconds(10);
    cfg.put_timeout = seconds(30);
    master_ = std::make_unique<MetadataMaster>(cfg, clock_);
    for (int r = 1; r <= ranks; ++r) EXPECT_TRUE(master_->AddSegment(Rank{r}, slots * kObj).ok());
    return *master_;
  }
  // A put of one object that prefers `rank`; its regions.
  std::vector<ReplicaLocation> PutOn(const std::string& key, int rank, uint32_t replicas = 1) {
    auto r = master_->PutStart(
        key, kObj, ReplicateConfig{.replicas = replicas, .preferred_ranks = {Rank{rank}}});
    EXPECT_TRUE(r.ok()) << key << ": " << r.status().ToString();
    return r.ok() ? *r : std::vector<ReplicaLocation>{};
  }
  ManualClock clock_;
  std::unique_ptr<MetadataMaster> master_;
};

// A copy may read its source for its whole deadline (30 s here), far beyond the 10 s lease the
// source had: until then neither eviction nor a remove frees it, so no put is placed on it.
TEST_F(MasterWindowsTest, ACopySourceGoesToNoPutBeforeTheCopysDeadline) {
  auto& m = Make(3, 2);
  auto placed = PutOn("k", 1, 2);
  ASSERT_EQ(placed.size(), 2u);
  ASSERT_TRUE(m.PutEnd("k", 7).ok());
  const Rank other = placed[0].rank == Rank{1} ? placed[1].rank : placed[0].rank;
  ASSERT_TRUE(m.RemoveSegment(other).ok());  // "k" is left with its replica on rank 1
  auto orders = m.StartCopies(8);
  ASSERT_EQ(orders.size(), 1u);
  const ReplicaLocation source = orders[0].from;
  ASSERT_EQ(source.rank, Rank{1});
  EXPECT_EQ(orders[0].timeout, seconds(30));

  clock_.Advance(seconds(20));  // past any lease, before the copy's deadline
  EXPECT_EQ(m.Remove("k").code(), ErrorCode::kBusy) << "'k' is removable while copied from";
  // Rank 1 fills up: the first put takes its free slot (and passes the watermark, which would
  // evict "k"), the second would need "k"'s slot and goes to rank 3 instead.
  for (int i = 0; i < 2; ++i) {
    for (const ReplicaLocation& loc : PutOn("new" + std::to_string(i), 1)) {
      EXPECT_FALSE(Overlaps(loc, source))
          << "put new" << i << " got the region copy " << orders[0].ticket << " still reads";
    }
  }

  clock_.Advance(seconds(11));  // the copy's deadline has passed: the source may go
  bool reused = false;
  for (const ReplicaLocation& loc : PutOn("late", 1)) reused = reused || Overlaps(loc, source);
  EXPECT_TRUE(reused) << "after the copy's deadline rank 1's slot of 'k' is evictable again";
}

// A copy that completed no longer holds its source: the object is removable at once.
TEST_F(MasterWindowsTest, ACompletedCopyReleasesItsSource) {
  auto& m = Make(3, 2);
  auto placed = PutOn("k", 1, 2);
  ASSERT_TRUE(m.PutEnd("k", 7).ok());
  ASSERT_TRUE(m.RemoveSegment(placed[1].rank).ok());
  auto orders = m.StartCopies(8);
  ASSERT_EQ(orders.size(), 1u);
  ASSERT_TRUE(m.CompleteCopy(orders[0].ticket, true).ok());
  EXPECT_TRUE(m.Remove("k").ok());
}

// A failed copy may have given up on a write that still lands in its target region: the region
// is reserved until the copy's deadline.
TEST_F(MasterWindowsTest, AFailedCopysTargetGoesToNoPutBeforeTheCopysDeadline) {
  auto& m = Make(3, 1);
  auto placed = PutOn("k", 1, 2);
  ASSERT_TRUE(m.PutEnd("k", 7).ok());
  ASSERT_TRUE(m.RemoveSegment(placed[1].rank).ok());
  auto orders = m.StartCopies(8);
  ASSERT_EQ(orders.size(), 1u);
  const ReplicaLocation target = orders[0].to;
  ASSERT_TRUE(m.CompleteCopy(orders[0].ticket, false).ok());
  clock_.Advance(seconds(29));
  auto r = m.PutStart("n", kObj, ReplicateConfig{.preferred_ranks = {target.rank}});
  if (r.ok()) {
    for (const ReplicaLocation& loc : *r) EXPECT_FALSE(Overlaps(loc, target));
    ASSERT_TRUE(m.PutRevoke("n").ok());
  }
  clock_.Advance(seconds(31));  // past both deadlines
  EXPECT_TRUE(m.PutStart("m", kObj, ReplicateConfig{.preferred_ranks = {target.rank}}).ok());
}

// PutRevoke after a write that timed out: that write may still land, until the put's deadline.
TEST_F(MasterWindowsTest, ARevokedPutsRegionGoesToNoPutBeforeItsDeadline) {
  auto& m = Make(2, 1);
  auto revoked = PutOn("w", 1);
  ASSERT_EQ(revoked.size(), 1u);
  clock_.Advance(seconds(5));
  ASSERT_TRUE(m.PutRevoke("w").ok());
  EXPECT_EQ(m.PutEnd("w", 1).code(), ErrorCode::kNotFound);
  for (int i = 0; i < 2; ++i) {  // one fits on rank 2, the next finds no room
    auto r = m.PutStart("new" + std::to_string(i), kObj,
                        ReplicateConfig{.preferred_ranks = {revoked[0].rank}});
    if (!r.ok()) continue;
    for (const ReplicaLocation& loc : *r) {
      EXPECT_FALSE(Overlaps(loc, revoked[0]))
          << "put new" << i << " got the region revoked put 'w' may still be writing";
    }
  }
  EXPECT_GT(m.SegmentStats(revoked[0].rank)->used, 0u);
  clock_.Advance(seconds(26));  // the put's deadline (30 s after its start) has passed
  m.Tick();
  EXPECT_EQ(m.SegmentStats(revoked[0].rank)->used, 0u);
  auto late = PutOn("late", revoked[0].rank.value);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_TRUE(Overlaps(late[0], revoked[0]));
}

// A put with a replica on a rank that died is revoked at once, but its writes to the surviving
// ranks may still be running: those regions wait for the put's deadline too.
TEST_F(MasterWindowsTest, APutRevokedByARankDeathKeepsItsLiveRegionsUntilItsDeadline) {
  auto& m = Make(3, 1);
  auto placed = PutOn("w", 1, 2);
  ASSERT_EQ(placed.size(), 2u);
  const ReplicaLocation live = placed[0].rank == Rank{1} ? placed[0] : placed[1];
  const Rank dead = placed[0].rank == Rank{1} ? placed[1].rank : placed[0].rank;
  ASSERT_TRUE(m.RemoveSegment(dead).ok());
  EXPECT_EQ(m.Stats().revoked_puts, 1u);
  EXPECT_EQ(m.SegmentStats(live.rank)->used, kObj);
  auto r = m.PutStart("n", kObj, ReplicateConfig{.preferred_ranks = {live.rank}});
  if (r.ok()) {
    for (const ReplicaLocation& loc : *r) EXPECT_FALSE(Overlaps(loc, live));
  }
  clock_.Advance(seconds(31));
  m.Tick();
  EXPECT_EQ(m.SegmentStats(live.rank)->used, 0u);
}

}  // namespace
}  // namespace mooncake::store
