#include "engine/calibrate_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "common/cli/subcommand.h"
#include "common/units.h"
#include "common/utc_time.h"
#include "engine/calibration.h"
#include "engine/engine_options.h"
#include "engine/reference_calibration.h"
#include "model/checkpoint.h"
#include "model/matmul.h"

namespace mooncake::engine {

namespace {

namespace po = boost::program_options;

po::options_description CalibrateOptionsDescription() {
  po::options_description d(
      "Usage: mooncake calibrate --model DIR|PRESET [--seed N] [--out FILE.ini] [options]\n\n"
      "Measures the reference engine on this machine (prefill time against chunk and cached\n"
      "prefix, decode step time against batch and context; medians of repeats) and writes a\n"
      "hardware preset (configs/hardware/*.ini format) whose cost model predicts those times,\n"
      "with the fit's error. Progress and the report go to stderr.\n\nOptions");
  AddReferenceModelOptions(
      d, "a Hugging Face LLaMA checkpoint folder or a preset: tiny | mini | small");
  d.add_options()("out", po::value<std::string>(),
                  "write the hardware preset here (default: stdout)")(
      "model-ini", po::value<std::string>(),
      "also write the model preset (configs/models/*.ini format) the fit was made for")(
      "quick", po::bool_switch(),
      "a small grid for tests: prefill.chunks 16,64, prefill.prefixes 0,128, decode.batches 1,4, "
      "decode.contexts 32,128, repeats 3")(
      "clock", po::value<std::string>()->default_value("wall"),
      "what a pass's time is: wall (as a live run measures) | cpu (the process's CPU time, "
      "steadier on a shared machine)")("repeats", po::value<int>(),
                                       "timed passes per point, after one untimed (default 5)")(
      "prefill.chunks", po::value<std::string>(),
      "new tokens of a prefill pass, comma-separated (default 128,512,2048)")(
      "prefill.prefixes", po::value<std::string>(),
      "cached tokens before it (default 0,1024,4096)")(
      "decode.batches", po::value<std::string>(), "sequences in a decode step (default 1,4,16)")(
      "decode.contexts", po::value<std::string>(),
      "KV tokens of each decoding sequence (default 128,512,2048)")(
      "hardware.name", po::value<std::string>(), "the preset's name (default <model>-calibrated)")(
      "hardware.hbm", po::value<std::string>(),
      "memory for a decode instance's KV, e.g. 8GiB (default half of this machine's memory)")(
      "hardware.dram", po::value<std::string>(),
      "KV cache memory of a prefill instance (default half of this machine's memory)")(
      "hardware.nic_gbit_per_s", po::value<double>(),
      "KV transfer rate between instances (default the measured memory read rate: ranks of "
      "one host move KV through shared memory)");
  return d;
}

int Usage(const std::string& message) { return cli::SubcommandUsage("calibrate", message); }

Result<std::vector<int64_t>> ParseList(const std::string& key, const std::string& text,
                                       int64_t minimum) {
  std::vector<int64_t> values;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < minimum || v > (int64_t{1} << 24)) {
      return InvalidArgument(fmt::format("{} = '{}': '{}' is not a whole number in [{}, {}]", key,
                                         text, item, minimum, int64_t{1} << 24));
    }
    values.push_back(v);
  }
  if (values.empty()) return InvalidArgument(fmt::format("{} = '{}': no values", key, text));
  return values;
}

uint64_t HostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 16 * kGiB;
}

std::string HostName() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string("this host");
}

std::string Describe(const engine::CalibrationPoint& p) {
  return p.kind == engine::CalibrationPoint::Kind::kPrefill
             ? fmt::format("prefill {:>5} tokens after {:>5}", p.tokens, p.prefix)
             : fmt::format("decode  batch {:>4} x {:>5} context", p.batch, p.context);
}

// The measurement grid from --quick, the list options, --clock and --repeats. An error is a
// usage error's message.
Status GridFrom(const po::variables_map& vm, engine::CalibrationGrid* grid) {
  const bool quick = vm["quick"].as<bool>();
  grid->prefill_chunks =
      quick ? std::vector<int64_t>{16, 64} : std::vector<int64_t>{128, 512, 2048};
  grid->prefill_prefixes =
      quick ? std::vector<int64_t>{0, 128} : std::vector<int64_t>{0, 1024, 4096};
  grid->decode_batches = quick ? std::vector<int64_t>{1, 4} : std::vector<int64_t>{1, 4, 16};
  grid->decode_contexts =
      quick ? std::vector<int64_t>{32, 128} : std::vector<int64_t>{128, 512, 2048};
  grid->repeats = quick ? 3 : 5;
  const std::pair<const char*, std::vector<int64_t>*> lists[] = {
      {"prefill.chunks", &grid->prefill_chunks},
      {"prefill.prefixes", &grid->prefill_prefixes},
      {"decode.batches", &grid->decode_batches},
      {"decode.contexts", &grid->decode_contexts}};
  for (const auto& [key, target] : lists) {
    if (!vm.count(key)) continue;
    auto values =
        ParseList(key, vm[key].as<std::string>(), key == std::string("prefill.prefixes") ? 0 : 1);
    if (!values.ok()) return values.status();
    *target = std::move(*values);
  }
  const std::string clock = vm["clock"].as<std::string>();
  if (clock != "wall" && clock != "cpu") {
    return InvalidArgument(fmt::format("clock = '{}': wall | cpu", clock));
  }
  grid->clock =
      clock == "cpu" ? engine::CalibrationClock::kProcessCpu : engine::CalibrationClock::kWall;
  if (vm.count("repeats")) {
    grid->repeats = vm["repeats"].as<int>();
    if (grid->repeats < 1 || grid->repeats > 1000) {
      return InvalidArgument(fmt::format("repeats = {}: must be in [1, 1000]", grid->repeats));
    }
  }
  return Status::Ok();
}

