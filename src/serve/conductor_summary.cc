#include "serve/conductor_summary.h"

#include "common/log.h"
#include "model/matmul.h"
#include "serve/memory_bounds.h"
#include "serve/summary.h"
#include "store/node/ssd_summary.h"

namespace mooncake::serve {
namespace {

// The reference engine's part: its tokens (written to the run folder, checked against
// `reference`), and where the reused prefix blocks came from.
void ReferenceEngineInputs(ServeNode& node, const std::string& run_dir, ReferenceTokens* reference,
                           SummaryInputs* in) {
  const ConductorRole& conductor = *node.conductor_role();
  if (!run_dir.empty()) {
    Status s = WriteTokens(run_dir, conductor.AllRequests(), conductor.output_ids());
    if (!s.ok()) log::Error("{}", s.ToString());
  }
  if (reference != nullptr) {
    in->tokens = reference->Compare(conductor.records(), conductor.output_ids());
  }
  // Where the reused prefix blocks came from: the SSD tier's hits (every store read of a
  // live job is a prefill's prefix read), the rest from DRAM; missing ones were recomputed.
  const auto totals = conductor.totals();
  const double from_ssd = in->ssd_extra.count("ssd_hits") ? in->ssd_extra.at("ssd_hits") : 0.0;
  in->extra["prefix_blocks_from_ssd"] = from_ssd;
  in->extra["prefix_blocks_from_dram"] = static_cast<double>(totals.blocks_loaded) - from_ssd;
  in->extra["prefix_blocks_recomputed"] = static_cast<double>(totals.blocks_missing);
}

}  // namespace

int WriteConductorSummary(ServeNode& node, const Workload& workload, const RankReport& all,
                          const std::string& run_dir, ReferenceTokens* reference,
                          const ConductorSummaryOptions& o) {
  SummaryInputs in;
  if (o.ssd) in.ssd_line = store::SsdSummary(*node.master_node(), all.ssd, &in.ssd_extra);
  in.measured_compute = o.engine.reference;
  // The kernels of this (the conductor's) process, which the prefill and decode ranks share
  // unless they compute on their GPUs.
  if (o.engine.reference) {
    in.matmul_backend =
        o.engine.cuda ? "cuBLAS SGEMM on GPU 0 (engine.device = cuda)" : model::MatmulBackend();
    ReferenceEngineInputs(node, run_dir, reference, &in);
  }
  in.workload = &workload;
  in.ranks = o.ranks;
  in.policy = o.policy;
  in.kv_scale = o.serve.kv_scale;
  in.run_dir = run_dir;
  in.dead = node.dead_ranks();
  const RoleMemoryBounds bounds =
      ComputeMemoryBounds(o.serve, o.store_dram, workload, node.context().layout.block_bytes(),
                          static_cast<int>(node.context().peers.prefill_ranks.size()));
  in.extra["rss_bound_conductor_bytes"] = static_cast<double>(bounds.conductor);
  in.extra["rss_bound_store_bytes"] = static_cast<double>(bounds.store);
  in.extra["rss_bound_prefill_bytes"] = static_cast<double>(bounds.prefill);
  in.extra["rss_bound_decode_bytes"] = static_cast<double>(bounds.decode);
  in.extra["workload_bytes"] = static_cast<double>(bounds.workload);
  return WriteServeSummary(node, all, in);
}

}  // namespace mooncake::serve
