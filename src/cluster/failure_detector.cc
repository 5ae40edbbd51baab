#include "cluster/failure_detector.h"

#include "common/log.h"
#include "common/units.h"

namespace mooncake::cluster {

FailureDetector::FailureDetector(transport::Rpc& rpc, Membership initial, MembershipConfig config)
    : rpc_(rpc), config_(config), membership_(std::move(initial)) {}

FailureDetector::~FailureDetector() { Stop(); }

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
  }
  rpc_.RegisterInline(
      kMsgHeartbeat, [this](Rank from, std::span<const std::byte>, transport::Responder responder) {
        MembershipView view;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          auto it = last_heard_.find(from.value);
          if (it != last_heard_.end()) it->second = clock_.Now();
          view = membership_.View();
        }
        responder.Reply(view.Encode());
      });
  watcher_ = std::thread([this] { Watch(); });
}

void FailureDetector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

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
  cv_.notify_all();
}

Status FailureDetector::Admit(Rank rank, Role role) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    MC_RETURN_IF_ERROR(membership_.Join(rank, role));
    last_heard_[rank.value] = clock_.Now();
    changed_ = true;
  }
  log::Info("rank {} joined as {}", rank.value, RoleName(role));
  cv_.notify_all();
  return Status::Ok();
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

void FailureDetector::Watch() {
  Nanos last_tick = clock_.Now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    cv_.wait_for(lock, config_.heartbeat_interval);
    if (stopping_) break;
    const Nanos now = clock_.Now();
    // If this thread itself did not run for a while (an overloaded host), the silence was ours:
    // do not count it against the other ranks.
    const Nanos stalled = now - last_tick - config_.heartbeat_interval;
    if (stalled > config_.heartbeat_interval * 3) {
      for (auto& [rank, heard] : last_heard_) heard += stalled;
    }
    last_tick = now;
    std::vector<std::pair<Rank, std::string>> expired;
    for (const auto& [rank, heard] : last_heard_) {
      const Nanos silent = now - heard;
      if (silent > config_.failure_timeout) {
        expired.emplace_back(Rank{rank}, "no heartbeat for " + FormatSeconds(silent));
      }
    }
    lock.unlock();
    for (const auto& [rank, why] : expired) DeclareDead(rank, why);
    lock.lock();
    if (!changed_) continue;
    changed_ = false;
    std::vector<DeadRank> report;
    report.swap(to_report_);
    const MembershipView view = membership_.View();
    lock.unlock();
    Broadcast(view);
    for (const auto& d : report) {
      if (on_death_) on_death_(d);
    }
    lock.lock();
  }
}

}  // namespace mooncake::cluster
