#include "serve/membership.h"

#include <cstdio>

#include "common/log.h"
#include "serve/messages.h"

namespace mooncake::serve {
namespace {

constexpr uint32_t kMaxDeadRanks = 1u << 16;

std::string Seconds(Nanos d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(d.count()) * 1e-9);
  return buf;
}

}  // namespace

Status MembershipView::Validate() const {
  if (dead.size() > kMaxDeadRanks) return ProtocolError("malformed MembershipView: too many ranks");
  return Status::Ok();
}

FailureDetector::FailureDetector(transport::Rpc& rpc, std::vector<int> ranks,
                                 MembershipConfig config)
    : rpc_(rpc), ranks_(std::move(ranks)), config_(config) {
  int max_rank = 0;
  for (int r : ranks_) max_rank = std::max(max_rank, r);
  last_heard_.assign(max_rank + 1, Nanos(0));
}

FailureDetector::~FailureDetector() { Stop(); }

void FailureDetector::Start() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Nanos now = clock_.Now();
    for (int r : ranks_) last_heard_[r] = now;
  }
  rpc_.RegisterInline(
      kMsgHeartbeat, [this](Rank from, std::span<const std::byte>, transport::Responder responder) {
        MembershipView view;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (from.value >= 0 && from.value < static_cast<int>(last_heard_.size())) {
            last_heard_[from.value] = clock_.Now();
          }
          view.epoch = epoch_;
          for (const auto& d : dead_) view.dead.push_back(d.rank.value);
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
    for (const auto& d : dead_) {
      if (d.rank.value == rank.value) return;
    }
    DeadRank d{rank, clock_.Now(), why};
    dead_.push_back(d);
    to_report_.push_back(d);
    ++epoch_;
  }
  rpc_.MarkDead(rank, why);
  log::Warn("rank {} declared dead: {}", rank.value, why);
  cv_.notify_all();
}

std::vector<DeadRank> FailureDetector::dead() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dead_;
}

uint64_t FailureDetector::epoch() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return epoch_;
}

void FailureDetector::Broadcast(const MembershipView& view) {
  auto bytes = view.Encode();
  for (int r : ranks_) {
    if (!rpc_.IsDead(Rank{r})) (void)rpc_.Notify(Rank{r}, kMsgMembership, bytes);
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
      for (int r : ranks_) last_heard_[r] += stalled;
    }
    last_tick = now;
    std::vector<std::pair<Rank, std::string>> expired;
    for (int r : ranks_) {
      if (rpc_.IsDead(Rank{r})) continue;
      const Nanos silent = now - last_heard_[r];
      if (silent > config_.failure_timeout) {
        expired.emplace_back(Rank{r}, "no heartbeat for " + Seconds(silent));
      }
    }
    lock.unlock();
    for (const auto& [rank, why] : expired) DeclareDead(rank, why);
    lock.lock();
    if (to_report_.empty()) continue;
    std::vector<DeadRank> report;
    report.swap(to_report_);
    MembershipView view;
    view.epoch = epoch_;
    for (const auto& d : dead_) view.dead.push_back(d.rank.value);
    lock.unlock();
    Broadcast(view);
    for (const auto& d : report) {
      if (on_death_) on_death_(d);
    }
    lock.lock();
  }
}

HeartbeatSender::HeartbeatSender(transport::Rpc& rpc, Rank conductor, MembershipConfig config)
    : rpc_(rpc), conductor_(conductor), config_(config) {}

HeartbeatSender::~HeartbeatSender() { Stop(); }

void HeartbeatSender::Start() {
  rpc_.RegisterInline(kMsgMembership,
                      [this](Rank from, std::span<const std::byte> bytes, transport::Responder) {
                        if (from.value != conductor_.value) return;
                        auto view = MembershipView::Decode(bytes);
                        if (view.ok()) Apply(*view);
                      });
  thread_ = std::thread([this] { Loop(); });
}

void HeartbeatSender::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HeartbeatSender::Apply(const MembershipView& view) {
  uint64_t known = epoch_.load();
  while (view.epoch > known && !epoch_.compare_exchange_weak(known, view.epoch)) {
  }
  for (int32_t r : view.dead) {
    if (!rpc_.IsDead(Rank{r})) {
      rpc_.MarkDead(Rank{r},
                    "declared dead by the conductor (epoch " + std::to_string(view.epoch) + ")");
    }
  }
}

void HeartbeatSender::Loop() {
  SteadyClock clock;
  Nanos last_ok = clock.Now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    auto reply = rpc_.Call(conductor_, kMsgHeartbeat, {}, config_.failure_timeout);
    const Nanos now = clock.Now();
    Status lost = Status::Ok();
    if (reply.ok()) {
      last_ok = now;
      auto view = MembershipView::Decode(*reply);
      if (view.ok()) Apply(*view);
    } else if (reply.status().code() == ErrorCode::kPeerFailure) {
      lost = reply.status();  // fenced, or the conductor is known dead
    } else if (now - last_ok > config_.failure_timeout) {
      lost = PeerFailure("the conductor (rank " + std::to_string(conductor_.value) +
                         ") did not answer heartbeats for " + Seconds(now - last_ok) + ": " +
                         reply.status().ToString());
    }
    lock.lock();
    if (!lost.ok() && !stopping_) {
      lock.unlock();
      if (on_lost_) on_lost_(lost);
      return;
    }
    cv_.wait_for(lock, config_.heartbeat_interval);
  }
}

}  // namespace mooncake::serve
