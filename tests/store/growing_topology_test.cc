// GrowingTopology (store/net/growing_topology.h): a client's view of the store ranks grows when
// the master names a rank that joined since; the resolver runs once per new rank, even when
// many threads miss it at once, and a snapshot taken before stays valid.
#include "store/net/growing_topology.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace mooncake::store {
namespace {

StoreTopology ThreeRanks() {
  StoreTopology t;
  for (int r = 1; r <= 3; ++r) t.segments.push_back({Rank{r}, uint64_t(r) << 32, 1 << 20});
  return t;
}

ReplicaLocation At(int rank, uint64_t offset) {
  ReplicaLocation loc;
  loc.rank = Rank{rank};
  loc.tier = Tier::kDram;
  loc.offset = offset;
  loc.length = 4096;
  return loc;
}

TEST(GrowingTopologyTest, AnUnknownRankIsResolvedOnceAndThenFoundWithoutTheResolver) {
  GrowingTopology t(ThreeRanks());
  const StoreTopology& before = t.Now();
  std::atomic<int> asked{0};
  t.SetResolver([&](Rank r) -> Result<StoreSegment> {
    ++asked;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // an attach takes a while
    return StoreSegment{r, uint64_t{9} << 32, 1 << 20};
  });
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto a = t.RemoteAddress(At(260, 8192));
      if (a.ok() && *a == (uint64_t{9} << 32) + 8192) ++ok;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(asked.load(), 1);
  EXPECT_EQ(before.segments.size(), 3u);  // the old snapshot is intact
  ASSERT_EQ(t.Now().segments.size(), 4u);
  EXPECT_EQ(t.Now().segments.back().rank.value, 260);  // ascending rank
  EXPECT_EQ(*t.RemoteAddress(At(2, 0)), uint64_t{2} << 32);
}

TEST(GrowingTopologyTest, WithoutAResolverOrWhenItFailsAMissStaysAnErrorNamingTheRank) {
  GrowingTopology t(ThreeRanks());
  EXPECT_FALSE(t.RemoteAddress(At(7, 0)).ok());
  t.SetResolver([](Rank r) -> Result<StoreSegment> {
    return NotFound("no store rank " + std::to_string(r.value));
  });
  auto a = t.RemoteAddress(At(7, 0));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(a.status().message().find("store rank 7"), std::string::npos);
  // A known rank with a range outside its segment is refused, not resolved again.
  EXPECT_EQ(t.RemoteAddress(At(1, 1 << 20)).status().code(), ErrorCode::kProtocolError);
  EXPECT_EQ(t.Add({Rank{1}, 0, 1}).code(), ErrorCode::kAlreadyExists);
}

}  // namespace
}  // namespace mooncake::store
