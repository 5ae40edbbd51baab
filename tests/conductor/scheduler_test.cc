#include "conductor/scheduler.h"

#include <gtest/gtest.h>

#include <set>

#include "test_cost_model.h"

namespace mooncake::conductor {
namespace {

using std::chrono::seconds;
using testing::Llama70bA800;
using testing::Range;

SchedulerConfig Config(PrefillPolicy policy, int prefill = 3) {
  SchedulerConfig c;
  c.prefill_instances = prefill;
  c.decode_instances = 2;
  c.policy = policy;
  c.admission = false;
  return c;
}

Request Req(uint64_t id, const std::vector<BlockHash>& blocks, int32_t input) {
  return Request{RequestId{id}, Nanos(0), input, 10, blocks};
}

TEST(Scheduler, CacheAwarePicksInstanceWithLongestLocalPrefix) {
  const auto cost = Llama70bA800();
  Scheduler s(Config(PrefillPolicy::kCacheAware), &cost);
  s.OnBlocksStored(0, Range(0, 4), Nanos(0));
  s.OnBlocksStored(2, Range(0, 12), Nanos(0));
  const auto blocks = Range(0, 16);
  Decision d = s.Decide(Req(1, blocks, 16 * 512), Nanos(0));
  EXPECT_TRUE(d.accepted);
  EXPECT_EQ(d.prefill, 2);
  EXPECT_EQ(d.local_prefix_blocks, 12);
  EXPECT_EQ(d.fetch_from, -1);
}

TEST(Scheduler, LoadBalanceIgnoresCacheAndPicksShortestQueue) {
  const auto cost = Llama70bA800();
  Scheduler s(Config(PrefillPolicy::kLoadBalance, 2), &cost);
  // A short prefill makes one instance busy; then that instance is given the cache of the next
  // request. load_balance must still send it to the idle instance, reusing nothing and fetching
  // nothing (cache_aware would wait the short queue to reuse the 12 cached blocks).
  Decision first = s.Decide(Req(1, Range(1000, 1), 512), Nanos(0));
  ASSERT_TRUE(first.accepted);
  const int busy = first.prefill, idle = 1 - first.prefill;
  s.OnBlocksStored(busy, Range(0, 12), Nanos(0));
  Decision d = s.Decide(Req(2, Range(0, 16), 16 * 512), Nanos(0));
  EXPECT_TRUE(d.accepted);
  EXPECT_EQ(d.prefill, idle);
  EXPECT_EQ(d.local_prefix_blocks, 0);
  EXPECT_EQ(d.prefix_blocks, 0);
  EXPECT_EQ(d.fetch_from, -1);
  EXPECT_EQ(s.PrefillFreeAt(busy), first.t_prefill);
  EXPECT_EQ(s.PrefillFreeAt(idle), d.t_prefill);
}

TEST(Scheduler, RandomIsSeededAndSpreads) {
  const auto cost = Llama70bA800();
  auto run = [&](uint64_t seed) {
    SchedulerConfig c = Config(PrefillPolicy::kRandom, 4);
    c.seed = seed;
    Scheduler s(c, &cost);
    std::vector<int> picks;
    const auto blocks = Range(0, 2);
    for (uint64_t i = 0; i < 64; ++i)
      picks.push_back(s.Decide(Req(i, blocks, 1024), Nanos(0)).prefill);
    return picks;
  };
  EXPECT_EQ(run(7), run(7));
  auto picks = run(7);
  EXPECT_EQ(std::set<int>(picks.begin(), picks.end()).size(), 4u);
}

TEST(Scheduler, KvCacheCentricFetchesRemotePrefixInsteadOfQueueing) {
  const auto cost = Llama70bA800();
  for (PrefillPolicy policy : {PrefillPolicy::kCacheAware, PrefillPolicy::kKvCacheCentric}) {
    Scheduler s(Config(policy, 2), &cost);
    s.OnBlocksStored(0, Range(0, 20), Nanos(0));
    // Keep instance 0 busy for a while with unrelated work that only it would take.
    for (uint64_t i = 0; i < 3; ++i) {
      auto busy = Range(0, 20);
      busy.push_back(BlockHash{5000 + i});
      s.Decide(Req(100 + i, busy, 21 * 512), Nanos(0));
    }
    const Nanos queue0 = s.PrefillFreeAt(0);
    const uint64_t fetches_before = s.fetches();
    auto blocks = Range(0, 20);
    for (uint64_t k = 0; k < 4; ++k) blocks.push_back(BlockHash{9000 + k});
    Decision d = s.Decide(Req(1, blocks, 24 * 512), Nanos(0));
    if (policy == PrefillPolicy::kKvCacheCentric) {
      EXPECT_EQ(d.fetch_from, 0) << "queue at 0: " << queue0.count();
      EXPECT_EQ(d.prefix_blocks, 20);
      EXPECT_GT(d.t_transfer, Nanos(0));
      EXPECT_LT(d.predicted_ttft, cost.PrefillTime(24 * 512, 0));
      EXPECT_EQ(s.fetches(), fetches_before + 1);
    } else {
      EXPECT_EQ(d.fetch_from, -1);
      EXPECT_EQ(d.prefix_blocks, d.local_prefix_blocks);
    }
  }
}

TEST(Scheduler, KvCacheCentricUsesLocalPrefixWhenGainIsBelowThreshold) {
  const auto cost = Llama70bA800();
  SchedulerConfig c = Config(PrefillPolicy::kKvCacheCentric, 2);
  c.balancing_threshold = 1.5;
  Scheduler s(c, &cost);
  s.OnBlocksStored(0, Range(0, 12), Nanos(0));
  s.OnBlocksStored(1, Range(0, 10), Nanos(0));
  // Make instance 0 busy so instance 1 (10 local blocks, 12/10 < 1.5) wins without fetching.
  s.Decide(Req(50, Range(7000, 30), 30 * 512), Nanos(0));
  const Nanos busy0 = s.PrefillFreeAt(0), busy1 = s.PrefillFreeAt(1);
  ASSERT_TRUE(busy0 > Nanos(0) || busy1 > Nanos(0));
  const auto blocks = Range(0, 16);
  Decision d = s.Decide(Req(1, blocks, 16 * 512), Nanos(0));
  EXPECT_EQ(d.fetch_from, -1);
  EXPECT_EQ(d.prefix_blocks, d.local_prefix_blocks);
}

TEST(Scheduler, BlocksBeingComputedCountAsInflightMisses) {
  const auto cost = Llama70bA800();
  Scheduler s(Config(PrefillPolicy::kCacheAware, 1), &cost);
  const auto blocks = Range(0, 8);
  Decision a = s.Decide(Req(1, blocks, 8 * 512), Nanos(0));
  Decision b = s.Decide(Req(2, blocks, 8 * 512), Nanos(0));
  EXPECT_EQ(a.inflight_miss_blocks, 0);
  EXPECT_EQ(b.inflight_miss_blocks, 8);
  s.OnBlocksStored(0, blocks, a.predicted_ttft);
  s.OnPrefillDone(RequestId{1}, 0, a.predicted_ttft);
  Decision c = s.Decide(Req(3, blocks, 8 * 512), a.predicted_ttft);
  EXPECT_EQ(c.local_prefix_blocks, 8);
  EXPECT_EQ(c.inflight_miss_blocks, 0);
}

TEST(Scheduler, PrefillDoneResyncsTheQueueForecast) {
  const auto cost = Llama70bA800();
  Scheduler s(Config(PrefillPolicy::kLoadBalance, 1), &cost);
  Decision a = s.Decide(Req(1, Range(0, 8), 8 * 512), Nanos(0));
  EXPECT_EQ(s.PrefillFreeAt(0), a.predicted_ttft);
  s.OnPrefillDone(RequestId{1}, 0, a.predicted_ttft / 2);  // finished early
  EXPECT_EQ(s.PrefillFreeAt(0), a.predicted_ttft / 2);
}

TEST(Scheduler, LatenessOfQueuedPrefillsIsNotCountedTwice) {
  // Three prefills queued on one instance; each really takes 1 s longer than predicted (a live
  // run's overheads). After each report the forecast must equal the real end of the queue: the
  // first correction already moved the later predictions, so it must not be applied again.
  const auto cost = Llama70bA800();
  Scheduler s(Config(PrefillPolicy::kLoadBalance, 1), &cost);
  std::vector<Decision> d;
  for (uint64_t i = 0; i < 3; ++i)
    d.push_back(s.Decide(Req(i, Range(100 * i, 8), 8 * 512), Nanos(0)));
  const Nanos each = d[0].t_prefill;
  Nanos real_end(0);
  for (uint64_t i = 0; i < 3; ++i) {
    real_end += each + seconds(1);
    s.OnPrefillDone(RequestId{i}, 0, real_end);
    const Nanos still_queued = each * static_cast<int64_t>(2 - i);
    EXPECT_EQ(s.PrefillFreeAt(0), real_end + still_queued) << "after request " << i;
  }
}

// Faults (docs/FAULTS.md): a dead instance is never chosen again, not even when it holds the
// longest prefix; with none of a kind left, Decide rejects naming why.
TEST(Scheduler, DeadPrefillInstanceIsNeverChosenAgain) {
  const auto cost = Llama70bA800();
  Scheduler s(Config(PrefillPolicy::kKvCacheCentric, 2), &cost);
  s.OnBlocksStored(1, Range(0, 16), Nanos(0));  // instance 1 holds the whole prefix
  const auto blocks = Range(0, 16);
  EXPECT_EQ(s.Decide(Req(1, blocks, 16 * 512), Nanos(0)).prefill, 1);
  s.Abandon(RequestId{1});
  s.MarkPrefillDead(1);
  for (uint64_t i = 2; i < 10; ++i) {
    Decision d = s.Decide(Req(i, blocks, 16 * 512), Nanos(0), /*admission=*/false);
    ASSERT_TRUE(d.accepted);
    EXPECT_EQ(d.prefill, 0);
    EXPECT_NE(d.fetch_from, 1) << "blocks fetched from a dead instance";
  }
  s.MarkPrefillDead(0);
  Decision none = s.Decide(Req(20, blocks, 16 * 512), Nanos(0), /*admission=*/false);
  EXPECT_FALSE(none.accepted);
  EXPECT_EQ(none.reason, RejectReason::kNoLiveInstance);
}

TEST(Scheduler, DeadDecodeInstanceIsNeverChosenAgain) {
  const auto cost = Llama70bA800();
  Scheduler s(Config(PrefillPolicy::kKvCacheCentric, 2), &cost);
  s.MarkDecodeDead(0);
  const auto blocks = Range(0, 4);
  for (uint64_t i = 1; i < 10; ++i) {
    Decision d = s.Decide(Req(i, blocks, 4 * 512), Nanos(0), /*admission=*/false);
    ASSERT_TRUE(d.accepted);
    EXPECT_EQ(d.decode, 1);
  }
  s.MarkDecodeDead(1);
  Decision none = s.Decide(Req(20, blocks, 4 * 512), Nanos(0), /*admission=*/false);
  EXPECT_FALSE(none.accepted);
  EXPECT_EQ(none.reason, RejectReason::kNoLiveInstance);
}

}  // namespace
}  // namespace mooncake::conductor
