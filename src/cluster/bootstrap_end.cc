#include "cluster/bootstrap_end.h"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/log.h"
#include "common/units.h"

namespace mooncake::cluster {
namespace {

// How long the other ranks leave rank 0 to write its files before they end: under plain mpirun
// the first rank to end takes the others with it.
constexpr std::chrono::seconds kRankZeroFirst(5);

}  // namespace

void EndBootstrap(const BootstrapEnd& end, const Bootstrap* bootstrap, int rank,
                  const Status& why) {
  if (rank == 0) {
    const std::string report = end.report ? end.report(why, bootstrap) : "";
    std::fprintf(
        stderr, "mooncake: the bootstrap did not complete: %s; every rank ends (exit %d)%s%s\n",
        why.ToString().c_str(), end.exit_code, report.empty() ? "" : "; see ", report.c_str());
  } else {
    log::Error("bootstrap: {}; this rank ends", why.ToString());
    std::fflush(nullptr);
    std::this_thread::sleep_for(kRankZeroFirst);
  }
  std::fflush(nullptr);
  if (bootstrap != nullptr) bootstrap->Abort(end.exit_code);
  std::_Exit(end.exit_code);
}

void WithDeadline(std::string_view step, Nanos timeout, const BootstrapEnd& end, int rank,
                  const std::function<void()>& call) {
  std::mutex mu;
  std::condition_variable cv;
  bool returned = false;
  std::thread watchdog([&, step = std::string(step)] {
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, timeout, [&] { return returned; })) return;
    lock.unlock();
    EndBootstrap(end, nullptr, rank,
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

}  // namespace mooncake::cluster
