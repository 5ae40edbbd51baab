// The master's side of store ranks joining and leaving a running store (issue 33, item 4), end
// to end over the loopback transport: MasterService + Rereplicator (as MasterNode wires them)
// + a StoreClient. A rank that joins takes puts; a drained rank's objects are copied to the
// others and it is left holding nothing, every object still readable and intact.
#include <gtest/gtest.h>

#include <thread>

#include "common/block_content.h"
#include "loopback_store.h"
#include "store/net/rereplicator.h"

namespace mooncake::store {
namespace {

using testing::LoopbackStore;
const uint64_t kTag = ModelTag("store-drain-test");

std::vector<std::byte> Value(uint64_t id, size_t size) {
  std::vector<std::byte> v(size);
  FillBlockContent({id, 0, kTag}, v);
  return v;
}
size_t SizeOf(int i) { return static_cast<size_t>(1 + (i * 104729) % (96 * 1024)); }

TEST(StoreDrain, AJoinedRankTakesPutsAndADrainedRankEndsEmptyWithEveryObjectIntact) {
  testing::LoopbackStoreOptions o = testing::Options(4, 1, 8 << 20);
  o.late_stores = 1;  // rank 4 joins after the first puts
  LoopbackStore store(o);
  StoreTopology first = store.topology();
  first.segments.resize(3);
  Rereplicator copier(store.transport(0), store.service(), first, std::chrono::seconds(10));
  ASSERT_TRUE(copier.Start().ok());
  StoreClient& c = store.client(0);
  auto used = [&](int rank) {
    return store.service()
        .WithMaster([&](MetadataMaster& m) { return m.SegmentStats(Rank{rank}); })
        ->used;
  };
  auto put = [&](int i) {
    return c.Put("obj/" + std::to_string(i), Value(i, SizeOf(i)),
                 ReplicateConfig{.replicas = 1 + static_cast<uint32_t>(i % 2)});
  };
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(put(i).ok()) << i;

  // The join: the master and the copier take rank 4's segment while running.
  ASSERT_TRUE(store.Join(Rank{4}).ok());
  copier.AddSegment(*store.topology().Find(Rank{4}));
  EXPECT_EQ(store.Join(Rank{4}).code(), ErrorCode::kAlreadyExists);
  for (int i = 60; i < 100; ++i) ASSERT_TRUE(put(i).ok()) << i;
  EXPECT_GT(used(4), 0u) << "no put landed on the joined rank";
  ASSERT_GT(used(1), 0u);

  // The drain of an original rank: nothing new goes there, its objects move, it ends empty.
  ASSERT_TRUE(
      store.service().WithMaster([](MetadataMaster& m) { return m.BeginDrain(Rank{1}); }).ok());
  const uint64_t used_before = used(1);
  for (int i = 100; i < 120; ++i) ASSERT_TRUE(put(i).ok()) << i;
  EXPECT_LE(used(1), used_before) << "a put landed on the draining rank";
  copier.Kick();
  MetadataMaster::DrainState state;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    state = *store.service().WithMaster([](MetadataMaster& m) { return m.Drain(Rank{1}); });
    if (state.drained()) break;
    copier.Kick();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(state.drained()) << state.dram_replicas << " replicas, " << state.used_bytes
                               << " B still on rank 1";
  EXPECT_GT(copier.copied(), 0u);
  EXPECT_EQ(copier.failed(), 0u);
  EXPECT_EQ(used(1), 0u);
  ASSERT_TRUE(store.service().RemoveDrainedSegment(Rank{1}).ok());

  for (int i = 0; i < 120; ++i) {
    auto got = c.GetValue("obj/" + std::to_string(i));
    ASSERT_TRUE(got.ok()) << i << ": " << got.status().ToString();
    EXPECT_EQ(*got, Value(i, SizeOf(i))) << i;
  }
  // Re-replication restored every object's replica count on the ranks left.
  auto stats = store.service().WithMaster([](MetadataMaster& m) { return m.Stats(); });
  EXPECT_EQ(stats.objects, 120u);
  EXPECT_EQ(stats.objects_lost, 0u);
  copier.Stop();
}

}  // namespace
}  // namespace mooncake::store
