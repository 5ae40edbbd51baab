// The liveness link between real processes: a forked child holds the link the way the active
// conductor does, and the watch (the standby's side) reports its death when it is SIGKILLed, at
// once, but nothing while it is SIGSTOPped, nor for a connection that does not present the job's
// token.
#include "cluster/liveness_link.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace mooncake::cluster {
namespace {

using std::chrono::milliseconds;

const std::vector<std::byte> kToken(16, std::byte{0x5a});

// Waits up to 20 s (a loaded machine) for `done`.
template <typename Pred>
bool Eventually(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// A child process that links to 127.0.0.1:port as `rank` with `token`, then waits to be killed
// (or, with `exit_after_link`, ends at once). Forked before the watch's thread starts.
pid_t LinkedChild(uint16_t port, Rank rank, const std::vector<std::byte>& token,
                  bool exit_after_link = false) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  auto link = LivenessLink::Connect({"127.0.0.1"}, port, rank, token, std::chrono::seconds(5));
  if (!link.ok()) _exit(3);
  if (exit_after_link) _exit(0);
  for (;;) pause();
}

void Reap(pid_t pid) {
  kill(pid, SIGCONT);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

struct Deaths {
  std::mutex mutex;
  int count = 0;
  std::string why;
  std::chrono::steady_clock::time_point at;
  LivenessWatch::DeathHandler Handler() {
    return [this](Rank watched, const std::string& reason) {
      std::lock_guard<std::mutex> lock(mutex);
      EXPECT_EQ(watched.value, 0);
      ++count;
      why = reason;
      at = std::chrono::steady_clock::now();
    };
  }
  int seen() {
    std::lock_guard<std::mutex> lock(mutex);
    return count;
  }
};

TEST(LivenessLink, AKilledProcessIsReportedDeadAtOnce) {
  auto watch = LivenessWatch::Listen("127.0.0.1", Rank{0}, kToken);
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  const pid_t child = LinkedChild((*watch)->port(), Rank{0}, kToken);
  Deaths deaths;
  (*watch)->Start(deaths.Handler());
  ASSERT_TRUE(Eventually([&] { return (*watch)->linked(); }));
  const auto killed_at = std::chrono::steady_clock::now();
  kill(child, SIGKILL);
  ASSERT_TRUE(Eventually([&] { return deaths.seen() > 0; }));
  waitpid(child, nullptr, 0);
  std::lock_guard<std::mutex> lock(deaths.mutex);
  EXPECT_EQ(deaths.count, 1);
  EXPECT_NE(deaths.why.find("the process ended"), std::string::npos) << deaths.why;
  // The heartbeats would take the failure timeout (10 s in a store service); this is the kernel
  // closing the socket. Logged, not asserted: the machine may be loaded.
  std::printf("reported %.1f ms after the SIGKILL\n",
              std::chrono::duration<double, std::milli>(deaths.at - killed_at).count());
}

TEST(LivenessLink, AStoppedProcessIsNotReportedDeadUntilItEnds) {
  auto watch = LivenessWatch::Listen("127.0.0.1", Rank{0}, kToken);
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  const pid_t child = LinkedChild((*watch)->port(), Rank{0}, kToken);
  Deaths deaths;
  (*watch)->Start(deaths.Handler());
  ASSERT_TRUE(Eventually([&] { return (*watch)->linked(); }));
  kill(child, SIGSTOP);
  std::this_thread::sleep_for(milliseconds(1500));
  EXPECT_EQ(deaths.seen(), 0) << "a stopped process is slow, not dead";
  kill(child, SIGCONT);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(deaths.seen(), 0);
  Reap(child);
  EXPECT_TRUE(Eventually([&] { return deaths.seen() == 1; }));
}

TEST(LivenessLink, AConnectionWithoutTheTokenOrForAnotherRankIsNotTheLink) {
  auto watch = LivenessWatch::Listen("127.0.0.1", Rank{0}, kToken);
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  const std::vector<std::byte> wrong(16, std::byte{0x11});
  // Both connect, say the wrong thing and end: neither is the watched process's end.
  const pid_t forger = LinkedChild((*watch)->port(), Rank{0}, wrong, /*exit_after_link=*/true);
  waitpid(forger, nullptr, 0);
  const pid_t other = LinkedChild((*watch)->port(), Rank{2}, kToken, /*exit_after_link=*/true);
  waitpid(other, nullptr, 0);
  const pid_t child = LinkedChild((*watch)->port(), Rank{0}, kToken);
  Deaths deaths;
  (*watch)->Start(deaths.Handler());
  ASSERT_TRUE(Eventually([&] { return (*watch)->linked(); }));
  EXPECT_EQ(deaths.seen(), 0);
  Reap(child);
  EXPECT_TRUE(Eventually([&] { return deaths.seen() == 1; }));
}

TEST(LivenessLink, StopEndsTheWatchWithoutAReport) {
  auto watch = LivenessWatch::Listen("127.0.0.1", Rank{0}, kToken);
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  const pid_t child = LinkedChild((*watch)->port(), Rank{0}, kToken);
  Deaths deaths;
  (*watch)->Start(deaths.Handler());
  ASSERT_TRUE(Eventually([&] { return (*watch)->linked(); }));
  (*watch)->Stop();
  Reap(child);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(deaths.seen(), 0);
}

TEST(LivenessLink, NoListenerIsAnErrorNamingTheAddress) {
  auto watch = LivenessWatch::Listen("127.0.0.1", Rank{0}, kToken);
  ASSERT_TRUE(watch.ok());
  const uint16_t port = (*watch)->port();
  watch->reset();  // nothing listens there now
  auto link = LivenessLink::Connect({"127.0.0.1"}, port, Rank{0}, kToken, milliseconds(500));
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << link.status().ToString();
}

}  // namespace
}  // namespace mooncake::cluster
