#include "cluster/failure_detector.h"

#include "common/log.h"
#include "common/units.h"

namespace mooncake::cluster {

FailureDetector::FailureDetector(transport::Rpc& rpc, Membership initial, MembershipConfig config)
    : rpc_(rpc), config_(config), membership_(std::move(initial)) {}

FailureDetector::~FailureDetector() {
  {
    std::lock_guard<std::mutex> lock(gate_->mutex);
    if (gate_->detector != nullptr) (void)rpc_.Unregister(kMsgHeartbeat);
    gate_->detector = nullptr;
  }
  Stop();
}

MembershipView FailureDetector::Heard(Rank from) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = last_heard_.find(from.value);
  if (it != last_heard_.end()) it->second = clock_.Now();
  return membership_.View();
}

std::vector<Rank> FailureDetector::Watched() const {
  std::vector<Rank> out;
  for (Rank r : membership_.Live()) {
    if (!membership_.IsConductor(r)) out.push_back(r);
  }
  return out;
}

void FailureDetector::Start() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Nanos now = clock_.Now();
    for (Rank r : Watched()) last_heard_[r.value] = now;
    last_tick_ = now;
  }
  {
    std::lock_guard<std::mutex> lock(gate_->mutex);
    gate_->detector = this;
  }
  transport::CheckRegistered(rpc_.RegisterInline(
      kMsgHeartbeat,
      [gate = gate_](Rank from, std::span<const std::byte>, transport::Responder responder) {
        std::vector<std::byte> answer;
        {
          std::lock_guard<std::mutex> open(gate->mutex);
          if (gate->detector == nullptr) return;  // destroyed: the rank is ending
          answer = gate->detector->Heard(from).Encode();
        }
        // Not under the gate: a send may run the transport's progress on this thread, which can
        // deliver the next heartbeat to this handler (UCX: SendMessage drives the worker), and a
        // gate held here deadlocked the rank on itself (its heartbeats then went unanswered).
        responder.Reply(answer);
      }));
  watcher_.Start(config_.heartbeat_interval, PeriodicThread::First::kWait,
                 [this] { return Watch(); });
}

void FailureDetector::Stop() { watcher_.Stop(); }

void FailureDetector::DeclareDead(Rank rank, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!membership_.Die(rank, clock_.Now(), why)) return;
    last_heard_.erase(rank.value);
    to_report_.push_back(membership_.dead().back());
    changed_ = true;
  }
  rpc_.MarkDead(rank, why);
  log::Warn("rank {} declared dead: {}", rank.value, why);
  watcher_.Wake();
}

Status FailureDetector::Admit(Rank rank, Role role) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    MC_RETURN_IF_ERROR(membership_.Join(rank, role));
    last_heard_[rank.value] = clock_.Now();
    changed_ = true;
  }
  log::Info("rank {} joined as {}", rank.value, RoleName(role));
  watcher_.Wake();
  return Status::Ok();
}

void FailureDetector::Announce() { Broadcast(view()); }

bool FailureDetector::Retire(Rank rank) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!membership_.Leave(rank)) return false;
    last_heard_.erase(rank.value);
    changed_ = true;
  }
  log::Info("rank {} left the job", rank.value);
  watcher_.Wake();
  return true;
}

std::vector<DeadRank> FailureDetector::dead() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return membership_.dead();
}

uint64_t FailureDetector::epoch() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return membership_.epoch();
}

MembershipView FailureDetector::view() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return membership_.View();
}

void FailureDetector::Broadcast(const MembershipView& view) {
  auto bytes = view.Encode();
  for (int32_t r : view.live) {
    if (r != view.conductor) (void)rpc_.Notify(Rank{r}, kMsgMembership, bytes);
  }
}

std::vector<std::pair<Rank, std::string>> FailureDetector::Expired(Nanos now) {
  // If this thread itself did not run for a while (an overloaded host), the silence was ours:
  // do not count it against the other ranks.
  const Nanos stalled = now - last_tick_ - config_.heartbeat_interval;
  if (stalled > config_.heartbeat_interval * 3) {
    for (auto& [rank, heard] : last_heard_) heard += stalled;
  }
  last_tick_ = now;
  std::vector<std::pair<Rank, std::string>> expired;
  for (const auto& [rank, heard] : last_heard_) {
    const Nanos silent = now - heard;
    if (silent > config_.failure_timeout) {
      expired.emplace_back(Rank{rank}, "no heartbeat for " + FormatSeconds(silent));
    }
  }
  return expired;
}

bool FailureDetector::Watch() {
  std::vector<std::pair<Rank, std::string>> expired;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    expired = Expired(clock_.Now());
  }
  for (const auto& [rank, why] : expired) DeclareDead(rank, why);
  std::vector<DeadRank> report;
  MembershipView view;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!changed_) return true;
    changed_ = false;
    report.swap(to_report_);
    view = membership_.View();
  }
  Broadcast(view);
  for (const auto& d : report) {
    if (on_death_) on_death_(d);
  }
  return true;
}

}  // namespace mooncake::cluster
