#include "app/serve_job.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "app/bootstrap_deadline.h"
#include "app/rank_exit.h"
#include "app/store_wiring.h"
#include "common/log.h"
#include "common/run_folder.h"
#include "common/units.h"
#include "eval/eval_command.h"
#include "serve/conductor_summary.h"
#include "serve/job_engine.h"
#include "serve/serve_endpoint.h"
#include "serve/serve_node.h"
#include "serve/token_check.h"
#include "store/net/topology.h"
#include "trace/run_report.h"

namespace mooncake::app {
namespace {

using cluster::Role;

void AbortUnlessOk(JobContext& ctx, const Status& s, int code) {
  if (s.ok()) return;
  log::Error("{}", s.ToString());
  ctx.mpi.Abort(code);
}

void Barrier(JobContext& ctx, const char* phase) {
  OrEndBootstrap(ctx.mpi.Barrier(ctx.options.phase_timeout, phase), ctx.options, ctx.mpi);
}

serve::ConductorSetup ConductorSetupOf(const JobOptions& o, const serve::Workload& workload) {
  serve::ConductorSetup c;
  c.scheduler = o.sched.scheduler;
  // The margin is wall time; the scheduler predicts in model time.
  c.scheduler.ttft_margin = Nanos(static_cast<int64_t>(
      static_cast<double>(o.serve.admission_margin.count()) * o.sched.time_scale));
  c.requests = &workload.requests;
  c.master = MasterNodeConfigFrom(o);
  return c;
}

// Roles and handlers up, the SSD tier opened (store.ssd = on; on a store rank only the tier can
// fail to start); then the recovered blocks enter the master and the conductor's prefix index
// before any request is admitted.
void StartNode(JobContext& ctx, serve::ServeNode& node) {
  AbortUnlessOk(ctx, node.Start(), ctx.role() == Role::kStore ? 2 : 1);
  Barrier(ctx, "handlers registered");
  if (ctx.options.store.ssd) CollectiveAdmitRecovered(ctx, node.store_rank(), node.master_node());
  const std::vector<std::string> no_keys;
  const std::vector<std::string>& recovered =
      node.master_node() ? node.master_node()->recovery().keys : no_keys;
  if (node.scheduler() && !recovered.empty()) {
    size_t indexed = serve::IndexRecoveredBlocks(*node.scheduler(), recovered,
                                                 node.context().layout.model_name(),
                                                 ctx.roles.count(Role::kPrefill));
    std::printf("conductor: %zu recovered blocks entered the prefix index\n", indexed);
  }
  Status s = node.SyncClock();
  if (!s.ok()) log::Error("{}", s.ToString());
  Barrier(ctx, "clocks synchronised");
  // Bootstrap is over: leave MPI so that a rank loss from here on ends only that rank
  // (MpiSession::Leave says why). Fail-stop jobs stay, so the launcher ends them all.
  if (ctx.options.survive_rank_loss) LeaveMpi(ctx.options, ctx.mpi);
}

void RunConductor(JobContext& ctx, serve::ServeNode& node, const serve::Workload& workload) {
  const engine::KvLayout& layout = node.context().layout;
  std::printf(
      "serving %zu requests from %s, policy %s, time scale %.3g, KV block %s moved "
      "for %s modelled\n",
      workload.requests.size(), workload.source.c_str(),
      conductor::PrefillPolicyName(ctx.options.sched.scheduler.policy),
      node.context().config.time_scale, FormatBytes(layout.block_bytes()).c_str(),
      FormatBytes(layout.real_block_bytes()).c_str());
  std::fflush(stdout);
  node.RunConductor();
  node.master_node()->StopSpilling();
  node.StopOthers();
}

// The conductor's HTTP endpoint (serve.http) from the job's options; a port that cannot be had
// ends the job (exit 2).
std::unique_ptr<http::HttpServer> ServeHttp(JobContext& ctx, serve::ServeNode& node,
                                            const std::string& run_dir,
                                            const serve::JobEngine& engine) {
  const JobOptions& o = ctx.options;
  const serve::ServeHttpOptions options =
      serve::EndpointOptions(o.serve, o.engine, engine, o.sched.model.name, o.sched.time_scale);
  auto server = serve::StartServeEndpoint(options, node, ctx.mpi.hostname(), run_dir);
  if (!server.ok()) {
    log::Error("serve.http = {}: {}", o.serve.http, server.status().message());
    ctx.mpi.Abort(2);
  }
  return std::move(*server);
}

// run.json (what produced the folder) and, with job.plots, the plots (requests.csv is complete).
void DescribeAndPlot(const JobOptions& o, const std::string& run_dir) {
  if (run_dir.empty()) return;
  Status s = trace::WriteRunInfo(
      run_dir, trace::RunInfo{"mooncake", o.sched.trace_path, o.config_file, "mooncake",
                              conductor::PrefillPolicyName(o.sched.scheduler.policy)});
  if (!s.ok()) log::Warn("{}", s.ToString());
  if (o.serve.plots) eval::PlotRunFolder(run_dir);
}

// The SSD tier needs the run folder on every rank (its default place): decided by rank 0.
// Otherwise only the conductor needs it, from the start: requests.csv grows as requests end.
std::string ServeRunDir(JobContext& ctx) {
  std::string run_dir = ctx.options.store.ssd ? CollectiveRunDir(ctx) : "";
  // A standby conductor writes into the active's folder, should it take over (it is journaled).
  if (ctx.role() == Role::kConductor && ctx.rank() != ctx.roles.standby().value &&
      run_dir.empty()) {
    auto folder = RunFolder::Create(ctx.options.out_dir);
    if (folder.ok()) {
      run_dir = folder->path();
    } else {
      log::Error("{}", folder.status().ToString());
    }
  }
  return run_dir;
}

// Every rank but the conductor: waits for the stop, reports, waits for the shutdown. Returns the
// exit code.
int EndOtherRank(serve::ServeNode& node) {
  node.WaitForStop();
  serve::RankReport report = node.Finish();
  if (node.store_rank()) report.ssd = node.store_rank()->SsdCounters();
  Status sent = node.SendReport(report);
  if (!sent.ok()) log::Error("report to the conductor: {}", sent.ToString());
  node.WaitForShutdown();
  return report.errors == 0 && sent.ok() ? 0 : 1;
}

// A standby conductor (docs/FAULTS.md) does not yet follow the SSD tier's spills and recovery
// reports, nor the HTTP endpoint's online requests: such a job is refused (exit 2) on every
// rank; rank 0 says why.
bool RefusesStandby(JobContext& ctx) {
  const JobOptions& o = ctx.options;
  if (ctx.roles.standby().value < 0 || (!o.store.ssd && o.serve.http < 0)) return false;
  if (ctx.rank() == 0) {
    log::Error("roles = '{}': a standby conductor does not work with {} yet", ctx.roles.Summary(),
               o.store.ssd ? "store.ssd = on" : "serve.http");
  }
  return true;
}

// The standby conductor: waits until it takes over (it then conducts: true) or the active
// conductor stops the job (false).
bool WaitToConduct(serve::ServeNode& node) {
  while (!node.conducts() && !node.stop_requested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return node.conducts();
}

}  // namespace

store::StoreTopology StoreTopologyOf(JobContext& ctx) {
  std::vector<std::vector<transport::RemoteDescriptor>> regions;
  for (const auto& p : ctx.peers) regions.push_back(p.regions);
  auto topology = store::StoreTopology::FromRegions(ctx.roles.RanksOf(Role::kStore), regions);
  if (!topology.ok()) AbortUnlessOk(ctx, topology.status(), 1);
  return std::move(*topology);
}

serve::ServeNodeDeps NodeDeps(JobContext& ctx) {
  serve::ServePeers peers{Rank{ctx.rank()}, ctx.roles.conductor(),
                          ctx.roles.RanksOf(Role::kPrefill), ctx.roles.RanksOf(Role::kDecode)};
  serve::ServeNodeDeps deps{ctx.transport, ctx.rpc, std::move(peers), StoreTopologyOf(ctx),
                            std::span<std::byte>(ctx.local_buffer, ctx.local_buffer_size)};
  deps.standby = ctx.roles.standby();
  return deps;
}

void PrintSurvivalHint(const JobOptions& o) {
  if (!o.survive_rank_loss) return;
  const char* recovery = std::getenv("OMPI_MCA_orte_enable_recovery");
  if (recovery != nullptr && std::string(recovery) == "1") return;
  if (std::getenv("SLURM_STEP_ID") != nullptr && std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) {
    // srun does not tell its tasks --kill-on-bad-exit; slurm/mooncake.slurm exports
    // SLURM_KILL_ON_BAD_EXIT=0 beside it (srun reads the variable as the same setting).
    const char* kill_on_bad_exit = std::getenv("SLURM_KILL_ON_BAD_EXIT");
    if (kill_on_bad_exit != nullptr && std::string(kill_on_bad_exit) == "0") return;
    std::printf(
        "note: to survive a rank loss under srun, pass --kill-on-bad-exit=0 (slurm/mooncake.slurm "
        "does)\n");
  } else {
    std::printf(
        "note: mpirun ends the whole job when one rank dies; to survive a rank loss launch with "
        "launch/mooncake-mpirun or add --mca orte_enable_recovery 1\n");
  }
}

serve::ServeConfig ServeConfigFrom(const JobOptions& o) {
  serve::ServeConfig c;
  c.thresholds = o.sched.thresholds;
  c.chunk_tokens = o.sched.chunk_tokens;
  c.time_scale = o.sched.time_scale;
  c.replicas = o.store.replicas;
  c.prefill_staging = o.serve.prefill_staging;
  c.rpc_timeout = o.rpc_timeout;
  c.phase_timeout = o.phase_timeout;
  c.job_deadline = o.serve.job_deadline;
  c.progress_interval = o.serve.progress_interval;
  c.membership.heartbeat_interval = o.cluster.heartbeat_interval;
  c.membership.failure_timeout = o.cluster.failure_timeout;
  c.fault_swap_kv = o.engine.fault_swap_kv;
  c.kv_stream_layers = o.engine.kv_stream_layers;
  return c;
}

serve::WorkloadSpec WorkloadSpecFrom(const JobOptions& o) {
  serve::WorkloadSpec spec{o.sched.trace_path, o.sched.trace_read, o.synthetic, o.load_scale,
                           o.engine.reference ? o.engine.max_output : 0};
  // serve.http with no trace and no synthetic.* option: the requests come over HTTP only.
  spec.none = o.sched.trace_path.empty() && !o.synthetic_given && o.serve.http >= 0;
  return spec;
}

// The conductor's half of the job (the active one, or a standby that took over): the replay,
// the summary, the end of the other ranks; returns the job's exit status.
int Conduct(JobContext& ctx, serve::ServeNode& node, const serve::Workload& workload,
            const serve::JobEngine& job_engine, const std::string& run_dir_at_start) {
  const JobOptions& o = ctx.options;
  const std::string run_dir = node.is_standby() ? node.run_dir() : run_dir_at_start;
  PrintSurvivalHint(o);
  // The reference tokens are computed while the job replays (token_check.h).
  std::unique_ptr<serve::ReferenceTokens> reference;
  if (o.engine.reference && o.engine.check_tokens) {
    reference = std::make_unique<serve::ReferenceTokens>(*job_engine.model, workload.requests);
  }
  std::unique_ptr<http::HttpServer> endpoint;
  if (o.serve.http >= 0) {
    // With no trace the job serves HTTP alone, until `mooncake serve stop` or the deadline.
    node.conductor_role()->ServeUntilStopped(workload.requests.empty(), o.serve.drain);
    endpoint = ServeHttp(ctx, node, run_dir, job_engine);
  }
  std::optional<serve::StopSignalWatch> stop_signals;
  if (o.serve.http >= 0) stop_signals.emplace(*node.conductor_role());
  RunConductor(ctx, node, workload);
  stop_signals.reset();
  const serve::RankReport all = node.CollectReports(node.Finish());
  DescribeAndPlot(o, run_dir);  // before the table, so the job's output still ends with it
  const int code = serve::WriteConductorSummary(
      node, workload, all, run_dir, reference.get(),
      {o.serve, o.engine, o.store.ssd, o.store.dram, o.sched.scheduler.policy,
       std::to_string(ctx.roles.size()) + " (" + ctx.roles.Summary() + ")"});
  // Rank 0 writes the status file when it ends (run.cc); a standby that took over writes it
  // itself, before the shutdown, for a launcher that ends the ranks soon after.
  if (node.is_standby() && !o.status_file.empty()) std::ofstream(o.status_file) << code << "\n";
  node.ShutdownOthers();
  if (endpoint) {
    // serve.http_linger: a scraper gets the final numbers (they equal summary.json's).
    std::this_thread::sleep_for(o.serve.http_linger);
    endpoint->Stop();
  }
  return code;
}

int RunServeJob(JobContext& ctx, const serve::Workload& workload, bool* peers_lost) {
  const JobOptions& o = ctx.options;
  if (RefusesStandby(ctx)) return 2;
  serve::ServeConfig config = ServeConfigFrom(o);
  const engine::CostModel cost(o.sched.model, o.sched.hardware);
  // The compute of prefill and decode ranks (engine.kind): the cost model, engine.model_error x
  // its time, or the reference transformer. The conductor loads the model to check tokens.
  const bool computes = ctx.role() == Role::kPrefill || ctx.role() == Role::kDecode ||
                        (ctx.role() == Role::kConductor && o.engine.check_tokens);
  auto job_engine = serve::MakeJobEngine(o.engine, cost, o.serve.kv_scale, o.serve.model_error,
                                         computes, ctx.role() != Role::kConductor);
  if (!job_engine.ok()) {
    log::Error("{}", job_engine.status().ToString());
    ctx.mpi.Abort(2);
  }
  const engine::KvLayout& layout = *(*job_engine)->layout;
  const std::string run_dir_at_start = ServeRunDir(ctx);
  if (ctx.role() == Role::kConductor) config.run_dir = run_dir_at_start;
  serve::ServeNodeDeps deps = NodeDeps(ctx);
  deps.engine = (*job_engine)->engine.get();

  if (o.serve.http >= 0) serve::InstallServeStopSignals(ctx.role() == Role::kConductor);
  // What the bucket files of the SSD tier say of the blocks: the reference model's own.
  const bool reference = o.engine.reference;
  serve::ServeNode node(
      serve::ServePartOf(ctx.role()), std::move(deps), config, cost, layout,
      ConductorSetupOf(o, workload),
      StoreRankConfigFrom(o, run_dir_at_start, ctx.rank(), reference ? layout.model_name() : "",
                          reference ? (*job_engine)->kv_layout_text : ""));
  EndRankWhenCutOff(node, ctx.rank());
  StartNode(ctx, node);
  cluster::ArmFaults(o.fault_kill, o.fault_stop, ctx.rank(), o.cluster.failure_timeout);
  int code = 0;
  const bool conducts =
      ctx.role() == Role::kConductor && (!node.is_standby() || WaitToConduct(node));
  if (conducts && node.is_standby()) {
    std::printf("rank %d conducts now (the standby took over); run folder %s\n", ctx.rank(),
                node.run_dir().c_str());
    std::fflush(stdout);
  }
  if (conducts) {
    code = Conduct(ctx, node, workload, **job_engine, run_dir_at_start);
  } else {
    code = EndOtherRank(node);
  }
  *peers_lost = node.peers_lost();
  return code;
}

}  // namespace mooncake::app
