// The other side of failure_detector.h, on every rank but the conductor: a heartbeat to the
// conductor every interval, whose reply carries the conductor's membership view; views pushed
// on a change arrive too (kMsgMembership). Heartbeats go out on the interval whether or not the
// last one was answered (a slow reply must not silence this rank), and the conductor counts as
// lost only after the failure timeout without any reply. A view older than the one held is refused
// (a late or replayed message). Ranks a view declares dead are fenced in this rank's Rpc. A rank
// that cannot reach the conductor for the failure timeout ends itself (the conductor is the single
// point of failure: its death ends the job promptly instead of hanging it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/failure_detector.h"
#include "cluster/membership.h"
#include "common/ids.h"
#include "common/status.h"
#include "transport/rpc.h"

namespace mooncake::cluster {

class HeartbeatSender {
 public:
  using LostHandler = std::function<void(const Status&)>;
  // `initial`: the membership this rank starts with. Heartbeats go to whichever rank the
  // membership names as the conductor.
  HeartbeatSender(transport::Rpc& rpc, Membership initial, MembershipConfig config);
  ~HeartbeatSender();
  HeartbeatSender(const HeartbeatSender&) = delete;
  HeartbeatSender& operator=(const HeartbeatSender&) = delete;

  // Also registers the handler of the conductor's membership pushes.
  void Start();
  void Stop();
  // Called (once, on the sender's thread) when the conductor was unreachable for the failure
  // timeout or answered that this rank is fenced. The live job ends the process there.
  void OnConductorLost(LostHandler on_lost) { on_lost_ = std::move(on_lost); }
  // The store service's standby conductor (docs/FAULTS.md): when the conductor is silent for the
  // failure timeout, heartbeats go to `standby` instead, and the conductor counts as lost only if
  // `standby` has not announced itself within twice the failure timeout more (it takes that long
  // to notice and take over). A membership view is also taken from `standby`. Set before Start.
  void FollowStandby(Rank standby) { standby_ = standby.value; }
  // Evidence that `conductor` died (cluster/liveness_link.h: its process ended, not only fell
  // silent): when it is the conductor followed, it counts as lost now instead of after the
  // failure timeout. Any thread.
  void ConductorDied(Rank conductor, const std::string& why);
  // Runs (on the sender's thread) when a membership view names another conductor than the one
  // before (a standby took over): the serving ranks send their reports there. Set before Start.
  void OnConductorChanged(std::function<void(Rank)> on_changed) {
    on_changed_ = std::move(on_changed);
  }
  // When the conductor last answered, on this sender's steady clock (the takeover's start).
  Nanos last_reply_at() const { return Nanos(last_reply_ns_.load()); }
  // True once a reply said this rank was fenced (declared dead by the conductor).
  bool fenced() const { return fenced_.load(); }
  uint64_t epoch() const { return epoch_.load(); }
  Membership membership() const;
  // Views refused as older than the one held.
  uint64_t stale_views() const { return stale_views_.load(); }

 private:
  // Where the heartbeats' replies wait for the sender's thread. Shared with the replies'
  // callbacks, which may run after the sender is gone.
  struct Inbox {
    std::mutex mutex;
    std::condition_variable cv;
    // The conductor asked, and its reply (a reply of a conductor no longer followed is dropped).
    std::deque<std::pair<int32_t, Result<std::vector<std::byte>>>> replies;
    bool stopping = false;
    int32_t died = -1;  // ConductorDied's rank, and why
    std::string died_why;
  };
  void Loop();
  void Send(Rank conductor);
  // Takes one reply; sets `lost` when it says this rank was fenced. True when it was an answer.
  bool Take(Result<std::vector<std::byte>> reply, Nanos* last_reply, Status* last_error,
            Status* lost);
  void Apply(const MembershipView& view);

  transport::Rpc& rpc_;
  MembershipConfig config_;
  LostHandler on_lost_;
  std::function<void(Rank)> on_changed_;
  SteadyClock clock_;
  mutable std::mutex membership_mutex_;
  Membership membership_;
  std::atomic<int32_t> conductor_;    // as the membership says; a view may name another
  std::atomic<int32_t> standby_{-1};  // FollowStandby
  std::atomic<int64_t> last_reply_ns_{0};
  std::atomic<bool> fenced_{false};
  std::atomic<bool> conductor_changed_{false};  // Apply: a view named another conductor
  std::atomic<bool> named_changed_{false};      // ... than the membership held before (on_changed_)
  std::atomic<uint64_t> epoch_{0};
  std::atomic<uint64_t> stale_views_{0};
  std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  std::thread thread_;
};

}  // namespace mooncake::cluster
