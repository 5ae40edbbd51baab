// How a rank talks to the tracker: over the RPC (every rank but the tracker's own), or by
// direct calls (the tracker's rank). Both behave alike, so a P2pNode does not care where the
// tracker is. Every remote call has the deadline given at construction; a missed one is a
// Timeout naming the tracker rank, never a hang.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "p2p/messages.h"
#include "p2p/tracker.h"
#include "transport/rpc.h"

namespace mooncake::p2p {

class TrackerClient {
 public:
  virtual ~TrackerClient() = default;
  virtual Status Register(const RegisterRequest& request) = 0;
  virtual Result<Manifest> Lookup(const std::string& name) = 0;
  virtual Status Join(const JoinRequest& request) = 0;
  virtual Result<UpdateResponse> Update(const UpdateRequest& request) = 0;
  virtual Status Unregister(const std::string& name) = 0;
  virtual Result<ListResponse> List() = 0;
  virtual Status Done(const RankReport& report) = 0;
  virtual Result<HeartbeatResponse> Heartbeat() = 0;
  virtual Status Leave() = 0;
};

// Direct calls into `tracker` as rank `self` (`tracker` outlives the client).
std::unique_ptr<TrackerClient> MakeLocalTrackerClient(Tracker& tracker, Rank self);
// Calls over `rpc` to the tracker on `tracker_rank`, each with deadline `timeout`.
std::unique_ptr<TrackerClient> MakeRemoteTrackerClient(transport::Rpc& rpc, Rank tracker_rank,
                                                       Nanos timeout);

// Serves `tracker` over `rpc` (handlers run inline: they only take the tracker's mutex).
// Register before peers may call (before the bootstrap's end). `tracker` outlives `rpc`'s use.
void ServeTracker(Tracker& tracker, transport::Rpc& rpc);

}  // namespace mooncake::p2p
