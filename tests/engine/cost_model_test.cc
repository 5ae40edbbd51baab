#include "engine/cost_model.h"

#include <gtest/gtest.h>

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

TEST(CostModel, ChunkedPrefillCostsTheSameAsOnePass) {
  const CostModel c = Llama70bA800();
  int64_t sum = 0;
  for (int64_t start = 0; start < 8192; start += 1024)
    sum += c.PrefillTime(start + 1024, start).count();
  EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(c.PrefillTime(8192, 0).count()), 10);
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
  EXPECT_GT(c.MixedStepTime(8, 80000, 2048, 0), c.DecodeStepTime(8, 80000));
  EXPECT_GE(c.MixedStepTime(8, 80000, 2048, 0), c.PrefillTime(2048, 0));
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
