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
  sim::VllmLimits vllm;         // vllm.*; 0 = vLLM's default (sim::EffectiveVllmLimits)
  sim::StoreMasterModel store;  // ranks 0: the simulator runs no store master
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

// Rank counts by role of a live `roles` layout ("conductor:1 store:1 prefill:2 decode:2" or a
// per-rank list). At least one prefill and one decode.
struct RoleCounts {
  int prefill = 0, decode = 0, store = 0;
};
Result<RoleCounts> RoleCountsFromRoles(const std::string& roles);

// The store master the simulator runs (sim::StoreMasterModel), from the options: with store
// ranks in `roles`, those ranks with store.dram each, blocks of kv_scale x the real size, and
// the lease in model time (the live master's 10 s run on wall time, so x time_scale); else, with
// store.global_pool and a bounded store.capacity_blocks, the pool spread over the prefill nodes
// (real block sizes); else none. Only the Mooncake system uses it.
struct StoreMasterInputs {
  int store_ranks = 0;
  uint64_t store_dram = 0;
  double kv_scale = 0;
  uint32_t replicas = 1;
};
sim::StoreMasterModel StoreMasterFor(const SchedulingSettings& sched, const StoreMasterInputs& in);

}  // namespace mooncake::eval
