#include "app/eval_wiring.h"

#include <iostream>

#include "app/run.h"
#include "cluster/mpi/mpi_session.h"
#include "eval/eval_command.h"

namespace mooncake::app {

int RunEval(int argc, char** argv) {
  if (LauncherWorldSize() <= 1) return eval::RunEvalCommand(argc, argv);
  auto mpi = cluster::MpiSession::Init(&argc, &argv);
  if (!mpi.ok()) {
    std::cerr << "mooncake eval: " << mpi.status().ToString() << "\n";
    return 1;
  }
  const cluster::Bootstrap& session = **mpi;
  eval::SweepComm comm;
  comm.rank = session.rank();
  comm.size = session.size();
  comm.gather = [&session](const std::string& text) {
    auto parts = session.Gather(std::as_bytes(std::span<const char>(text.data(), text.size())), 0);
    std::vector<std::string> out;
    for (auto& p : parts) out.emplace_back(reinterpret_cast<const char*>(p.data()), p.size());
    return out;
  };
  return eval::RunEvalCommand(argc, argv, comm);
}

}  // namespace mooncake::app
