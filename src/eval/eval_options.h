// Internal to src/app/eval: the eval command's full option set and its parsing.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "eval/scheduling_options.h"
#include "eval/sweep.h"
#include "sim/sim_config.h"
#include "trace/synthetic.h"

namespace mooncake::eval {

struct EvalOptions {
  SchedulingSettings sched;
  sim::SystemKind system = sim::SystemKind::kMooncake;
  double load_scale = 1.0;
  std::string out;
  std::string config_file;  // --config, "" without one (named in run.json)
  bool plots = true;
  trace::SyntheticConfig synthetic;
  std::string synthetic_write;  // also write the synthetic trace here
  std::vector<SweepAxis> sweep;
};

boost::program_options::options_description EvalOptionsDescription();

// Parses `args` (without argv[0]) with `overrides` taking precedence over the command line,
// which takes precedence over the --config file. Returns kNotFound with an empty message when
// --help was asked (the help text is then in *help).
Result<EvalOptions> ParseEvalOptions(const std::vector<std::string>& args,
                                     const SweepPoint& overrides, std::string* help);

sim::SimConfig ToSimConfig(const EvalOptions& o);

// (prefill, decode) instance counts of a live `roles` layout ("conductor:1 store:1 prefill:2
// decode:2" or a per-rank list).
Result<std::pair<int, int>> InstanceCountsFromRoles(const std::string& roles);

}  // namespace mooncake::eval