// The host's memory and network as given (hardware.hbm, .dram, .nic_gbit_per_s) or half of this
// host's memory each. An error is a usage error's message.
Status HostFactsFrom(const po::variables_map& vm, engine::HostFacts* host) {
  host->hbm_bytes = HostMemoryBytes() / 2;
  host->dram_bytes = HostMemoryBytes() / 2;
  for (const char* key : {"hardware.hbm", "hardware.dram"}) {
    if (!vm.count(key)) continue;
    auto bytes = ParseBytes(vm[key].as<std::string>());
    if (!bytes.ok() || *bytes < kMiB) {
      return InvalidArgument(fmt::format("{} = '{}': a size of at least 1MiB, like 8GiB", key,
                                         vm[key].as<std::string>()));
    }
    (key == std::string("hardware.hbm") ? host->hbm_bytes : host->dram_bytes) = *bytes;
  }
  if (vm.count("hardware.nic_gbit_per_s")) {
    const double gbit = vm["hardware.nic_gbit_per_s"].as<double>();
    if (!(gbit > 0) || !std::isfinite(gbit)) {
      return InvalidArgument(fmt::format("hardware.nic_gbit_per_s = {}: must be > 0", gbit));
    }
    host->nic_bytes_per_s = gbit * 1e9 / 8;
  }
  return Status::Ok();
}

// The reference model of --model and its shape as the cost model sees it.
struct Reference {
  std::optional<model::Transformer> transformer;
  engine::ModelSpec spec;
};

// Loads --model; on failure says why and returns the exit code (2: not found), else -1.
int LoadReference(const std::string& spec, uint64_t seed, Reference* out) {
  auto loaded = model::LoadModel(spec, seed);
  if (!loaded.ok()) {
    std::cerr << "mooncake calibrate: --model " << spec << ": " << loaded.status().ToString()
              << "\n";
    return loaded.status().code() == ErrorCode::kNotFound ? 2 : 1;
  }
  auto transformer = model::Transformer::Create(std::move(*loaded));
  if (!transformer.ok()) {
    std::cerr << "mooncake calibrate: --model " << spec << ": " << transformer.status().ToString()
              << "\n";
    return 1;
  }
  auto model_spec = engine::ReferenceModelSpec(transformer->config());
  if (!model_spec.ok()) {
    std::cerr << "mooncake calibrate: --model " << spec << ": " << model_spec.status().ToString()
              << "\n";
    return 1;
  }
  out->transformer.emplace(std::move(*transformer));
  out->spec = std::move(*model_spec);
  return -1;
}

// Each point's measured and predicted time, then the fit's errors and rates.
void PrintFit(const engine::CostModel& cost, const std::vector<engine::CalibrationPoint>& points,
              const engine::RateFit& fit) {
  for (const engine::CalibrationPoint& p : points) {
    const double predicted = engine::PredictedSeconds(cost, p);
    std::cerr << fmt::format("calibrate: {}: measured {:.3f} ms, predicted {:.3f} ms ({:+.1f} %)\n",
                             Describe(p), p.measured_s * 1e3, predicted * 1e3,
                             (predicted - p.measured_s) / p.measured_s * 100);
  }
  std::cerr << fmt::format(
      "calibrate: fit over {} points: error p50 {:.1f} %, p90 {:.1f} %, max {:.1f} % (prefill "
      "p50 {:.1f} % p90 {:.1f} %, decode p50 {:.1f} % p90 {:.1f} %); effective {:.3g} GFLOP/s, "
      "{:.3g} GB/s\n",
      points.size(), fit.error.p50 * 100, fit.error.p90 * 100, fit.error.max * 100,
      fit.prefill_error.p50 * 100, fit.prefill_error.p90 * 100, fit.decode_error.p50 * 100,
      fit.decode_error.p90 * 100, fit.flops_per_s / 1e9, fit.bytes_per_s / 1e9);
}

