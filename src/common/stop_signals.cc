#include "common/stop_signals.h"

#include <csignal>

namespace mooncake {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void OnStopSignal(int) { g_stop_signal = 1; }

}  // namespace

void InstallStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
}

bool StopSignalled() { return g_stop_signal != 0; }

}  // namespace mooncake
