#include "app/bootstrap_deadline.h"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/run.h"
#include "app/run_folder.h"
#include "common/log.h"
#include "common/units.h"

namespace mooncake::app {
namespace {

// How long the other ranks leave rank 0 to write its files before they end: under plain mpirun
// the first rank to end takes the others with it.
constexpr std::chrono::seconds kRankZeroFirst(5);

// Rank 0: bootstrap.json in the run folder (what is known: the step, the missing ranks, the job's
// size and deadline) and the job's exit status. Returns the folder, or "" when it cannot write.
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
  j["roles"] = o.roles;
  j["config"] = o.config_file;
  j["phase_timeout_s"] = static_cast<double>(o.phase_timeout.count()) / 1e9;
  j["exit_status"] = kBootstrapFailedExit;
  Status s = folder->WriteText("bootstrap.json", j.dump(2) + "\n");
  if (!s.ok()) log::Error("{}", s.ToString());
  return folder->path();
}

}  // namespace

void EndBootstrap(const JobOptions& o, const cluster::Bootstrap* mpi, int rank, const Status& why) {
  if (rank == 0) {
    const std::string folder = WriteWhatIsKnown(o, mpi, why);
    std::fprintf(stderr,
                 "mooncake: the bootstrap did not complete: %s; every rank ends (exit %d)%s%s\n",
                 why.ToString().c_str(), kBootstrapFailedExit, folder.empty() ? "" : "; see ",
                 folder.empty() ? "" : (folder + "/bootstrap.json").c_str());
  } else {
    log::Error("bootstrap: {}; this rank ends", why.ToString());
    std::fflush(nullptr);
    std::this_thread::sleep_for(kRankZeroFirst);
  }
  std::fflush(nullptr);
  if (mpi != nullptr) mpi->Abort(kBootstrapFailedExit);
  std::_Exit(kBootstrapFailedExit);
}

void WithDeadline(std::string_view step, Nanos timeout, const JobOptions& o, int rank,
                  const std::function<void()>& call) {
  std::mutex mu;
  std::condition_variable cv;
  bool returned = false;
  std::thread watchdog([&, step = std::string(step)] {
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, timeout, [&] { return returned; })) return;
    lock.unlock();
    EndBootstrap(o, nullptr, rank,
                 Timeout(fmt::format("{} did not return within {} (job.phase_timeout): a rank "
                                     "died or never started, and MPI waits for every rank "
                                     "without a deadline; which one, MPI does not tell",
                                     step, FormatDuration(timeout))));
  });
  call();
  {
    std::lock_guard lock(mu);
    returned = true;
  }
  cv.notify_one();
  watchdog.join();
}

void LeaveMpi(const JobOptions& o, const cluster::Bootstrap& mpi) {
  WithDeadline("MPI_Finalize", o.phase_timeout, o, mpi.rank(), [&] { mpi.Leave(); });
}

}  // namespace mooncake::app
