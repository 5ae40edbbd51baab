// The piece tracker: who holds which pieces of which object (docs/P2P.md "The tracker"). It
// lives on the conducting rank (CommandConfig::tracker_rank) and is pure bookkeeping: the RPC
// service (tracker_service.h) feeds it, and that rank itself calls it directly.
//
// Per object it keeps the manifest, every holder's copy (where its bytes are) and the pieces
// it holds, and an append-only log of events (joined, landed, started, dropped, left). A
// receiver asks for the events after the last one it saw, so an update costs what changed,
// not the whole map. Liveness: every call is a sign of life of its caller; a rank silent for
// `peer_timeout` is declared dead in the tracker's membership (cluster/membership.h; its copies
// leave every object) and fenced: its later calls fail with PeerFailure. A holder that served
// `max_bad_pieces` damaged pieces is banned.
//
// Thread-safe: one mutex; every method is short (no I/O, no waiting).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/membership.h"
#include "common/clock.h"
#include "common/status.h"
#include "p2p/manifest.h"
#include "p2p/messages.h"
#include "p2p/piece_set.h"

namespace mooncake::p2p {

struct TrackerConfig {
  int world_size = 1;
  Nanos peer_timeout = Nanos(2'000'000'000);
  uint32_t max_bad_pieces = kMaxBadPieces;  // damaged pieces served before a ban
  int32_t tracker_rank = 0;                 // the rank that conducts (serves the tracker)
};

class Tracker {
 public:
  // `clock` outlives the tracker. Every rank counts as alive from construction on.
  Tracker(TrackerConfig config, const Clock& clock);
  // Every rank counts as heard from now (call when the ranks start to talk: a bootstrap that
  // took longer than peer_timeout must not make them dead).
  void RestartLiveness();

  // A holder of every piece. A second holder of the same name must bring the same manifest.
  Status Register(int32_t rank, const RegisterRequest& request);
  Result<Manifest> Lookup(int32_t rank, const std::string& name);
  // A holder of no piece yet (a receiver, before it fetches).
  Status Join(int32_t rank, const JoinRequest& request);
  Result<UpdateResponse> Update(int32_t rank, const UpdateRequest& request);
  Status Unregister(int32_t rank, const std::string& name);
  ListResponse List();

  // The distribution's end: every rank reports once; finished when each rank reported or is
  // dead; ranks Leave once they saw it finished.
  Status ReportDone(int32_t rank, const RankReport& report);
  Result<HeartbeatResponse> Heartbeat(int32_t rank);
  Status Leave(int32_t rank);

  bool Finished();
  // Every rank left or is dead (the tracker's rank may close then).
  bool AllLeft();
  std::vector<RankReport> Reports() const;
  // (rank, why) of every rank declared dead, in the order they were.
  std::vector<std::pair<int32_t, std::string>> DeadRanks() const;
  // How far the receivers of `name` are, for the tracker's progress lines.
  struct Landing {
    uint64_t landed = 0;    // verified bytes over every receiving holder
    uint64_t expected = 0;  // the object's size times the receiving holders registered so far
    Nanos elapsed{0};       // since the first registration
  };
  Landing LandingOf(const std::string& name) const;
  // From the first registration to the last report of a receiving rank (0 before both).
  Nanos DistributionTime() const;

 private:
  struct Holder {
    HolderCopy copy;
    PieceSet have;
    uint32_t bad = 0;
    bool gone = false;
  };
  struct Object {
    Manifest manifest;
    PieceLayout layout;
    std::map<int32_t, Holder> holders;
    std::vector<Event> events;
  };
  struct RankState {
    Nanos last_seen{0};
    bool left = false;
    bool reported = false;
  };

  // Declares the silent ranks dead; then fails with PeerFailure if `rank` is dead, or
  // InvalidArgument when it is not a rank of the job. Called under mutex_.
  Status Touch(int32_t rank);
  // Touch(rank), then the registered object `name` (NotFound naming it). Called under mutex_.
  Result<std::map<std::string, Object>::iterator> TouchObject(int32_t rank,
                                                              const std::string& name);
  void ExpireSilentRanks();
  void RemoveHolder(Object& object, int32_t rank);
  void ApplyBad(Object& object, const BadPiece& bad);
  bool FinishedLocked() const;

  TrackerConfig config_;
  const Clock& clock_;
  mutable std::mutex mutex_;
  std::map<std::string, Object> objects_;
  std::vector<RankState> ranks_;
  cluster::Membership members_;  // who is live and who was declared dead
  std::map<int32_t, RankReport> reports_;
  Nanos first_register_{0};
  Nanos last_receiver_done_{0};
};

}  // namespace mooncake::p2p
