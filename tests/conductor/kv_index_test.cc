#include "conductor/kv_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace mooncake::conductor {
namespace {

std::vector<BlockHash> Blocks(std::initializer_list<uint64_t> ids) {
  std::vector<BlockHash> v;
  for (auto i : ids) v.push_back(BlockHash{i});
  return v;
}

TEST(KvIndex, BestPrefixIsLongestHeldByOneInstance) {
  KvIndex idx(3, 0, false);
  idx.Store(0, Blocks({1, 2}));
  idx.Store(2, Blocks({1, 2, 3, 4}));
  idx.Store(1, Blocks({5}));
  auto q = Blocks({1, 2, 3, 4, 9});
  EXPECT_EQ(idx.LocalPrefix(0, q), 2);
  EXPECT_EQ(idx.LocalPrefix(1, q), 0);
  BestPrefix best = idx.FindBestPrefix(q);
  EXPECT_EQ(best.blocks, 4);
  EXPECT_EQ(best.instance, 2);
}

TEST(KvIndex, ReplicasCountInstancesAndDropOnEviction) {
  KvIndex idx(2, 2, false);
  idx.Store(0, Blocks({1, 2}));
  idx.Store(1, Blocks({1}));
  EXPECT_EQ(idx.Replicas(BlockHash{1}), 2);
  idx.Store(0, Blocks({3}));  // evicts 1 from instance 0
  EXPECT_EQ(idx.Replicas(BlockHash{1}), 1);
  EXPECT_EQ(idx.evictions(), 1u);
  EXPECT_EQ(idx.Occupancy(), 3u);
}

TEST(KvIndex, DroppedInstanceHoldsNothingAndItsReplicasGo) {
  KvIndex idx(2, 0, false);
  idx.Store(0, Blocks({1, 2}));
  idx.Store(1, Blocks({1, 2, 3}));
  idx.DropInstance(1);
  auto q = Blocks({1, 2, 3});
  EXPECT_EQ(idx.LocalPrefix(1, q), 0);
  EXPECT_EQ(idx.FindBestPrefix(q).instance, 0);
  EXPECT_EQ(idx.FindBestPrefix(q).blocks, 2);
  EXPECT_EQ(idx.Replicas(BlockHash{1}), 1);
  EXPECT_EQ(idx.Replicas(BlockHash{3}), 0);
  EXPECT_EQ(idx.Occupancy(), 2u);
  idx.Store(1, Blocks({3}));  // a cleared cache takes blocks again
  EXPECT_EQ(idx.Replicas(BlockHash{3}), 1);
}

TEST(KvIndex, ForgottenBlockIsHeldByNoInstance) {
  for (bool shared : {false, true}) {
    KvIndex idx(2, 0, shared);
    idx.Store(0, Blocks({1, 2, 3}));
    idx.Store(1, Blocks({1, 2}));
    idx.Forget(BlockHash{2});
    auto q = Blocks({1, 2, 3});
    EXPECT_EQ(idx.FindBestPrefix(q).blocks, 1) << "shared " << shared;
    EXPECT_EQ(idx.Replicas(BlockHash{2}), 0);
    idx.Forget(BlockHash{99});  // never held: nothing happens
    EXPECT_EQ(idx.Replicas(BlockHash{1}), shared ? 1 : 2);
  }
}

TEST(KvIndex, SharedPoolIsSeenByEveryInstance) {
  KvIndex idx(4, 0, true);
  idx.Store(1, Blocks({7, 8}));
  EXPECT_EQ(idx.LocalPrefix(3, Blocks({7, 8, 9})), 2);
  EXPECT_EQ(idx.FindBestPrefix(Blocks({7, 8})).blocks, 2);
}

// FindPrefixHolders against FindBestPrefix and against every instance asked one by one, while
// random stores (into small caches that evict), forgets and dropped instances change the index;
// the holder lists against the caches' contents.
TEST(KvIndex, PrefixHoldersAgreeWithAskingEveryInstance) {
  const int instances = 20;
  const size_t few = 3;
  KvIndex idx(instances, 12, false);
  std::mt19937_64 rng(5);
  auto prompt = [&] {
    std::vector<BlockHash> b;
    const uint64_t family = rng() % 3, length = 1 + rng() % 8;
    for (uint64_t k = 0; k < length; ++k) b.push_back(BlockHash{family * 100 + k});
    if (rng() % 2) b.push_back(BlockHash{1000 + rng() % 50});
    return b;
  };
  PrefixHolders out;
  for (int step = 0; step < 3000; ++step) {
    const auto b = prompt();
    const int op = static_cast<int>(rng() % 40);
    if (op == 0) idx.Forget(b[rng() % b.size()]);
    if (op == 1) idx.DropInstance(static_cast<int>(rng() % instances));
    if (op > 1) idx.Store(static_cast<int>(rng() % instances), b);
    const auto q = prompt();
    idx.FindPrefixHolders(q, few, &out);
    ASSERT_EQ(out.best, idx.FindBestPrefix(q)) << "step " << step;
    ASSERT_LE(out.deep.size(), few);
    size_t deep = 0;
    for (int i = 0; i < instances; ++i) {
      const int local = idx.LocalPrefix(i, q);
      if (local >= out.depth) {
        ASSERT_LT(deep, out.deep.size()) << "instance " << i << " holds " << local;
        ASSERT_EQ(out.deep[deep], std::make_pair(i, local));
        ++deep;
      }
    }
    ASSERT_EQ(deep, out.deep.size());
    for (BlockHash h : q) {
      const auto holders = idx.Holders(h);
      ASSERT_TRUE(std::is_sorted(holders.begin(), holders.end()));
      int held = 0;
      for (int i = 0; i < instances; ++i) held += idx.LocalPrefix(i, std::span(&h, 1));
      ASSERT_EQ(static_cast<int>(holders.size()), held);
      ASSERT_EQ(idx.Replicas(h), held);
    }
  }
}

}  // namespace
}  // namespace mooncake::conductor
