#include "trace/metrics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trace/run_report.h"

namespace mooncake::trace {
namespace {

TEST(TbtAccumulator, MeanOfLongestTenPercentOfGaps) {
  TbtAccumulator acc(20);  // k = 2
  for (int i = 0; i < 18; ++i) acc.Add(0.01);
  acc.Add(0.5);
  acc.Add(0.3);
  EXPECT_DOUBLE_EQ(acc.Tbt(), 0.4);
}

TEST(TbtAccumulator, SingleGapCountsAndNoneIsZero) {
  TbtAccumulator none(0);
  EXPECT_EQ(none.Tbt(), 0);
  TbtAccumulator one(1);
  one.Add(0.2);
  EXPECT_DOUBLE_EQ(one.Tbt(), 0.2);
}

RequestRecord Done(double ttft, double tbt) {
  RequestRecord r;
  r.outcome = Outcome::kCompleted;
  r.prefilled = true;
  r.ttft_s = ttft;
  r.tbt_s = tbt;
  r.blocks = 4;
  r.input_tokens = 2048;
  r.prefix_blocks_hit = 1;
  return r;
}

TEST(Summarize, CountsOutcomesCapacityAndHitRate) {
  std::vector<RequestRecord> recs = {Done(1, 0.05), Done(2, 0.15), Done(40, 0.05)};
  RequestRecord rej;
  rej.outcome = Outcome::kRejected;
  rej.reject_reason = "ttft_slo";
  recs.push_back(rej);
  Thresholds th;
  th.ttft_s = 30;
  th.tbt_s = {0.1, 0.2};
  Summary s = Summarize(recs, th);
  EXPECT_EQ(s.total, 4u);
  EXPECT_EQ(s.completed, 3u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_EQ(s.rejections["ttft_slo"], 1u);
  ASSERT_EQ(s.effective_capacity.size(), 2u);
  EXPECT_DOUBLE_EQ(s.effective_capacity[0].second, 0.25);
  EXPECT_DOUBLE_EQ(s.effective_capacity[1].second, 0.5);
  EXPECT_DOUBLE_EQ(s.BlockHitRate(), 0.25);  // the rejected one never reached prefill
  EXPECT_NEAR(s.ttft_s.mean, 43.0 / 3, 1e-9);
}

// The prediction error is |measured - predicted| / predicted over completed requests that have
// a prediction; a request without one (0) is left out rather than counted as a 100 % error.
TEST(Summarize, TtftPredictionErrorIsRelativeAndSkipsUnpredicted) {
  std::vector<RequestRecord> recs = {Done(1.0, 0.05), Done(3.0, 0.05), Done(2.0, 0.05)};
  recs[0].ttft_predicted_s = 1.0;  // exact
  recs[1].ttft_predicted_s = 2.0;  // 50 % late
  Summary s = Summarize(recs, Thresholds{});
  EXPECT_NEAR(s.ttft_prediction_error.max, 0.5, 1e-9);
  EXPECT_NEAR(s.ttft_prediction_error.mean, 0.25, 1e-9);
  auto j = nlohmann::json::parse(SummaryJson(s));
  EXPECT_NEAR(j["ttft_prediction_error"]["max"].get<double>(), 0.5, 1e-9);
  const std::string csv = RequestsCsv(recs);
  EXPECT_NE(csv.find(",ttft_predicted_s\n"), std::string::npos);
  EXPECT_NE(csv.find(",2.000000\n"), std::string::npos);
}

TEST(SummaryJson, HasRequestCountsAtTopLevel) {
  Summary s = Summarize({Done(1, 0.05)}, Thresholds{});
  auto j = nlohmann::json::parse(SummaryJson(s));
  EXPECT_EQ(j["requests"]["total"], 1);
  EXPECT_EQ(j["requests"]["completed"], 1);
  EXPECT_EQ(j["requests"]["rejected"], 0);
  EXPECT_EQ(j["requests"]["lost"], 0);
}

TEST(RequestsCsv, OneRowPerRecordAfterHeader) {
  std::string csv = RequestsCsv({Done(1, 0.05), Done(2, 0.1)});
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_EQ(csv.rfind("id,arrival_s,outcome", 0), 0u);
}

}  // namespace
}  // namespace mooncake::trace
