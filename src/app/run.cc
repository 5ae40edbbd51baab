#include "app/run.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "app/bootstrap_deadline.h"
#include "app/job_context.h"
#include "app/serve_job.h"
#include "app/store_service.h"
#include "cluster/check_job.h"
#include "cluster/mpi/mpi_session.h"
#include "cluster/peer_exchange.h"
#include "cluster/role_table.h"
#include "common/log.h"
#include "common/units.h"
#include "serve/workload.h"
#include "store/node/host_memory.h"
#include "transport/factory/transport_factory.h"
#include "transport/host_buffer.h"
#include "transport/rpc.h"
#include "transport/shutdown.h"

namespace mooncake::app {
namespace {

using cluster::Role;

// On a usage error every rank finds the same error and rank 0 alone reports it; the others wait
// this long before they exit, since mpirun ends the job at the first non-zero exit and could take
// rank 0's message with it. Plain mpirun ends them as soon as rank 0 exits, so there the wait is
// only a bound (1 s was too short for a rank 0 that started late on a loaded machine); under
// launch/mooncake-mpirun, which keeps a job going past a rank's exit, it is waited in full.
constexpr auto kWaitForRankZeroToReport = std::chrono::seconds(5);

}  // namespace

// The layout of `options.cluster.roles` for `world_size` ranks: the store service has its own.
Result<cluster::RoleTable> BuildRoles(const JobOptions& options, int world_size) {
  return options.mode == JobMode::kStore
             ? cluster::RoleTable::BuildStoreService(options.cluster.roles, world_size)
             : cluster::RoleTable::Build(options.cluster.roles, world_size);
}

int LauncherWorldSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (const char* v = std::getenv(name)) {
      int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return 0;
}

// This process's rank as the launcher announced it (before MPI_Init), or -1.
int LauncherRank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return -1;
}

