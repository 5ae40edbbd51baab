// The pruned search answers every call as the full evaluation does, on random call sequences
// that the trace replays rarely produce: instances and ranks dying, blocks forgotten, requests
// abandoned, decisions out of time order (the live conductor's re-dispatch), small caches that
// evict, blocks held by most instances (hot), every policy and early-rejection mode, per-instance
// caches and the shared pool.
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

#include "conductor/scheduler.h"
#include "conductor/scheduler_calls.h"
#include "test_cost_model.h"

namespace mooncake::conductor {
namespace {

using testing::Llama70bA800;

struct Scenario {
  PrefillPolicy policy;
  EarlyRejection early_rejection;
  bool shared_pool;
  bool admission;
};

// Drives an exhaustive scheduler with random calls, recording them; returns the log. `prompts`
// keeps the block lists alive for the log's spans.
std::vector<SchedulerCall> RandomCalls(const SchedulerConfig& config, uint64_t seed,
                                       const engine::CostModel& cost,
                                       std::deque<std::vector<BlockHash>>* prompts) {
  Scheduler s(config, &cost);
  std::vector<SchedulerCall> log;
  s.set_call_log(&log);
  std::mt19937_64 rng(seed);
  auto uniform = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  struct Live {
    RequestId id;
    Decision d;
    const std::vector<BlockHash>* blocks;
    int stage = 0;  // 0 prefilling, 1 prefilled, 2 decoding
  };
  std::vector<Live> live;
  Nanos now{0};
  uint64_t next_id = 1;
  for (int step = 0; step < 3000; ++step) {
    now += Nanos(uniform(40'000'000));  // up to 40 ms
    const int action = uniform(100);
    if (action < 35 || live.empty()) {
      // A prompt: one of 4 system prompts (3 blocks each, soon held by most instances), then a
      // conversation prefix (one of 30, so that some instances hold long prefixes), then new
      // blocks.
      std::vector<BlockHash> b;
      const uint64_t system = uniform(4);
      for (uint64_t k = 0; k < 3; ++k) b.push_back(BlockHash{system * 10 + k});
      const uint64_t conv = uniform(30);
      for (int k = 0; k < uniform(6); ++k) b.push_back(BlockHash{1000 + conv * 100 + k});
      for (int k = 0; k < 1 + uniform(4); ++k) b.push_back(BlockHash{100000 + next_id * 10 + k});
      prompts->push_back(std::move(b));
      const auto& blocks = prompts->back();
      // Now and then a decision earlier than the last (a re-dispatch in the live job).
      const Nanos at = uniform(20) == 0 ? now - Nanos(uniform(200'000'000)) : now;
      Request r{RequestId{next_id++}, at, static_cast<int32_t>(blocks.size() * 512 - uniform(400)),
                1 + uniform(400), blocks};
      Decision d = s.Decide(r, at, uniform(10) != 0);
      if (d.accepted) live.push_back({r.id, d, &blocks});
      continue;
    }
    if (action < 38) {
      if (uniform(4) == 0) s.MarkPrefillDead(uniform(config.prefill_instances));
      if (uniform(4) == 0) s.MarkDecodeDead(uniform(config.decode_instances));
      continue;
    }
    if (action < 41) {
      const auto& b = (*prompts)[uniform(static_cast<int>(prompts->size()))];
      s.ForgetBlocks(std::span<const BlockHash>(b).first(1 + uniform(static_cast<int>(b.size()))));
      continue;
    }
    const size_t k = static_cast<size_t>(uniform(static_cast<int>(live.size())));
    Live& l = live[k];
    bool done = false;
    if (action < 44) {
      s.Abandon(l.id);
      done = true;
    } else if (l.stage == 0) {
      const auto blocks = std::span<const BlockHash>(*l.blocks);
      s.OnBlocksStored(l.d.prefill, blocks.subspan(l.d.prefix_blocks), now);
      s.OnPrefillDone(l.id, l.d.prefill, now);
      l.stage = 1;
    } else if (l.stage == 1) {
      done = s.AdmitToDecode(l.id, l.d.decode, now) != RejectReason::kNone;
      l.stage = 2;
    } else {
      s.OnDecodeDone(l.id, l.d.decode, now);
      done = true;
    }
    if (done) {
      live[k] = live.back();
      live.pop_back();
    }
  }
  return log;
}

TEST(SearchEquivalence, PrunedSearchAnswersRandomCallsAsTheFullEvaluation) {
  const auto cost = Llama70bA800();
  const Scenario scenarios[] = {
      {PrefillPolicy::kKvCacheCentric, EarlyRejection::kPredicted, false, true},
      {PrefillPolicy::kKvCacheCentric, EarlyRejection::kCurrent, false, false},
      {PrefillPolicy::kCacheAware, EarlyRejection::kOff, false, true},
      {PrefillPolicy::kLoadBalance, EarlyRejection::kPredicted, false, false},
      {PrefillPolicy::kRandom, EarlyRejection::kPredicted, false, true},
      {PrefillPolicy::kCacheAware, EarlyRejection::kPredicted, true, false},
      {PrefillPolicy::kKvCacheCentric, EarlyRejection::kOff, true, true},
  };
  uint64_t seed = 1;
  for (const Scenario& sc : scenarios) {
    for (int prefill : {3, 40}) {
      SchedulerConfig c;
      c.prefill_instances = prefill;
      c.decode_instances = prefill == 3 ? 2 : 24;
      c.policy = sc.policy;
      c.early_rejection = sc.early_rejection;
      c.shared_pool = sc.shared_pool;
      c.admission = sc.admission;
      c.ttft_slo = std::chrono::seconds(2);
      c.cache_capacity_blocks = sc.shared_pool ? 60 : 25;  // evicts
      c.exhaustive_search = true;
      std::deque<std::vector<BlockHash>> prompts;
      const auto log = RandomCalls(c, ++seed, cost, &prompts);
      c.exhaustive_search = false;
      c.pruned_search_from = 1;  // 3 instances: pruned too
      Scheduler pruned(c, &cost);
      const ReplayOutcome out = ReplayCalls(log, pruned);
      EXPECT_EQ(out.differing, 0u)
          << PrefillPolicyName(sc.policy) << " " << EarlyRejectionName(sc.early_rejection)
          << " shared " << sc.shared_pool << " prefill " << prefill << ": first differing call "
          << out.first_differing;
      EXPECT_GT(out.decisions, 800u);
      // It did prune, and it did meet decisions earlier than the last one.
      const SearchStats& st = pruned.search_stats();
      if (prefill == 40 && sc.policy != PrefillPolicy::kRandom) {
        EXPECT_LT(st.prefill_evaluated, out.decisions * 20);
        EXPECT_GT(st.full_fallbacks, 0u);
      }
      if (prefill == 40) {
        EXPECT_LT(st.decode_evaluated, out.decisions * 16);
      }
    }
  }
}

// The decode side's bounds (DecodeLoad::StepTimeFor) hold because a decode step never gets
// cheaper with more requests or more tokens.
TEST(SearchEquivalence, DecodeStepTimeGrowsWithBatchAndTokens) {
  const auto cost = Llama70bA800();
  const DecodeLoad load(1, &cost, std::chrono::seconds(10));
  const int64_t hbm = cost.HbmKvTokenCapacity();
  for (int64_t batch = 1; batch <= 512; batch *= 2) {
    Nanos last{0};
    for (int64_t tokens = 0; tokens <= hbm + 1000; tokens += 997) {
      const Nanos t = load.StepTimeFor(batch, tokens);
      EXPECT_GE(t, last) << batch << " " << tokens;
      EXPECT_GE(t, load.StepTimeFor(batch / 2 + (batch == 1), tokens)) << batch << " " << tokens;
      last = t;
    }
  }
}

}  // namespace
}  // namespace mooncake::conductor
