#include "cluster/fault_hooks.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "common/cli/option_values.h"

namespace mooncake::cluster {
namespace {

// fault.stop's rank cannot resume itself, and nothing else would: a launcher that waits for
// every rank would wait forever after the job ended. Before stopping, the rank forks a watchdog
// that sends it SIGCONT `after` later (or ends when the rank is gone). The child only calls
// async-signal-safe functions (the parent has threads) and closes its copies of the parent's
// files, so it holds no output pipe of the launcher open. Returns the child's pid, or -1.
pid_t ForkResumeWatchdog(Nanos after) {
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child != 0) return child;
  for (int fd = 0; fd < 1024; ++fd) ::close(fd);
  const Nanos step = std::chrono::milliseconds(100);
  for (Nanos waited{0}; waited < after; waited += step) {
    const timespec ts{0, static_cast<long>(step.count())};
    ::nanosleep(&ts, nullptr);
    if (::getppid() != parent) ::_exit(0);
  }
  ::kill(parent, SIGCONT);
  ::_exit(0);
}

}  // namespace

Status FaultSpecOption(const char* name, const std::string& value, FaultSpec* out) {
  if (value.empty()) return Status::Ok();
  const size_t at = value.find('@');
  char* end = nullptr;
  const long rank = at == std::string::npos ? -1 : std::strtol(value.c_str(), &end, 10);
  if (at == std::string::npos || end != value.c_str() + at || rank < 1 || rank > 1000000) {
    return InvalidArgument(std::string(name) + " = '" + value +
                           "' (allowed: RANK@TIME with RANK >= 1, e.g. 2@8s; the conductor, "
                           "rank 0, cannot be the target)");
  }
  out->rank = static_cast<int>(rank);
  const std::string when = value.substr(at + 1);
  if (std::string(name) == "fault.kill" && (when == "mpi_init" || when == "bootstrap")) {
    out->point = when == "mpi_init" ? FaultPoint::kBeforeMpiInit : FaultPoint::kBootstrapExchange;
    return Status::Ok();
  }
  return cli::DurationOption(name, when, Nanos(0), Nanos(86'400'000'000'000), &out->at);
}

void ArmFaults(const FaultSpec& kill, const FaultSpec& stop, int rank, Nanos failure_timeout) {
  for (const auto& [spec, sig] : {std::pair{kill, SIGKILL}, std::pair{stop, SIGSTOP}}) {
    if (spec.rank != rank || spec.point != FaultPoint::kReplay) continue;
    const Nanos at = spec.at;
    const int signal = sig;
    const Nanos resume_after = 5 * failure_timeout;
    std::thread([at, signal, resume_after] {
      std::this_thread::sleep_for(at);
      std::fflush(nullptr);
      const pid_t watchdog = signal == SIGSTOP ? ForkResumeWatchdog(resume_after) : -1;
      std::raise(signal);
      if (watchdog > 0) ::waitpid(watchdog, nullptr, 0);
    }).detach();
  }
}

}  // namespace mooncake::cluster
