// A background thread that calls a tick every interval until it is stopped: the stop flag, the
// wake-up, the wait and the join that the p2p heartbeat, the p2p update channel, the failure
// detector and the re-replicator each wrote by hand before.
//
//   ticker_.Start(interval, PeriodicThread::First::kTick, [this] { return Beat(); });
//   ...
//   ticker_.Stop();  // in the owner's Stop() or destructor, before the members the tick reads
//
// The interval runs from the end of one tick to the start of the next. Wake() makes the next
// wait return at once (work arrived); a wake while a tick runs is kept for the next wait, so none
// is lost. The tick runs without any lock of this class held; it returns false to end the
// thread. Start, Wake, Stop and stopping() may be called from any thread, Stop not from the tick.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "common/clock.h"

namespace mooncake {

class PeriodicThread {
 public:
  enum class First { kTick, kWait };  // tick as soon as started, or after a first interval
  // Ticks only when woken (Wake), never on a timer.
  static constexpr Nanos kOnlyWhenWoken = Nanos::max();

  PeriodicThread() = default;
  ~PeriodicThread();  // Stop()
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts the thread (once). The owner calls it last in its constructor, once every member the
  // tick reads exists.
  void Start(Nanos interval, First first, std::function<bool()> tick);
  void Wake();
  // Ends the thread after the tick in progress and joins it; idempotent.
  void Stop();
  // True once Stop() was called: a long tick (a backlog worked off in rounds) checks it.
  bool stopping() const;

 private:
  void Run();
  // Waits for the interval, a Wake or Stop; false once stopping.
  bool Wait(std::unique_lock<std::mutex>& lock);

  Nanos interval_{0};
  First first_ = First::kWait;
  std::function<bool()> tick_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false, woken_ = false;
  std::thread thread_;
};

}  // namespace mooncake
