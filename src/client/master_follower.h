// Finding the store's master among the job's conductors (docs/CLIENT.md, "When the master
// changes"): at attach time, and again when the master stops answering. A store job with a
// standby conductor (docs/FAULTS.md) lists both in its connection file; when the active one dies
// or is stopped, the standby takes over after the failure timeout and rewrites the file. The
// follower asks each conductor it knows for the store's directory until one answers as the
// master: the file's active conductor first (the file is read again on every round, so the
// rewritten one counts), then the others, the master that failed last (it may only have been
// slow). A standby that has not taken over answers NotSupported (it has no directory handler yet)
// and is asked again the next round.
//
// Threading: Find from one thread at a time (the client serialises its follows). Attaching to a
// conductor goes through the client's transport, shared with the calls in flight.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "client/connection_file.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "store/net/directory.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::client {

struct FollowerConfig {
  Nanos connect_timeout{0};  // of each attach to a conductor
  Nanos ask_timeout{0};      // of each directory call to one
  Nanos pause{0};            // between rounds
};

class MasterFollower {
 public:
  // `connection_file`: read again on every round ("" for a client attached by address).
  // `initial`: what the client was given (its conductors, epoch, token, job size).
  MasterFollower(transport::Transport& transport, transport::Rpc& rpc, FollowerConfig cfg,
                 std::string connection_file, const ConnectionInfo& initial);

  struct Found {
    Rank master;
    store::StoreDirectory directory;
  };
  // Asks the conductors in rounds until one answers as the master, or `deadline` passes, or
  // `stop()` says so between tries (Timeout, or InvalidArgument "closed", naming every
  // conductor tried and what it answered). `failed`: the master that stopped answering (asked
  // last in a round; Rank{-1} at attach time). At least one round runs, whatever the deadline.
  // PermissionDenied / InvalidArgument from an attach (wrong token, another job) end it at once.
  Result<Found> Find(Rank failed, Nanos deadline, const std::function<bool()>& stop);

  // Whether a conductor other than `failed` is known (the connection file is read again first):
  // a job with one conductor has nowhere to move, and its failed call returns as it came.
  bool OtherThan(Rank failed);
  // Every attach found nothing listening at any conductor's address (after a Find that failed):
  // the job has stopped, or the file is stale.
  bool nothing_listens() const { return nothing_listens_; }
  // The conductors as last read, and the epoch of the file they came from.
  const std::vector<ConductorAddress>& conductors() const { return conductors_; }
  uint64_t epoch() const { return epoch_; }

 private:
  // Reads the connection file again; a file of the same job (token, size) with an epoch not
  // below the one known replaces the conductors. Unreadable or older: the known ones stay.
  void Reread();
  // The order of one round (see the top of the file).
  std::vector<ConductorAddress> Candidates(Rank failed) const;
  // Attaches to `c` unless attached already; then asks it for the directory.
  Result<store::StoreDirectory> Ask(const ConductorAddress& c, bool* refused);

  transport::Transport& transport_;
  transport::Rpc& rpc_;
  FollowerConfig cfg_;
  std::string file_;
  transport::JobToken token_;
  int world_size_ = 0;
  std::vector<std::byte> credential_;
  std::vector<ConductorAddress> conductors_;
  uint64_t epoch_ = 0;
  std::set<int> attached_;  // conductors this transport holds an endpoint to
  bool nothing_listens_ = false;
};

}  // namespace mooncake::client
