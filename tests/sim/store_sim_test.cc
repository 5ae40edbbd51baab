// The store's metadata master in the simulator (sim/store_sim.h): what it evicted is missing at
// the next prefill and recomputed, as in the live job; with room enough it changes nothing.
#include "sim/store_sim.h"

#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "sim_test_util.h"
#include "trace/run_report.h"
#include "trace/synthetic.h"

namespace mooncake::sim {
namespace {

using testing::Llama70bA800;
using testing::Request;
constexpr uint64_t kBlock = 1 << 20;

std::vector<BlockHash> Blocks(uint64_t first, int n) {
  std::vector<BlockHash> v;
  for (int i = 0; i < n; ++i) v.push_back(BlockHash{first + i});
  return v;
}

StoreMasterModel Store(int ranks, uint64_t blocks_per_rank) {
  StoreMasterModel m;
  m.ranks = ranks;
  m.block_bytes = kBlock;
  m.rank_bytes = blocks_per_rank * kBlock;
  return m;
}

TEST(StoreSim, ReadPrefixCountsLeadingBlocksOnly) {
  StoreSim s(Store(2, 100));
  const auto ids = Blocks(0, 6);
  s.Write(Nanos(0), std::span(ids).first(3));
  EXPECT_EQ(s.ReadPrefix(Nanos(1), ids), 3);
  s.Write(Nanos(2), std::span(ids).subspan(4));  // a hole at block 3
  EXPECT_EQ(s.ReadPrefix(Nanos(3), ids), 3);
  EXPECT_EQ(s.stats().puts, 5u);
  EXPECT_EQ(s.stats().get_hits, 6u);
  EXPECT_EQ(s.stats().get_misses, 6u);
}

TEST(StoreSim, WatermarkEvictsTheLeastRecentlyUsedBlocks) {
  StoreMasterModel m = Store(1, 10);  // watermark 9 blocks, one block per eviction batch
  m.master.lease = Nanos(0);          // no lease protects a block read before
  StoreSim s(m);
  const auto ids = Blocks(0, 12);
  // One put at a time: blocks of one batch are in flight together and never evicted.
  for (size_t i = 0; i < ids.size(); ++i) s.Write(Nanos(i), std::span(ids).subspan(i, 1));
  EXPECT_EQ(s.ReadPrefix(Nanos(1), ids), 0);  // block 0 went first
  EXPECT_GT(s.master_stats().evicted_replicas, 0u);
  EXPECT_LE(s.used_bytes(), 9 * kBlock);
}

// The scheduler believes the second request's 7 shared blocks are cached (its index holds 2000
// blocks); the store holds 5, the first request put one block per 512-token chunk, so the store
// evicted the first ones: the prefill finds block 0 missing and recomputes the whole prompt.
TEST(StoreSim, PrefixTheStoreEvictedIsRecomputed) {
  const auto cost = Llama70bA800();
  auto first = Request(0, 0, 4096, 2, 0);
  auto second = Request(1, 5000, 4096, 2, 0);
  second.hash_ids.back() = BlockHash{777};
  SimConfig c;
  c.scheduler.prefill_instances = 1;
  c.scheduler.decode_instances = 1;
  c.scheduler.cache_capacity_blocks = 2000;
  c.chunk_tokens = 512;
  c.store = Store(1, 5);
  c.store.master.lease = Nanos(0);
  auto r = RunSimulation(c, cost, {first, second});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->records[1].prefix_blocks_hit, 0);
  EXPECT_NEAR(r->records[1].ttft_s, r->records[0].ttft_s, 1e-9);
  EXPECT_EQ(r->summary.extra.at("prefix_blocks_missing_in_store"), 7);
  c.store = Store(1, 100);  // room for every block: the index's answer stands
  r = RunSimulation(c, cost, {first, second});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->records[1].prefix_blocks_hit, 7);
  EXPECT_EQ(r->summary.extra.at("prefix_blocks_missing_in_store"), 0);
}

TEST(StoreSim, AStoreWithRoomForEverythingChangesNoRecord) {
  const auto cost = Llama70bA800();
  trace::SyntheticConfig sc;
  sc.seed = 5;
  sc.num_requests = 300;
  sc.rate_per_s = 3;
  const auto reqs = trace::GenerateSynthetic(sc);
  SimConfig c;
  c.scheduler.prefill_instances = 3;
  c.scheduler.decode_instances = 2;
  c.scheduler.cache_capacity_blocks = 2000;
  auto without = RunSimulation(c, cost, reqs);
  c.store = Store(2, 100000);
  auto with = RunSimulation(c, cost, reqs);
  ASSERT_TRUE(without.ok() && with.ok());
  EXPECT_EQ(trace::RequestsCsv(without->records), trace::RequestsCsv(with->records));
  EXPECT_GT(with->summary.extra.at("prefix_blocks_loaded_from_store"), 0);
}

}  // namespace
}  // namespace mooncake::sim
