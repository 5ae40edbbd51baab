// The vLLM baselines schedule as vLLM 0.5's scheduler does (vllm/core/scheduler.py,
// docs/EVAL.md): waiting prompts batched into one prefill step under max_num_batched_tokens,
// chunked prefill filling each step's budget after the decodes, the prompt limit; and every
// step timed by the cost model's roofline. Expected times are computed here from StepTime.
#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "sim_test_util.h"

namespace mooncake::sim {
namespace {

using engine::NanosToSeconds;
using engine::StepWork;
using testing::Llama70bA800;
using testing::Request;

SimConfig OneInstance(SystemKind system) {
  SimConfig c;
  c.system = system;
  c.scheduler.prefill_instances = 1;
  c.scheduler.admission = false;
  return c;
}

Nanos Step(const engine::CostModel& cost, std::initializer_list<std::pair<int64_t, int64_t>> chunks,
           int64_t decode_seqs = 0, int64_t decode_context = 0) {
  StepWork w;
  w.decode_seqs = decode_seqs;
  w.decode_context_tokens = decode_context;
  for (auto [prefix, tokens] : chunks) w.AddChunk(cost, prefix, tokens);
  return cost.StepTime(w);
}

// A at t = 0 prefills alone; B and C arrive during it and are prefilled together in the next
// step (prefills first, then the decode of A): they get their first token at the same instant.
// Short prompts are memory-bound, so the shared pass is nearly the cost of one.
TEST(Vllm, WaitingPromptsArePrefilledTogetherInOneStep) {
  const auto cost = Llama70bA800();
  std::vector<trace::TraceRequest> reqs = {Request(0, 0, 4096, 2, 0), Request(1, 100, 50, 2, 100),
                                           Request(2, 100, 50, 2, 200)};
  auto r = RunSimulation(OneInstance(SystemKind::kVllm), cost, reqs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Nanos a = Step(cost, {{0, 4096}});
  const Nanos bc = Step(cost, {{0, 50}, {0, 50}});
  EXPECT_NEAR(r->records[0].ttft_s, NanosToSeconds(a), 1e-9);
  EXPECT_NEAR(r->records[1].ttft_s, NanosToSeconds(a + bc) - 0.1, 1e-9);
  EXPECT_NEAR(r->records[2].ttft_s, r->records[1].ttft_s, 1e-9);
  // One pass for both reads the weights once: far cheaper than two passes.
  EXPECT_LT(bc, 1.1 * Step(cost, {{0, 50}}));
}

// With max_num_batched_tokens = 1500, B fits and C does not: C is prefilled in the step after
// B's (a prefill step again, before any decode).
TEST(Vllm, StepBudgetCapsThePromptsOfOneStep) {
  const auto cost = Llama70bA800();
  SimConfig c = OneInstance(SystemKind::kVllm);
  c.vllm.max_model_len = 1500;
  c.vllm.max_num_batched_tokens = 1500;
  std::vector<trace::TraceRequest> reqs = {Request(0, 0, 1400, 2, 0), Request(1, 100, 1000, 2, 100),
                                           Request(2, 100, 1000, 2, 200)};
  auto r = RunSimulation(c, cost, reqs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Nanos a = Step(cost, {{0, 1400}}), one = Step(cost, {{0, 1000}});
  EXPECT_NEAR(r->records[1].ttft_s, NanosToSeconds(a + one) - 0.1, 1e-9);
  EXPECT_NEAR(r->records[2].ttft_s, NanosToSeconds(a + one + one) - 0.1, 1e-9);
}

TEST(Vllm, MaxNumSeqsLimitsTheRunningSequences) {
  const auto cost = Llama70bA800();
  SimConfig c = OneInstance(SystemKind::kVllm);
  c.vllm.max_num_seqs = 2;
  c.vllm.max_num_batched_tokens = 131072;
  // A decodes 100 tokens; B joins it; C waits until A finishes.
  std::vector<trace::TraceRequest> reqs = {
      Request(0, 0, 1000, 100, 0), Request(1, 10, 1000, 100, 100), Request(2, 10, 1000, 2, 200)};
  auto r = RunSimulation(c, cost, reqs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->records[2].ttft_s, r->records[0].e2e_s - 0.01);
  EXPECT_LT(r->records[1].ttft_s, r->records[0].e2e_s);
}

TEST(Vllm, PromptsOverThePromptLimitAreRejected) {
  const auto cost = Llama70bA800();
  SimConfig c = OneInstance(SystemKind::kVllm);
  c.vllm.max_model_len = 1500;  // budget auto: max(1500, 2048); limit min(1500, 2048)
  auto r = RunSimulation(c, cost, {Request(0, 0, 2000, 2, 0), Request(1, 0, 1000, 2, 100)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->records[0].outcome, trace::Outcome::kRejected);
  EXPECT_EQ(r->records[0].reject_reason, "prompt_too_long");
  EXPECT_EQ(r->records[1].outcome, trace::Outcome::kCompleted);
}

// Budget 512 (vLLM's default with chunked prefill), B and C of 700 tokens at t = 0:
// step 1 = B[0, 512); step 2 = B[512, 700) + C[0, 324); step 3 = B's decode + C[324, 700).
TEST(Vllm, ChunkedStepsFillTheBudgetWithTheNextPrompt) {
  const auto cost = Llama70bA800();
  auto r = RunSimulation(OneInstance(SystemKind::kVllmChunked), cost,
                         {Request(0, 0, 700, 2, 0), Request(1, 0, 700, 2, 100)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Nanos t1 = Step(cost, {{0, 512}});
  const Nanos t2 = Step(cost, {{512, 188}, {0, 324}});
  const Nanos t3 = Step(cost, {{324, 376}}, 1, 701);
  EXPECT_NEAR(r->records[0].ttft_s, NanosToSeconds(t1 + t2), 1e-9);
  EXPECT_NEAR(r->records[1].ttft_s, NanosToSeconds(t1 + t2 + t3), 1e-9);
}

TEST(Vllm, LimitsVllmWouldRefuseAreErrorsNamingTheOption) {
  const auto cost = Llama70bA800();
  SimConfig c = OneInstance(SystemKind::kVllm);
  c.vllm.max_num_batched_tokens = 4096;  // below max_model_len without chunked prefill
  auto r = RunSimulation(c, cost, {Request(0, 0, 100, 2, 0)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("vllm.max_num_batched_tokens"), std::string::npos);
  c = OneInstance(SystemKind::kVllmChunked);
  c.chunk_tokens = 512;  // Mooncake's prefill chunk: not a vLLM knob
  r = RunSimulation(c, cost, {Request(0, 0, 100, 2, 0)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("prefill.chunk_tokens"), std::string::npos);
}

// The roofline's floor reaches every system: a prompt whose prefix is all cached still costs
// one pass over the weights (Mooncake's TTFT was 0.1 ms before the roofline).
TEST(Vllm, FullyCachedPromptStillPaysTheWeightRead) {
  const auto cost = Llama70bA800();
  const double floor_s = static_cast<double>(cost.WeightBytes()) / cost.hardware().hbm_bytes_per_s;
  for (SystemKind system : {SystemKind::kMooncake, SystemKind::kVllmPrefix}) {
    SimConfig c = OneInstance(system);
    auto r = RunSimulation(c, cost, {Request(0, 0, 4096, 2, 0), Request(1, 5000, 4096, 2, 0)});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->records[1].prefix_blocks_hit, 8) << SystemKindName(system);
    EXPECT_NEAR(r->records[1].ttft_s, NanosToSeconds(cost.PrefillChunkTime(4095, 1)), 1e-9);
    EXPECT_GE(r->records[1].ttft_s, floor_s);
  }
}

}  // namespace
}  // namespace mooncake::sim
