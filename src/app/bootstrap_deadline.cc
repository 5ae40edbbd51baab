#include "app/bootstrap_deadline.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "app/run.h"
#include "common/log.h"
#include "common/run_folder.h"

namespace mooncake::app {
namespace {

// Rank 0: bootstrap.json in the run folder (what is known: the step, the missing ranks, the job's
// size and deadline) and the job's exit status. Returns the file, or "" when it cannot write.
std::string WriteWhatIsKnown(const JobOptions& o, const cluster::Bootstrap* mpi,
                             const Status& why) {
  if (!o.status_file.empty()) std::ofstream(o.status_file) << kBootstrapFailedExit << "\n";
  auto folder = RunFolder::Create(o.out_dir);
  if (!folder.ok()) {
    log::Error("{}", folder.status().ToString());
    return "";
  }
  nlohmann::json j;
  j["result"] = "bootstrap failed";
  j["error"] = why.ToString();
  j["missing_ranks"] = mpi != nullptr ? mpi->missing_at_last_step() : std::vector<int>{};
  j["world_size"] = mpi != nullptr ? mpi->size() : LauncherWorldSize();
  j["roles"] = o.cluster.roles;
  j["config"] = o.config_file;
  j["phase_timeout_s"] = static_cast<double>(o.phase_timeout.count()) / 1e9;
  j["exit_status"] = kBootstrapFailedExit;
  Status s = folder->WriteText("bootstrap.json", j.dump(2) + "\n");
  if (!s.ok()) log::Error("{}", s.ToString());
  return folder->path() + "/bootstrap.json";
}

}  // namespace

cluster::BootstrapEnd BootstrapEndOf(const JobOptions& o) {
  return {kBootstrapFailedExit, [&o](const Status& why, const cluster::Bootstrap* mpi) {
            return WriteWhatIsKnown(o, mpi, why);
          }};
}

void EndBootstrap(const JobOptions& o, const cluster::Bootstrap* mpi, int rank, const Status& why) {
  cluster::EndBootstrap(BootstrapEndOf(o), mpi, rank, why);
}

void LeaveMpi(const JobOptions& o, const cluster::Bootstrap& mpi) {
  cluster::WithDeadline("MPI_Finalize", o.phase_timeout, BootstrapEndOf(o), mpi.rank(),
                        [&] { mpi.Leave(); });
}

}  // namespace mooncake::app
