#include "app/serve/serve_job.h"

#include <atomic>
#include <cstdio>
#include <map>
#include <optional>

#include "app/messages.h"
#include "app/run_folder.h"
#include "app/serve/clock_sync.h"
#include "app/serve/conductor_role.h"
#include "app/serve/decode_role.h"
#include "app/serve/prefill_role.h"
#include "app/store_rank.h"
#include "common/log.h"
#include "common/units.h"
#include "common/wire.h"
#include "store/master_service.h"
#include "trace/run_report.h"

namespace mooncake::app::serve {
namespace {

using cluster::Role;

// What each rank reports at the end (MPI gather): errors and the decode/prefill counters.
struct RankReport {
  uint64_t errors = 0, blocks_verified = 0, blocks_corrupt = 0, tokens = 0, max_batch = 0;
  uint64_t store_put_failures = 0;
  std::string first_error;
  std::vector<std::byte> Encode() const {
    WireWriter w;
    for (uint64_t v :
         {errors, blocks_verified, blocks_corrupt, tokens, max_batch, store_put_failures}) {
      w.Put(v);
    }
    w.PutString(first_error);
    return w.Take();
  }
  static bool Decode(std::span<const std::byte> b, RankReport* r) {
    WireReader in(b);
    for (uint64_t* v : {&r->errors, &r->blocks_verified, &r->blocks_corrupt, &r->tokens,
                        &r->max_batch, &r->store_put_failures}) {
      in.Get(v);
    }
    in.GetString(&r->first_error);
    return in.done();
  }
};

conductor::SchedulerConfig LiveSchedulerConfig(const JobContext& ctx) {
  conductor::SchedulerConfig c = ctx.options.sched.scheduler;
  // In the live job, instances are ranks: the role layout decides their number.
  c.prefill_instances = ctx.roles.count(Role::kPrefill);
  c.decode_instances = ctx.roles.count(Role::kDecode);
  c.colocated = false;
  return c;
}

int Summarise(ServeContext& sctx, const Workload& workload, ConductorRole& conductor,
              const std::vector<RankReport>& reports, store::MasterService& master,
              const std::string& run_dir, const std::map<std::string, double>& ssd_extra,
              const std::string& ssd_line) {
  const JobOptions& o = sctx.job.options;
  const auto& records = conductor.records();
  trace::Summary summary = trace::Summarize(records, o.sched.thresholds);
  ConductorTotals totals = conductor.totals();
  RankReport all;
  for (const auto& r : reports) {
    all.errors += r.errors;
    all.blocks_corrupt += r.blocks_corrupt;
    all.store_put_failures += r.store_put_failures;
    if (all.first_error.empty()) all.first_error = r.first_error;
  }
  store::StatsResponse st = master.Stats();
  summary.extra["kv_blocks_verified_at_decode"] = static_cast<double>(totals.blocks_verified);
  summary.extra["kv_checksum_failures"] =
      static_cast<double>(totals.blocks_corrupt + all.blocks_corrupt);
  summary.extra["kv_block_bytes_moved"] = static_cast<double>(sctx.layout.block_bytes());
  summary.extra["kv_block_bytes_modelled"] = static_cast<double>(sctx.layout.real_block_bytes());
  summary.extra["kv_scale"] = o.kv_scale;
  summary.extra["time_scale"] = sctx.time_scale;
  summary.extra["prefix_blocks_loaded_from_store"] = static_cast<double>(totals.blocks_loaded);
  summary.extra["prefix_blocks_missing_in_store"] = static_cast<double>(totals.blocks_missing);
  summary.extra["bytes_store_read"] = static_cast<double>(totals.bytes_loaded);
  summary.extra["bytes_store_written"] = static_cast<double>(totals.bytes_stored);
  summary.extra["bytes_prefill_to_decode"] = static_cast<double>(totals.bytes_to_decode);
  summary.extra["store_objects"] = static_cast<double>(st.objects);
  summary.extra["store_evicted_replicas"] = static_cast<double>(st.evicted_replicas);
  summary.extra["store_put_failures"] = static_cast<double>(all.store_put_failures);
  summary.extra["trace_lines_skipped"] = static_cast<double>(workload.stats.skipped);
  summary.extra["rank_errors"] = static_cast<double>(all.errors);
  summary.extra["dispatch_failures"] = static_cast<double>(totals.dispatch_failures);
  for (const auto& [k, v] : ssd_extra) summary.extra[k] = v;

  auto folder = RunFolder::Create(run_dir.empty() ? o.out_dir : run_dir);
  if (folder.ok()) {
    Status s = trace::WriteRunFolder(folder->path(), records, summary);
    if (!s.ok()) log::Error("{}", s.ToString());
  } else {
    log::Error("{}", folder.status().ToString());
  }
  std::printf("\n== mooncake summary ==\n");
  std::printf("%-28s %s\n", "workload", workload.source.c_str());
  if (workload.stats.skipped > 0) {
    std::printf("%-28s %llu invalid trace lines skipped\n", "trace",
                static_cast<unsigned long long>(workload.stats.skipped));
  }
  std::printf("%-28s %d (%s), policy %s, time scale %.3g\n", "ranks", sctx.job.roles.size(),
              sctx.job.roles.Summary().c_str(),
              conductor::PrefillPolicyName(o.sched.scheduler.policy), sctx.time_scale);
  std::printf("%s", trace::SummaryTable(summary).c_str());
  std::printf(
      "%-28s %llu verified at decode, %llu checksum failures (%s per block moved, %s modelled)\n",
      "kv blocks", static_cast<unsigned long long>(totals.blocks_verified),
      static_cast<unsigned long long>(totals.blocks_corrupt + all.blocks_corrupt),
      FormatBytes(sctx.layout.block_bytes()).c_str(),
      FormatBytes(sctx.layout.real_block_bytes()).c_str());
  std::printf(
      "%-28s %llu prefix blocks read from the store, %llu missing there (recomputed); "
      "%s written\n",
      "store", static_cast<unsigned long long>(totals.blocks_loaded),
      static_cast<unsigned long long>(totals.blocks_missing),
      FormatBytes(totals.bytes_stored).c_str());
  std::printf("%s", ssd_line.c_str());
  std::printf("%-28s compute slept (exact); transfers paced to the modelled NIC rate (%.0f Gbps)\n",
              "clocks", sctx.cost.hardware().nic_bytes_per_s * 8 / 1e9);
  auto lost = conductor.LostRequests();
  if (!lost.empty()) {
    std::string ids;
    for (size_t i = 0; i < lost.size() && i < 20; ++i)
      ids += (i ? ", " : "") + std::to_string(lost[i]);
    if (lost.size() > 20) ids += ", ...";
    std::printf("%-28s %zu requests lost (not finished by the deadline): %s\n", "LOST", lost.size(),
                ids.c_str());
  }
  if (all.errors > 0)
    std::printf("%-28s %llu, first: %s\n", "errors", static_cast<unsigned long long>(all.errors),
                all.first_error.c_str());
  if (folder.ok()) std::printf("%-28s %s\n", "run folder", folder->path().c_str());
  const bool ok = lost.empty() && totals.blocks_corrupt == 0 && all.blocks_corrupt == 0;
  std::printf("%-28s %s\n", "result", ok ? "OK" : "FAILED");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace

int RunServeJob(JobContext& ctx, const Workload& workload) {
  const JobOptions& o = ctx.options;
  const Role role = ctx.role();
  engine::CostModel cost(o.sched.model, o.sched.hardware);
  KvLayout layout(cost, o.kv_scale, o.sched.model.name);
  ServeContext sctx{ctx, cost, layout, nullptr, Nanos(0), o.sched.time_scale};

  std::atomic<bool> stop{false};
  ctx.rpc.Register(kMsgStop, [&stop](Rank, std::span<const std::byte>, transport::Responder r) {
    r.Reply({});
    stop = true;
  });

  std::vector<std::vector<transport::RemoteDescriptor>> regions;
  for (const auto& p : ctx.peers) regions.push_back(p.regions);
  auto topology = store::StoreTopology::FromRegions(ctx.roles.RanksOf(Role::kStore), regions);
  if (!topology.ok()) {
    log::Error("{}", topology.status().ToString());
    ctx.mpi.Abort(1);
  }

  SteadyClock clock;
  // The SSD tier needs the run folder on every rank (its default place): decided by rank 0.
  const std::string run_dir = o.store_ssd ? CollectiveRunDir(ctx) : "";
  std::optional<store::MasterService> master;
  std::optional<store::StoreClient> client;
  std::optional<conductor::Scheduler> scheduler;
  std::optional<ConductorRole> conductor_role;
  std::optional<PrefillRole> prefill;
  std::optional<DecodeRole> decode;
  SsdJob ssd;  // after `master`: its coordinator detaches from the master when destroyed
  if (role == Role::kConductor) {
    store::MasterServiceConfig mc;
    mc.master.promote_after = o.store_ssd ? o.store_promote_after : 0;
    master.emplace(mc, ctx.rpc, clock);
    Status s = master->AddSegments(*topology);
    if (!s.ok()) {
      log::Error("{}", s.ToString());
      ctx.mpi.Abort(1);
    }
    master->Start();
    if (o.store_ssd) s = SetUpSsd(ctx, run_dir, &*master, &ssd);
    if (!s.ok()) {
      log::Error("{}", s.ToString());
      ctx.mpi.Abort(1);
    }
    ServeClock(ctx.rpc);
    scheduler.emplace(LiveSchedulerConfig(ctx), &cost);
    conductor_role.emplace(sctx, workload.requests, *scheduler);
    conductor_role->Start();
  } else if (role == Role::kPrefill || role == Role::kDecode) {
    store::StoreClientConfig cc;
    cc.timeout = o.phase_timeout;
    client.emplace(ctx.transport, ctx.rpc, Rank{0}, *topology, cc);
    sctx.store = &*client;
    if (role == Role::kPrefill) {
      prefill.emplace(sctx);
      prefill->Start();
    } else {
      decode.emplace(sctx, std::span<std::byte>(ctx.local_buffer, ctx.local_buffer_size));
      decode->Start();
    }
  }
  auto barrier = [&](const char* phase) {
    Status s = ctx.mpi.Barrier(o.phase_timeout);
    if (!s.ok()) {
      log::Error("phase '{}': {}", phase, s.ToString());
      ctx.mpi.Abort(3);
    }
  };
  if (role == Role::kStore && o.store_ssd) {
    Status s = SetUpSsd(ctx, run_dir, nullptr, &ssd);
    if (!s.ok()) {
      log::Error("{}", s.ToString());
      ctx.mpi.Abort(2);
    }
  }
  barrier("handlers registered");
  // Recovered SSD blocks are in the master before any request is admitted.
  if (o.store_ssd) CollectiveAdmitRecovered(ctx, ssd);
  if (scheduler && !ssd.recovered_keys.empty()) {
    // The conductor's prefix index learns the recovered blocks too, so requests after a restart
    // reuse them. They sit on store ranks, not on a prefill instance: each is attributed to one
    // instance (hash % instances), from which kvcache_centric fetches it like any remote prefix.
    const std::string prefix = o.sched.model.name + "/";
    const int instances = ctx.roles.count(Role::kPrefill);
    std::vector<std::vector<BlockHash>> by_instance(instances);
    for (const std::string& key : ssd.recovered_keys) {
      if (key.rfind(prefix, 0) != 0) continue;  // another model's blocks
      char* end = nullptr;
      const uint64_t hash = std::strtoull(key.c_str() + prefix.size(), &end, 10);
      if (end == key.c_str() + prefix.size() || *end != '\0') continue;
      by_instance[hash % instances].push_back(BlockHash{hash});
    }
    size_t indexed = 0;
    for (int i = 0; i < instances; ++i) {
      scheduler->OnBlocksStored(i, by_instance[i], Nanos(0));
      indexed += by_instance[i].size();
    }
    std::printf("conductor: %zu recovered blocks entered the prefix index\n", indexed);
  }
  if (role == Role::kPrefill || role == Role::kDecode) {
    auto offset = SyncClock(ctx.rpc, Rank{0}, 8, o.rpc_timeout);
    if (!offset.ok()) {
      log::Error("{}", offset.status().ToString());
    } else {
      sctx.clock_offset = *offset;
    }
  }
  barrier("clocks synchronised");

  RankReport report;
  if (role == Role::kConductor) {
    std::printf(
        "serving %zu requests from %s, policy %s, time scale %.3g, KV block %s moved "
        "for %s modelled\n",
        workload.requests.size(), workload.source.c_str(),
        conductor::PrefillPolicyName(o.sched.scheduler.policy), sctx.time_scale,
        FormatBytes(layout.block_bytes()).c_str(), FormatBytes(layout.real_block_bytes()).c_str());
    std::fflush(stdout);
    conductor_role->Run();
    StopSpilling(ssd);
    for (int p = 1; p < ctx.roles.size(); ++p) {
      auto r = ctx.rpc.Call(Rank{p}, kMsgStop, {}, o.rpc_timeout);
      if (!r.ok()) {
        ++report.errors;
        report.first_error = r.status().ToString();
      }
    }
  } else {
    const Nanos deadline = clock.Now() + o.job_deadline + o.phase_timeout;
    while (!stop && clock.Now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (!stop) {
      ++report.errors;
      report.first_error = "no stop message from the conductor";
    }
  }
  if (prefill) {
    prefill->Stop();
    PrefillStats ps = prefill->stats();
    report.errors += ps.errors;
    report.store_put_failures = ps.store_put_failures;
    if (report.first_error.empty()) report.first_error = ps.first_error;
  }
  if (decode) {
    decode->Stop();
    DecodeStats ds = decode->stats();
    report.errors += ds.errors;
    report.blocks_verified = ds.blocks_verified;
    report.blocks_corrupt = ds.blocks_corrupt;
    report.tokens = ds.tokens;
    report.max_batch = ds.max_batch;
    if (report.first_error.empty()) report.first_error = ds.first_error;
  }
  auto gathered = ctx.mpi.Gather(report.Encode(), 0);
  int code = report.errors == 0 ? 0 : 1;
  std::map<std::string, double> ssd_extra;
  std::string ssd_line;
  if (o.store_ssd)
    ssd_line = CollectiveSsdSummary(ctx, ssd, master ? &*master : nullptr, &ssd_extra);
  if (role == Role::kConductor) {
    std::vector<RankReport> reports(gathered.size());
    for (size_t r = 0; r < gathered.size(); ++r) {
      if (!RankReport::Decode(gathered[r], &reports[r])) {
        reports[r].errors = 1;
        reports[r].first_error = "malformed report from rank " + std::to_string(r);
      }
    }
    code =
        Summarise(sctx, workload, *conductor_role, reports, *master, run_dir, ssd_extra, ssd_line);
    master->Stop();
  }
  return code;
}

}  // namespace mooncake::app::serve
