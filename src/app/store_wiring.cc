#include "app/store_wiring.h"

#include <cstdio>

#include "app/bootstrap_deadline.h"
#include "common/log.h"
#include "common/run_folder.h"
#include "common/wire.h"

namespace mooncake::app {

std::string CollectiveRunDir(JobContext& ctx) {
  std::string mine;
  const int conductor = ctx.roles.conductor().value;
  if (ctx.rank() == conductor) {
    auto folder = RunFolder::Create(ctx.options.out_dir);
    mine = folder.ok() ? folder->path() : ctx.options.out_dir;
  }
  return OrEndBootstrap(
      cluster::AllGatherText(ctx.mpi, mine, "run folder", ctx.options.phase_timeout), ctx.options,
      ctx.mpi)[conductor];
}

store::MasterNodeConfig MasterNodeConfigFrom(const JobOptions& o) {
  return store::MasterNodeConfigFrom(o.store, o.cluster.failure_timeout, o.phase_timeout);
}

store::StoreRankConfig StoreRankConfigFrom(const JobOptions& o, const std::string& run_dir,
                                           int rank, std::string model_preset,
                                           std::string kv_layout) {
  return store::StoreRankConfigFrom(
      o.store, run_dir, rank, model_preset.empty() ? o.sched.model.name : std::move(model_preset),
      kv_layout.empty() ? "block of " + std::to_string(o.serve.kv_scale) + " x the model's KV bytes"
                        : std::move(kv_layout));
}

void CollectiveAdmitRecovered(JobContext& ctx, store::StoreRankNode* store_rank,
                              store::MasterNode* master) {
  Status reported =
      store_rank ? store_rank->ReportRecovered(ctx.options.phase_timeout) : Status::Ok();
  if (!reported.ok()) {
    log::Error("{}", reported.ToString());
    ctx.mpi.Abort(1);
  }
  // Every store rank's report was admitted once its calls returned: after this barrier the
  // master holds them all, before any request is admitted.
  OrEndBootstrap(ctx.mpi.Barrier(ctx.options.phase_timeout, "SSD recovery reports"), ctx.options,
                 ctx.mpi);
  if (ctx.role() != cluster::Role::kConductor || master == nullptr ||
      master->coordinator() == nullptr) {
    return;
  }
  const std::string line = master->recovery().Line();
  if (!line.empty()) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  }
}

}  // namespace mooncake::app