// --model-ini (the model's ini), then the preset to --out or stdout. Returns the exit code.
int WriteResults(const po::variables_map& vm, const engine::ModelSpec& model_spec,
                 const std::string& ini, std::ofstream& model_file, std::ofstream& out_file) {
  if (model_file.is_open()) {
    model_file << engine::ModelIniText(
        model_spec, fmt::format("The reference model {} as the cost model sees it "
                                "(mooncake calibrate).",
                                model_spec.name));
    if (!model_file.flush()) {
      std::cerr << "mooncake calibrate: --model-ini: write failed\n";
      return 1;
    }
  }
  if (!out_file.is_open()) {
    std::cout << ini;
    return 0;
  }
  out_file << ini;
  if (!out_file.flush()) {
    std::cerr << "mooncake calibrate: --out " << vm["out"].as<std::string>() << ": write failed\n";
    return 1;
  }
  std::cerr << "calibrate: wrote " << vm["out"].as<std::string>() << "\n";
  return 0;
}

}  // namespace

int RunCalibrate(int argc, char** argv) {
  const po::options_description desc = CalibrateOptionsDescription();
  po::variables_map vm;
  if (int code = cli::ParseSubcommand("calibrate", argc, argv, desc, &vm); code >= 0) return code;
  if (!vm.count("model")) return Usage("--model is required (a checkpoint folder or a preset)");
  engine::CalibrationGrid grid;
  if (Status s = GridFrom(vm, &grid); !s.ok()) return Usage(s.message());
  const std::string clock = vm["clock"].as<std::string>();
  engine::HostFacts host;
  if (Status s = HostFactsFrom(vm, &host); !s.ok()) return Usage(s.message());
  const std::string spec = vm["model"].as<std::string>();
  Reference reference;
  if (int code = LoadReference(spec, vm["seed"].as<uint64_t>(), &reference); code >= 0) {
    return code;
  }
  const engine::ModelSpec& model_spec = reference.spec;

  // Opened before minutes of measuring, so a bad path fails at once; after the model, so a
  // wrong --model leaves no empty file behind.
  std::ofstream out_file, model_file;
  for (auto [key, file] : {std::pair{"out", &out_file}, std::pair{"model-ini", &model_file}}) {
    if (!vm.count(key)) continue;
    file->open(vm[key].as<std::string>());
    if (!*file) {
      return Usage(fmt::format("--{} {}: cannot write: {}", key, vm[key].as<std::string>(),
                               std::strerror(errno)));
    }
  }

  std::cerr << fmt::format("calibrate: {} on {} with {}, {} points, median {} time of {} each\n",
                           model_spec.name, HostName(), model::MatmulBackend(), grid.Points(),
                           clock, grid.repeats);
  auto points = engine::MeasureReference(
      *reference.transformer, grid, [](const engine::CalibrationPoint& p, size_t i, size_t n) {
        std::cerr << fmt::format("calibrate: [{:>2}/{}] {}: {:.3f} ms\n", i, n, Describe(p),
                                 p.measured_s * 1e3);
      });
  if (!points.ok()) {
    std::cerr << "mooncake calibrate: " << points.status().ToString() << "\n";
    return 1;
  }
  host.matmul_flops_per_s = engine::MeasureMatmulFlopsPerSecond(3, grid.clock);
  host.memory_bytes_per_s =
      engine::MeasureReadBytesPerSecond((vm["quick"].as<bool>() ? 32 : 256) * kMiB, 3, grid.clock);
  if (host.nic_bytes_per_s == 0) host.nic_bytes_per_s = host.memory_bytes_per_s;
  auto fit = engine::FitRates(model_spec, *points);
  if (!fit.ok()) {
    std::cerr << "mooncake calibrate: " << fit.status().ToString() << "\n";
    return 1;
  }
  const std::string name = vm.count("hardware.name") ? vm["hardware.name"].as<std::string>()
                                                     : model_spec.name + "-calibrated";
  const engine::HardwareSpec hw = engine::HardwareFromFit(name, *fit, host);
  PrintFit(engine::CostModel(model_spec, hw), *points, *fit);
  const std::string comment = fmt::format(
      "Measured by `mooncake calibrate --model {} --seed {} --clock {}` on {}, {}:\n"
      "the reference engine ({}), one process, for the model preset {} (bytes_per_element {}).\n"
      "Effective {:.3g} GFLOP/s (mfu of the engine's {:.3g} GFLOP/s matmul) and {:.3g} GB/s\n"
      "(mbu of a {:.3g} GB/s streaming read); hbm and dram as given or half of this host's memory.",
      spec, vm["seed"].as<uint64_t>(), clock, HostName(), FormatUtcNow("%Y-%m-%d %H:%M UTC"),
      model::MatmulBackend(), model_spec.name, model_spec.bytes_per_element, fit->flops_per_s / 1e9,
      host.matmul_flops_per_s / 1e9, fit->bytes_per_s / 1e9, host.memory_bytes_per_s / 1e9);
  const std::string ini = engine::HardwareIniText(hw, *fit, points->size(), comment);
  return WriteResults(vm, model_spec, ini, model_file, out_file);
}

}  // namespace mooncake::engine
