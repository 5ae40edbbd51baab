// The store's memory check at start (store/node/host_memory.h): store.dram times the store ranks of
// each host against what that host has available, and who reports the touch progress.
#include "store/node/host_memory.h"

#include <gtest/gtest.h>

#include <vector>

namespace mooncake::store {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

RankMemory On(const std::string& host, bool store, uint64_t available) {
  return RankMemory{host, store, available, "MemAvailable in /proc/meminfo"};
}

TEST(StoreMemoryCheck, ThreeStoreRanksOfEightGiBDoNotFitTwentyGiB) {
  // mpirun -np 4 mooncake --job.mode store --store.dram 8GiB on one 24 GiB host.
  std::vector<RankMemory> ranks = {On("vm", false, 20 * kGiB), On("vm", true, 20 * kGiB),
                                   On("vm", true, 20 * kGiB), On("vm", true, 20 * kGiB)};
  Status s = CheckStoreMemory(ranks, 8 * kGiB);
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument);
  {
    const std::string& m = s.message();
    EXPECT_NE(m.find("store.dram = 8.00 GiB x 3 store rank(s) on host vm = 24.00 GiB"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("vm has 20.00 GiB available (MemAvailable in /proc/meminfo)"),
              std::string::npos)
        << m;
  }
}

TEST(StoreMemoryCheck, TheSameRanksFitWithTwoGiBEach) {
  std::vector<RankMemory> ranks = {On("vm", false, 20 * kGiB), On("vm", true, 20 * kGiB),
                                   On("vm", true, 20 * kGiB), On("vm", true, 20 * kGiB)};
  EXPECT_TRUE(CheckStoreMemory(ranks, 2 * kGiB).ok());
}

TEST(StoreMemoryCheck, EachHostCountsOnlyItsOwnStoreRanks) {
  // Two hosts of 10 GiB, two store ranks of 6 GiB: one per host fits, both on one does not.
  std::vector<RankMemory> spread = {On("a", false, 10 * kGiB), On("a", true, 10 * kGiB),
                                    On("b", true, 10 * kGiB)};
  EXPECT_TRUE(CheckStoreMemory(spread, 6 * kGiB).ok());
  std::vector<RankMemory> packed = {On("a", true, 10 * kGiB), On("a", true, 10 * kGiB),
                                    On("b", false, 10 * kGiB)};
  Status s = CheckStoreMemory(packed, 6 * kGiB);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("on host a = 12.00 GiB"), std::string::npos) << s.message();
}

TEST(StoreMemoryCheck, AnUnreadableFigureIsNotARefusal) {
  std::vector<RankMemory> ranks = {On("vm", false, 0), On("vm", true, 0)};
  EXPECT_TRUE(CheckStoreMemory(ranks, 8 * kGiB).ok());
}

TEST(StoreMemoryCheck, TheFirstStoreRankOfEachHostReportsProgress) {
  std::vector<RankMemory> ranks = {On("a", false, kGiB), On("a", true, kGiB), On("b", true, kGiB),
                                   On("a", true, kGiB)};
  EXPECT_EQ(FirstStoreRankOnHost(ranks, 0), -1);  // not a store rank
  EXPECT_EQ(FirstStoreRankOnHost(ranks, 1), 1);
  EXPECT_EQ(FirstStoreRankOnHost(ranks, 2), 2);
  EXPECT_EQ(FirstStoreRankOnHost(ranks, 3), 1);
}

TEST(StoreMemoryCheck, AvailableMemoryIsReadFromThisHost) {
  std::string source;
  EXPECT_GT(AvailableMemory(&source), 0u);
  EXPECT_FALSE(source.empty());
}

TEST(TouchPages, ZeroesEverythingAndReportsProgressBeforeTheEnd) {
  std::vector<std::byte> data(200u << 20, std::byte{7});
  std::vector<uint64_t> reported;
  TouchPages(data.data(), data.size(), std::chrono::nanoseconds(1),
             [&](uint64_t done, std::chrono::nanoseconds) { reported.push_back(done); });
  for (size_t i = 0; i < data.size(); i += 4096) ASSERT_EQ(data[i], std::byte{0}) << i;
  EXPECT_EQ(data.back(), std::byte{0});
  ASSERT_FALSE(reported.empty());
  EXPECT_LT(reported.back(), data.size());  // the end itself is not a progress line
}

}  // namespace
}  // namespace mooncake::store
