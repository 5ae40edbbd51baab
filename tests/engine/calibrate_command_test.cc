// `mooncake calibrate --quick` on the tiny preset, in process: it writes a hardware preset that
// HardwareFromIni loads, whose reported fit error is finite and within a loose bound, and which
// makes a cost model with configs/models/tiny.ini.
#include "engine/calibrate_command.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../support/scratch_dir.h"
#include "engine/cost_model.h"
#include "engine/ini.h"
#include "engine/presets.h"

namespace mooncake::engine {
namespace {

int RunCalibrateArgs(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return RunCalibrate(static_cast<int>(argv.size()), argv.data());
}

TEST(CalibrateCommand, QuickTinyWritesAPresetThatLoadsWithItsFitError) {
  test_support::ScratchDir dir("calibrate");
  const std::string out = dir.path() + "/tiny-cpu.ini";
  testing::internal::CaptureStderr();
  // CPU time: the machine running the tests is shared, and the bound is about the fit.
  const int code = RunCalibrateArgs({"calibrate", "--model", "tiny", "--quick", "--clock", "cpu",
                                     "--out", out, "--hardware.name", "tiny-cpu"});
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(code, 0) << err;
  EXPECT_NE(err.find("calibrate: [ 8/8] decode"), std::string::npos) << err;
  EXPECT_NE(err.find("calibrate: wrote " + out), std::string::npos) << err;

  auto values = engine::ReadIniFile(out);
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  auto hw = engine::HardwareFromIni(*values, out);
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  EXPECT_EQ(hw->name, "tiny-cpu");
  EXPECT_EQ(hw->gpus, 1);
  EXPECT_GT(hw->hbm_bytes, 0u);
  EXPECT_GT(hw->dram_bytes, 0u);
  EXPECT_GT(hw->nic_bytes_per_s, 0);
  EXPECT_EQ(values->at("calibration.points"), "8");
  const double p50 = std::stod(values->at("calibration.error_p50"));
  const double p90 = std::stod(values->at("calibration.error_p90"));
  EXPECT_TRUE(std::isfinite(p50) && std::isfinite(p90));
  // Loose: the roofline has one compute rate for this engine's fast matmuls and its slower
  // attention (docs/MODEL.md "Calibrating"); tiny, quick and a shared machine add noise.
  EXPECT_LE(p50, p90);
  EXPECT_LT(p50, 1.0);
  EXPECT_LT(p90, 3.0);

  auto model = engine::LoadModelPreset(std::string(MOONCAKE_CONFIGS_DIR) + "/models", "tiny");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const engine::CostModel cost(*model, *hw);
  EXPECT_GT(cost.DecodeStepTime(1, 32).count(), 0);
}

}  // namespace
}  // namespace mooncake::engine
