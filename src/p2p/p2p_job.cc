#include "p2p/p2p_job.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "cluster/peer_exchange.h"
#include "p2p/local_object.h"
#include "transport/factory/transport_factory.h"
#include "transport/rpc.h"
#include "transport/shutdown.h"

namespace mooncake::p2p {
namespace {

namespace fs = std::filesystem;

bool Readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

}  // namespace

Status CheckBeforeBootstrap(const P2pOptions& o, int rank, int world) {
  const auto& c = o.command;
  if (!o.sources_readable && world > 0) {
    auto ranks = ParseRankList(o.source_ranks, world);
    if (!ranks.ok()) return ranks.status();
    if (static_cast<int>(ranks->size()) >= world) {
      return InvalidArgument("source-ranks = '" + o.source_ranks + "': every rank of the " +
                             std::to_string(world) + " is a source; nothing to distribute");
    }
  }
  auto is_source = [&c](int r) {
    return std::find(c.source_ranks.begin(), c.source_ranks.end(), r) != c.source_ranks.end();
  };
  if (c.corrupt_rank >= 0 && !o.sources_readable && !is_source(c.corrupt_rank)) {
    return InvalidArgument("fault.corrupt = " + std::to_string(c.corrupt_rank) +
                           ": not a source rank (--source-ranks " + o.source_ranks + ")");
  }
  if (world > 0 && (c.corrupt_rank >= world || c.kill_rank >= world)) {
    return InvalidArgument("fault.corrupt / fault.kill: rank " +
                           std::to_string(std::max(c.corrupt_rank, c.kill_rank)) +
                           " is not below the job's " + std::to_string(world) + " ranks");
  }
  const bool listed = is_source(rank);
  if (!o.sources_readable && listed && !Readable(c.source)) {
    return InvalidArgument("source = '" + c.source + "': cannot read it on rank " +
                           std::to_string(rank) + " (a source rank)");
  }
  if (!o.sources_readable && listed) {
    // A device, a pipe or a socket (/dev/null, /dev/stdin) has no size to split into pieces.
    std::error_code ec;
    const fs::file_status st = fs::status(c.source, ec);
    if (!fs::is_regular_file(st) && !fs::is_directory(st)) {
      return InvalidArgument("source = '" + c.source + "': not a regular file or a folder (rank " +
                             std::to_string(rank) + ", a source rank)");
    }
  }
  if (!c.in_memory && !listed) {
    std::error_code ec;
    fs::create_directories(c.dest, ec);
    if (ec || !fs::is_directory(c.dest)) {
      return InvalidArgument("dest = '" + c.dest + "': cannot create the folder on rank " +
                             std::to_string(rank) + (ec ? ": " + ec.message() : ""));
    }
    const fs::path target = fs::path(c.dest) / ObjectNameOf(c.source);
    if (fs::exists(target, ec) && fs::exists(c.source, ec) &&
        fs::equivalent(target, c.source, ec)) {
      return InvalidArgument("dest = '" + c.dest + "': the copy would overwrite the source " +
                             c.source);
    }
  }
  return Status::Ok();
}

namespace {

// --source-ranks readable: every rank says whether it can read PATH (collective).
Result<std::vector<int32_t>> ReadableRanks(const cluster::Bootstrap& mpi, const std::string& path) {
  const char mine = Readable(path) ? 1 : 0;
  auto all = mpi.AllGather(std::as_bytes(std::span<const char>(&mine, 1)));
  std::vector<int32_t> ranks;
  for (size_t r = 0; r < all.size(); ++r) {
    if (!all[r].empty() && all[r][0] == std::byte{1}) ranks.push_back(static_cast<int32_t>(r));
  }
  if (ranks.empty()) return InvalidArgument("source = '" + path + "': no rank can read it");
  if (ranks.size() == all.size()) {
    return InvalidArgument("source = '" + path +
                           "': every rank can read it (--source-ranks readable): nothing to do");
  }
  return ranks;
}

// Rank 0's first line: what goes where, and the UCX transports in use.
void PrintStart(const P2pOptions& o, const std::vector<std::string>& hosts,
                transport::Transport& transport) {
  const auto& c = o.command;
  const std::string where = c.in_memory ? "in memory"
                            : c.copies == Copies::kNode
                                ? "one copy per host in " + c.dest
                                : "one copy per rank in " + c.dest + "/rank<r>";
  const size_t nodes = std::set<std::string>(hosts.begin(), hosts.end()).size();
  std::printf("mooncake p2p: %s from rank(s) %s to %zu ranks on %zu host(s), %s; ucx %s\n",
              c.source.c_str(), o.source_ranks.c_str(), hosts.size(), nodes, where.c_str(),
              transport.DescribePath(Rank{1}).c_str());
  std::fflush(stdout);
}

void WriteStatus(const std::string& file, int code) {
  if (!file.empty()) std::ofstream(file) << code << "\n";
}

}  // namespace

int RunP2pJob(P2pOptions o, const cluster::Bootstrap& mpi) {
  log::SetTag("r" + std::to_string(mpi.rank()) + " p2p");
  if (mpi.size() < 2) {
    std::cerr << "mooncake p2p: needs at least 2 ranks (mpirun -np N, N >= 2)\n";
    return 2;
  }
  if (o.sources_readable) {
    auto ranks = ReadableRanks(mpi, o.command.source);
    if (!ranks.ok()) {
      if (mpi.rank() == 0) std::cerr << "mooncake p2p: " << ranks.status().message() << "\n";
      return 2;
    }
    o.command.source_ranks = *ranks;
  }
  // Each rank reads a part of every peer's copy: map peers' segments lazily (ucx_config.h).
  o.transport.ucx.populate_imports = false;
  auto transport_or = transport::CreateTransport(o.transport, Rank{mpi.rank()}, mpi.size());
  if (!transport_or.ok()) {
    std::cerr << "mooncake p2p: cannot start the transport: " << transport_or.status().ToString()
              << "\n";
    mpi.Abort(transport_or.status().code() == ErrorCode::kInvalidArgument ? 2 : 1);
  }
  transport::Transport& transport = **transport_or;
  transport::Rpc rpc(transport);
  // Calls to the tracker wait on the transport's progress thread instead of spinning on the
  // worker: the fetching thread and the transport's thread need the cores (measured: 4 ranks
  // on 2 cores spent a quarter of their time in sched_yield and the worker's spin lock).
  rpc.set_spin_budget(Nanos(0));
  auto command = std::make_unique<P2pCommand>(o.command, transport, rpc);
  const bool tracks = mpi.rank() == o.command.tracker_rank;
  const cluster::Role role = tracks ? cluster::Role::kConductor : cluster::Role::kStore;
  auto peers =
      cluster::ExchangePeers(mpi, transport, &rpc, role, {}, cluster::kToolBootstrapTimeout);
  if (!peers.ok()) {
    std::cerr << "mooncake p2p: bootstrap failed: " << peers.status().ToString() << "\n";
    mpi.Abort(1);
  }
  std::vector<std::string> hosts;
  for (const auto& p : *peers) hosts.push_back(p.host);
  if (tracks) PrintStart(o, hosts, transport);
  mpi.Leave();  // from here on only the UCX RPC joins the ranks: one may die alone
  const int code = command->Run(hosts);
  if (command->peers_lost()) {
    // UCX 1.13 asserts in ucp_worker_destroy while purging wire-up messages still queued for
    // a peer that died (measured: "got REP message" abort in a survivor after a receiver was
    // SIGKILLed). The outcome is known and reported: leave without closing the transport.
    if (tracks) WriteStatus(o.status_file, code);
    std::fflush(nullptr);
    std::_Exit(code);
  }
  transport::StopAndClose(transport, rpc, Nanos(5'000'000'000));
  command->TransportClosed();
  command.reset();
  if (tracks) WriteStatus(o.status_file, code);
  std::fflush(nullptr);
  return code;
}

}  // namespace mooncake::p2p
