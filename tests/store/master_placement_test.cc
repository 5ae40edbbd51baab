// Placement by free capacity and segments added while the master runs (issue 33, item 4): new
// puts spread over the ranks in proportion to their free bytes, so store ranks that join a
// filled store take their share, not every write (Mooncake's #2430).
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>

#include "store/master.h"

namespace mooncake::store {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kObject = 64 * 1024;

Status Put(MetadataMaster& m, const std::string& key, uint64_t size, uint32_t replicas = 1) {
  auto r = m.PutStart(key, size, ReplicateConfig{.replicas = replicas});
  if (!r.ok()) return r.status();
  return m.PutEnd(key, 42);
}

// Three ranks of 256 MiB filled to 70 %, then two empty ranks of 256 MiB join: 1,000 puts of
// 64 KiB (62.5 MiB, under a tenth of the 768 MiB free) must land on each rank in proportion to
// its free bytes at the join (30 / 290 each for the old ranks, 100 / 290 each for the new),
// within 5 points (a binomial's standard deviation here is at most 1.6 points). "Emptiest
// first" sends all 1,000 to the newcomers.
TEST(MasterPlacementTest, PutsAfterAJoinSpreadByFreeCapacity) {
  ManualClock clock;
  MetadataMaster m(MasterConfig{}, clock);
  const uint64_t capacity = 256 * kMiB;
  for (int r = 1; r <= 3; ++r) ASSERT_TRUE(m.AddSegment(Rank{r}, capacity).ok());
  const uint64_t fill = capacity * 7 / 10 / kObject * 3;
  for (uint64_t i = 0; i < fill; ++i) {
    ASSERT_TRUE(Put(m, "fill-" + std::to_string(i), kObject).ok());
  }
  std::map<int, double> free_share;
  for (int r = 1; r <= 3; ++r) {
    EXPECT_NEAR(static_cast<double>(m.SegmentStats(Rank{r})->used) / capacity, 0.70, 0.02);
  }
  // The join: segments added while the master holds objects.
  for (int r = 4; r <= 5; ++r) ASSERT_TRUE(m.AddSegment(Rank{r}, capacity).ok());
  uint64_t total_free = 0;
  for (int r = 1; r <= 5; ++r) total_free += m.SegmentStats(Rank{r})->free;
  for (int r = 1; r <= 5; ++r) {
    free_share[r] = static_cast<double>(m.SegmentStats(Rank{r})->free) / total_free;
  }
  std::map<int, int> landed;
  for (int i = 0; i < 1000; ++i) {
    auto where = m.PutStart("new-" + std::to_string(i), kObject, ReplicateConfig{});
    ASSERT_TRUE(where.ok()) << where.status().ToString();
    ++landed[(*where)[0].rank.value];
  }
  std::cout << "1000 puts landed on ranks 1..5:";
  for (int r = 1; r <= 5; ++r) std::cout << " " << landed[r];
  std::cout << "\n";
  for (int r = 1; r <= 5; ++r) {
    EXPECT_NEAR(landed[r] / 1000.0, free_share[r], 0.05)
        << "rank " << r << " took " << landed[r] << " of 1000 puts";
  }
}

// With two replicas the second is drawn the same way, on another rank.
TEST(MasterPlacementTest, ReplicasAreDrawnOnDistinctRanks) {
  ManualClock clock;
  MetadataMaster m(MasterConfig{}, clock);
  for (int r = 1; r <= 3; ++r) ASSERT_TRUE(m.AddSegment(Rank{r}, 64 * kMiB).ok());
  std::map<int, int> landed;
  for (int i = 0; i < 600; ++i) {
    auto where = m.PutStart("k" + std::to_string(i), 4096, ReplicateConfig{.replicas = 2});
    ASSERT_TRUE(where.ok());
    ASSERT_EQ(where->size(), 2u);
    EXPECT_NE((*where)[0].rank, (*where)[1].rank);
    for (const auto& loc : *where) ++landed[loc.rank.value];
  }
  for (int r = 1; r <= 3; ++r) EXPECT_NEAR(landed[r], 400, 80) << "rank " << r;
}

// A rank whose free bytes cannot hold the object weighs nothing: the put goes where it fits
// without evicting anything.
TEST(MasterPlacementTest, ARankTooFullForTheObjectIsNotDrawn) {
  ManualClock clock;
  MasterConfig cfg;
  cfg.high_watermark = 1.0;  // no watermark evictions: only the placement decides
  MetadataMaster m(cfg, clock);
  ASSERT_TRUE(m.AddSegment(Rank{1}, 4 * kMiB).ok());
  ASSERT_TRUE(Put(m, "big", 4 * kMiB - kObject / 2).ok());  // rank 1 has less than kObject
  ASSERT_TRUE(m.AddSegment(Rank{2}, 4 * kMiB).ok());
  for (int i = 0; i < 50; ++i) {
    auto where = m.PutStart("k" + std::to_string(i), kObject, ReplicateConfig{});
    ASSERT_TRUE(where.ok());
    EXPECT_EQ((*where)[0].rank, Rank{2});
  }
  EXPECT_EQ(m.Stats().evicted_replicas, 0u);
}

}  // namespace
}  // namespace mooncake::store
