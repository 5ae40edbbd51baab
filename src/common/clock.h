// Clocks are injected (STYLE.md habit 3): live code uses SteadyClock, the simulator and tests a
// ManualClock, so the same logic runs on wall time and on virtual time.
#pragma once

#include <chrono>
#include <cstdint>

namespace mooncake {

using Nanos = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time since an arbitrary epoch.
  virtual Nanos Now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  Nanos Now() const override {
    return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch());
  }
};

// A clock that moves only when told. Not thread-safe; for tests and the simulator.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Nanos start = Nanos(0)) : now_(start) {}
  Nanos Now() const override { return now_; }
  void Set(Nanos t) { now_ = t; }
  void Advance(Nanos d) { now_ += d; }

 private:
  Nanos now_;
};

}  // namespace mooncake
