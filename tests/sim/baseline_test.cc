// Baseline behaviours: in a colocated (vLLM-like) instance a long prefill stalls the decode of
// the batch and raises its TBT; Mooncake's separate decode pool does not see it; chunked
// prefill bounds the stall.
#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "sim_test_util.h"

namespace mooncake::sim {
namespace {

using testing::Llama70bA800;
using testing::Request;

// A short prompt decoding 200 tokens from t = 0, and a 32k-token prompt arriving at t = 1 s.
std::vector<trace::TraceRequest> Scenario(bool with_long_prompt) {
  std::vector<trace::TraceRequest> v = {Request(0, 0, 1000, 200, 0)};
  if (with_long_prompt) v.push_back(Request(1, 1000, 32768, 2, 100));
  return v;
}

double TbtOfShortRequest(SystemKind system, bool with_long_prompt) {
  const auto cost = Llama70bA800();
  SimConfig c;
  c.system = system;
  c.scheduler.prefill_instances = 1;
  c.scheduler.decode_instances = 1;
  c.scheduler.admission = false;  // vllm_chunked: vLLM's default budget of 512 tokens a step
  auto r = RunSimulation(c, cost, Scenario(with_long_prompt));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r->records[0].outcome, trace::Outcome::kCompleted);
  return r->records[0].tbt_s;
}

TEST(Baseline, LongPrefillRaisesTbtOfCoBatchedRequestsInVllm) {
  const double alone = TbtOfShortRequest(SystemKind::kVllm, false);
  const double disturbed = TbtOfShortRequest(SystemKind::kVllm, true);
  // The 32k prefill (about 3.5 s) lands in one gap of the 20 longest: the mean jumps.
  EXPECT_LT(alone, 0.02);
  EXPECT_GT(disturbed, 0.1);
}

TEST(Baseline, DisaggregatedDecodeIsNotDisturbedByLongPrefill) {
  const double alone = TbtOfShortRequest(SystemKind::kMooncake, false);
  const double disturbed = TbtOfShortRequest(SystemKind::kMooncake, true);
  EXPECT_LT(disturbed, 0.02);
  EXPECT_NEAR(disturbed, alone, 0.005);
}

TEST(Baseline, ChunkedPrefillBoundsTheStall) {
  const double vllm = TbtOfShortRequest(SystemKind::kVllm, true);
  const double chunked = TbtOfShortRequest(SystemKind::kVllmChunked, true);
  EXPECT_LT(chunked, vllm / 2);  // steps of a 512-token chunk at a 32k prefix still cost ~0.1 s
  EXPECT_GT(chunked, TbtOfShortRequest(SystemKind::kVllmChunked, false));
}

}  // namespace
}  // namespace mooncake::sim
