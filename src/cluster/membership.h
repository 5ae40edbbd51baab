// Who is in the job now (DESIGN.md "Failure model"): an epoch, the live ranks with their roles,
// the ranks declared dead (and why), and which rank is the conductor. The conductor's copy is
// the truth: every change (a join, a death, another conductor) bumps its epoch, and it sends its
// view (MembershipView) with every heartbeat reply and on every change. Another rank applies a
// view only when it is not older than the one it holds, so a late or replayed message can
// neither bring back a dead rank nor forget one that joined. A dead rank's id is never reused.
//
// The serving job, the store service and the p2p tracker keep their membership here. Not
// thread-safe: the owner (the failure detector, the heartbeat sender, the tracker) locks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/role.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/message_ids.h"
#include "common/status.h"
#include "common/wire_fields.h"

namespace mooncake::cluster {

// The membership messages' ids (kMsgHeartbeat, kMsgMembership) are in common/message_ids.h.

struct DeadRank {
  Rank rank;
  Nanos when{0};    // the declaring rank's steady clock
  std::string why;  // "no heartbeat for 1.00 s"
};

// The membership as the conductor sends it. live[i] plays roles[i]; dead lists every rank
// declared dead so far, in the order they were.
struct MembershipView : WireMessage<MembershipView> {
  uint64_t epoch = 0;
  int32_t conductor = -1;
  std::vector<int32_t> live;
  std::vector<uint8_t> roles;
  std::vector<int32_t> dead;
  MC_WIRE_MESSAGE(MembershipView, epoch, conductor, live, roles, dead)
  Status Validate() const;
};

struct Member {
  Rank rank;
  Role role = Role::kStore;
};

class Membership {
 public:
  Membership() = default;
  // Epoch 0: `conductor` (role kConductor) and `others` live. Entries of `others` that name the
  // conductor, a negative rank or a rank listed before are left out.
  Membership(Rank conductor, const std::vector<Member>& others);

  uint64_t epoch() const { return epoch_; }
  Rank conductor() const { return conductor_; }
  bool IsConductor(Rank rank) const { return rank.value == conductor_.value; }
  bool IsLive(Rank rank) const { return live_.count(rank.value) != 0; }
  bool IsDead(Rank rank) const;
  std::optional<Role> RoleOf(Rank rank) const;
  // Live ranks, ascending; LiveOf: those playing `role`.
  std::vector<Rank> Live() const;
  std::vector<Rank> LiveOf(Role role) const;
  // Every rank declared dead, in the order they were.
  const std::vector<DeadRank>& dead() const { return dead_; }

  // The conductor's changes; each bumps the epoch once.
  // A new rank joins. Refused (kAlreadyExists) when `rank` is live or was declared dead.
  Status Join(Rank rank, Role role);
  // `rank` is dead. False (and no new epoch) when it is not live: already dead, or unknown.
  bool Die(Rank rank, Nanos when, std::string why);
  // `rank` left on purpose (a drained store rank): no longer live, not dead either. False (and
  // no new epoch) when it is not live.
  bool Leave(Rank rank);
  // Another live rank becomes the conductor (the old one stays a member until it dies).
  Status SetConductor(Rank rank);

  MembershipView View() const;
  // Another rank takes the conductor's view. Refused (kOutOfRange, naming both epochs) when
  // the view is older than this membership; a view of the same epoch is the same view.
  // Returns the ranks this view newly declares dead, for the caller to fence.
  Result<std::vector<Rank>> Apply(const MembershipView& view, Nanos now);

 private:
  uint64_t epoch_ = 0;
  Rank conductor_{-1};
  std::map<int32_t, Role> live_;
  std::vector<DeadRank> dead_;
};

}  // namespace mooncake::cluster
