// The calibration behind `mooncake calibrate`: the fit finds the rates that made a set of times,
// its preset reads back through HardwareFromIni at those rates, the shipped model presets
// describe the reference model, and the reference model is timed at every grid point.
#include "engine/calibration.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/units.h"
#include "engine/reference_calibration.h"
#include "model/checkpoint.h"
#include "model/config.h"

namespace mooncake::engine {
namespace {

const std::string kModels = std::string(MOONCAKE_CONFIGS_DIR) + "/models";

ModelSpec TinySpec() {
  auto spec = ReferenceModelSpec(*model::PresetConfig("tiny"));
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

HardwareSpec Rates(double flops_per_s, double bytes_per_s) {
  HardwareSpec h;
  h.gpus = 1;
  h.peak_flops = flops_per_s;
  h.mfu = 1;
  h.hbm_bytes_per_s = bytes_per_s;
  h.mbu = 1;
  h.nic_bytes_per_s = 1e9;
  return h;
}

// A grid whose small decode steps are memory-bound and whose long prefills are compute-bound at
// the rates below, so the fit must find both.
std::vector<CalibrationPoint> TimesOf(const CostModel& cost) {
  std::vector<CalibrationPoint> points;
  for (int64_t prefix : {0, 1024, 4096}) {
    for (int64_t tokens : {128, 512, 2048}) {
      CalibrationPoint p;
      p.kind = CalibrationPoint::Kind::kPrefill;
      p.prefix = prefix;
      p.tokens = tokens;
      points.push_back(p);
    }
  }
  for (int64_t batch : {1, 4, 16}) {
    for (int64_t context : {128, 2048}) {
      CalibrationPoint p;
      p.kind = CalibrationPoint::Kind::kDecode;
      p.batch = batch;
      p.context = context;
      points.push_back(p);
    }
  }
  for (CalibrationPoint& p : points) p.measured_s = PredictedSeconds(cost, p);
  return points;
}

TEST(EngineCalibrationTest, FitRecoversTheRatesThatMadeTheTimes) {
  const CostModel truth(TinySpec(), Rates(12e9, 3e9));
  const std::vector<CalibrationPoint> points = TimesOf(truth);
  auto fit = FitRates(TinySpec(), points);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_NEAR(fit->flops_per_s / 12e9, 1.0, 0.02);
  EXPECT_NEAR(fit->bytes_per_s / 3e9, 1.0, 0.02);
  EXPECT_LT(fit->error.p90, 0.02);
  EXPECT_LE(fit->error.p50, fit->error.p90);
  EXPECT_LE(fit->error.p90, fit->error.max);
}

TEST(EngineCalibrationTest, HardwareIniLoadsWithHardwareFromIniAtTheFittedRates) {
  RateFit fit;
  fit.flops_per_s = 12.345e9;
  fit.bytes_per_s = 6.789e9;
  fit.error = {0.05, 0.2, 0.3};
  HostFacts host;
  host.matmul_flops_per_s = 80e9;  // above the fit: the peak, mfu the share
  host.memory_bytes_per_s = 2e9;   // below the fit: the fit is the peak, mbu 1
  host.hbm_bytes = 8 * kGiB;
  host.dram_bytes = 4 * kGiB;
  host.nic_bytes_per_s = 5e9;
  const HardwareSpec hw = HardwareFromFit("cpu-test", fit, host);
  const std::string text = HardwareIniText(hw, fit, 18, "line one\nline two");
  EXPECT_EQ(text.rfind("# line one\n# line two\n[hardware]\n", 0), 0u) << text;
  auto values = ParseIni(text, "calibrated.ini");
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  auto loaded = HardwareFromIni(*values, "calibrated.ini");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->name, "cpu-test");
  EXPECT_EQ(loaded->gpus, 1);
  EXPECT_NEAR(loaded->peak_flops * loaded->mfu / fit.flops_per_s, 1.0, 1e-5);
  EXPECT_NEAR(loaded->hbm_bytes_per_s * loaded->mbu / fit.bytes_per_s, 1.0, 1e-5);
  EXPECT_NEAR(loaded->peak_flops / 80e9, 1.0, 1e-5);
  EXPECT_DOUBLE_EQ(loaded->mbu, 1.0);
  EXPECT_EQ(loaded->hbm_bytes, 8 * kGiB);
  EXPECT_EQ(loaded->dram_bytes, 4 * kGiB);
  EXPECT_NEAR(loaded->nic_bytes_per_s / 5e9, 1.0, 1e-5);
  EXPECT_EQ(values->at("calibration.error_p90"), "0.2");
  EXPECT_EQ(values->at("calibration.points"), "18");
}

TEST(EngineCalibrationTest, FitRefusesATimeThatIsNotPositive) {
  std::vector<CalibrationPoint> points = TimesOf(CostModel(TinySpec(), Rates(1e10, 1e10)));
  points[3].measured_s = 0;
  auto fit = FitRates(TinySpec(), points);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.status().message().find("not positive"), std::string::npos);
  EXPECT_FALSE(FitRates(TinySpec(), {}).ok());
}

// configs/models/{tiny,mini,small}.ini are the reference presets as the cost model counts them,
// so a job with --model.preset tiny predicts the model that engine.model tiny computes.
TEST(EngineCalibrationTest, ModelPresetsDescribeTheReferenceModel) {
  for (const std::string& name : model::PresetNames()) {
    SCOPED_TRACE(name);
    auto config = model::PresetConfig(name);
    ASSERT_TRUE(config.ok());
    auto derived = ReferenceModelSpec(*config);
    ASSERT_TRUE(derived.ok()) << derived.status().ToString();
    auto shipped = LoadModelPreset(kModels, name);
    ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
    EXPECT_EQ(shipped->name, name);
    EXPECT_EQ(shipped->layers, derived->layers);
    EXPECT_EQ(shipped->hidden, derived->hidden);
    EXPECT_EQ(shipped->gqa, derived->gqa);
    EXPECT_EQ(shipped->bytes_per_element, derived->bytes_per_element);
    EXPECT_DOUBLE_EQ(shipped->a, derived->a);
    EXPECT_DOUBLE_EQ(shipped->b, derived->b);
    EXPECT_DOUBLE_EQ(shipped->params, derived->params);
    // The KV the cost model moves per token is the KV the reference model computes.
    const CostModel cost(*shipped, Rates(1e9, 1e9), 512);
    const model::KvShape shape{config->num_layers, config->num_kv_heads, config->head_dim, 512};
    EXPECT_EQ(cost.KvBytesPerBlock(), shape.BlockBytes());
  }
}

TEST(EngineCalibrationTest, MeasureReferenceTimesEveryPointOfTheGrid) {
  auto loaded = model::LoadModel("tiny", 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto transformer = model::Transformer::Create(std::move(*loaded));
  ASSERT_TRUE(transformer.ok());
  CalibrationGrid grid;
  grid.prefill_chunks = {8, 24};
  grid.prefill_prefixes = {0, 40};
  grid.decode_batches = {1, 3};
  grid.decode_contexts = {16};
  grid.repeats = 2;
  grid.block_tokens = 16;
  size_t calls = 0;
  auto points = MeasureReference(*transformer, grid,
                                 [&](const CalibrationPoint&, size_t index, size_t total) {
                                   EXPECT_EQ(index, ++calls);
                                   EXPECT_EQ(total, 6u);
                                 });
  ASSERT_TRUE(points.ok()) << points.status().ToString();
  ASSERT_EQ(points->size(), 6u);
  EXPECT_EQ(calls, 6u);
  EXPECT_EQ((*points)[3].kind, CalibrationPoint::Kind::kPrefill);
  EXPECT_EQ((*points)[3].prefix, 40);
  EXPECT_EQ((*points)[3].tokens, 24);
  EXPECT_EQ((*points)[5].kind, CalibrationPoint::Kind::kDecode);
  EXPECT_EQ((*points)[5].batch, 3);
  EXPECT_EQ((*points)[5].context, 16);
  for (const CalibrationPoint& p : *points) EXPECT_GT(p.measured_s, 0);
  grid.decode_batches = {0};
  auto bad = MeasureReference(*transformer, grid, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("decode batch 0"), std::string::npos);
}

}  // namespace
}  // namespace mooncake::engine
