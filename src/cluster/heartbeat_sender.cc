#include "cluster/heartbeat_sender.h"

#include <cstdio>

namespace mooncake::cluster {
namespace {

std::string Seconds(Nanos d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(d.count()) * 1e-9);
  return buf;
}

}  // namespace

HeartbeatSender::HeartbeatSender(transport::Rpc& rpc, Membership initial, MembershipConfig config)
    : rpc_(rpc),
      config_(config),
      membership_(std::move(initial)),
      conductor_(membership_.conductor().value),
      epoch_(membership_.epoch()) {}

HeartbeatSender::~HeartbeatSender() { Stop(); }

void HeartbeatSender::Start() {
  rpc_.RegisterInline(kMsgMembership,
                      [this](Rank from, std::span<const std::byte> bytes, transport::Responder) {
                        if (from.value != conductor_.load()) return;
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

Membership HeartbeatSender::membership() const {
  std::lock_guard<std::mutex> lock(membership_mutex_);
  return membership_;
}

void HeartbeatSender::Apply(const MembershipView& view) {
  std::vector<Rank> newly_dead;
  {
    std::lock_guard<std::mutex> lock(membership_mutex_);
    auto applied = membership_.Apply(view, clock_.Now());
    if (!applied.ok()) {
      if (applied.status().code() == ErrorCode::kOutOfRange) ++stale_views_;
      return;
    }
    newly_dead = std::move(*applied);
    epoch_ = membership_.epoch();
    conductor_ = membership_.conductor().value;
  }
  for (Rank r : newly_dead) {
    if (!rpc_.IsDead(r)) {
      rpc_.MarkDead(r, "declared dead by the conductor (epoch " + std::to_string(view.epoch) + ")");
    }
  }
}

void HeartbeatSender::Loop() {
  Nanos last_ok = clock_.Now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const Rank conductor{conductor_.load()};
    auto reply = rpc_.Call(conductor, kMsgHeartbeat, {}, config_.failure_timeout);
    const Nanos now = clock_.Now();
    Status lost = Status::Ok();
    if (reply.ok()) {
      last_ok = now;
      auto view = MembershipView::Decode(*reply);
      if (view.ok()) Apply(*view);
    } else if (reply.status().code() == ErrorCode::kPeerFailure) {
      lost = reply.status();  // fenced, or the conductor is known dead
    } else if (now - last_ok > config_.failure_timeout) {
      lost = PeerFailure("the conductor (rank " + std::to_string(conductor.value) +
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

}  // namespace mooncake::cluster
