#include "app/serve_job.h"

#include <cstdio>

#include "app/run_folder.h"
#include "app/store_rank.h"
#include "common/log.h"
#include "common/units.h"
#include "serve/serve_node.h"
#include "serve/summary.h"
#include "store/topology.h"

namespace mooncake::app {
namespace {

using cluster::Role;

serve::ServePart PartOf(Role role) {
  switch (role) {
    case Role::kConductor:
      return serve::ServePart::kConductor;
    case Role::kStore:
      return serve::ServePart::kStore;
    case Role::kPrefill:
      return serve::ServePart::kPrefill;
    case Role::kDecode:
      return serve::ServePart::kDecode;
  }
  return serve::ServePart::kStore;
}

void AbortUnlessOk(JobContext& ctx, const Status& s, int code) {
  if (s.ok()) return;
  log::Error("{}", s.ToString());
  ctx.mpi.Abort(code);
}

void Barrier(JobContext& ctx, const char* phase) {
  Status s = ctx.mpi.Barrier(ctx.options.phase_timeout);
  if (!s.ok()) {
    log::Error("phase '{}': {}", phase, s.ToString());
    ctx.mpi.Abort(3);
  }
}

serve::ServeNodeDeps NodeDeps(JobContext& ctx) {
  std::vector<std::vector<transport::RemoteDescriptor>> regions;
  for (const auto& p : ctx.peers) regions.push_back(p.regions);
  auto topology = store::StoreTopology::FromRegions(ctx.roles.RanksOf(Role::kStore), regions);
  if (!topology.ok()) AbortUnlessOk(ctx, topology.status(), 1);
  serve::ServePeers peers{Rank{ctx.rank()}, Rank{0}, ctx.roles.RanksOf(Role::kPrefill),
                          ctx.roles.RanksOf(Role::kDecode)};
  return serve::ServeNodeDeps{ctx.transport, ctx.rpc, std::move(peers), std::move(*topology),
                              std::span<std::byte>(ctx.local_buffer, ctx.local_buffer_size)};
}

serve::ConductorSetup ConductorSetupOf(const JobOptions& o, const serve::Workload& workload) {
  serve::ConductorSetup c;
  c.scheduler = o.sched.scheduler;
  c.requests = &workload.requests;
  c.master.master.promote_after = o.store_ssd ? o.store_promote_after : 0;
  return c;
}

// Roles and handlers up, the SSD tier opened (store.ssd = on); then the recovered blocks enter
// the master and the conductor's prefix index before any request is admitted.
void StartNode(JobContext& ctx, serve::ServeNode& node, const std::string& run_dir, SsdJob* ssd) {
  AbortUnlessOk(ctx, node.Start(), 1);
  if (ctx.options.store_ssd) {
    Status s = SetUpSsd(ctx, run_dir, node.master(), ssd);
    AbortUnlessOk(ctx, s, ctx.role() == Role::kStore ? 2 : 1);
  }
  Barrier(ctx, "handlers registered");
  if (ctx.options.store_ssd) CollectiveAdmitRecovered(ctx, *ssd);
  if (node.scheduler() && !ssd->recovered_keys.empty()) {
    size_t indexed =
        serve::IndexRecoveredBlocks(*node.scheduler(), ssd->recovered_keys,
                                    ctx.options.sched.model.name, ctx.roles.count(Role::kPrefill));
    std::printf("conductor: %zu recovered blocks entered the prefix index\n", indexed);
  }
  Status s = node.SyncClock();
  if (!s.ok()) log::Error("{}", s.ToString());
  Barrier(ctx, "clocks synchronised");
}

void RunConductor(JobContext& ctx, serve::ServeNode& node, const serve::Workload& workload,
                  SsdJob& ssd) {
  const serve::KvLayout& layout = node.context().layout;
  std::printf(
      "serving %zu requests from %s, policy %s, time scale %.3g, KV block %s moved "
      "for %s modelled\n",
      workload.requests.size(), workload.source.c_str(),
      conductor::PrefillPolicyName(ctx.options.sched.scheduler.policy),
      node.context().config.time_scale, FormatBytes(layout.block_bytes()).c_str(),
      FormatBytes(layout.real_block_bytes()).c_str());
  std::fflush(stdout);
  node.RunConductor();
  StopSpilling(ssd);
  node.StopOthers();
}

// Gathers every rank's report; the conductor writes the run folder and prints the summary.
int FinishJob(JobContext& ctx, serve::ServeNode& node, const serve::Workload& workload,
              const serve::RankReport& report, SsdJob& ssd, const std::string& run_dir) {
  const JobOptions& o = ctx.options;
  auto gathered = ctx.mpi.Gather(report.Encode(), 0);
  serve::SummaryInputs in;
  if (o.store_ssd) in.ssd_line = CollectiveSsdSummary(ctx, ssd, node.master(), &in.ssd_extra);
  if (ctx.role() != Role::kConductor) return report.errors == 0 ? 0 : 1;
  serve::RankReport all;
  for (size_t r = 0; r < gathered.size(); ++r) {
    auto decoded = serve::RankReport::Decode(gathered[r]);
    if (decoded.ok()) {
      all.Add(*decoded);
    } else {
      all.AddError("malformed report from rank " + std::to_string(r));
    }
  }
  in.workload = &workload;
  in.ranks = std::to_string(ctx.roles.size()) + " (" + ctx.roles.Summary() + ")";
  in.policy = o.sched.scheduler.policy;
  in.kv_scale = o.kv_scale;
  auto folder = RunFolder::Create(run_dir.empty() ? o.out_dir : run_dir);
  if (folder.ok()) {
    in.run_dir = folder->path();
  } else {
    log::Error("{}", folder.status().ToString());
  }
  return serve::WriteServeSummary(node, all, in);
}

}  // namespace

serve::ServeConfig ServeConfigFrom(const JobOptions& o) {
  serve::ServeConfig c;
  c.thresholds = o.sched.thresholds;
  c.chunk_tokens = o.sched.chunk_tokens;
  c.time_scale = o.sched.time_scale;
  c.replicas = o.replicas;
  c.rpc_timeout = o.rpc_timeout;
  c.phase_timeout = o.phase_timeout;
  c.job_deadline = o.job_deadline;
  c.progress_interval = o.progress_interval;
  return c;
}

serve::WorkloadSpec WorkloadSpecFrom(const JobOptions& o) {
  return serve::WorkloadSpec{o.sched.trace_path, o.sched.trace_read, o.synthetic};
}

int RunServeJob(JobContext& ctx, const serve::Workload& workload) {
  const JobOptions& o = ctx.options;
  const serve::ServeConfig config = ServeConfigFrom(o);
  const engine::CostModel cost(o.sched.model, o.sched.hardware);
  const serve::KvLayout layout(cost, o.kv_scale, o.sched.model.name);
  // The SSD tier needs the run folder on every rank (its default place): decided by rank 0.
  const std::string run_dir = o.store_ssd ? CollectiveRunDir(ctx) : "";
  serve::ServeNode node(PartOf(ctx.role()), NodeDeps(ctx), config, cost, layout,
                        ConductorSetupOf(o, workload));
  SsdJob ssd;  // after `node`: its coordinator detaches from the master when destroyed
  StartNode(ctx, node, run_dir, &ssd);
  if (ctx.role() == Role::kConductor) {
    RunConductor(ctx, node, workload, ssd);
  } else {
    node.WaitForStop();
  }
  const serve::RankReport report = node.Finish();
  return FinishJob(ctx, node, workload, report, ssd, run_dir);
}

}  // namespace mooncake::app
