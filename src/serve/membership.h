// Failure detection without MPI (DESIGN.md "Failure model"). Every rank but the conductor calls
// the conductor every heartbeat interval (kMsgHeartbeat); the conductor declares a rank dead
// when it has not heard from it for the failure timeout (a SIGSTOPped rank too), bumps the
// membership epoch and tells the live ranks (push, and in every heartbeat reply). Every rank's
// Rpc then fails calls to the dead rank at once and drops its frames (fenced): a stopped rank
// that wakes up is refused, learns it from the "fenced" answer to its heartbeat, and exits.
// A rank that cannot reach the conductor for the failure timeout ends itself (the conductor is
// the single point of failure: its death ends the job promptly instead of hanging it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "common/wire_fields.h"
#include "serve/serve_config.h"
#include "transport/rpc.h"

namespace mooncake::serve {

struct DeadRank {
  Rank rank;
  Nanos when{0};    // conductor steady clock
  std::string why;  // "missed heartbeats for 1.00 s"
};

// The membership a heartbeat reply carries: the epoch and every rank declared dead so far.
struct MembershipView : WireMessage<MembershipView> {
  static constexpr const char* kWireName = "MembershipView";
  uint64_t epoch = 0;
  std::vector<int32_t> dead;
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.epoch, m.dead);
  }
  Status Validate() const;
};

// On the conductor. Watches `ranks` (every other rank of the job).
class FailureDetector {
 public:
  using DeathHandler = std::function<void(const DeadRank&)>;
  FailureDetector(transport::Rpc& rpc, std::vector<int> ranks, MembershipConfig config);
  ~FailureDetector();
  FailureDetector(const FailureDetector&) = delete;
  FailureDetector& operator=(const FailureDetector&) = delete;

  // `on_death` runs on the detector's thread, once per dead rank, after every Rpc of this
  // process fences it. Set before Start.
  void OnDeath(DeathHandler on_death) { on_death_ = std::move(on_death); }
  // Registers the heartbeat handler and starts watching; a rank's clock starts at Start.
  void Start();
  void Stop();
  // Declares `rank` dead now (a transport error, a test). Idempotent.
  void DeclareDead(Rank rank, const std::string& why);
  std::vector<DeadRank> dead() const;
  uint64_t epoch() const;

 private:
  void Watch();
  void Broadcast(const MembershipView& view);

  transport::Rpc& rpc_;
  std::vector<int> ranks_;
  MembershipConfig config_;
  DeathHandler on_death_;
  SteadyClock clock_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Nanos> last_heard_;  // index = rank
  std::vector<DeadRank> dead_;
  std::vector<DeadRank> to_report_;  // declared, handler not run yet
  uint64_t epoch_ = 0;
  bool stopping_ = false;
  std::thread watcher_;
};

// On every other rank.
class HeartbeatSender {
 public:
  using LostHandler = std::function<void(const Status&)>;
  HeartbeatSender(transport::Rpc& rpc, Rank conductor, MembershipConfig config);
  ~HeartbeatSender();
  HeartbeatSender(const HeartbeatSender&) = delete;
  HeartbeatSender& operator=(const HeartbeatSender&) = delete;

  // Also registers the handler of the conductor's membership pushes.
  void Start();
  void Stop();
  // Called (once, on the sender's thread) when the conductor was unreachable for the failure
  // timeout or answered that this rank is fenced. The live job ends the process there.
  void OnConductorLost(LostHandler on_lost) { on_lost_ = std::move(on_lost); }
  uint64_t epoch() const { return epoch_.load(); }

 private:
  void Loop();
  void Apply(const MembershipView& view);

  transport::Rpc& rpc_;
  Rank conductor_;
  MembershipConfig config_;
  LostHandler on_lost_;
  std::atomic<uint64_t> epoch_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace mooncake::serve
