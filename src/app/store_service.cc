#include "app/store_service.h"

#include <unistd.h>

#include <cstdio>

#include "app/bootstrap_deadline.h"
#include "app/rank_exit.h"
#include "app/serve_job.h"
#include "app/store_wiring.h"
#include "client/connection_file.h"
#include "common/data_dir.h"
#include "common/log.h"
#include "common/stop_signals.h"
#include "common/units.h"
#include "common/utc_time.h"
#include "common/wire_fields.h"
#include "serve/master_metrics.h"
#include "serve/store_service_end.h"
#include "serve/store_service_node.h"
#include "store/net/directory.h"
#include "store/node/client_listener.h"
#include "transport/attach_numbers.h"
#include "transport/join_slots.h"

namespace mooncake::app {
namespace {

using cluster::Role;

// The first number the standby conductor's listener gives an attached process (the active's
// start just above the join slots, and never get near this).
constexpr int32_t kStandbyAttachNumbers = 1 << 30;

// Every rank listens, admitting the processes that present the job token.
// A standby conductor adds the port of its liveness watch.
Result<store::ListenerRecord> Listen(JobContext& ctx, const serve::StoreServiceNode& node) {
  transport::ListenConfig lc;
  lc.address = ctx.options.store.listen;
  // A standby conductor listens on a port of its own: it may share the active one's host.
  lc.port = ctx.rank() == ctx.roles.conductor().value ? ctx.options.store.port : 0;
  // Clients attach to the standby too, once it took over: its numbers start far above any the
  // active can have given, so StoreInfo::attached_as names one client at one master.
  if (ctx.rank() == ctx.roles.standby().value) {
    if (auto* numbers = transport::AttachNumbersOf(ctx.transport)) {
      MC_RETURN_IF_ERROR(numbers->NumberAttachedFrom(kStandbyAttachNumbers));
    }
  }
  auto record = store::ListenForClients(ctx.transport, lc, client::TokenBytes(ctx.rpc.job_token()));
  if (record.ok()) record->liveness_port = node.liveness_port();
  return record;
}

// Every rank learns every listener: a standby that takes over answers the directory too.
std::vector<store::ListenerRecord> GatherListeners(JobContext& ctx,
                                                   const store::ListenerRecord& mine) {
  auto gathered = OrEndBootstrap(
      ctx.mpi.AllGather(WireEncode(mine), "client listeners", ctx.options.phase_timeout),
      ctx.options, ctx.mpi);
  std::vector<store::ListenerRecord> all;
  for (const auto& bytes : gathered) {
    auto r = WireDecode<store::ListenerRecord>(bytes, "ListenerRecord");
    all.push_back(r.ok() ? *r : store::ListenerRecord{});
  }
  return all;
}

// The conductor (`master`): the directory clients ask for, from every rank's listener and segment.
store::StoreDirectory MakeDirectory(JobContext& ctx,
                                    const std::vector<store::ListenerRecord>& listeners,
                                    Rank master) {
  store::StoreDirectory d;
  d.world_size = ctx.roles.size();
  d.master = master;
  d.default_replicas = static_cast<uint32_t>(ctx.options.store.replicas);
  d.ssd = ctx.options.store.ssd;
  for (int r : ctx.roles.RanksOf(Role::kStore)) {
    store::StoreRankEntry e;
    e.rank = Rank{r};
    e.hosts = listeners[r].hosts;
    e.port = listeners[r].port;
    e.segment = ctx.peers[r].regions.at(0).Encode();
    d.store_ranks.push_back(std::move(e));
  }
  return d;
}

std::vector<std::string> AddressesOf(const store::ListenerRecord& listener) {
  std::vector<std::string> out;
  for (const auto& h : listener.hosts) out.push_back(h + ":" + std::to_string(listener.port));
  return out;
}

// `master_rank` conducts, in membership epoch `epoch`; the file lists every conductor of the
// job (a standby's listener too), so a client whose master dies finds the one taking over.
client::ConnectionInfo MakeConnectionInfo(JobContext& ctx,
                                          const std::vector<store::ListenerRecord>& listeners,
                                          Rank master_rank, uint64_t epoch,
                                          const std::string& run_dir) {
  client::ConnectionInfo c;
  c.mooncake_version = "0.1.0";
  // Names the job, never derived from the token (the file's readers may print it).
  c.cluster_id = transport::DrawJobToken().Hex().substr(0, 16);
  c.token = ctx.rpc.job_token();
  c.world_size = ctx.roles.size();
  c.master_rank = master_rank.value;
  c.master_addresses = AddressesOf(listeners[master_rank.value]);
  for (Rank r : {ctx.roles.conductor(), ctx.roles.standby()}) {
    if (r.value < 0) continue;
    c.conductors.push_back(
        client::ConductorAddress{r.value, AddressesOf(listeners[r.value]), r == master_rank});
  }
  c.epoch = epoch;
  c.store_ranks = ctx.roles.RanksOf(Role::kStore);
  c.dram_per_rank = ctx.options.store.dram;
  c.ssd = ctx.options.store.ssd;
  c.replicas = static_cast<uint32_t>(ctx.options.store.replicas);
  c.run_dir = AbsolutePath(run_dir);
  c.host = ctx.mpi.hostname();
  c.pid = getpid();
  c.created = FormatUtcNow("%Y-%m-%dT%H:%M:%SZ");
  return c;
}

// The conductor: the directory, the stop, the drains and the joins clients ask for, then the
// connection file (once the recovered blocks are in the master, so the first client already
// sees them). A standby that took over does the same, rewriting the file with its own address.
Status OpenToClients(JobContext& ctx, serve::StoreServiceNode& node,
                     const std::vector<store::ListenerRecord>& listeners,
                     const std::string& run_dir, std::atomic<bool>* stop_asked,
                     serve::PendingLeaves* leaves, std::string* connect_file) {
  store::MasterNode& master = *node.master_node();
  const Rank self{ctx.rank()};
  master.ServeClients(MakeDirectory(ctx, listeners, self), [stop_asked](Rank from) {
    log::Warn("process {} asked the store service to stop", from.value);
    *stop_asked = true;
  });
  master.ServeDrains([leaves](Rank drained) { leaves->Add(drained); });
  master.ServeJoins([&node](Rank joined) { return node.Admit(joined); });
  *connect_file = ctx.options.store.connect_file.empty() ? run_dir + "/connect.json"
                                                         : ctx.options.store.connect_file;
  return client::WriteConnectionFile(
      *connect_file, MakeConnectionInfo(ctx, listeners, self, node.epoch(), run_dir));
}

// Rank 0's /metrics (store.metrics_port): started, its address printed and written to
// <run folder>/metrics.json for scrape configs; a port that cannot be had ends the job.
std::unique_ptr<http::HttpServer> ServeMetrics(JobContext& ctx, serve::StoreServiceNode& node,
                                               const std::string& run_dir) {
  const JobOptions& o = ctx.options;
  std::vector<Rank> store_ranks;
  for (int r : ctx.roles.RanksOf(Role::kStore)) store_ranks.push_back(Rank{r});
  // Store ranks that join later take the join slots (ranks without a segment are skipped).
  for (int r = 0; r < transport::kMaxJoinedRanks; ++r) {
    store_ranks.push_back(Rank{static_cast<int32_t>(ctx.roles.size()) + r});
  }
  auto server = serve::ServeMasterMetrics(o.store.listen, o.store.metrics_port,
                                          node.master_node()->service(), std::move(store_ranks),
                                          [&node] { return node.dead_ranks().size(); });
  if (!server.ok()) {
    log::Error("store.metrics_port = {}: {}", o.store.metrics_port, server.status().message());
    ctx.mpi.Abort(2);
  }
  serve::AnnounceMasterMetrics(**server, o.store.listen, ctx.mpi.hostname(), run_dir);
  return std::move(*server);
}

// Rank 0, once clients may attach: what the service is and how to stop it.
void PrintReady(JobContext& ctx, const std::string& connect_file) {
  const JobOptions& o = ctx.options;
  std::printf(
      "store service: %d store ranks x %s DRAM%s, %u replica(s) by default\n"
      "connection file: %s (mode 0600)\n"
      "stop it with: %s store stop %s   (or SIGTERM / Ctrl-C)\n",
      ctx.roles.count(Role::kStore), FormatBytes(o.store.dram).c_str(),
      o.store.ssd ? " + SSD tier" : "", static_cast<unsigned>(o.store.replicas),
      AbsolutePath(connect_file).c_str(), ThisBinary().c_str(), AbsolutePath(connect_file).c_str());
  PrintSurvivalHint(o);
  std::fflush(stdout);
}

// The SSD tier's spills, promotions and recovery reports name the master's rank for the job's
// life; a standby does not follow them yet. Every rank answers alike (rank 0 says why).
bool RefusesStandbyWithSsd(JobContext& ctx) {
  if (!ctx.options.store.ssd || ctx.roles.standby().value < 0) return false;
  if (ctx.rank() == 0) {
    log::Error("roles = '{}': a standby conductor does not work with store.ssd = on yet",
               ctx.roles.Summary());
  }
  return true;
}

}  // namespace

int RunStoreService(JobContext& ctx, bool* peers_lost) {
  const JobOptions& o = ctx.options;
  const Rank master = ctx.roles.conductor(), standby = ctx.roles.standby();
  if (RefusesStandbyWithSsd(ctx)) return 2;
  InstallStopSignals();
  const std::string run_dir = CollectiveRunDir(ctx);
  serve::ServeConfig config = ServeConfigFrom(o);
  config.job_deadline = std::chrono::hours(24 * 365 * 10);  // a service: the stop ends it
  // Before the node: a standby's takeover (on the node's heartbeat thread) uses them.
  std::atomic<bool> stop_asked{false};
  serve::PendingLeaves leaves;
  std::string connect_file;
  std::vector<store::ListenerRecord> listeners;
  serve::StoreServiceNode node(
      ctx.rank() == master.value ? serve::ServePart::kConductor : serve::ServePart::kStore,
      serve::StoreServiceDeps{
          ctx.transport, ctx.rpc, Rank{ctx.rank()}, master, StoreTopologyOf(ctx),
          std::span<std::byte>(ctx.local_buffer, ctx.local_buffer_size), standby, o.store.listen},
      config, MasterNodeConfigFrom(o), StoreRankConfigFrom(o, run_dir, ctx.rank()));
  EndRankWhenCutOff(node, ctx.rank(), [&node] { return node.leave_requested(); });
  node.OnPromoted([&] {
    Status opened =
        OpenToClients(ctx, node, listeners, run_dir, &stop_asked, &leaves, &connect_file);
    if (!opened.ok()) {
      log::Error("the new conductor cannot open to clients: {}", opened.ToString());
      return;
    }
    std::printf("rank %d conducts now; connection file rewritten: %s\n", ctx.rank(),
                AbsolutePath(connect_file).c_str());
    std::fflush(stdout);
  });
  Status s = node.Start();
  auto listener = s.ok() ? Listen(ctx, node) : Result<store::ListenerRecord>(s);
  if (!listener.ok()) {
    log::Error("{}", listener.status().ToString());
    ctx.mpi.Abort(listener.status().code() == ErrorCode::kInvalidArgument ? 2 : 1);
  }
  listeners = GatherListeners(ctx, *listener);
  // The standby sees the active's death at once, not after the failure timeout, through a link
  // that only the end of the active's process closes (docs/FAULTS.md, "A standby conductor").
  if (ctx.rank() == master.value && standby.value >= 0) {
    node.LinkToStandby(listeners[standby.value].hosts, listeners[standby.value].liveness_port);
  }
  OrEndBootstrap(ctx.mpi.Barrier(o.phase_timeout, "store service ready"), o, ctx.mpi);
  if (o.store.ssd) CollectiveAdmitRecovered(ctx, node.store_rank(), node.master_node());
  const bool conducts = ctx.rank() == master.value;
  if (conducts) {
    s = OpenToClients(ctx, node, listeners, run_dir, &stop_asked, &leaves, &connect_file);
    if (!s.ok()) {
      log::Error("{}", s.ToString());
      ctx.mpi.Abort(1);
    }
  }
  std::unique_ptr<http::HttpServer> metrics;
  if (conducts && o.store.metrics_port >= 0) metrics = ServeMetrics(ctx, node, run_dir);
  if (o.survive_rank_loss) LeaveMpi(o, ctx.mpi);
  if (conducts) PrintReady(ctx, connect_file);
  serve::WaitForServiceStop(node, StopSignalled, stop_asked, leaves, o.phase_timeout);
  const int code = serve::EndStoreService(
      node,
      serve::StoreSummaryInputs{ctx.roles.size(), ctx.roles.count(Role::kStore), o.store.ssd,
                                o.store.keep_when_full, run_dir},
      o.status_file, Rank{ctx.rank()});
  *peers_lost = node.peers_lost();
  return code;
}

}  // namespace mooncake::app
