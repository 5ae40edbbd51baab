#include "engine/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mooncake::engine {
namespace {

// LLaMA3-70B on 8 x A800 (papers/NOTES.md, Table 1), values computed by hand below.
CostModel Llama70bA800(double mfu = 0.5) {
  ModelSpec m{"llama3-70b", 80, 8192, 4, 22, 8, 2, 70.6e9};
  HardwareSpec h;
  h.gpus = 8;
  h.peak_flops = 8 * 312e12;
  h.mfu = mfu;
  h.hbm_bytes_per_s = 8 * 2039e9;
  h.mbu = 0.8;
  h.hbm_bytes = 8ULL * 80 * (1ULL << 30);
  h.nic_bytes_per_s = 100e9;
  return CostModel(m, h);
}

// A threshold written in a file is the number the user typed: 30 s, not 30.000000000000004.
TEST(NanosToSeconds, WholeSecondsStayExact) {
  EXPECT_EQ(NanosToSeconds(std::chrono::seconds(30)), 30.0);
  EXPECT_EQ(NanosToSeconds(std::chrono::milliseconds(100)), 0.1);
  EXPECT_EQ(NanosToSeconds(std::chrono::milliseconds(300)), 0.3);
}

TEST(CostModel, PrefillFlopsMatchTable1) {
  // 80 * (4 * 8192^2 * 8192 + 22 * 8192 * 8192^2) = 80 * 26 * 8192^3
  EXPECT_DOUBLE_EQ(Llama70bA800().PrefillFlops(8192), 1143492092887040.0);
  EXPECT_DOUBLE_EQ(Llama70bA800().PrefillFlops(0), 0.0);
}

TEST(CostModel, PrefillTimeIsFlopsOverPeakTimesMfu) {
  // 1.14349209288704e15 / (2.496e15 * 0.5) = 0.916260 s
  EXPECT_NEAR(NanosToSeconds(Llama70bA800().PrefillTime(8192, 0)), 0.9162597, 1e-6);
  EXPECT_NEAR(NanosToSeconds(Llama70bA800(1.0).PrefillTime(8192, 0)), 0.4581298, 1e-6);
}

TEST(CostModel, CachedPrefixIsSkipped) {
  // flops(4096) = 80 * (4*4096^2*8192 + 22*4096*8192^2) = 5.2776558133248e14
  // (1.14349209288704e15 - 5.2776558133248e14) / 1.248e15 = 0.493370 s
  EXPECT_NEAR(NanosToSeconds(Llama70bA800().PrefillTime(8192, 4096)), 0.4933706, 1e-6);
  EXPECT_EQ(Llama70bA800().PrefillTime(8192, 8192).count(), 0);
  EXPECT_EQ(Llama70bA800().PrefillTime(100, 500).count(), 0);  // prefix clamps to input
}

TEST(CostModel, ComputeBoundChunksCostTheSameAsOnePass) {
  // A 1024-token chunk computes for about 0.1 s, far above the 11 ms of reading the weights: the
  // flops telescope, so chunking costs nothing.
  const CostModel c = Llama70bA800();
  int64_t sum = 0;
  for (int64_t start = 0; start < 8192; start += 1024) {
    sum += c.PrefillChunkTime(start, 1024).count();
  }
  EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(c.PrefillTime(8192, 0).count()), 10);
  EXPECT_EQ(c.PrefillTime(8192, 0, 1024).count(), sum);
}

// The roofline's floor: a forward pass of even one token reads every weight from HBM.
// 141.2e9 B / (8 x 2039e9 B/s) = 8.656 ms is the bound at full bandwidth; the model reads at
// mbu 0.8: (141.2e9 + 327680) / 13.0496e12 = 10.8203 ms.
TEST(CostModel, OneTokenOfPrefillCostsAtLeastReadingTheWeights) {
  const CostModel c = Llama70bA800();
  const double floor_s = static_cast<double>(c.WeightBytes()) / c.hardware().hbm_bytes_per_s;
  EXPECT_NEAR(floor_s, 0.0086562, 1e-6);
  EXPECT_GE(NanosToSeconds(c.PrefillTime(1, 0)), floor_s);
  EXPECT_NEAR(NanosToSeconds(c.PrefillTime(1, 0)), 0.0108203, 1e-6);
  // All but the last token cached (12,000 tokens): attention also reads the prefix's KV,
  // (141.2e9 + 12001 x 327680) / 13.0496e12 = 11.1216 ms.
  EXPECT_NEAR(NanosToSeconds(c.PrefillTime(12001, 12000)), 0.0111216, 1e-6);
  // Every chunk is a pass: 64 chunks of 1 token cost 64 weight reads.
  EXPECT_GE(c.PrefillTime(64, 0, 1), 64 * c.PrefillTime(1, 0) - Nanos(64));
}

