// The HTTP server's connection threads (http/connection_pool.h): started as tasks come, capped,
// ended when idle, and every queued task run before Shutdown returns.
#include "http/connection_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace mooncake::http {
namespace {

using std::chrono::milliseconds;

// Tasks that block until released.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> running{0}, done{0};
  std::function<void()> Task() {
    return [this] {
      ++running;
      std::unique_lock<std::mutex> lock(mutex);
      cv.wait(lock, [this] { return open; });
      --running;
      ++done;
    };
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex);
    open = true;
    cv.notify_all();
  }
};

bool WaitFor(const std::function<bool()>& ok, milliseconds limit = milliseconds(20'000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!ok()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

TEST(ConnectionPool, StartsAThreadPerBusyTaskAndEndsThemWhenIdle) {
  ConnectionPool pool(100, milliseconds(200));
  EXPECT_EQ(pool.threads(), 0u);
  Gate gate;
  for (int i = 0; i < 20; ++i) pool.Enqueue(gate.Task());
  EXPECT_TRUE(WaitFor([&] { return gate.running == 20; })) << gate.running << " running";
  EXPECT_EQ(pool.threads(), 20u);
  gate.Open();
  EXPECT_TRUE(WaitFor([&] { return gate.done == 20; }));
  EXPECT_TRUE(WaitFor([&] { return pool.threads() == 0; })) << pool.threads() << " left";
  EXPECT_EQ(pool.threads_peak(), 20u);
}

TEST(ConnectionPool, PastTheCapTasksWaitForAThread) {
  ConnectionPool pool(3, milliseconds(10'000));
  Gate gate;
  for (int i = 0; i < 10; ++i) pool.Enqueue(gate.Task());
  EXPECT_TRUE(WaitFor([&] { return gate.running == 3; }));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(gate.running, 3);
  gate.Open();
  EXPECT_TRUE(WaitFor([&] { return gate.done == 10; }));
  EXPECT_EQ(pool.threads_peak(), 3u);
}

TEST(ConnectionPool, ShutdownRunsTheQueuedTasksThenJoins) {
  std::atomic<int> ran{0};
  {
    ConnectionPool pool(2, milliseconds(10'000));
    for (int i = 0; i < 50; ++i) {
      pool.Enqueue([&ran] {
        std::this_thread::sleep_for(milliseconds(1));
        ++ran;
      });
    }
    pool.Shutdown();
    EXPECT_EQ(ran, 50);
    EXPECT_EQ(pool.threads(), 0u);
    pool.Shutdown();  // idempotent
  }
  EXPECT_EQ(ran, 50);
}

}  // namespace
}  // namespace mooncake::http
