#include "serve/master_failover.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/log.h"
#include "common/units.h"

namespace mooncake::serve {

nlohmann::json FailoverBlock(const FailoverReport& report) {
  nlohmann::json block = {{"standby", true}, {"took_over", report.took_over}};
  if (!report.took_over) return block;
  block["old_conductor"] = report.old_conductor;
  block["epoch"] = report.epoch;
  block["journal_entries"] = report.journal_entries;
  block["objects_restored"] = report.objects_restored;
  if (report.serving) {
    block["serve_journal_batches"] = report.serve_batches;
    block["requests_restored"] = report.requests_restored;
    block["requests_redispatched"] = report.requests_redispatched;
  }
  block["ready_ms"] = report.ready_ms;
  block["takeover_ms"] =
      report.takeover_ms >= 0 ? nlohmann::json(report.takeover_ms) : nlohmann::json(nullptr);
  return block;
}

bool MayTakeOver(const RankLifecycle& lifecycle, const Status& why,
                 const std::function<void(const Status&)>& on_fenced) {
  if (lifecycle.stop_requested()) {
    log::Info("the conductor left after the stop: no takeover ({})", why.ToString());
    return false;
  }
  if (lifecycle.fenced_by_conductor()) {
    if (on_fenced) on_fenced(why.WithContext("the standby conductor was fenced by the active"));
    return false;
  }
  return true;
}

Result<Takeover> BeginTakeover(const RankLifecycle& lifecycle, transport::Rpc& rpc, Rank self,
                               const std::string& why, store::StandbyNode& standby) {
  SteadyClock clock;
  Takeover t;
  t.membership = lifecycle.membership();
  t.last_heard = lifecycle.last_conductor_reply();
  t.old_conductor = t.membership.conductor();
  const Nanos now = clock.Now();
  t.membership.Die(t.old_conductor, now,
                   "no heartbeat for " + FormatSeconds(now - t.last_heard) +
                       " (the standby took over" + (why.empty() ? "" : ": " + why) + ")");
  MC_RETURN_IF_ERROR(t.membership.SetConductor(self));
  const std::string fence = fmt::format("fenced by epoch {}: rank {} took over as the conductor",
                                        t.membership.epoch(), self.value);
  rpc.MarkDead(t.old_conductor, fence);
  t.journal_entries = standby.entries_applied();
  t.table = standby.Promote(PeerFailure(fence));
  return t;
}

FailoverReport Takeover::Report(Nanos ready) const {
  FailoverReport r;
  r.standby = true;
  r.took_over = true;
  r.old_conductor = old_conductor.value;
  r.epoch = membership.epoch();
  r.journal_entries = journal_entries;
  r.objects_restored = table.objects();
  r.ready_ms = static_cast<double>((ready - last_heard).count()) / 1e6;
  return r;
}

std::unique_ptr<store::JournalSender> StartMasterJournal(
    transport::Rpc& rpc, Rank standby, const MembershipConfig& membership,
    store::MasterService& master, RankLifecycle& lifecycle,
    std::function<void(const Status&)> on_fenced) {
  store::JournalConfig jc;
  jc.standby = standby;
  jc.send_timeout = membership.failure_timeout;
  jc.keepalive = membership.heartbeat_interval;
  auto journal = std::make_unique<store::JournalSender>(rpc, jc);
  journal->OnFenced(std::move(on_fenced));
  journal->OnUnresponsive([&lifecycle, standby](const std::string& why) {
    lifecycle.DeclareDead(standby, "the standby conductor: " + why);
  });
  master.SetJournal(journal.get());
  journal->Start();
  return journal;
}

}  // namespace mooncake::serve
