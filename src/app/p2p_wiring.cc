#include "app/p2p_wiring.h"

#include <iostream>
#include <thread>

#include "app/run.h"
#include "cluster/mpi/mpi_session.h"
#include "p2p/p2p_job.h"

namespace mooncake::app {

int RunP2p(int argc, char** argv) {
  auto parsed = p2p::ParseP2pOptions(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  p2p::P2pOptions& o = *parsed.options;
  log::SetLevel(o.log_level);
  if (Status s = p2p::CheckBeforeBootstrap(o, std::max(0, LauncherRank()), LauncherWorldSize());
      !s.ok()) {
    std::cerr << "mooncake p2p: " << s.message() << "\n";
    // mpirun ends the job at the first non-zero exit: the other ranks wait a moment so the
    // rank with the message is not cut short by them.
    if (LauncherRank() > 0) std::this_thread::sleep_for(std::chrono::seconds(1));
    return 2;
  }
  auto mpi_or = cluster::MpiSession::Init(&argc, &argv);
  if (!mpi_or.ok()) {
    std::cerr << "mooncake p2p: " << mpi_or.status().ToString() << "\n";
    return 1;
  }
  return p2p::RunP2pJob(std::move(o), **mpi_or);
}

}  // namespace mooncake::app
