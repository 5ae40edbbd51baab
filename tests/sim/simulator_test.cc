#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "sim_test_util.h"
#include "trace/run_report.h"
#include "trace/synthetic.h"

namespace mooncake::sim {
namespace {

using testing::Llama70bA800;

std::vector<trace::TraceRequest> Synthetic(uint64_t seed) {
  trace::SyntheticConfig c;
  c.seed = seed;
  c.num_requests = 400;
  c.rate_per_s = 3;
  c.mean_new_tokens = 3000;
  return trace::GenerateSynthetic(c);
}

SimConfig Mooncake(conductor::PrefillPolicy policy) {
  SimConfig c;
  c.scheduler.prefill_instances = 3;
  c.scheduler.decode_instances = 2;
  c.scheduler.policy = policy;
  c.scheduler.cache_capacity_blocks = 2000;
  return c;
}

TEST(Simulator, SameSeedGivesByteIdenticalRequestsCsv) {
  const auto cost = Llama70bA800();
  const auto reqs = Synthetic(3);
  for (auto policy :
       {conductor::PrefillPolicy::kRandom, conductor::PrefillPolicy::kKvCacheCentric}) {
    auto a = RunSimulation(Mooncake(policy), cost, reqs);
    auto b = RunSimulation(Mooncake(policy), cost, reqs);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(trace::RequestsCsv(a->records), trace::RequestsCsv(b->records));
  }
  SimConfig other = Mooncake(conductor::PrefillPolicy::kRandom);
  other.scheduler.seed = 99;
  auto a = RunSimulation(Mooncake(conductor::PrefillPolicy::kRandom), cost, reqs);
  auto c = RunSimulation(other, cost, reqs);
  EXPECT_NE(trace::RequestsCsv(a->records), trace::RequestsCsv(c->records));
}

TEST(Simulator, EveryRequestIsAccountedForInEverySystem) {
  const auto cost = Llama70bA800();
  const auto reqs = Synthetic(5);
  for (auto system : {SystemKind::kMooncake, SystemKind::kVllm, SystemKind::kVllmPrefix,
                      SystemKind::kVllmChunked}) {
    SimConfig c = Mooncake(conductor::PrefillPolicy::kKvCacheCentric);
    c.system = system;
    if (system != SystemKind::kMooncake) {
      c.scheduler.policy = conductor::PrefillPolicy::kLoadBalance;
      c.scheduler.admission = false;
    }
    auto r = RunSimulation(c, cost, reqs);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->summary.total, reqs.size()) << SystemKindName(system);
    EXPECT_EQ(r->summary.completed + r->summary.rejected, reqs.size()) << SystemKindName(system);
    EXPECT_EQ(r->summary.lost, 0u);
    const bool caches = system == SystemKind::kMooncake || system == SystemKind::kVllmPrefix;
    EXPECT_EQ(r->summary.prefix_blocks_hit > 0, caches) << SystemKindName(system);
  }
}

// The share of prompt blocks an infinite global cache would reuse: each request's longest prefix
// seen in any earlier request. No policy can beat it.
double InfiniteCacheHitRate(const std::vector<trace::TraceRequest>& reqs) {
  std::unordered_set<uint64_t> seen;
  uint64_t hit = 0, total = 0;
  for (const auto& r : reqs) {
    bool prefix = true;
    for (BlockHash b : r.hash_ids) {
      ++total;
      prefix = prefix && seen.count(b.value) > 0;
      hit += prefix ? 1 : 0;
    }
    for (BlockHash b : r.hash_ids) seen.insert(b.value);
  }
  return total ? static_cast<double>(hit) / static_cast<double>(total) : 0.0;
}

// Seeded and deterministic, so the bounds are tight (measured: oracle 0.589, kvcache_centric
// 0.573, cache_aware 0.552, load_balance 0.395, random 0.407).
TEST(Simulator, CacheAwarePoliciesHitMoreAndPrefillFaster) {
  const auto cost = Llama70bA800();
  const auto reqs = Synthetic(7);
  auto run = [&](conductor::PrefillPolicy p) {
    auto r = RunSimulation(Mooncake(p), cost, reqs);
    EXPECT_TRUE(r.ok());
    return r->summary;
  };
  const auto lb = run(conductor::PrefillPolicy::kLoadBalance);
  const auto ca = run(conductor::PrefillPolicy::kCacheAware);
  const auto kv = run(conductor::PrefillPolicy::kKvCacheCentric);
  const double oracle = InfiniteCacheHitRate(reqs);
  for (const auto* s : {&lb, &ca, &kv}) EXPECT_LE(s->BlockHitRate(), oracle);
  // Algorithm 1 fetches remote prefixes: it comes within 3 points of the global cache, and
  // above cache_aware, which only reuses what the chosen instance holds.
  EXPECT_GE(kv.BlockHitRate(), oracle - 0.03);
  EXPECT_GE(kv.BlockHitRate(), ca.BlockHitRate());
  EXPECT_GE(ca.BlockHitRate(), lb.BlockHitRate() + 0.1);  // load_balance ignores the cache
  EXPECT_LT(kv.prefill_compute_s, ca.prefill_compute_s);
  EXPECT_LT(ca.prefill_compute_s, lb.prefill_compute_s);
}

TEST(Simulator, ChunkedPrefillStoresBlocksWithoutChangingTtft) {
  const auto cost = Llama70bA800();
  std::vector<trace::TraceRequest> reqs = {testing::Request(0, 0, 8192, 4, 0)};
  SimConfig one = Mooncake(conductor::PrefillPolicy::kCacheAware);
  SimConfig chunked = one;
  chunked.chunk_tokens = 1024;
  auto a = RunSimulation(one, cost, reqs);
  auto b = RunSimulation(chunked, cost, reqs);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(a->records[0].ttft_s, b->records[0].ttft_s, 1e-6);
  EXPECT_NEAR(a->records[0].ttft_s, engine::NanosToSeconds(cost.PrefillTime(8192, 0)), 1e-6);
}

TEST(Simulator, SecondRequestReusesTheFirstOnesBlocks) {
  const auto cost = Llama70bA800();
  auto first = testing::Request(0, 0, 4096, 4, 0);
  auto second = testing::Request(1, 5000, 4096, 4, 0);
  second.hash_ids.back() = BlockHash{777};  // shares the first 7 of 8 blocks
  auto r =
      RunSimulation(Mooncake(conductor::PrefillPolicy::kKvCacheCentric), cost, {first, second});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->records[0].prefix_blocks_hit, 0);
  EXPECT_EQ(r->records[1].prefix_blocks_hit, 7);
  EXPECT_LT(r->records[1].ttft_s, r->records[0].ttft_s / 4);
}

TEST(Simulator, RejectsBadConfigBeforeRunning) {
  const auto cost = Llama70bA800();
  SimConfig c;
  c.load_scale = 0;
  auto r = RunSimulation(c, cost, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("load.scale"), std::string::npos);
}

}  // namespace
}  // namespace mooncake::sim
