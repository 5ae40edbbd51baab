#include "app/store_rank.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/bootstrap_deadline.h"
#include "common/log.h"
#include "common/run_folder.h"
#include "common/wire.h"

namespace mooncake::app {

uint64_t WallClockVersion() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return static_cast<uint64_t>(std::max<int64_t>(ns.count(), 1));
}

std::string CollectiveRunDir(JobContext& ctx) {
  std::string mine;
  const int conductor = ctx.roles.conductor().value;
  if (ctx.rank() == conductor) {
    auto folder = RunFolder::Create(ctx.options.out_dir);
    mine = folder.ok() ? folder->path() : ctx.options.out_dir;
  }
  auto all = OrEndBootstrap(
      ctx.mpi.AllGather(std::as_bytes(std::span<const char>(mine.data(), mine.size())),
                        "run folder", ctx.options.phase_timeout),
      ctx.options, ctx.mpi);
  return std::string(reinterpret_cast<const char*>(all[conductor].data()), all[conductor].size());
}

store::MasterNodeConfig MasterNodeConfigFrom(const JobOptions& o) {
  store::MasterNodeConfig c;
  store::MasterConfig& m = c.service.master;
  m.promote_after = o.store.ssd ? o.store.promote_after : 0;
  m.lease = o.store.lease;
  m.first_version = WallClockVersion();  // a restart epoch (docs/STORE.md)
  m.put_timeout = o.store.put_timeout;
  m.when_full = o.store.keep_when_full ? store::WhenFull::kKeep : store::WhenFull::kEvict;
  m.suspect_for = 2 * o.cluster.failure_timeout;  // a dead rank is declared by then
  c.copy_timeout = o.phase_timeout;
  c.ssd = o.store.ssd;
  c.spill.max_pending_bytes = o.store.spill_queue;
  c.spill.batch = 64;  // smaller answers free reserved DRAM sooner
  c.spill.rpc_timeout = o.phase_timeout;
  return c;
}

store::StoreRankConfig StoreRankConfigFrom(const JobOptions& o, const std::string& run_dir,
                                           int rank, std::string model_preset,
                                           std::string kv_layout) {
  store::StoreRankConfig c;
  c.ssd = o.store.ssd;
  const std::string base = o.store.ssd_dir.empty() ? run_dir + "/ssd" : o.store.ssd_dir;
  c.ssd_dir = base + "/rank" + std::to_string(rank);
  c.ssd_capacity = o.store.ssd_capacity;
  c.spill_queue = o.store.spill_queue;
  c.keep_when_full = o.store.keep_when_full;
  c.model_preset = model_preset.empty() ? o.sched.model.name : std::move(model_preset);
  c.kv_layout = kv_layout.empty()
                    ? "block of " + std::to_string(o.serve.kv_scale) + " x the model's KV bytes"
                    : std::move(kv_layout);
  return c;
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
