// Fitting a hardware preset to measured engine times (`mooncake calibrate`, docs/MODEL.md
// "Calibrating"): the cost model's roofline has two rates that matter, the effective compute rate
// (peak_flops x mfu) and the effective memory rate (hbm_bytes_per_s x mbu); the fit chooses the
// pair whose predictions are closest to the measured medians, in relative terms.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "engine/cost_model.h"
#include "engine/presets.h"

namespace mooncake::engine {

// One measured pass of the engine.
struct CalibrationPoint {
  enum class Kind { kPrefill, kDecode };
  Kind kind = Kind::kPrefill;
  int64_t prefix = 0;     // prefill: cached tokens before the chunk
  int64_t tokens = 0;     // prefill: new tokens of the chunk
  int64_t batch = 0;      // decode: sequences in the step
  int64_t context = 0;    // decode: KV tokens of each sequence
  double measured_s = 0;  // median wall time of the pass
};

// The cost model's time for the point's pass (PrefillChunkTime or DecodeStepTime).
double PredictedSeconds(const CostModel& cost, const CalibrationPoint& point);

// |predicted - measured| / measured over the points.
struct FitError {
  double p50 = 0;
  double p90 = 0;
  double max = 0;
};
FitError RelativeErrors(const CostModel& cost, std::span<const CalibrationPoint> points);

struct RateFit {
  double flops_per_s = 0;  // peak_flops x mfu
  double bytes_per_s = 0;  // hbm_bytes_per_s x mbu
  FitError error;          // over all points
  FitError prefill_error;  // over the prefill points alone (zeros without any)
  FitError decode_error;   // over the decode points alone
};

// The rates that minimise the mean |log(predicted / measured)| over the points (a search on a
// log grid, refined around the best cell). InvalidArgument without points or with a point whose
// time is not positive and finite.
Result<RateFit> FitRates(const ModelSpec& model, std::span<const CalibrationPoint> points);

// What the fit does not say, measured or chosen separately.
struct HostFacts {
  double matmul_flops_per_s = 0;  // the engine's matmul alone: peak_flops when above the fit
  double memory_bytes_per_s = 0;  // a streaming read: hbm_bytes_per_s when above the fit
  uint64_t hbm_bytes = 0;
  uint64_t dram_bytes = 0;
  double nic_bytes_per_s = 0;
};

// One instance of one "GPU": peak = max(reference, fitted rate), utilisation = fitted / peak, so
// peak x utilisation is the fitted rate exactly and both stay in (0, 1].
HardwareSpec HardwareFromFit(std::string name, const RateFit& fit, const HostFacts& host);

// The preset as configs/hardware/*.ini writes it (read back by HardwareFromIni to the same
// rates within 1e-5 relative), after `comment` (each line prefixed with "# "); the fit's error
// and point count go in a [calibration] section, which HardwareFromIni ignores.
std::string HardwareIniText(const HardwareSpec& hw, const RateFit& fit, size_t points,
                            std::string_view comment);

// A model preset as configs/models/*.ini writes it.
std::string ModelIniText(const ModelSpec& model, std::string_view comment);

}  // namespace mooncake::engine
