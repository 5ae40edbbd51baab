// StoreClient::Put while a store rank fails before the master declared it dead (issue 27, item
// 6): the put is revoked, the rank reported (kSuspectRanks) and the put placed on the others.
// The loopback transport stands in for a client whose endpoint to the rank broke: writes to it
// fail with PeerFailure, as UCX reports a killed peer's connection, while the master, not told,
// still counts the rank as live (and as the emptiest rank, it would keep choosing it).
#include <gtest/gtest.h>

#include <set>

#include "common/block_content.h"
#include "loopback_store.h"

namespace mooncake::store {
namespace {

using testing::LoopbackStore;
const uint64_t kTag = ModelTag("put-retry-test");

std::vector<std::byte> Value(uint64_t id) {
  std::vector<std::byte> v(4096);
  FillBlockContent({id, 0, kTag}, v);
  return v;
}

std::set<int> ReplicaRanks(LoopbackStore& store, const std::string& key) {
  auto view = store.service().WithMaster([&](MetadataMaster& m) { return m.Get(key); });
  std::set<int> ranks;
  if (view.ok()) {
    for (const auto& r : view->replicas) ranks.insert(r.rank.value);
  }
  return ranks;
}

testing::LoopbackStoreOptions WithoutMapping(int stores) {
  auto o = testing::Options(stores, 1);
  o.mapped = false;  // writes go through the transport, which fails those to the dead rank
  return o;
}

TEST(StorePutRetry, APutWhoseStoreRankFailsIsPlacedAgainOnTheOtherRanks) {
  LoopbackStore store(WithoutMapping(3));
  StoreClient& c = store.client(0);
  store.transport(store.client_rank(0)).MarkPeerDead(Rank{1}, "test: its endpoint broke");
  for (int i = 0; i < 20; ++i) {
    const std::string key = "k" + std::to_string(i);
    Status s = c.Put(key, Value(i), ReplicateConfig{.replicas = 2});
    ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
    EXPECT_EQ(ReplicaRanks(store, key), (std::set<int>{2, 3})) << key;
    std::vector<std::byte> out(4096);
    ASSERT_TRUE(c.Get(key, out).ok());
    EXPECT_TRUE(VerifyBlockContent({static_cast<uint64_t>(i), 0, kTag}, out));
  }
  auto stats = c.MasterStats();
  ASSERT_TRUE(stats.ok());
  // Only the first put went to rank 1 (revoked); the master avoided it afterwards.
  EXPECT_EQ(stats->revoked_puts, 1u);
}

TEST(StorePutRetry, WithEveryOtherRankTakenThePutIsPlacedDegraded) {
  LoopbackStore store(WithoutMapping(2));
  StoreClient& c = store.client(0);
  store.transport(store.client_rank(0)).MarkPeerDead(Rank{2}, "test: its endpoint broke");
  Status s = c.Put("k", Value(7), ReplicateConfig{.replicas = 2});
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ReplicaRanks(store, "k"), (std::set<int>{1}));
}

TEST(StorePutRetry, WhenEveryRankFailsThePutFailsWithPeerFailureAfterItsAttempts) {
  LoopbackStore store(WithoutMapping(2));
  StoreClient& c = store.client(0);
  for (int r : {1, 2}) {
    store.transport(store.client_rank(0)).MarkPeerDead(Rank{r}, "test: its endpoint broke");
  }
  Status s = c.Put("k", Value(7), ReplicateConfig{.replicas = 1});
  EXPECT_EQ(s.code(), ErrorCode::kPeerFailure) << s.ToString();
  auto stats = c.MasterStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->revoked_puts, static_cast<uint64_t>(kPutAttempts));
  EXPECT_EQ(stats->objects, 0u);
}

}  // namespace
}  // namespace mooncake::store
