// The conductor's pruned search (scheduler.h) makes exactly the full evaluation's decisions on
// slices of the paper's traces (../shared/traces; skipped when absent): every policy, the three
// early-rejection modes (the decode choice), the global pool and chunked prefill, at the paper's
// 8 + 8 instances and at 64 + 64 with the load scaled to match. Each case runs the simulator
// twice, with the full and the pruned search, and compares every call the simulator made to its
// scheduler with the answer it got, then every request's outcome.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/paper_cost_model.h"
#include "conductor/scheduler_calls.h"
#include "sim/simulator.h"
#include "trace/trace_reader.h"

namespace mooncake::sim {
namespace {

using conductor::EarlyRejection;
using conductor::PrefillPolicy;
using conductor::SchedulerCall;

const std::string kTraces = MOONCAKE_SHARED_TRACES;

struct Case {
  const char* name;
  PrefillPolicy policy;
  int instances = 8;  // prefill, and as many decode
  EarlyRejection early_rejection = EarlyRejection::kPredicted;
  bool admission = true;
  bool global_pool = false;
  int64_t chunk_tokens = 0;
};

SimConfig ConfigFor(const Case& c, const engine::CostModel& cost) {
  SimConfig s;
  s.scheduler.prefill_instances = c.instances;
  s.scheduler.decode_instances = c.instances;
  s.scheduler.policy = c.policy;
  s.scheduler.early_rejection = c.early_rejection;
  s.scheduler.admission = c.admission;
  s.scheduler.shared_pool = c.global_pool;
  // A node's DRAM in blocks (store.capacity_blocks = auto); the global pool: 5,000 blocks.
  s.scheduler.cache_capacity_blocks =
      c.global_pool ? 5000 : cost.hardware().dram_bytes / cost.KvBytesPerBlock();
  s.scheduler.prefill_chunk_tokens = c.chunk_tokens;
  s.chunk_tokens = c.chunk_tokens;
  s.load_scale = c.instances / 8.0;  // the paper's load per instance
  return s;
}

struct Run {
  std::vector<SchedulerCall> calls;
  SimResult result;
};

Run Simulate(SimConfig config, bool exhaustive, const engine::CostModel& cost,
             const std::vector<trace::TraceRequest>& requests) {
  config.scheduler.exhaustive_search = exhaustive;
  config.scheduler.pruned_search_from = 1;  // the pruned search at 8 + 8 as well
  Run run;
  auto r = RunSimulation(config, cost, requests, SimHooks{&run.calls});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok()) run.result = std::move(*r);
  return run;
}

// Returns how many calls differ (kind, arguments or answer), reporting the first few.
int CompareCalls(const std::vector<SchedulerCall>& full, const std::vector<SchedulerCall>& pruned) {
  EXPECT_EQ(full.size(), pruned.size());
  int differ = 0;
  for (size_t k = 0; k < std::min(full.size(), pruned.size()); ++k) {
    const SchedulerCall& a = full[k];
    const SchedulerCall& b = pruned[k];
    const bool same = a.kind == b.kind && a.instance == b.instance && a.id == b.id &&
                      a.now == b.now && a.decision == b.decision && a.admitted == b.admitted;
    if (!same && differ++ < 3) {
      ADD_FAILURE() << "call " << k << " (request " << a.id.value << ") differs: prefill "
                    << a.decision.prefill << " vs " << b.decision.prefill << ", decode "
                    << a.decision.decode << " vs " << b.decision.decode;
    }
  }
  return differ;
}

void CheckSameDecisions(const std::string& trace_file, uint64_t offset, uint64_t limit,
                        const std::vector<Case>& cases) {
  const std::string path = kTraces + "/" + trace_file;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent; not checked";
  trace::TraceReadOptions read;
  read.offset = offset;
  read.limit = limit;
  auto requests = trace::ReadTrace(path, read);
  ASSERT_TRUE(requests.ok()) << requests.status().ToString();
  const auto cost = testing::Llama70bA800();
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " on " + trace_file);
    const SimConfig config = ConfigFor(c, cost);
    const Run full = Simulate(config, true, cost, *requests);
    const Run pruned = Simulate(config, false, cost, *requests);
    EXPECT_EQ(CompareCalls(full.calls, pruned.calls), 0);
    ASSERT_EQ(full.result.records.size(), pruned.result.records.size());
    for (size_t k = 0; k < full.result.records.size(); ++k) {
      const auto& a = full.result.records[k];
      const auto& b = pruned.result.records[k];
      ASSERT_TRUE(a.outcome == b.outcome && a.prefill_instance == b.prefill_instance &&
                  a.decode_instance == b.decode_instance && a.ttft_s == b.ttft_s &&
                  a.tbt_s == b.tbt_s && a.prefix_blocks_hit == b.prefix_blocks_hit)
          << "request " << a.id.value;
    }
    EXPECT_EQ(full.result.summary.ttft_s.mean, pruned.result.summary.ttft_s.mean);

    // Replayed against fresh schedulers: the pruned one answers the full one's calls alike,
    // and evaluates fewer instances (random evaluates one prefill instance either way).
    conductor::SchedulerConfig sc = EffectiveSchedulerConfig(config);
    sc.exhaustive_search = true;
    conductor::Scheduler reference(sc, &cost);
    sc.exhaustive_search = false;
    sc.pruned_search_from = 1;
    conductor::Scheduler scheduler(sc, &cost);
    EXPECT_EQ(conductor::ReplayCalls(full.calls, reference).differing, 0u);
    const auto replay = conductor::ReplayCalls(full.calls, scheduler);
    EXPECT_EQ(replay.differing, 0u) << "first at call " << replay.first_differing;
    const auto& ps = scheduler.search_stats();
    const auto& fs = reference.search_stats();
    if (c.policy != PrefillPolicy::kRandom && c.instances >= 64) {
      EXPECT_LT(ps.prefill_evaluated * 4, fs.prefill_evaluated);
    }
    if (c.instances >= 64) {
      EXPECT_LT(ps.decode_evaluated * 2, fs.decode_evaluated);
    }
  }
}

std::vector<Case> AllCases() {
  return {
      {"kvcache_centric 8+8", PrefillPolicy::kKvCacheCentric},
      {"kvcache_centric 64+64", PrefillPolicy::kKvCacheCentric, 64},
      {"cache_aware 64+64", PrefillPolicy::kCacheAware, 64, EarlyRejection::kPredicted, false},
      {"load_balance 64+64", PrefillPolicy::kLoadBalance, 64, EarlyRejection::kPredicted, false},
      {"random 64+64", PrefillPolicy::kRandom, 64, EarlyRejection::kPredicted, false},
      {"early_rejection current", PrefillPolicy::kKvCacheCentric, 64, EarlyRejection::kCurrent},
      {"early_rejection off", PrefillPolicy::kKvCacheCentric, 64, EarlyRejection::kOff},
      {"global pool", PrefillPolicy::kCacheAware, 64, EarlyRejection::kPredicted, false, true},
      {"chunked prefill", PrefillPolicy::kKvCacheCentric, 64, EarlyRejection::kPredicted, true,
       false, 4096},
  };
}

TEST(PrunedSearch, SameDecisionsAsFullEvaluationOnConversationTrace) {
  CheckSameDecisions("conversation_trace.jsonl", 2000, 3000, AllCases());
}

TEST(PrunedSearch, SameDecisionsAsFullEvaluationOnSyntheticTrace) {
  CheckSameDecisions("synthetic_trace.jsonl", 0, 2000, AllCases());
}

}  // namespace
}  // namespace mooncake::sim
