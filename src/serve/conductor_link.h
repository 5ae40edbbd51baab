// ConductorLink: a prefill or decode rank's line to the conductor, which a standby conductor
// may replace (docs/FAULTS.md, "A standby conductor (the serving job)"). Without a standby it is
// a plain Rpc::Notify / Rpc::Call to the one conductor. With one:
//  - a report (PrefillDone, DecodeDone) is kept for `keep` after it was sent: one sent to the
//    old conductor after it died, or that it took and died before journaling, is lost there, so
//    when the membership names the new conductor (SwitchTo) every kept report goes to it again.
//    The conductor ignores a report it has already (by request and attempt), so none counts
//    twice. A report that cannot be sent is not an error then: it goes out again at the switch.
//  - a call (KvArrived, whose answer the decode rank acts on) that fails is asked again of the
//    new conductor once the membership names it, up to `switch_wait` after the failure.
//
// Threading: every method from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "transport/rpc.h"

namespace mooncake::serve {

struct ConductorLinkConfig {
  Rank conductor;
  bool standby = false;                         // the job has a standby conductor
  Nanos keep = std::chrono::seconds(8);         // how long a report is kept to resend
  Nanos switch_wait = std::chrono::seconds(8);  // how long a failed call waits for a switch
};

class ConductorLink {
 public:
  // `rpc` must outlive the link.
  ConductorLink(transport::Rpc& rpc, ConductorLinkConfig config);

  Rank conductor() const { return Rank{conductor_.load()}; }
  // A one-way report to the conductor (kept for a switch when the job has a standby).
  Status Notify(uint16_t type, std::vector<std::byte> bytes);
  // A call to the conductor; with a standby, a failed one is asked again of the new conductor.
  Result<std::vector<std::byte>> Call(uint16_t type, std::span<const std::byte> request,
                                      Nanos timeout);
  // The membership names `conductor` now: the kept reports go to it again.
  void SwitchTo(Rank conductor);
  uint64_t resent() const { return resent_.load(); }

 private:
  struct Kept {
    Nanos sent;
    uint16_t type;
    std::vector<std::byte> bytes;
  };

  transport::Rpc& rpc_;
  ConductorLinkConfig config_;
  SteadyClock clock_;
  std::atomic<int32_t> conductor_;
  std::atomic<uint64_t> resent_{0};
  std::mutex mutex_;
  std::deque<Kept> kept_;  // oldest first, guarded by mutex_
};

}  // namespace mooncake::serve
