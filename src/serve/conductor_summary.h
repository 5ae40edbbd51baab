// The serving job's end on the conductor: the summary (summary.h) from every live rank's report,
// the SSD tier's counters, the reference engine's tokens and check, where the reused prefix
// blocks came from, the dead ranks and the roles' memory bounds.
#pragma once

#include <cstdint>
#include <string>

#include "conductor/policy.h"
#include "engine/engine_options.h"
#include "serve/rank_report.h"
#include "serve/serve_node.h"
#include "serve/serve_options.h"
#include "serve/token_check.h"
#include "serve/workload.h"

namespace mooncake::serve {

// What the summary takes of the job's options.
struct ConductorSummaryOptions {
  const ServeOptions& serve;            // serve.kv_scale and the memory bounds
  const engine::EngineOptions& engine;  // the reference engine, on the CPU or a GPU
  bool ssd = false;                     // store.ssd
  uint64_t store_dram = 0;              // store.dram
  conductor::PrefillPolicy policy = conductor::PrefillPolicy::kKvCacheCentric;
  std::string ranks;  // "6 (conductor:1 store:1 prefill:2 decode:2)"
};

// Conductor only. `all` is the sum of every rank's report; `run_dir` the run folder (empty:
// none); `reference` the tokens to check against (null: no check). Returns the job's exit code
// (WriteServeSummary).
int WriteConductorSummary(ServeNode& node, const Workload& workload, const RankReport& all,
                          const std::string& run_dir, ReferenceTokens* reference,
                          const ConductorSummaryOptions& o);

}  // namespace mooncake::serve
