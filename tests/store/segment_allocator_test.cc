#include "store/segment_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace mooncake::store {
namespace {

TEST(SegmentAllocatorTest, AllocationsAreAlignedAndDisjoint) {
  SegmentAllocator a(1 << 20);
  std::vector<Allocation> live;
  for (uint64_t size : {1u, 63u, 64u, 65u, 4096u, 100000u}) {
    auto r = a.Allocate(size);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->offset % 64, 0u);
    EXPECT_GE(r->size, size);
    live.push_back(*r);
  }
  std::sort(live.begin(), live.end(), [](auto& x, auto& y) { return x.offset < y.offset; });
  for (size_t i = 1; i < live.size(); ++i) {
    EXPECT_LE(live[i - 1].offset + live[i - 1].size, live[i].offset);
  }
}

TEST(SegmentAllocatorTest, FreeingEverythingCoalescesBackToOneRegion) {
  SegmentAllocator a(1 << 20);
  std::vector<Allocation> live;
  for (int i = 0; i < 100; ++i) live.push_back(*a.Allocate(4096 + 64 * i));
  // Free in an interleaved order so both merge directions are exercised.
  for (size_t i = 0; i < live.size(); i += 2) ASSERT_TRUE(a.Free(live[i]).ok());
  for (size_t i = 1; i < live.size(); i += 2) ASSERT_TRUE(a.Free(live[i]).ok());
  auto s = a.Stats();
  EXPECT_EQ(s.used, 0u);
  EXPECT_EQ(s.largest_free, uint64_t{1} << 20);
  EXPECT_DOUBLE_EQ(s.fragmentation, 0.0);
}

TEST(SegmentAllocatorTest, TooLargeReturnsNoSpaceAndChangesNothing) {
  SegmentAllocator a(1 << 20);
  auto x = *a.Allocate(300000);
  auto before = a.Stats();
  auto r = a.Allocate(before.largest_free + 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNoSpace);
  auto after = a.Stats();
  EXPECT_EQ(after.used, before.used);
  EXPECT_EQ(after.largest_free, before.largest_free);
  EXPECT_EQ(after.allocations, 1u);
  EXPECT_EQ(a.Allocate(2u << 20).status().code(), ErrorCode::kNoSpace);
  EXPECT_TRUE(a.Free(x).ok());
}

TEST(SegmentAllocatorTest, RequestEqualToLargestFreeRegionSucceeds) {
  SegmentAllocator a(1 << 20);
  auto x = *a.Allocate(1000 * 64);
  uint64_t largest = a.LargestFree();
  auto r = a.Allocate(largest);  // needs the exact-class fallback
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(a.free_bytes(), 0u);
  EXPECT_EQ(a.Allocate(1).status().code(), ErrorCode::kNoSpace);
  EXPECT_TRUE(a.Free(x).ok());
}

TEST(SegmentAllocatorTest, DoubleFreeAndForgedHandlesAreRejected) {
  SegmentAllocator a(1 << 16);
  auto x = *a.Allocate(128);
  ASSERT_TRUE(a.Free(x).ok());
  EXPECT_EQ(a.Free(x).code(), ErrorCode::kInvalidArgument);
  Allocation forged{64, 64, 12345};
  EXPECT_EQ(a.Free(forged).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(a.Allocate(0).status().code(), ErrorCode::kInvalidArgument);
}

TEST(SegmentAllocatorTest, FragmentationIsReportedWhenFreeSpaceIsSplit) {
  SegmentAllocator a(64 * 1024);
  std::vector<Allocation> live;
  for (int i = 0; i < 16; ++i) live.push_back(*a.Allocate(4096));
  EXPECT_EQ(a.free_bytes(), 0u);
  for (int i = 0; i < 16; i += 2) ASSERT_TRUE(a.Free(live[i]).ok());  // 8 holes of 4 KiB
  auto s = a.Stats();
  EXPECT_EQ(s.free, 8u * 4096);
  EXPECT_EQ(s.largest_free, 4096u);
  EXPECT_NEAR(s.fragmentation, 1.0 - 1.0 / 8, 1e-9);
  EXPECT_EQ(a.Allocate(8192).status().code(), ErrorCode::kNoSpace);
}

TEST(SegmentAllocatorTest, RandomWorkloadKeepsAccountingExact) {
  SegmentAllocator a(8 << 20);
  std::mt19937_64 rng(7);
  std::vector<Allocation> live;
  uint64_t expected_used = 0;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      uint64_t size = 1 + rng() % (256 * 1024);
      auto r = a.Allocate(size);
      if (r.ok()) {
        live.push_back(*r);
        expected_used += r->size;
      } else {
        ASSERT_EQ(r.status().code(), ErrorCode::kNoSpace);
        ASSERT_LT(a.LargestFree(), size);  // NoSpace only when nothing fits
      }
    } else {
      size_t i = rng() % live.size();
      ASSERT_TRUE(a.Free(live[i]).ok());
      expected_used -= live[i].size;
      live[i] = live.back();
      live.pop_back();
    }
    ASSERT_EQ(a.used(), expected_used);
  }
  std::sort(live.begin(), live.end(), [](auto& x, auto& y) { return x.offset < y.offset; });
  for (size_t i = 1; i < live.size(); ++i) {
    ASSERT_LE(live[i - 1].offset + live[i - 1].size, live[i].offset);
  }
  for (auto& x : live) ASSERT_TRUE(a.Free(x).ok());
  EXPECT_EQ(a.LargestFree(), a.capacity());
}

}  // namespace
}  // namespace mooncake::store
