#include "p2p/heartbeat.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"
#include "common/threads.h"

namespace mooncake::p2p {

Heartbeat::Heartbeat(TrackerClient& tracker, transport::Transport& transport, int32_t tracker_rank,
                     Nanos interval, Nanos tracker_timeout, std::vector<int32_t> sources)
    : tracker_(tracker),
      transport_(transport),
      tracker_rank_(tracker_rank),
      interval_(interval),
      tracker_timeout_(tracker_timeout),
      sources_(std::move(sources)) {
  last_answer_ = clock_.Now();
  ticker_.Start(interval_, PeriodicThread::First::kTick, [this] { return Beat(); });
}

Heartbeat::~Heartbeat() { Stop(); }

HeartbeatResponse Heartbeat::state() const { return CopyLocked(mutex_, state_); }

std::string Heartbeat::why() const { return CopyLocked(mutex_, why_); }

void Heartbeat::Stop() {
  ticker_.Stop();
  cv_.notify_all();  // WaitFor callers see the final state
}

bool Heartbeat::Beat() {
  auto answer = tracker_.Heartbeat();
  const Nanos now = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (answer.ok()) {
      last_answer_ = now;
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
    } else if (now - last_answer_ > tracker_timeout_) {
      why_ = fmt::format("the p2p tracker (rank {}) did not answer heartbeats for {:.1f} s: {}",
                         tracker_rank_, std::chrono::duration<double>(now - last_answer_).count(),
                         answer.status().ToString());
      lost_ = true;
      cancel_ = true;
    }
  }
  cv_.notify_all();
  return !lost_;
}

}  // namespace mooncake::p2p