namespace {

// The workload is read and validated before MPI starts: a malformed trace line fails the job
// (FILE:LINE: field: what) before any rank has done any work. Returns false on error.
bool LoadWorkloadEarly(const JobOptions& options, serve::Workload* workload) {
  if (options.mode != JobMode::kServe || options.dry_run) return true;
  auto w = serve::LoadWorkload(WorkloadSpecFrom(options));
  if (w.ok()) {
    *workload = std::move(*w);
    return true;
  }
  if (LauncherRank() <= 0) {
    std::cerr << "mooncake: " << w.status().message() << "\n";
  } else {
    std::this_thread::sleep_for(kWaitForRankZeroToReport);
  }
  return false;
}

// --dry-run: the role table with every rank's host, then exit 0.
int DryRun(const JobOptions& options, const cluster::Bootstrap& mpi,
           const cluster::RoleTable& roles) {
  auto hosts = OrEndBootstrap(
      cluster::AllGatherText(mpi, mpi.hostname(), "role table (dry run)", options.phase_timeout),
      options, mpi);
  if (mpi.rank() == 0) {
    std::printf("mooncake dry run: %d ranks (%s)\n", roles.size(), roles.Summary().c_str());
    cluster::PrintRoleTable(roles, hosts, {});
  }
  return 0;
}

// Store ranks register their DRAM segment; prefill and decode ranks a staging buffer (an empty
// buffer when this role needs none).
transport::HostBuffer RegisterBuffer(const JobOptions& options, Role role,
                                     const cluster::Bootstrap& mpi, transport::Transport& transport,
                                     const std::vector<store::RankMemory>& memory) {
  size_t size = 0;
  if (role == Role::kStore) size = options.store.dram;
  if (options.mode == JobMode::kCheck && (role == Role::kPrefill || role == Role::kDecode)) {
    size = options.block_size;
  }
  if (options.mode == JobMode::kServe && role == Role::kDecode) size = options.serve.decode_buffer;
  if (size == 0) return {};
  // The store service's segments are memory the transport allocates where it can (shared
  // memory): a client on the same host maps it and moves a value with one copy of its own,
  // hashing it in L1 (the path store_bench measures), instead of a cross-process read per
  // request. Otherwise (a backend without such memory) the heap, registered.
  auto buffer = transport::HostBuffer::Create(
      transport, size, options.mode == JobMode::kStore, [&](std::byte* data, size_t bytes) {
        if (role == Role::kStore) {
          store::TouchSegment(data, bytes, memory, mpi.rank());  // fault the pages in now
        } else {
          std::fill(data, data + bytes, std::byte{0});
        }
      });
  if (!buffer.ok()) {
    log::Error("{}", buffer.status().ToString());
    mpi.Abort(1);
  }
  return std::move(*buffer);
}

// Each rank's endpoint paths, as UCX really selected them, in the role table (rank 0 prints).
void PrintJobTable(const JobOptions& options, const cluster::Bootstrap& mpi,
                   const cluster::RoleTable& roles, transport::Transport& transport,
                   const std::vector<cluster::PeerInfo>& peers) {
  std::string to_zero = transport.DescribePath(Rank{0});
  if (mpi.rank() == 0 && mpi.size() > 1) to_zero = transport.DescribePath(Rank{1});
  auto paths = OrEndBootstrap(
      cluster::AllGatherText(mpi, to_zero, "role table", options.phase_timeout), options, mpi);
  if (mpi.rank() != 0) return;
  std::vector<std::string> hosts;
  for (const auto& p : peers) hosts.push_back(p.host);
  std::printf("mooncake: %d ranks (%s), transport.tls=%s\n", roles.size(), roles.Summary().c_str(),
              options.transport.ucx.tls.c_str());
  cluster::PrintRoleTable(roles, hosts, paths);
}

// Quiesce before closing: every rank has stopped issuing operations once all pass the first
// barrier.
void Shutdown(const JobOptions& options, const cluster::Bootstrap& mpi,
              transport::Transport& transport, transport::Rpc& rpc) {
  Status s = mpi.Barrier(options.phase_timeout, "final barrier");
  if (!s.ok()) log::Error("{}", s.ToString());
  transport.BeginShutdown();
  s = mpi.Barrier(options.phase_timeout, "shutdown barrier");
  if (!s.ok()) log::Error("{}", s.ToString());
  transport::StopAndClose(transport, rpc, options.rpc_timeout);
}

// After MPI_Init: the transport, the registered buffer, the bootstrap exchange, then the job.
// `*peers_lost`: a rank died during the job, so MPI_Finalize must not be called.
int RunOnRanks(const JobOptions& options, const serve::Workload& workload,
               const cluster::Bootstrap& mpi, const cluster::RoleTable& roles, bool* peers_lost) {
  const Role role = roles.role(mpi.rank());
  // The store's segments must fit their hosts: every rank sees every host's figures, so all
  // of them stop with exit 2 together, before anything is allocated; rank 0 says why.
  const std::vector<store::RankMemory> memory = OrEndBootstrap(
      store::GatherRankMemory(mpi, role == Role::kStore, options.phase_timeout), options, mpi);
  if (Status fits = store::CheckStoreMemory(memory, options.store.dram); !fits.ok()) {
    if (mpi.rank() == 0) std::cerr << "mooncake: " << fits.message() << "\n";
    return 2;
  }
  auto transport_or = transport::CreateTransport(options.transport, Rank{mpi.rank()}, mpi.size());
  if (!transport_or.ok()) {
    log::Error("cannot start the transport: {}", transport_or.status().ToString());
    mpi.Abort(transport_or.status().code() == ErrorCode::kInvalidArgument ? 2 : 1);
  }
  auto& transport = **transport_or;
  const transport::HostBuffer buffer = RegisterBuffer(options, role, mpi, transport, memory);
  std::vector<transport::MemoryRegion> exported;
  if (buffer.size() > 0) exported.push_back(buffer.region());
  transport::Rpc rpc(transport);
  if (options.fault_kill.point == cluster::FaultPoint::kBootstrapExchange &&
      options.fault_kill.rank == mpi.rank()) {
    std::fflush(nullptr);
    std::raise(SIGKILL);  // test hook: this rank dies just before the bootstrap exchange
  }
  auto peers = cluster::ExchangePeers(mpi, transport, &rpc, role, exported, options.phase_timeout,
                                      options.address_file);
  if (!peers.ok()) EndBootstrap(options, &mpi, mpi.rank(), peers.status());
  PrintJobTable(options, mpi, roles, transport, *peers);
  JobContext ctx{options,           mpi,           roles,        transport, rpc,
                 std::move(*peers), buffer.data(), buffer.size()};
  if (options.mode == JobMode::kStore || options.mode == JobMode::kServe) {
    const int code = options.mode == JobMode::kStore ? RunStoreService(ctx, peers_lost)
                                                     : RunServeJob(ctx, workload, peers_lost);
    // Both end over the RPC (their end handshake quiesces every live rank), never in an MPI
    // barrier that a dead rank would hang.
    transport::StopAndClose(transport, rpc, options.rpc_timeout);
    return code;
  }
  const cluster::CheckJobConfig check{options.block_size,    options.rpc_timeout,
                                      options.phase_timeout, options.ping_rounds,
                                      options.silent_rank,   options.out_dir};
  const int code =
      cluster::RunCheckJob(check, {mpi, roles, transport, rpc, ctx.peers, ctx.local_buffer});
  Shutdown(options, mpi, transport, rpc);
  return code;
}

// Rank 0 writes the job's exit status to --job.status_file on every way out, usage errors and
// --dry-run included: launch/mooncake-mpirun takes a missing status for a dead rank 0.
int Finish(const JobOptions& options, int rank, int code) {
  if (rank == 0 && !options.status_file.empty()) {
    std::ofstream(options.status_file) << code << "\n";
  }
  return code;
}

}  // namespace

