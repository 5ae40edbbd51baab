// The scheduling, model, cluster, SLO, store and trace options shared by `mooncake eval` (the
// simulator) and the live job (the conductor rank): one set of keys, each with a CLI form
// (`--conductor.policy cache_aware`) and an INI form (`[conductor] policy = cache_aware`).
// Units are explicit: durations "30s", "100ms".
//
// Keys: model.preset hardware.preset presets.dir cluster.prefill cluster.decode
// conductor.policy conductor.balancing_threshold conductor.early_rejection conductor.admission
// conductor.assumed_decode_time slo.ttft slo.tbt slo.report_tbt store.capacity_blocks
// store.global_pool prefill.chunk_tokens trace trace.limit trace.offset trace.skip_invalid
// time_scale seed. (`out` and `config` are left to each command.)
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <istream>
#include <string>

#include "common/status.h"
#include "conductor/scheduler.h"
#include "engine/presets.h"
#include "trace/metrics.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"

namespace mooncake::eval {

struct SchedulingSettings {
  engine::ModelSpec model;
  engine::HardwareSpec hardware;
  conductor::SchedulerConfig scheduler;  // prefill/decode counts, policy, SLOs, cache
  trace::Thresholds thresholds;          // TTFT SLO and the TBT thresholds reported
  int64_t chunk_tokens = 0;              // prefill.chunk_tokens
  std::string trace_path;                // empty: a synthetic workload
  trace::TraceReadOptions trace_read;
  double time_scale = 1.0;  // live runs: wall time = model time / time_scale
  uint64_t seed = 1;
};

// Adds the option groups (sections "Model and cluster", "Conductor", "SLO", "Store and
// prefill", "Trace") to `desc`. `presets_dir_default` is where configs/models and
// configs/hardware live.
void AddSchedulingOptions(boost::program_options::options_description& desc,
                          const std::string& presets_dir_default);

// Validates the values and loads the presets. Errors name the option: "slo.tbt: ...".
Result<SchedulingSettings> SchedulingFromVariables(const boost::program_options::variables_map& vm);

// The seeded synthetic workload's keys (synthetic.requests, .rate, .system_prompts,
// .prompt_blocks, .followup, .new_tokens, .output_tokens, .max_input), shared by both commands.
void AddSyntheticOptions(boost::program_options::options_description& desc);
Result<trace::SyntheticConfig> SyntheticFromVariables(
    const boost::program_options::variables_map& vm, uint64_t seed);

}  // namespace mooncake::eval
