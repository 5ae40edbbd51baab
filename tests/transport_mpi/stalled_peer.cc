// Multi-rank test: the last rank stops (SIGSTOP: no progress thread, no handler, nothing); every
// other rank submits a batch to it and must see the batch fail at its deadline with an error
// naming that rank, while a batch to a live peer still completes. Rank 0 then resumes the
// stopped rank (SIGCONT, once every checker reported by message; a watchdog child resumes it
// anyway after kWatchdog) and the job ends in order.
//
// argv[1]: data path "am" or "rma" (auto when absent). Over shared memory the RMA path is truly
// one-sided (the peer's memory is mapped), so a stopped peer does not stop it: there the test
// runs with the active-message path, which needs the peer (see docs/TRANSFER.md).
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "cluster/mpi/mpi_session.h"
#include "common/wire.h"
#include "transfer_bench_setup.h"

namespace mooncake::bench {
namespace {

using transport::OpKind;
using transport::TransferRequest;

constexpr size_t kBytes = 256 * 1024;
constexpr Nanos kDeadline(1'000'000'000);
constexpr int kWatchdogSeconds = 90;  // past every wait below, even on a loaded machine

char ProcessState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  size_t paren = all.rfind(')');
  return paren == std::string::npos || paren + 2 >= all.size() ? '?' : all[paren + 2];
}

int Run(int argc, char** argv) {
  auto mpi_or = cluster::MpiSession::Init(&argc, &argv);
  if (!mpi_or.ok()) return 1;
  auto& mpi = **mpi_or;
  const int me = mpi.rank(), n = mpi.size(), stalled = n - 1;
  if (n < 3) return 2;
  transport::UcxConfig config;
  std::string path = argc > 1 ? argv[1] : "auto";
  if (path == "am") config.data_path = transport::DataPath::kActiveMessage;
  if (path == "rma") config.data_path = transport::DataPath::kRma;
  std::atomic<int> reports{0};
  auto conn = ConnectUcx(mpi, config, {2 * kBytes}, true,
                         [&](Rank, std::span<const std::byte>) { reports.fetch_add(1); });
  if (!conn.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", me, conn.status().ToString().c_str());
    mpi.Abort(1);
  }
  auto& t = *conn->transport;
  auto* mem = static_cast<std::byte*>(conn->local[0].addr);
  WireWriter w;
  w.Put<int32_t>(getpid());
  auto pids = mpi.AllGather(w.Take());
  int32_t stalled_pid = 0;
  WireReader(pids[stalled]).Get(&stalled_pid);
  if (!mpi.Barrier(Nanos(60'000'000'000)).ok()) mpi.Abort(1);

  uint32_t failed_in_time = 0, named = 0, live_ok = 0, errors = 0;
  if (me == stalled) {
    pid_t watchdog = fork();
    if (watchdog == 0) {  // never leave a stopped rank behind; holds no pipe of mpirun open
      for (int fd = 0; fd < 1024; ++fd) close(fd);
      sleep(kWatchdogSeconds);
      kill(getppid(), SIGCONT);
      _exit(0);
    }
    raise(SIGSTOP);
    if (watchdog > 0) {  // resumed: the watchdog is no longer needed
      kill(watchdog, SIGKILL);
      waitpid(watchdog, nullptr, 0);
    }
  } else {
    SteadyClock clock;
    for (int i = 0; i < 3000 && ProcessState(stalled_pid) != 'T'; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (ProcessState(stalled_pid) != 'T') {  // else a batch to it could complete
      ++errors;
      std::fprintf(stderr, "rank %d: rank %d did not stop within 30 s\n", me, stalled);
    }
    TransferRequest to_stalled[2] = {
        {OpKind::kWrite, mem, Rank{stalled}, conn->remote[stalled][0].addr, kBytes},
        {OpKind::kRead, mem + kBytes, Rank{stalled}, conn->remote[stalled][0].addr + kBytes,
         kBytes}};
    const Nanos start = clock.Now();
    auto batch = t.Submit(to_stalled);
    Status s = batch.ok() ? (*batch)->Wait(kDeadline) : batch.status();
    const Nanos took = clock.Now() - start;
    if (s.code() == ErrorCode::kTimeout && took >= kDeadline && took < kDeadline * 10) {
      ++failed_in_time;
    } else {
      ++errors;
      std::fprintf(stderr, "rank %d: batch to stopped rank: %s after %ld ms\n", me,
                   s.ToString().c_str(), (long)(took.count() / 1000000));
    }
    if (s.message().find("rank(s) " + std::to_string(stalled)) != std::string::npos) ++named;
    // A live peer is unaffected.
    int live = (me + 1) % stalled;
    TransferRequest r{OpKind::kRead, mem, Rank{live}, conn->remote[live][0].addr, kBytes};
    auto ok_batch = t.Submit({&r, 1});
    Status ok = ok_batch.ok() ? (*ok_batch)->Wait(Nanos(30'000'000'000)) : ok_batch.status();
    if (ok.ok())
      ++live_ok;
    else
      std::fprintf(stderr, "rank %d: batch to live rank %d: %s\n", me, live, ok.ToString().c_str());
    std::byte one{1};
    if (!t.SendMessage(Rank{0}, {&one, 1}).ok()) ++errors;
    if (me == 0) {  // every checker has reported: resume the stopped rank
      for (int i = 0; i < 3000 && reports.load() < stalled; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (reports.load() < stalled)
        std::fprintf(stderr, "rank 0: only %d reports\n", reports.load());
      kill(stalled_pid, SIGCONT);
    }
  }
  // After the resume the stopped rank serves again: a fresh batch to it completes.
  uint32_t recovered = 0;
  if (!mpi.Barrier(Nanos(90'000'000'000)).ok()) mpi.Abort(1);
  if (me == 0) {
    TransferRequest r{OpKind::kRead, mem, Rank{stalled}, conn->remote[stalled][0].addr, kBytes};
    auto b = t.Submit({&r, 1});
    recovered = b.ok() && (*b)->Wait(Nanos(30'000'000'000)).ok();
  }
  WireWriter out;
  for (uint32_t v : {failed_in_time, named, live_ok, errors, recovered}) out.Put(v);
  auto all = mpi.Gather(out.Take(), 0);
  const std::string described = t.DescribePath(Rank{stalled});
  Status down = Shutdown(mpi, *conn, Nanos(60'000'000'000));
  if (me != 0) return 0;
  uint32_t sum[5] = {};
  for (const auto& rec : all) {
    WireReader in(rec);
    for (auto& x : sum) {
      uint32_t v = 0;
      in.Get(&v);
      x += v;
    }
  }
  const int checkers = n - 1;
  bool ok = sum[0] == uint32_t(checkers) && sum[1] == uint32_t(checkers) &&
            sum[2] == uint32_t(checkers) && sum[3] == 0 && sum[4] == 1 && down.ok();
  std::printf(
      "stalled_peer: %d of %d batches to stopped rank %d failed at their %ld ms deadline, "
      "%u named it, %u of %d batches to live peers completed, recovered after resume: "
      "%s, path %s\nresult %s\n",
      sum[0], checkers, stalled, (long)(kDeadline.count() / 1000000), sum[1], sum[2], checkers,
      sum[4] ? "yes" : "no", described.c_str(), ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace mooncake::bench

int main(int argc, char** argv) { return mooncake::bench::Run(argc, argv); }
