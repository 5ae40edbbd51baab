#include "serve/store_service_end.h"

#include <chrono>
#include <fstream>
#include <thread>
#include <utility>

#include "common/log.h"
#include "common/units.h"

namespace mooncake::serve {
namespace {

// The conductor: tells every store rank drained since the last look to leave.
void DismissDrained(StoreServiceNode& node, PendingLeaves& leaves) {
  for (Rank rank : leaves.Take()) {
    Status s = node.Dismiss(rank);
    if (!s.ok()) log::Warn("{}", s.ToString());
  }
}

}  // namespace

void PendingLeaves::Add(Rank rank) {
  std::lock_guard<std::mutex> lock(mu_);
  ranks_.push_back(rank);
}

std::vector<Rank> PendingLeaves::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(ranks_, {});
}

void WaitForServiceStop(StoreServiceNode& node, const std::function<bool()>& signalled,
                        const std::atomic<bool>& stop_asked, PendingLeaves& leaves,
                        Nanos phase_timeout) {
  SteadyClock clock;
  Nanos signalled_at{0};
  for (;;) {
    // A standby that took over conducts from then on.
    const bool conducts = node.conducts();
    if (conducts) DismissDrained(node, leaves);
    if (conducts && (signalled() || stop_asked)) return;
    if (!conducts) {
      if (node.stop_requested() || node.leave_requested()) return;
      if (signalled() && signalled_at == Nanos(0)) signalled_at = clock.Now();
      if (signalled_at > Nanos(0) && clock.Now() - signalled_at > phase_timeout) {
        log::Warn("signalled, and no stop from the conductor within {}: stopping alone",
                  FormatDuration(phase_timeout));
        return;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int EndStoreService(StoreServiceNode& node, const StoreSummaryInputs& summary,
                    const std::string& status_file, Rank self) {
  int code = 0;
  if (node.conducts()) {
    node.master_node()->StopSpilling();
    node.StopOthers();
    const RankReport all = node.CollectReports(node.Finish());
    const bool kept_all = WriteStoreSummary(node, all, summary);
    // The takeover makes the old active a dead rank; nothing else counts against the job.
    code = all.errors == 0 && kept_all ? 0 : 1;
    // The outcome is known: written now, not only when the teardown is done, for a launcher
    // that kills its ranks a fixed time after a stop (mpirun: a second after SIGTERM).
    if (!status_file.empty()) std::ofstream(status_file) << code << "\n";
    node.ShutdownOthers();
  } else if (node.leave_requested() && !node.stop_requested()) {
    // Drained: what it held lives on the other ranks now; nothing to report.
    log::Info("store rank {} drained: leaves the job (exit 0)", self.value);
    node.StopHeartbeats();
  } else {
    RankReport report = node.Finish();
    if (node.store_rank()) report.ssd = node.store_rank()->SsdCounters();
    if (node.stop_requested()) {
      Status sent = node.SendReport(report);
      if (!sent.ok()) log::Error("report to the conductor: {}", sent.ToString());
      node.WaitForShutdown();
    }
    code = report.errors == 0 ? 0 : 1;
  }
  return code;
}

}  // namespace mooncake::serve
