// A rank's heartbeat to the tracker during a distribution: one Heartbeat call per interval,
// from its own thread. It keeps the rank alive in the tracker's eyes (however long a copy or a
// check takes), and it brings back the job's state: who is done, who failed, who is dead, and
// whether everyone is done. Peers the tracker declared dead are marked dead in the transport,
// so reads from them fail at once. When the tracker fences this rank (it was declared dead) or
// stays silent for `tracker_timeout`, `lost()` turns true and the rank gives up; `cancel()`
// turns true then too, and also once every source rank failed or died (nothing left to fetch).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/periodic_thread.h"
#include "p2p/messages.h"
#include "p2p/tracker_client.h"
#include "transport/transport.h"

namespace mooncake::p2p {

class Heartbeat {
 public:
  // Starts the thread; `tracker` and `transport` outlive the heartbeat. `tracker_rank` serves
  // the tracker (for the messages).
  Heartbeat(TrackerClient& tracker, transport::Transport& transport, int32_t tracker_rank,
            Nanos interval, Nanos tracker_timeout, std::vector<int32_t> sources);
  ~Heartbeat();  // Stop()
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // The latest answer (empty before the first).
  HeartbeatResponse state() const;
  // Waits until `done(state)` holds, the tracker is lost, or `timeout` passed; the last state.
  template <typename Pred>
  bool WaitFor(Pred done, Nanos timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return lost_ || done(state_); }) && !lost_;
  }
  // Set when this rank was fenced or the tracker went silent; then why() says which.
  const std::atomic<bool>& lost() const { return lost_; }
  const std::atomic<bool>& cancel() const { return cancel_; }
  std::string why() const;
  void Stop();

 private:
  // One heartbeat and its answer; false once the tracker is lost (the thread ends).
  bool Beat();

  TrackerClient& tracker_;
  transport::Transport& transport_;
  const int32_t tracker_rank_;
  const Nanos interval_;
  const Nanos tracker_timeout_;
  SteadyClock clock_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  HeartbeatResponse state_;
  std::set<int32_t> marked_dead_;
  const std::vector<int32_t> sources_;
  std::atomic<bool> lost_{false};
  std::atomic<bool> cancel_{false};
  std::string why_;
  Nanos last_answer_{0};  // the thread's own
  PeriodicThread ticker_;
};

}  // namespace mooncake::p2p
