#include "common/periodic_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace mooncake {
namespace {

using namespace std::chrono_literals;

// Waits (with a deadline: the machine may be crowded) until `ticks` reached `at_least`.
bool ReachesWithin(const std::atomic<int>& ticks, int at_least, std::chrono::seconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (ticks.load() < at_least) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A tick that counts itself and goes on.
std::function<bool()> CountInto(std::atomic<int>& ticks) {
  return [&ticks] {
    ++ticks;
    return true;
  };
}

TEST(PeriodicThreadTest, TicksEveryIntervalUntilStopped) {
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  thread.Start(Nanos(1ms), PeriodicThread::First::kTick, CountInto(ticks));
  EXPECT_TRUE(ReachesWithin(ticks, 3, 30s));
  thread.Stop();
  const int after_stop = ticks.load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ticks.load(), after_stop);
  EXPECT_TRUE(thread.stopping());
}

TEST(PeriodicThreadTest, WaitFirstDoesNotTickBeforeTheInterval) {
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  thread.Start(Nanos(1h), PeriodicThread::First::kWait, CountInto(ticks));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ticks.load(), 0);
  thread.Stop();  // does not wait out the hour
  EXPECT_EQ(ticks.load(), 0);
}

TEST(PeriodicThreadTest, WakeTicksAtOnceAndKeepsAWakeDuringATick) {
  std::atomic<int> ticks{0};
  std::atomic<bool> release{false};
  PeriodicThread thread;
  thread.Start(PeriodicThread::kOnlyWhenWoken, PeriodicThread::First::kWait, [&] {
    ++ticks;
    while (ticks.load() == 1 && !release.load()) std::this_thread::sleep_for(1ms);
    return true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ticks.load(), 0);  // never on a timer
  thread.Wake();
  ASSERT_TRUE(ReachesWithin(ticks, 1, 30s));
  thread.Wake();  // while the first tick runs: not lost
  release = true;
  EXPECT_TRUE(ReachesWithin(ticks, 2, 30s));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ticks.load(), 2);
}

TEST(PeriodicThreadTest, TickReturningFalseEndsTheThread) {
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  thread.Start(Nanos(1ms), PeriodicThread::First::kTick, [&] { return ++ticks < 2; });
  ASSERT_TRUE(ReachesWithin(ticks, 2, 30s));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ticks.load(), 2);
  thread.Stop();
}

TEST(PeriodicThreadTest, StopIsIdempotentAndWorksWithoutStart) {
  PeriodicThread idle;
  idle.Stop();
  idle.Stop();
  EXPECT_TRUE(idle.stopping());
}

}  // namespace
}  // namespace mooncake
