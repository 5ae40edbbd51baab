#include "conductor/kv_index.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mooncake::conductor
