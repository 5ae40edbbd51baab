// MetadataMaster under WhenFull: kKeep (a store) never lets an object's last copy leave DRAM
// unless the second tier took it, and says why a put finds no room; kEvict (a KV cache) drops
// it and counts the drop.
#include <gtest/gtest.h>

#include "store/master.h"

namespace mooncake::store {
namespace {

using std::chrono::seconds;
constexpr uint64_t kObj = 10 * 1024;

// Takes (spills) or declines every eviction; remembers what it saw.
class Sink : public EvictionSink {
 public:
  bool OnEvict(const EvictedReplica& r) override {
    seen.push_back(r);
    return take;
  }
  std::string WhyDeclined(Rank rank) const override {
    return "the SSD tier of store rank " + std::to_string(rank.value) + " is full";
  }
  bool take = false;
  std::vector<EvictedReplica> seen;
};

class WhenFullTest : public ::testing::Test {
 protected:
  // `ranks` ranks of 100 objects each.
  MetadataMaster& Make(WhenFull policy, int ranks = 1) {
    MasterConfig cfg;
    cfg.when_full = policy;
    master_ = std::make_unique<MetadataMaster>(cfg, clock_, &sink_);
    for (int r = 1; r <= ranks; ++r) EXPECT_TRUE(master_->AddSegment(Rank{r}, 100 * kObj).ok());
    return *master_;
  }
  Status Put(const std::string& key, ReplicateConfig cfg = {}) {
    auto r = master_->PutStart(key, kObj, cfg);
    if (!r.ok()) return r.status();
    return master_->PutEnd(key, 42);
  }
  static std::string Key(int i) { return "obj" + std::to_string(i); }
  ManualClock clock_;
  Sink sink_;
  std::unique_ptr<MetadataMaster> master_;
};

TEST_F(WhenFullTest, KeepHoldsLastCopiesTheSinkDeclinesAndNewPutsGetNoSpaceSayingWhy) {
  auto& m = Make(WhenFull::kKeep);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(Put(Key(i)).ok()) << i;  // past the watermark
  clock_.Advance(seconds(11));                                       // no lease protects them
  Status s = Put("one-more");
  EXPECT_EQ(s.code(), ErrorCode::kNoSpace);
  EXPECT_NE(s.message().find("store rank 1: DRAM full"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("the SSD tier of store rank 1 is full"), std::string::npos)
      << s.ToString();
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(m.Exists(Key(i)).ok()) << i;
  EXPECT_FALSE(sink_.seen.empty());  // the sink was asked, and declined
  EXPECT_EQ(m.Stats().evicted_replicas, 0u);
  EXPECT_EQ(m.Stats().dropped_unspilled, 0u);
  EXPECT_EQ(m.Stats().puts_refused_no_space, 1u);
  // Once the sink takes spills again, the put makes room by spilling: refused while the spill
  // runs (its region is still reserved), accepted once the block is on SSD.
  sink_.take = true;
  sink_.seen.clear();
  clock_.Advance(seconds(11));  // the leases Exists took
  EXPECT_EQ(Put("one-more").code(), ErrorCode::kNoSpace);
  ASSERT_FALSE(sink_.seen.empty());
  auto spill_all = [&] {
    for (const EvictedReplica& e : sink_.seen) {
      ReplicaLocation ssd{Rank{1}, Tier::kSsd, e.ticket, kObj};
      ASSERT_TRUE(m.CompleteSpill(e.ticket, ssd).ok());
    }
    sink_.seen.clear();
  };
  spill_all();
  EXPECT_TRUE(Put("one-more").ok());
  spill_all();  // the watermark it crossed
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(m.Exists(Key(i)).ok()) << i;
}

TEST_F(WhenFullTest, KeepTurnsAFailedSpillBackIntoAVisibleDramReplica) {
  sink_.take = true;
  auto& m = Make(WhenFull::kKeep);
  for (int i = 0; i < 91; ++i) ASSERT_TRUE(Put(Key(i)).ok());  // 91 %: five spills
  ASSERT_EQ(sink_.seen.size(), 5u);
  const uint64_t used = m.SegmentStats(Rank{1})->used;
  ASSERT_TRUE(m.CompleteSpill(sink_.seen[1].ticket, std::nullopt).ok());  // the write failed
  auto v = m.Get(Key(1));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(v->replicas.size(), 1u);
  EXPECT_EQ(v->replicas[0], sink_.seen[1].location);  // the same bytes, never freed
  EXPECT_EQ(m.SegmentStats(Rank{1})->used, used);
  EXPECT_EQ(m.Stats().spills_failed_kept, 1u);
  EXPECT_EQ(m.Stats().dropped_unspilled, 0u);
}

TEST_F(WhenFullTest, KeepStillDropsACopyThatHasAnotherReplica) {
  auto& m = Make(WhenFull::kKeep, 2);
  for (int i = 0; i < 95; ++i) ASSERT_TRUE(Put(Key(i), ReplicateConfig{.replicas = 2}).ok()) << i;
  EXPECT_GT(m.Stats().evicted_replicas, 0u);  // rank 1 dropped copies rank 2 still holds
  for (int i = 0; i < 95; ++i) EXPECT_TRUE(m.Exists(Key(i)).ok()) << i;
  EXPECT_EQ(m.Stats().dropped_unspilled, 0u);
}

TEST_F(WhenFullTest, EvictDropsWhatTheSinkDeclinesOrFailsAndCountsIt) {
  auto& m = Make(WhenFull::kEvict);
  for (int i = 0; i < 91; ++i) ASSERT_TRUE(Put(Key(i)).ok());
  EXPECT_EQ(m.Stats().dropped_unspilled, 5u);
  EXPECT_EQ(m.Exists(Key(0)).code(), ErrorCode::kNotFound);
  sink_.take = true;
  sink_.seen.clear();
  for (int i = 91; i < 96; ++i) ASSERT_TRUE(Put(Key(i)).ok());
  ASSERT_FALSE(sink_.seen.empty());
  ASSERT_TRUE(m.CompleteSpill(sink_.seen[0].ticket, std::nullopt).ok());
  EXPECT_EQ(m.Stats().dropped_unspilled, 6u);
  EXPECT_EQ(m.Exists(sink_.seen[0].key).code(), ErrorCode::kNotFound);
}

TEST_F(WhenFullTest, AnSsdCopyDroppedByTheTiersLruIsCounted) {
  sink_.take = true;
  auto& m = Make(WhenFull::kEvict);
  for (int i = 0; i < 91; ++i) ASSERT_TRUE(Put(Key(i)).ok());
  ReplicaLocation ssd{Rank{1}, Tier::kSsd, 7, kObj};
  ASSERT_TRUE(m.CompleteSpill(sink_.seen[0].ticket, ssd).ok());
  ASSERT_TRUE(m.DropReplica(sink_.seen[0].key, ssd).ok());
  EXPECT_EQ(m.Stats().dropped_by_tier, 1u);
}

}  // namespace
}  // namespace mooncake::store
