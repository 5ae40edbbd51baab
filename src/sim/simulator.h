// The discrete-event simulator: replays a trace through the real conductor scheduler and the
// real cost model on a virtual clock (model time). Single-threaded and deterministic: the same
// config, cost model and requests give byte-identical records.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "conductor/scheduler_calls.h"
#include "engine/cost_model.h"
#include "sim/sim_config.h"
#include "trace/metrics.h"
#include "trace/trace_request.h"

namespace mooncake::sim {

struct SimResult {
  std::vector<trace::RequestRecord> records;  // one per request, in trace order
  trace::Summary summary;                     // with extras: bytes per plane, counters
  uint64_t events = 0;
  double model_span_s = 0;  // virtual time from the first arrival to the last event
};

// Observers a caller may attach to a run (conductor_bench, tests); none by default.
struct SimHooks {
  // Receives every call the simulator makes to its scheduler, with the answers
  // (conductor/scheduler_calls.h); the spans in it point into `requests`.
  std::vector<conductor::SchedulerCall>* scheduler_calls = nullptr;
};

Result<SimResult> RunSimulation(const SimConfig& config, const engine::CostModel& cost,
                                const std::vector<trace::TraceRequest>& requests,
                                const SimHooks& hooks = {});

}  // namespace mooncake::sim
