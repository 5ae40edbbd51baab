#include "cluster/heartbeat_sender.h"

#include "common/log.h"
#include "common/threads.h"
#include "common/units.h"

namespace mooncake::cluster {

HeartbeatSender::HeartbeatSender(transport::Rpc& rpc, Membership initial, MembershipConfig config)
    : rpc_(rpc),
      config_(config),
      membership_(std::move(initial)),
      conductor_(membership_.conductor().value),
      epoch_(membership_.epoch()) {}

HeartbeatSender::~HeartbeatSender() { Stop(); }

void HeartbeatSender::Start() {
  transport::CheckRegistered(rpc_.RegisterInline(
      kMsgMembership, [this](Rank from, std::span<const std::byte> bytes, transport::Responder) {
        if (from.value != conductor_.load() && from.value != standby_.load()) {
          return;
        }
        auto view = MembershipView::Decode(bytes);
        if (view.ok()) Apply(*view);
      }));
  thread_ = std::thread([this] { Loop(); });
}

void HeartbeatSender::Stop() {
  RaiseFlag(inbox_->mutex, inbox_->stopping, inbox_->cv);
  JoinAll(thread_);
}

Membership HeartbeatSender::membership() const {
  return CopyLocked(membership_mutex_, membership_);
}

void HeartbeatSender::Apply(const MembershipView& view) {
  std::vector<Rank> newly_dead;
  {
    std::lock_guard<std::mutex> lock(membership_mutex_);
    const Rank before = membership_.conductor();
    auto applied = membership_.Apply(view, clock_.Now());
    if (!applied.ok()) {
      if (applied.status().code() == ErrorCode::kOutOfRange) ++stale_views_;
      return;
    }
    newly_dead = std::move(*applied);
    epoch_ = membership_.epoch();
    if (membership_.conductor() != before) named_changed_ = true;
    if (conductor_.exchange(membership_.conductor().value) != membership_.conductor().value) {
      conductor_changed_ = true;  // the loop's silence clock starts again for the new one
      log::Warn("following the conductor rank {} (membership epoch {})",
                membership_.conductor().value, view.epoch);
    }
  }
  for (Rank r : newly_dead) {
    if (!rpc_.IsDead(r)) {
      rpc_.MarkDead(r, "declared dead by the conductor (epoch " + std::to_string(view.epoch) + ")");
    }
  }
}

void HeartbeatSender::ConductorDied(Rank conductor, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(inbox_->mutex);
    inbox_->died = conductor.value;
    inbox_->died_why = why;
  }
  inbox_->cv.notify_all();
}

void HeartbeatSender::Send(Rank conductor) {
  rpc_.CallAsync(conductor, kMsgHeartbeat, {}, config_.failure_timeout,
                 [inbox = inbox_, asked = conductor.value](Result<std::vector<std::byte>> reply) {
                   {
                     std::lock_guard<std::mutex> lock(inbox->mutex);
                     if (inbox->stopping) return;
                     inbox->replies.emplace_back(asked, std::move(reply));
                   }
                   inbox->cv.notify_all();
                 });
}

bool HeartbeatSender::Take(Result<std::vector<std::byte>> reply, Nanos* last_reply,
                           Status* last_error, Status* lost) {
  if (reply.ok()) {
    *last_reply = clock_.Now();
    last_reply_ns_ = last_reply->count();
    *last_error = Status::Ok();  // an error before this answer is not why a later silence came
    auto view = MembershipView::Decode(*reply);
    if (view.ok()) Apply(*view);
    return true;
  }
  if (reply.status().code() == ErrorCode::kPeerFailure) {
    *lost = reply.status();  // fenced, or the conductor is known dead
    fenced_ = reply.status().message().find("fenced") != std::string::npos;
  } else {
    *last_error = reply.status();
  }
  return false;
}

void HeartbeatSender::Loop() {
  Nanos last_reply = clock_.Now();
  Nanos next_send = last_reply;
  Nanos last_tick = last_reply;
  Status last_error = Status::Ok();  // the last failed call since the last answer
  bool answered = false;             // any heartbeat of this sender was answered
  Status lost = Status::Ok();
  Rank conductor{conductor_.load()};
  last_reply_ns_ = last_reply.count();
  std::unique_lock<std::mutex> lock(inbox_->mutex);
  while (!inbox_->stopping) {
    if (clock_.Now() >= next_send) {
      lock.unlock();
      conductor = Rank{conductor_.load()};
      Send(conductor);
      next_send = clock_.Now() + config_.heartbeat_interval;
      lock.lock();
    }
    while (!inbox_->replies.empty() && lost.ok()) {
      auto [asked, reply] = std::move(inbox_->replies.front());
      inbox_->replies.pop_front();
      if (asked != conductor_.load()) continue;  // the one this rank followed before
      lock.unlock();
      answered = Take(std::move(reply), &last_reply, &last_error, &lost) || answered;
      lock.lock();
    }
    if (conductor_changed_.exchange(false)) last_reply = clock_.Now();  // a view named another
    if (lost.ok() && inbox_->died >= 0 && inbox_->died == conductor_.load()) {
      lost = PeerFailure("the conductor (rank " + std::to_string(inbox_->died) +
                         ") died: " + inbox_->died_why);
    }
    if (named_changed_.exchange(false) && on_changed_) {
      lock.unlock();
      on_changed_(Rank{conductor_.load()});
      lock.lock();
    }
    // If this thread itself did not run for a while (a stopped process, an overloaded host),
    // the silence was ours: do not count it against the conductor. A stopped rank that wakes
    // up so asks once more, and learns from the answer whether it was fenced meanwhile. Looked
    // at here, just before the silence is judged: a stop that came while this thread was
    // sending (above) was otherwise counted against the conductor as soon as the rank woke,
    // before its question could be answered (CI: mpi_fault_store_stop's resumed rank ended
    // "conductor did not answer" instead of learning it was fenced).
    const Nanos tick = clock_.Now();
    const Nanos stalled = tick - last_tick - config_.heartbeat_interval;
    last_tick = tick;
    if (lost.ok() && stalled > config_.heartbeat_interval * 3) {
      last_reply += stalled;
      next_send = tick;
      continue;
    }
    const Nanos silent = tick - last_reply;
    const int32_t standby = standby_.load();
    if (lost.ok() && silent > config_.failure_timeout && standby >= 0 &&
        conductor_.load() != standby) {
      // The standby needs the failure timeout to notice too, and then takes over: wait for it.
      log::Warn(
          "the conductor (rank {}) did not answer heartbeats for {}: following the standby "
          "conductor (rank {})",
          conductor.value, FormatSeconds(silent), standby);
      conductor_ = standby;
      last_reply = clock_.Now() + config_.failure_timeout;
      next_send = clock_.Now();
      continue;
    }
    if (lost.ok() && silent > config_.failure_timeout) {
      lost = PeerFailure("the conductor (rank " + std::to_string(conductor.value) +
                         ") did not answer heartbeats for " + FormatSeconds(silent) +
                         (answered ? "" : " (none was ever answered)") +
                         (last_error.ok() ? "" : ": " + last_error.ToString()));
    }
    if (!lost.ok() && !inbox_->stopping) {
      lock.unlock();
      if (on_lost_) on_lost_(lost);
      return;
    }
    const Nanos wait = next_send - clock_.Now();
    if (wait > Nanos(0)) inbox_->cv.wait_for(lock, wait);
  }
}

}  // namespace mooncake::cluster
