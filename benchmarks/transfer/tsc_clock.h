// A cycle-counter clock for per-request latencies in benchmarks. ucx_perftest times its
// iterations with rdtsc (ucs_get_time); on this VM clock_gettime costs ~43 ns against rdtsc's
// ~24 ns, a fifth of a 4 KiB read, so timing ours with clock_gettime would bias the comparison.
// Calibrated once against steady_clock; falls back to it off x86 or without an invariant TSC.
#pragma once

#include <chrono>
#include <thread>

#include "common/clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace mooncake::bench {

class TscClock final : public Clock {
 public:
  TscClock() {
#if defined(__x86_64__)
    // An invariant TSC (CPUID 0x80000007, EDX bit 8) ticks at one rate on every core and in
    // every power state; without one, rdtsc is no clock.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 8))) return;
    // ~20 ms of calibration: well under 0.1 % error, negligible at start-up.
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = __rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto t1 = std::chrono::steady_clock::now();
    const uint64_t c1 = __rdtsc();
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    if (c1 > c0 && ns > 0) {
      ns_per_tick_ = ns / static_cast<double>(c1 - c0);
      base_ticks_ = c0;
      base_ = std::chrono::duration_cast<Nanos>(t0.time_since_epoch());
    }
#endif
  }
  Nanos Now() const override {
#if defined(__x86_64__)
    if (ns_per_tick_ > 0) {
      const auto ticks = static_cast<int64_t>(__rdtsc() - base_ticks_);
      return base_ + Nanos(static_cast<int64_t>(static_cast<double>(ticks) * ns_per_tick_));
    }
#endif
    return fallback_.Now();
  }

 private:
  double ns_per_tick_ = 0;
  uint64_t base_ticks_ = 0;
  Nanos base_{0};
  SteadyClock fallback_;
};

// The process's one calibrated instance (calibration sleeps, so it is done once).
inline const TscClock& BenchClock() {
  static const TscClock clock;
  return clock;
}

}  // namespace mooncake::bench
