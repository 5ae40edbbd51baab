#include "engine/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/units.h"

namespace mooncake::engine {
namespace {

// Rates so high that the other term of the roofline alone decides a pass's time.
constexpr double kUnbounded = 1e30;
constexpr double kProbeRate = 1e12;

HardwareSpec RatesOnly(double flops_per_s, double bytes_per_s) {
  HardwareSpec h;
  h.gpus = 1;
  h.peak_flops = flops_per_s;
  h.mfu = 1;
  h.hbm_bytes_per_s = bytes_per_s;
  h.mbu = 1;
  h.nic_bytes_per_s = 1;
  return h;
}

// Nearest rank: the smallest error that at least q of the points reach.
double Quantile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// The work of each point as the cost model counts it: FLOPs and bytes of the pass, read back
// from the model at a probe rate with the other term switched off, so the fit uses the cost
// model's own formulas.
struct Work {
  double flops = 0;
  double bytes = 0;
  double measured_s = 0;
};

double MeanLogError(std::span<const Work> work, double flops_per_s, double bytes_per_s) {
  double sum = 0;
  for (const Work& w : work) {
    const double predicted = std::max(w.flops / flops_per_s, w.bytes / bytes_per_s);
    sum += std::abs(std::log(predicted / w.measured_s));
  }
  return sum / static_cast<double>(work.size());
}

struct Box {
  double lo_f, hi_f, lo_b, hi_b;  // log10 of the rates
};

// The best cell of a steps x steps grid over `box`, and its objective.
std::pair<double, double> SearchGrid(std::span<const Work> work, const Box& box, int steps,
                                     double* best_objective) {
  double best_f = box.lo_f, best_b = box.lo_b;
  *best_objective = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= steps; ++i) {
    const double lf = box.lo_f + (box.hi_f - box.lo_f) * i / steps;
    for (int j = 0; j <= steps; ++j) {
      const double lb = box.lo_b + (box.hi_b - box.lo_b) * j / steps;
      const double e = MeanLogError(work, std::pow(10.0, lf), std::pow(10.0, lb));
      if (e < *best_objective) {
        *best_objective = e;
        best_f = lf;
        best_b = lb;
      }
    }
  }
  return {best_f, best_b};
}

std::string Num(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

double PredictedSeconds(const CostModel& cost, const CalibrationPoint& p) {
  const Nanos t = p.kind == CalibrationPoint::Kind::kPrefill
                      ? cost.PrefillChunkTime(p.prefix, p.tokens)
                      : cost.DecodeStepTime(p.batch, p.batch * p.context);
  return NanosToSeconds(t);
}

FitError RelativeErrors(const CostModel& cost, std::span<const CalibrationPoint> points) {
  std::vector<double> errors;
  for (const CalibrationPoint& p : points) {
    errors.push_back(std::abs(PredictedSeconds(cost, p) - p.measured_s) / p.measured_s);
  }
  std::sort(errors.begin(), errors.end());
  FitError e;
  e.p50 = Quantile(errors, 0.5);
  e.p90 = Quantile(errors, 0.9);
  e.max = errors.empty() ? 0 : errors.back();
  return e;
}

Result<RateFit> FitRates(const ModelSpec& model, std::span<const CalibrationPoint> points) {
  if (points.empty()) return InvalidArgument("calibration fit: no measured points");
  const CostModel compute_only(model, RatesOnly(kProbeRate, kUnbounded));
  const CostModel memory_only(model, RatesOnly(kUnbounded, kProbeRate));
  std::vector<Work> work;
  Box box{1e300, -1e300, 1e300, -1e300};
  for (const CalibrationPoint& p : points) {
    if (!(p.measured_s > 0) || !std::isfinite(p.measured_s)) {
      return InvalidArgument(
          fmt::format("calibration fit: measured time {} s is not positive", p.measured_s));
    }
    Work w{PredictedSeconds(compute_only, p) * kProbeRate,
           PredictedSeconds(memory_only, p) * kProbeRate, p.measured_s};
    if (!(w.flops > 0) || !(w.bytes > 0)) {
      return InvalidArgument("calibration fit: a point with no work (0 tokens or 0 sequences)");
    }
    // The rate that would explain this point alone, for each term: the search spans them all.
    box.lo_f = std::min(box.lo_f, std::log10(w.flops / w.measured_s));
    box.hi_f = std::max(box.hi_f, std::log10(w.flops / w.measured_s));
    box.lo_b = std::min(box.lo_b, std::log10(w.bytes / w.measured_s));
    box.hi_b = std::max(box.hi_b, std::log10(w.bytes / w.measured_s));
    work.push_back(w);
  }
  // Beyond the highest single-point rate a term never decides a pass: one decade more is enough.
  box = {box.lo_f - 1, box.hi_f + 1, box.lo_b - 1, box.hi_b + 1};
  constexpr int kSteps = 160;
  double objective = 0;
  auto [lf, lb] = SearchGrid(work, box, kSteps, &objective);
  const double cell_f = (box.hi_f - box.lo_f) / kSteps, cell_b = (box.hi_b - box.lo_b) / kSteps;
  std::tie(lf, lb) =
      SearchGrid(work, {lf - cell_f, lf + cell_f, lb - cell_b, lb + cell_b}, kSteps, &objective);
  RateFit fit;
  fit.flops_per_s = std::pow(10.0, lf);
  fit.bytes_per_s = std::pow(10.0, lb);
  const CostModel fitted(model, RatesOnly(fit.flops_per_s, fit.bytes_per_s));
  fit.error = RelativeErrors(fitted, points);
  std::vector<CalibrationPoint> prefill, decode;
  for (const CalibrationPoint& p : points) {
    (p.kind == CalibrationPoint::Kind::kPrefill ? prefill : decode).push_back(p);
  }
  fit.prefill_error = RelativeErrors(fitted, prefill);
  fit.decode_error = RelativeErrors(fitted, decode);
  return fit;
}

HardwareSpec HardwareFromFit(std::string name, const RateFit& fit, const HostFacts& host) {
  HardwareSpec h;
  h.name = std::move(name);
  h.gpus = 1;
  h.peak_flops = std::max(host.matmul_flops_per_s, fit.flops_per_s);
  h.mfu = fit.flops_per_s / h.peak_flops;
  h.hbm_bytes_per_s = std::max(host.memory_bytes_per_s, fit.bytes_per_s);
  h.mbu = fit.bytes_per_s / h.hbm_bytes_per_s;
  h.hbm_bytes = host.hbm_bytes;
  h.dram_bytes = host.dram_bytes;
  h.nic_bytes_per_s = host.nic_bytes_per_s;
  return h;
}

std::string HardwareIniText(const HardwareSpec& hw, const RateFit& fit, size_t points,
                            std::string_view comment) {
  std::string out;
  size_t start = 0;
  while (start < comment.size()) {
    const size_t end = std::min(comment.find('\n', start), comment.size());
    out += "# " + std::string(comment.substr(start, end - start)) + "\n";
    start = end + 1;
  }
  // Bytes as whole MiB: the INI's units (ParseBytes), rounded down so a capacity never grows.
  out += fmt::format(
      "[hardware]\nname = {}\ngpus = {}\npeak_tflops_per_gpu = {}\nmfu = {}\n"
      "hbm_gb_per_s_per_gpu = {}\nmbu = {}\nhbm_per_gpu = {}MiB\ndram = {}MiB\n"
      "nic_gbit_per_s = {}\n",
      hw.name, hw.gpus, Num(hw.peak_flops / hw.gpus / 1e12), Num(hw.mfu),
      Num(hw.hbm_bytes_per_s / hw.gpus / 1e9), Num(hw.mbu), hw.hbm_bytes / hw.gpus / kMiB,
      hw.dram_bytes / kMiB, Num(hw.nic_bytes_per_s * 8 / 1e9));
  out += fmt::format(
      "\n# The fit: |predicted - measured| / measured over the measured passes.\n"
      "[calibration]\npoints = {}\nerror_p50 = {}\nerror_p90 = {}\nerror_max = {}\n"
      "prefill_error_p50 = {}\nprefill_error_p90 = {}\ndecode_error_p50 = {}\n"
      "decode_error_p90 = {}\neffective_tflops = {}\neffective_gb_per_s = {}\n",
      points, Num(fit.error.p50), Num(fit.error.p90), Num(fit.error.max),
      Num(fit.prefill_error.p50), Num(fit.prefill_error.p90), Num(fit.decode_error.p50),
      Num(fit.decode_error.p90), Num(fit.flops_per_s / 1e12), Num(fit.bytes_per_s / 1e9));
  return out;
}

std::string ModelIniText(const ModelSpec& m, std::string_view comment) {
  std::string out;
  if (!comment.empty()) out += "# " + std::string(comment) + "\n";
  out += fmt::format(
      "[model]\nname = {}\nlayers = {}\nhidden = {}\na = {}\nb = {}\ngqa = {}\n"
      "bytes_per_element = {}\nparams = {}\n",
      m.name, m.layers, m.hidden, Num(m.a), Num(m.b), m.gqa, m.bytes_per_element,
      m.params == std::floor(m.params) && m.params < 1e15 ? fmt::format("{:.0f}", m.params)
                                                          : Num(m.params));
  if (m.max_context > 0) out += fmt::format("max_context = {}\n", m.max_context);
  return out;
}

}  // namespace mooncake::engine
