// Failure detection without MPI (DESIGN.md "Failure model"). Every rank but the conductor calls
// the conductor every heartbeat interval (kMsgHeartbeat, heartbeat_sender.h); the conductor
// declares a rank dead when it has not heard from it for the failure timeout (a SIGSTOPped rank
// too), bumps the membership's epoch and tells the live ranks (push, and in every heartbeat
// reply). Every rank's Rpc then fails calls to the dead rank at once and drops its frames
// (fenced): a stopped rank that wakes up is refused, learns it from the "fenced" answer to its
// heartbeat, and exits.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/membership.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/periodic_thread.h"
#include "transport/rpc.h"

namespace mooncake::cluster {

// In wall time, whatever a job's time scale.
struct MembershipConfig {
  Nanos heartbeat_interval = std::chrono::milliseconds(100);
  Nanos failure_timeout = std::chrono::seconds(1);
};

// On the conductor. Watches every live member of `initial` but the conductor itself.
class FailureDetector {
 public:
  using DeathHandler = std::function<void(const DeadRank&)>;
  FailureDetector(transport::Rpc& rpc, Membership initial, MembershipConfig config);
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
  // `rank` joins the job as `role` (a new epoch, pushed to the live ranks); its clock starts now.
  Status Admit(Rank rank, Role role);
  // Pushes the membership to every live rank now (a standby that took over tells them).
  void Announce();
  // `rank` left on purpose (a drained store rank told to exit): no longer watched, not dead (a
  // new epoch, pushed to the live ranks). False when it was not live.
  bool Retire(Rank rank);
  std::vector<DeadRank> dead() const;
  uint64_t epoch() const;
  MembershipView view() const;

 private:
  // The thread's turn, every heartbeat interval and on each change: declares the silent ranks
  // dead, then pushes a new epoch and runs the death handler.
  bool Watch();
  // Ranks silent past the failure timeout, with why. Under mutex_.
  std::vector<std::pair<Rank, std::string>> Expired(Nanos now);
  void Broadcast(const MembershipView& view);
  // Every live member but the conductor. Under mutex_.
  std::vector<Rank> Watched() const;

  transport::Rpc& rpc_;
  MembershipConfig config_;
  DeathHandler on_death_;
  SteadyClock clock_;
  // A heartbeat from `from`: its time noted; the view to answer with.
  MembershipView Heard(Rank from);
  mutable std::mutex mutex_;
  // The heartbeat handler runs inline on the transport's receiving thread and may be called
  // after the detector is gone (a late heartbeat while the transport closes: a rank hung at its
  // end iterating a freed membership). It reaches the detector only through this gate, which
  // the destructor closes; a stopped detector still answers (the ranks end after it). The gate
  // is never held while answering: the answer's send may deliver another heartbeat on the same
  // thread.
  struct HandlerGate {
    std::mutex mutex;
    FailureDetector* detector = nullptr;
  };
  std::shared_ptr<HandlerGate> gate_ = std::make_shared<HandlerGate>();
  Membership membership_;
  std::map<int32_t, Nanos> last_heard_;
  std::vector<DeadRank> to_report_;  // declared, handler not run yet
  bool changed_ = false;             // a new epoch not pushed yet
  Nanos last_tick_{0};               // the watcher's own
  PeriodicThread watcher_;
};

}  // namespace mooncake::cluster