int Run(const JobOptions& options, int* argc, char*** argv) {
  log::SetLevel(options.log_level);
  // Before MPI_Init the launcher's environment names the rank (-1 without a launcher: rank 0).
  const int launcher_rank = std::max(0, LauncherRank());
  serve::Workload workload;
  if (!LoadWorkloadEarly(options, &workload)) return Finish(options, launcher_rank, 2);
  // Role counts that cannot fit are a usage error, reported before any MPI work when the
  // launcher told us the job size.
  if (int n = LauncherWorldSize(); n > 0) {
    auto early = BuildRoles(options, n);
    if (!early.ok()) {
      if (launcher_rank == 0) {
        std::cerr << "mooncake: " << early.status().message() << "\n";
      } else {
        std::this_thread::sleep_for(kWaitForRankZeroToReport);
      }
      return Finish(options, launcher_rank, 2);
    }
  }
  if (options.fault_kill.point == cluster::FaultPoint::kBeforeMpiInit &&
      options.fault_kill.rank == LauncherRank()) {
    std::fflush(nullptr);
    std::raise(SIGKILL);  // test hook: this rank dies before MPI is up
  }
  if (LauncherRank() >= 0) log::SetTag("r" + std::to_string(LauncherRank()));
  // MPI_Init waits for every rank's startup information without a deadline: bounded here.
  std::optional<Result<std::unique_ptr<cluster::MpiSession>>> init;
  cluster::WithDeadline("MPI_Init", options.phase_timeout, BootstrapEndOf(options), launcher_rank,
                        [&] { init.emplace(cluster::MpiSession::Init(argc, argv)); });
  auto& mpi_or = *init;
  if (!mpi_or.ok()) {
    std::cerr << "mooncake: " << mpi_or.status().ToString() << "\n";
    return Finish(options, launcher_rank, 1);
  }
  auto& mpi = **mpi_or;
  auto roles_or = BuildRoles(options, mpi.size());
  if (!roles_or.ok()) {
    if (mpi.rank() == 0) std::cerr << "mooncake: " << roles_or.status().message() << "\n";
    return Finish(options, mpi.rank(), 2);
  }
  const Role role = roles_or->role(mpi.rank());
  log::SetTag("r" + std::to_string(mpi.rank()) + " " + std::string(cluster::RoleName(role)));
  if (options.dry_run) return Finish(options, mpi.rank(), DryRun(options, mpi, *roles_or));
  bool peers_lost = false;
  const int code =
      Finish(options, mpi.rank(), RunOnRanks(options, workload, mpi, *roles_or, &peers_lost));
  if (peers_lost) {
    // Open MPI's MPI_Finalize hangs when a peer died (measured with orte_enable_recovery): leave
    // without it. The job's own summary names the dead ranks; the exit code says the outcome.
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace mooncake::app