// Compute takes over at the length where flops(n) / (peak x mfu) passes the memory time:
// 80 (4 n^2 8192 + 22 n 8192^2) / 1.248e15 against (141.2e9 + 327680 n) / 13.0496e12 crosses
// between n = 114 (10.8163 < 10.8231 ms) and n = 115 (10.9115 > 10.8231 ms); after an 8k cached
// prefix, attention adds flops and the crossover falls to 86.
TEST(CostModel, PrefillTurnsComputeBoundAt115TokensOrAt86AfterAn8kPrefix) {
  const CostModel c = Llama70bA800();
  const HardwareSpec& h = c.hardware();
  auto memory_s = [&](int64_t prefix, int64_t n) {
    return (static_cast<double>(c.WeightBytes()) +
            static_cast<double>(c.KvBytesPerToken()) * static_cast<double>(prefix + n)) /
           (h.hbm_bytes_per_s * h.mbu);
  };
  auto compute_s = [&](int64_t prefix, int64_t n) {
    return (c.PrefillFlops(prefix + n) - c.PrefillFlops(prefix)) / (h.peak_flops * h.mfu);
  };
  // The first length whose pass costs its compute time rather than its memory time.
  auto crossover = [&](int64_t prefix) {
    int64_t n = 1;
    while (std::abs(NanosToSeconds(c.PrefillChunkTime(prefix, n)) - compute_s(prefix, n)) > 1e-9) {
      EXPECT_NEAR(NanosToSeconds(c.PrefillChunkTime(prefix, n)), memory_s(prefix, n), 1e-9) << n;
      ++n;
    }
    return n;
  };
  EXPECT_EQ(crossover(0), 115);
  EXPECT_EQ(crossover(8192), 86);
  EXPECT_NEAR(NanosToSeconds(c.PrefillChunkTime(0, 114)), 0.0108231, 1e-6);  // memory
  EXPECT_NEAR(NanosToSeconds(c.PrefillChunkTime(0, 115)), 0.0109115, 1e-6);  // compute
  EXPECT_NEAR(NanosToSeconds(c.PrefillChunkTime(0, 8192)), compute_s(0, 8192), 1e-9);
}

TEST(CostModel, KvBytesPerTokenAndBlock) {
  EXPECT_EQ(Llama70bA800().KvBytesPerToken(), 327680u);       // 80 * 2 * 1024 * 2
  EXPECT_EQ(Llama70bA800().KvBytesPerBlock(), 160ULL << 20);  // 160 MiB per 512 tokens
}

TEST(CostModel, DecodeStepIsMemoryBoundForLongContexts) {
  // bytes = 141.2e9 weights + 320000 * 327680 KV = 2.460576e11; / (16.312e12 * 0.8) = 18.8556 ms
  EXPECT_NEAR(NanosToSeconds(Llama70bA800().DecodeStepTime(32, 320000)), 0.0188556, 1e-6);
  // An empty batch still reads every weight: 141.2e9 / 13.0496e12 = 10.820 ms
  EXPECT_NEAR(NanosToSeconds(Llama70bA800().DecodeStepTime(0, 0)), 0.0108203, 1e-6);
}

TEST(CostModel, DecodeStepIsComputeBoundForHugeBatches) {
  // 4096 requests of 1 token: compute 2 * 70.6e9 * 4096 / 1.248e15 = 0.46342 s
  const CostModel c = Llama70bA800();
  EXPECT_NEAR(NanosToSeconds(c.DecodeStepTime(4096, 4096)), 0.4634, 1e-3);
}

TEST(CostModel, MixedStepAddsPrefillComputeToDecode) {
  const CostModel c = Llama70bA800();
  StepWork w;
  w.decode_seqs = 8;
  w.decode_context_tokens = 80000;
  w.AddChunk(c, 0, 2048);
  EXPECT_GT(c.StepTime(w), c.DecodeStepTime(8, 80000));
  EXPECT_GE(c.StepTime(w), c.PrefillTime(2048, 0));
}

TEST(CostModel, BatchedPromptsShareOneWeightRead) {
  // Eight 10-token prompts in one pass are memory-bound: one weight read, not eight.
  const CostModel c = Llama70bA800();
  StepWork w;
  for (int i = 0; i < 8; ++i) w.AddChunk(c, 0, 10);
  EXPECT_EQ(w.prefill_tokens, 80);
  EXPECT_EQ(w.prefill_kv_tokens, 80);
  EXPECT_EQ(c.StepTime(w), c.PrefillChunkTime(0, 80));
  EXPECT_LT(c.StepTime(w), 2 * c.PrefillTime(10, 0));
}

TEST(CostModel, TransferTimeIsBytesOverNicBandwidth) {
  // 160 MiB / 100 GB/s = 1.6777 ms
  EXPECT_NEAR(NanosToSeconds(Llama70bA800().TransferTime(160ULL << 20)), 0.00167772, 1e-7);
}

TEST(CostModel, HbmKvCapacityLeavesRoomForWeights) {
  // (687194767360 - 141200000000) / 327680 = 1,666,243 tokens
  EXPECT_EQ(Llama70bA800().HbmKvTokenCapacity(), 1666243);
}

}  // namespace
}  // namespace mooncake::engine
