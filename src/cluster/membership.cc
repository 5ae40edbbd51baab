#include "cluster/membership.h"

#include <algorithm>

namespace mooncake::cluster {
namespace {

constexpr uint32_t kMaxRanks = 1u << 16;

}  // namespace

Status MembershipView::Validate() const {
  if (live.size() > kMaxRanks || dead.size() > kMaxRanks) {
    return ProtocolError("malformed MembershipView: too many ranks");
  }
  if (roles.size() != live.size()) {
    return ProtocolError("malformed MembershipView: " + std::to_string(roles.size()) +
                         " roles for " + std::to_string(live.size()) + " live ranks");
  }
  for (uint8_t r : roles) {
    if (r > static_cast<uint8_t>(Role::kDecode)) {
      return ProtocolError("malformed MembershipView: role " + std::to_string(r));
    }
  }
  return Status::Ok();
}

Membership::Membership(Rank conductor, const std::vector<Member>& others) : conductor_(conductor) {
  live_.emplace(conductor.value, Role::kConductor);
  for (const Member& m : others) {
    if (m.rank.value >= 0) live_.emplace(m.rank.value, m.role);
  }
}

bool Membership::IsDead(Rank rank) const {
  return std::any_of(dead_.begin(), dead_.end(),
                     [rank](const DeadRank& d) { return d.rank.value == rank.value; });
}

std::optional<Role> Membership::RoleOf(Rank rank) const {
  auto it = live_.find(rank.value);
  if (it == live_.end()) return std::nullopt;
  return it->second;
}

std::vector<Rank> Membership::Live() const {
  std::vector<Rank> out;
  for (const auto& [rank, role] : live_) out.push_back(Rank{rank});
  return out;
}

std::vector<Rank> Membership::LiveOf(Role role) const {
  std::vector<Rank> out;
  for (const auto& [rank, r] : live_) {
    if (r == role) out.push_back(Rank{rank});
  }
  return out;
}

Status Membership::Join(Rank rank, Role role) {
  if (rank.value < 0) return InvalidArgument("membership: rank " + std::to_string(rank.value));
  if (IsLive(rank) || IsDead(rank)) {
    return {ErrorCode::kAlreadyExists,
            "membership: rank " + std::to_string(rank.value) +
                (IsLive(rank) ? " is live already" : " was declared dead; ids are not reused")};
  }
  live_.emplace(rank.value, role);
  ++epoch_;
  return Status::Ok();
}

bool Membership::Die(Rank rank, Nanos when, std::string why) {
  if (live_.erase(rank.value) == 0) return false;
  dead_.push_back(DeadRank{rank, when, std::move(why)});
  ++epoch_;
  return true;
}

bool Membership::Leave(Rank rank) {
  if (IsConductor(rank) || live_.erase(rank.value) == 0) return false;
  ++epoch_;
  return true;
}

Status Membership::SetConductor(Rank rank) {
  if (!IsLive(rank)) {
    return InvalidArgument("membership: rank " + std::to_string(rank.value) +
                           " cannot conduct: it is not live");
  }
  if (IsConductor(rank)) return Status::Ok();
  conductor_ = rank;
  ++epoch_;
  return Status::Ok();
}

MembershipView Membership::View() const {
  MembershipView view;
  view.epoch = epoch_;
  view.conductor = conductor_.value;
  for (const auto& [rank, role] : live_) {
    view.live.push_back(rank);
    view.roles.push_back(static_cast<uint8_t>(role));
  }
  for (const DeadRank& d : dead_) view.dead.push_back(d.rank.value);
  return view;
}

Result<std::vector<Rank>> Membership::Apply(const MembershipView& view, Nanos now) {
  if (view.epoch < epoch_) {
    return OutOfRange("membership: a view of epoch " + std::to_string(view.epoch) +
                      " is older than this rank's epoch " + std::to_string(epoch_));
  }
  MC_RETURN_IF_ERROR(view.Validate());
  std::vector<Rank> newly_dead;
  for (int32_t r : view.dead) {
    if (IsDead(Rank{r})) continue;
    dead_.push_back(DeadRank{
        Rank{r}, now, "declared dead by the conductor (epoch " + std::to_string(view.epoch) + ")"});
    newly_dead.push_back(Rank{r});
  }
  live_.clear();
  for (size_t i = 0; i < view.live.size(); ++i) {
    if (!IsDead(Rank{view.live[i]})) live_[view.live[i]] = static_cast<Role>(view.roles[i]);
  }
  conductor_ = Rank{view.conductor};
  epoch_ = view.epoch;
  return newly_dead;
}

}  // namespace mooncake::cluster
