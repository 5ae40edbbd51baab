// The end of a serving job on the conductor: the summary (summary.json's counters, the stdout
// table) from the conductor's records and every rank's report. Returns the process exit code:
// 0 when no request was lost or failed and no KV block failed verification.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "conductor/policy.h"
#include "serve/rank_report.h"
#include "serve/serve_node.h"
#include "serve/token_check.h"
#include "serve/workload.h"

namespace mooncake::serve {

struct SummaryInputs {
  const Workload* workload = nullptr;
  std::string ranks;  // "6 (conductor:1 store:1 prefill:2 decode:2)"
  conductor::PrefillPolicy policy = conductor::PrefillPolicy::kKvCacheCentric;
  double kv_scale = 1.0;
  std::map<std::string, double> ssd_extra;  // the SSD tier's counters (store.ssd = on)
  std::string ssd_line;                     // its line of the table
  std::string run_dir;                      // the run folder (created), or empty: none
  std::vector<DeadRank> dead;               // ranks declared dead during the run
  std::map<std::string, double> extra;      // more counters for summary.json's extra
  // The reference engine's token check (engine.check_tokens): a mismatch fails the run.
  std::optional<TokenCheckResult> tokens;
  bool measured_compute = false;  // engine.kind = reference: compute took its real time
  std::string matmul_backend;     // then the kernels it ran on, "BLIS 0.9.0 (zen3)"
};

// Conductor only. `all` is the sum of every rank's report (this one's included).
int WriteServeSummary(ServeNode& node, const RankReport& all, const SummaryInputs& in);

}  // namespace mooncake::serve
