#include "p2p/heartbeat.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"

namespace mooncake::p2p {

Heartbeat::Heartbeat(TrackerClient& tracker, transport::Transport& transport, int32_t tracker_rank,
                     Nanos interval, Nanos tracker_timeout, std::vector<int32_t> sources)
    : tracker_(tracker),
      transport_(transport),
      tracker_rank_(tracker_rank),
      interval_(interval),
      tracker_timeout_(tracker_timeout),
      sources_(std::move(sources)) {
  thread_ = std::thread([this] { Loop(); });
}

Heartbeat::~Heartbeat() { Stop(); }

HeartbeatResponse Heartbeat::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

std::string Heartbeat::why() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return why_;
}

void Heartbeat::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Heartbeat::Loop() {
  Nanos last_answer = clock_.Now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_ && !lost_) {
    lock.unlock();
    auto answer = tracker_.Heartbeat();
    const Nanos now = clock_.Now();
    lock.lock();
    if (answer.ok()) {
      last_answer = now;
      state_ = std::move(*answer);
      for (int32_t r : state_.dead) {
        if (marked_dead_.insert(r).second && r != transport_.self().value) {
          transport_.MarkPeerDead(Rank{r}, "declared dead by the p2p tracker");
        }
      }
      auto gone = [this](int32_t r) {
        auto in = [r](const std::vector<int32_t>& v) {
          return std::find(v.begin(), v.end(), r) != v.end();
        };
        return in(state_.dead) || in(state_.failed);
      };
      if (!sources_.empty() && std::all_of(sources_.begin(), sources_.end(), gone) && !cancel_) {
        why_ = "every source rank failed or died";
        cancel_ = true;
      }
    } else if (answer.status().code() == ErrorCode::kPeerFailure &&
               answer.status().message().find("fenced") != std::string::npos) {
      why_ = answer.status().message();
      lost_ = true;
      cancel_ = true;
    } else if (now - last_answer > tracker_timeout_) {
      why_ = fmt::format("the p2p tracker (rank {}) did not answer heartbeats for {:.1f} s: {}",
                         tracker_rank_, std::chrono::duration<double>(now - last_answer).count(),
                         answer.status().ToString());
      lost_ = true;
      cancel_ = true;
    }
    cv_.notify_all();
    if (lost_) break;
    cv_.wait_for(lock, interval_, [this] { return stopping_; });
  }
  cv_.notify_all();
}

}  // namespace mooncake::p2p
