#include "serve/rank_lifecycle.h"

#include <sys/resource.h>

#include <thread>

#include "common/log.h"
#include "serve/messages.h"

namespace mooncake::serve {

RankLifecycle::RankLifecycle(ServePart part, transport::Transport& transport, transport::Rpc& rpc,
                             Rank self, cluster::Membership membership, const ServeConfig& config)
    : part_(part),
      transport_(transport),
      rpc_(rpc),
      self_(self),
      conductor_(membership.conductor()),
      initial_(std::move(membership)),
      config_(config) {}

std::vector<int> RankLifecycle::Others() const {
  const cluster::MembershipView now = conducts() ? detector_->view() : initial_.View();
  std::vector<int> out;
  for (int32_t r : now.live) {
    if (r != now.conductor) out.push_back(r);
  }
  return out;
}

RankLifecycle::~RankLifecycle() { Stop(); }

void RankLifecycle::Stop() {
  if (conducts()) transport_.SetPeerFailureHandler(nullptr);
  if (heartbeats_) heartbeats_->Stop();
  if (conducts()) detector_->Stop();
}

void RankLifecycle::Start() {
  RegisterEndHandlers();
  // A standby conductor (not the one the membership names) heartbeats it like the others.
  if (part_ == ServePart::kConductor && self_ == conductor_) {
    StartDetector();
    return;
  }
  heartbeats_ = std::make_unique<HeartbeatSender>(rpc_, initial_, config_.membership);
  heartbeats_->OnConductorLost(on_lost_);
  if (on_changed_) heartbeats_->OnConductorChanged(on_changed_);
  if (follow_standby_.value >= 0) heartbeats_->FollowStandby(follow_standby_);
  heartbeats_->Start();
}

void RankLifecycle::Promote(cluster::Membership membership) {
  // Runs on the heartbeat thread itself (its lost handler), which leaves its loop right after:
  // the sender is not stopped here (that would join this thread) but by Stop().
  conductor_ = self_;
  initial_ = std::move(membership);
  StartDetector();
  detector_->Announce();
}

void RankLifecycle::ConductorDied(Rank conductor, const std::string& why) {
  if (heartbeats_) heartbeats_->ConductorDied(conductor, why);
}

cluster::Membership RankLifecycle::membership() const {
  if (conducts()) return cluster::Membership();  // not asked of a conductor
  return heartbeats_ ? heartbeats_->membership() : initial_;
}

uint64_t RankLifecycle::epoch() const {
  return conducts() && detector_ ? detector_->epoch() : membership().epoch();
}

Nanos RankLifecycle::last_conductor_reply() const {
  return heartbeats_ ? heartbeats_->last_reply_at() : Nanos(0);
}

bool RankLifecycle::fenced_by_conductor() const { return heartbeats_ && heartbeats_->fenced(); }

void RankLifecycle::DeclareDead(Rank rank, const std::string& why) {
  if (conducts()) detector_->DeclareDead(rank, why);
}

void RankLifecycle::RegisterEndHandlers() {
  transport::CheckRegistered(
      rpc_.Register(kMsgStop, [this](Rank, std::span<const std::byte>, transport::Responder r) {
        r.Reply({});
        stop_ = true;
      }));
  transport::CheckRegistered(
      rpc_.Register(kMsgLeave, [this](Rank, std::span<const std::byte>, transport::Responder r) {
        r.Reply({});
        leave_ = true;
      }));
  transport::CheckRegistered(rpc_.Register(
      kMsgShutdown, [this](Rank, std::span<const std::byte> bytes, transport::Responder r) {
        auto view = MembershipView::Decode(bytes);
        if (view.ok()) {
          for (int32_t d : view->dead) {
            rpc_.MarkDead(Rank{d}, "declared dead by the conductor");
          }
        }
        r.Reply({});
        shutdown_ = true;
      }));
}

void RankLifecycle::StartDetector() {
  detector_ = std::make_unique<FailureDetector>(rpc_, initial_, config_.membership);
  detector_->OnDeath([this](const DeadRank& d) {
    if (on_dead_) on_dead_(d);
    reports_cv_.notify_all();  // CollectReports stops waiting for it
  });
  // A tcp or rdma endpoint that reports its peer gone: dead now, not after missed heartbeats.
  transport_.SetPeerFailureHandler([this](Rank peer, const std::string& why) {
    // Processes attached from outside the job (store clients) come and go; they are not ranks.
    if (peer.value >= transport_.world_size()) return;
    if (conducts()) detector_->DeclareDead(peer, why);
  });
  transport::CheckRegistered(rpc_.Register(
      kMsgReport, [this](Rank from, std::span<const std::byte> bytes, transport::Responder r) {
        auto report = RankReport::Decode(bytes);
        if (!report.ok()) {
          report = RankReport{};
          report->AddError("malformed report from rank " + std::to_string(from.value));
        }
        r.Reply({});
        std::lock_guard<std::mutex> lock(reports_mutex_);
        reports_[from.value] = std::move(*report);
        reports_cv_.notify_all();
      }));
  detector_->Start();
  conducting_ = true;
}

std::vector<DeadRank> RankLifecycle::dead_ranks() const {
  return conducts() ? detector_->dead() : std::vector<DeadRank>{};
}

bool RankLifecycle::peers_lost() const {
  if (conducts()) return !detector_->dead().empty();
  // A rank that died, not a new epoch: joins and leaves (drains) bump it too.
  return heartbeats_ && !heartbeats_->membership().dead().empty();
}

void RankLifecycle::StopOthers() {
  for (int p : Others()) {
    if (rpc_.IsDead(Rank{p})) continue;
    auto r = rpc_.Call(Rank{p}, kMsgStop, {}, config_.rpc_timeout);
    if (!r.ok() && r.status().code() != ErrorCode::kPeerFailure) {
      report_.AddError(r.status().ToString());
    }
  }
}

Status RankLifecycle::SendReport(const RankReport& report) {
  // The conductor of the last view heard: a standby may have taken over since the start.
  const Rank conductor = heartbeats_ ? heartbeats_->membership().conductor() : conductor_;
  auto r = rpc_.Call(conductor, kMsgReport, report.Encode(), config_.phase_timeout);
  return r.ok() ? Status::Ok() : r.status();
}

RankReport RankLifecycle::CollectReports(const RankReport& own) {
  SteadyClock clock;
  const Nanos deadline = clock.Now() + config_.phase_timeout;
  RankReport all = own;
  std::unique_lock<std::mutex> lock(reports_mutex_);
  for (;;) {
    std::vector<int> missing;
    for (int p : Others()) {
      if (!reports_.count(p) && !rpc_.IsDead(Rank{p})) missing.push_back(p);
    }
    if (missing.empty()) break;
    if (clock.Now() >= deadline) {
      for (int p : missing) all.AddError("no report from rank " + std::to_string(p));
      break;
    }
    reports_cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
  for (const auto& [rank, report] : reports_) all.Add(report);
  return all;
}

void RankLifecycle::ShutdownOthers() {
  // From here the others leave on purpose: their closing endpoints are not failures.
  transport_.SetPeerFailureHandler(nullptr);
  MembershipView view;
  if (conducts()) view = detector_->view();
  const auto bytes = view.Encode();
  for (int p : Others()) {
    if (rpc_.IsDead(Rank{p})) continue;
    auto r = rpc_.Call(Rank{p}, kMsgShutdown, bytes, config_.rpc_timeout);
    if (!r.ok()) log::Warn("shutdown of rank {}: {}", p, r.status().ToString());
  }
}

Status RankLifecycle::Admit(Rank rank, cluster::Role role) {
  if (!conducts()) return InvalidArgument("only the conductor admits ranks");
  return detector_->Admit(rank, role);
}

Status RankLifecycle::Dismiss(Rank rank) {
  // Retired first: the rank may close its endpoints as soon as it answers, and a closing tcp
  // endpoint of a rank still watched would be declared a death.
  if (conducts()) (void)detector_->Retire(rank);
  auto r = rpc_.Call(rank, kMsgLeave, {}, config_.rpc_timeout);
  return r.ok()
             ? Status::Ok()
             : r.status().WithContext("telling rank " + std::to_string(rank.value) + " to leave");
}

void RankLifecycle::WaitForShutdown() {
  const Nanos deadline = clock_.Now() + config_.phase_timeout;
  while (!shutdown_ && clock_.Now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!shutdown_) log::Warn("no shutdown message from the conductor");
  if (heartbeats_) heartbeats_->Stop();
}

void RankLifecycle::WaitForStop() {
  const Nanos deadline = clock_.Now() + config_.job_deadline + config_.phase_timeout;
  while (!stop_ && clock_.Now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!stop_) report_.AddError("no stop message from the conductor");
}

RankReport RankLifecycle::Finish() {
  // Frames refused for a wrong or missing job token (transport/rpc.h), up to now.
  report_.rpc_refused_frames = rpc_.refused_frames();
  report_.SetRefusals(transport_.refused_data_messages_by_peer());
  // This process's peak resident set so far (benchmarks/overload.sh holds it to a bound).
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  report_.peak_rss_bytes.assign(RankReport::kServeParts, 0);
  report_.peak_rss_bytes[static_cast<size_t>(part_)] =
      static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  return report_;
}

}  // namespace mooncake::serve
