#include "app/options.h"

#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cstdlib>
#include <iostream>

#include "app/job_option_groups.h"
#include "app/run.h"
#include "common/cli/command_line.h"
#include "common/cli/config_file.h"
#include "common/cli/option_values.h"
#include "common/data_dir.h"
#include "gpu/gpu.h"

namespace po = boost::program_options;

namespace mooncake::app {
namespace {

constexpr const char* kVersion = "mooncake 0.1.0";
constexpr double kLiveDefaultTimeScale = 10.0;

using cli::DurationOption;
using cli::SizeOption;

// One line naming the option, the value and what is allowed; exit status 2. Under a launcher
// every rank parses the same arguments: only rank 0 says so.
int UsageError(const std::string& message) {
  if (LauncherRank() <= 0) std::cerr << "mooncake: " << message << " (see mooncake --help)\n";
  return 2;
}

Status FailureOptions(const RawJobOptions& raw, JobOptions* o) {
  MC_RETURN_IF_ERROR(cluster::ConvertClusterOptions(raw.cluster, &o->cluster));
  MC_RETURN_IF_ERROR(cli::OnOffOption("job.survive_rank_loss", raw.survive, &o->survive_rank_loss));
  o->status_file = raw.status_file;
  o->address_file = raw.address_file;
  return cluster::ConvertFaultOptions(raw.cluster, &o->fault_kill, &o->fault_stop);
}

Status ModeOption(const std::string& mode, JobMode* out) {
  return cli::ChoiceOption(
      "job.mode", mode,
      {{"serve", JobMode::kServe}, {"check", JobMode::kCheck}, {"store", JobMode::kStore}}, out);
}

// The bring-up check's block, pings and deadlines (job.*).
Status CheckJobOptions(const RawJobOptions& raw, JobOptions* o) {
  MC_RETURN_IF_ERROR(
      SizeOption("job.block_size", raw.block_size, 1, o->store.dram, &o->block_size));
  MC_RETURN_IF_ERROR(DurationOption("job.rpc_timeout", raw.rpc_timeout, Nanos(1'000'000),
                                    Nanos(600'000'000'000), &o->rpc_timeout));
  MC_RETURN_IF_ERROR(DurationOption("job.phase_timeout", raw.phase_timeout, Nanos(1'000'000'000),
                                    Nanos(86'400'000'000'000), &o->phase_timeout));
  if (raw.ping_rounds < 1 || raw.ping_rounds > 100000) {
    return OutOfRange("job.ping_rounds = " + std::to_string(raw.ping_rounds) +
                      " is out of range (allowed 1 to 100000)");
  }
  o->ping_rounds = raw.ping_rounds;
  o->silent_rank = raw.silent_rank;
  return Status::Ok();
}

// Each component converts its own options; the job's own come between.
Status Convert(const RawJobOptions& raw, JobOptions* o) {
  o->out_dir = raw.out;
  MC_RETURN_IF_ERROR(cli::ParseLogLevel(raw.log_level, &o->log_level));
  MC_RETURN_IF_ERROR(transport::ConvertTransportOptions(raw.transport, &o->transport));
  MC_RETURN_IF_ERROR(ModeOption(raw.mode, &o->mode));
  MC_RETURN_IF_ERROR(store::ConvertStoreOptions(raw.store, o->mode == JobMode::kStore, &o->store));
  MC_RETURN_IF_ERROR(CheckJobOptions(raw, o));
  MC_RETURN_IF_ERROR(serve::ConvertServeOptions(raw.serve, &o->serve));
  return FailureOptions(raw, o);
}

// Reads the command line, then the --config file beneath it, into `vm`. Handles --help and
// --version. Returns an exit code when main() should stop here (0 after help), -1 to go on.
int ReadArguments(int argc, char** argv, const po::options_description& all,
                  po::variables_map* vm) {
  try {
    std::vector<std::string> args =
        cli::CanonicalArgs(std::vector<std::string>(argv + 1, argv + argc));
    for (std::string& a : args) {
      if (a == "--kv-scale") a = "--kv_scale";
      if (a.rfind("--kv-scale=", 0) == 0) a = "--kv_scale" + a.substr(10);
    }
    po::store(cli::ParseCommandLine(args, all), *vm);
    if (vm->count("help")) {
      std::cout << all
                << "\nUnits: sizes take B, KiB, MiB, GiB, TiB (or KB, MB, GB); durations "
                   "take ns, us, ms, s, min, h.\n";
      return 0;
    }
    if (vm->count("version")) {
      std::cout << kVersion << "\n" << gpu::Describe(gpu::Probe()) << "\n";
      return 0;
    }
    if (vm->count("config")) cli::StoreConfigFile((*vm)["config"].as<std::string>(), all, *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    return UsageError(e.what());
  }
  return -1;
}

// The scheduling and synthetic-workload settings shared with `mooncake eval`.
Status ConvertShared(const po::variables_map& vm, JobOptions* opts) {
  auto sched = eval::SchedulingFromVariables(vm);
  if (!sched.ok()) return sched.status();
  opts->sched = *sched;
  // The live job replays in wall time; without --time_scale it runs 10x faster than the
  // modelled cluster, so the embedded default ends in seconds (eval keeps 1: it is virtual).
  if (vm["time_scale"].defaulted()) opts->sched.time_scale = kLiveDefaultTimeScale;
  auto synthetic = eval::SyntheticFromVariables(vm, opts->sched.seed);
  if (!synthetic.ok()) return synthetic.status();
  opts->synthetic = *synthetic;
  // An explicit synthetic.* option asks for the synthetic workload even beside serve.http.
  for (const auto& [name, value] : vm) {
    if (name.rfind("synthetic.", 0) == 0 && !value.defaulted()) opts->synthetic_given = true;
  }
  opts->load_scale = vm["load.scale"].as<double>();
  if (!(opts->load_scale > 0) || opts->load_scale > 1e6) {
    return InvalidArgument(fmt::format("load.scale = {}: allowed (0, 1e6]", opts->load_scale));
  }
  return Status::Ok();
}

}  // namespace

ParseOutcome ParseJobOptions(int argc, char** argv) {
  ParseOutcome outcome;
  JobOptions opts;
  RawJobOptions raw;
  po::options_description all(
      "Usage: mpirun -np N mooncake [options]   (N >= 4)\n"
      "       mpirun -np N mooncake --job.mode store [options]   (N >= 2: the store as a "
      "service)\n"
      "       mooncake store stop|inspect ...     (see mooncake store --help)\n"
      "       mooncake eval [options]            (trace evaluation, see "
      "mooncake eval --help)\n"
      "       mpirun -np N mooncake p2p --source PATH --dest DIR   (distribute files, see "
      "mooncake p2p --help)\n"
      "       mooncake generate --model DIR|PRESET ...   (the reference model's greedy output, "
      "see mooncake generate --help)\n"
      "       mooncake calibrate --model DIR|PRESET ...  (a hardware preset fitted to the "
      "reference model's measured times, see mooncake calibrate --help)\n\nOptions");
  AddJobOptionGroups(all, &raw);
  eval::AddSchedulingOptions(all, DataDir("configs"));
  po::options_description synthetic("Synthetic workload (serve, when no trace is given)");
  eval::AddSyntheticOptions(synthetic);
  all.add(synthetic);
  po::variables_map vm;
  if (int code = ReadArguments(argc, argv, all, &vm); code >= 0) {
    outcome.exit_code = code;
    return outcome;
  }
  opts.dry_run = raw.dry_run;
  opts.config_file = raw.config;
  Status s = Convert(raw, &opts);
  if (s.ok()) s = ConvertShared(vm, &opts);
  if (s.ok()) s = engine::ConvertEngineOptions(raw.engine, opts.sched.time_scale, &opts.engine);
  if (s.ok() && opts.mode == JobMode::kStore && vm["cluster.failure_timeout"].defaulted()) {
    opts.cluster.failure_timeout = cluster::kStoreServiceFailureTimeout;
  }
  if (!s.ok()) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    std::string where = cli::ConfigFileWhere(s.message(), args, opts.config_file);
    if (where.empty() && !opts.config_file.empty()) {
      where = " (command line or " + opts.config_file + ")";
    }
    outcome.exit_code = UsageError(s.message() + where);
    return outcome;
  }
  outcome.options = std::move(opts);
  return outcome;
}

}  // namespace mooncake::app
