// Which rank takes which role. Pure logic (no MPI), so it is validated before MPI starts.
//
// A layout is written either as counts, "conductor:1 store:2 prefill:2 decode:2" (ranks are given
// out in that order: conductor first, then stores, prefills, decodes), or as a per-rank list,
// "conductor,store,prefill,decode,decode". Without one, DefaultLayout applies:
//   rank 0 is the conductor; of the other r = N-1 ranks, store = max(1, r/4),
//   decode = max(1, (r-store)/2), prefill = the rest (N = 4: 1/1/1/1; N = 6: 1/2/2; N = 64:
//   15/24/24).
// Every layout needs one conductor (or two: the second, at rank 1, is the standby that takes
// over when the first dies) and at least one rank of each other role. Layouts put
// the conductor at rank 0 (the launch's choice, checked here); the code asks conductor() and
// Membership() instead of assuming it.
//
// The store service (job.mode = store, docs/CLIENT.md) has a layout of its own: the conductor
// (the store's metadata master) and store ranks only, at least 2 ranks; by default every rank
// but rank 0 is a store rank. It may have a second conductor at rank 1, the standby.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/membership.h"
#include "cluster/role.h"
#include "common/ids.h"
#include "common/status.h"

namespace mooncake::cluster {

class RoleTable {
 public:
  // Parses `spec` (empty = default rule) for `world_size` ranks. Errors name the spec and what
  // is allowed, e.g. "roles = 'store:5' asks for 5 ranks but the job has 4".
  static Result<RoleTable> Build(std::string_view spec, int world_size);
  // The store service's layout: a conductor at rank 0 and store ranks only.
  static Result<RoleTable> BuildStoreService(std::string_view spec, int world_size);

  Role role(int rank) const { return roles_[rank]; }
  // The rank that conducts (the first conductor of the layout).
  Rank conductor() const;
  // The standby conductor (the layout's second conductor, rank 1), Rank{-1} when none.
  Rank standby() const;
  // The job's membership at start: every rank live in its role.
  Membership InitialMembership() const;
  int size() const { return static_cast<int>(roles_.size()); }
  int count(Role role) const { return counts_[static_cast<int>(role)]; }
  // The ranks holding `role`, ascending.
  std::vector<int> RanksOf(Role role) const;
  // Position of `rank` among the ranks of its role (the 2nd store rank has index 1).
  int IndexInRole(int rank) const;
  // "conductor:1 store:1 prefill:1 decode:1".
  std::string Summary() const;

 private:
  explicit RoleTable(std::vector<Role> roles);
  // `spec` as counts or a per-rank list; empty: `defaults`.
  static Result<std::vector<Role>> Parse(std::string_view spec, int world_size,
                                         std::vector<Role> defaults);
  std::vector<Role> roles_;
  std::array<int, 4> counts_{};
};

// Prints the role table on stdout: a line per rank with its role and host (`hosts`, index =
// rank), and the UCX path from rank 0 when `paths` is given (else empty).
void PrintRoleTable(const RoleTable& roles, const std::vector<std::string>& hosts,
                    const std::vector<std::string>& paths);

}  // namespace mooncake::cluster
