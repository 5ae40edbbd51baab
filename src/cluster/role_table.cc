#include "cluster/role_table.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "common/enum_names.h"

namespace mooncake::cluster {
namespace {

std::vector<std::string_view> SplitOn(std::string_view s, std::string_view seps) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && seps.find(s[i]) != std::string_view::npos) ++i;
    size_t j = i;
    while (j < s.size() && seps.find(s[j]) == std::string_view::npos) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string Quote(std::string_view spec) { return "roles = '" + std::string(spec) + "'"; }

Status CheckLayout(const std::vector<Role>& roles, std::string_view spec) {
  // A second conductor, at rank 1, is the standby (docs/FAULTS.md, "A standby conductor").
  int conductors = static_cast<int>(std::count(roles.begin(), roles.end(), Role::kConductor));
  if (conductors < 1 || conductors > 2 || roles.front() != Role::kConductor ||
      (conductors == 2 && roles[1] != Role::kConductor)) {
    return InvalidArgument(Quote(spec) +
                           ": one conductor is needed, at rank 0 (or two, at ranks 0 and 1: the "
                           "second is the standby)");
  }
  for (Role r : {Role::kStore, Role::kPrefill, Role::kDecode}) {
    if (std::find(roles.begin(), roles.end(), r) == roles.end()) {
      return InvalidArgument(Quote(spec) + ": at least one " + std::string(RoleName(r)) +
                             " rank is needed");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view RoleName(Role role) {
  static constexpr EnumName<Role> kRoleNames[] = {{Role::kConductor, "conductor"},
                                                  {Role::kStore, "store"},
                                                  {Role::kPrefill, "prefill"},
                                                  {Role::kDecode, "decode"}};
  return NameIn(kRoleNames, role, "?");
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : kAllRoles) {
    if (RoleName(r) == name) return r;
  }
  return std::nullopt;
}

RoleTable::RoleTable(std::vector<Role> roles) : roles_(std::move(roles)) {
  for (Role r : roles_) ++counts_[static_cast<int>(r)];
}

Result<RoleTable> RoleTable::Build(std::string_view spec, int world_size) {
  if (world_size < 4) {
    return InvalidArgument("the job has " + std::to_string(world_size) +
                           " ranks; it needs at least 4 (conductor, store, prefill, decode)");
  }
  const int rest = world_size - 1;
  const int store = std::max(1, rest / 4);
  const int decode = std::max(1, (rest - store) / 2);
  const int prefill = rest - store - decode;
  std::vector<Role> defaults{Role::kConductor};
  defaults.insert(defaults.end(), store, Role::kStore);
  defaults.insert(defaults.end(), prefill, Role::kPrefill);
  defaults.insert(defaults.end(), decode, Role::kDecode);
  auto roles = Parse(spec, world_size, std::move(defaults));
  if (!roles.ok()) return roles.status();
  MC_RETURN_IF_ERROR(CheckLayout(*roles, spec));
  return RoleTable(std::move(*roles));
}

Result<RoleTable> RoleTable::BuildStoreService(std::string_view spec, int world_size) {
  if (world_size < 2) {
    return InvalidArgument("the store service has " + std::to_string(world_size) +
                           " ranks; it needs at least 2 (the conductor and a store rank)");
  }
  std::vector<Role> defaults(world_size, Role::kStore);
  defaults[0] = Role::kConductor;
  auto roles = Parse(spec, world_size, std::move(defaults));
  if (!roles.ok()) return roles.status();
  const auto count = [&](Role r) { return std::count(roles->begin(), roles->end(), r); };
  // A second conductor is the standby (rank 1): it follows the active one's journal and takes
  // over when it dies (docs/FAULTS.md).
  const auto conductors = count(Role::kConductor);
  const bool conductors_first =
      roles->front() == Role::kConductor && (conductors < 2 || (*roles)[1] == Role::kConductor);
  if (conductors < 1 || conductors > 2 || !conductors_first || count(Role::kStore) < 1 ||
      count(Role::kPrefill) + count(Role::kDecode) > 0) {
    return InvalidArgument(Quote(spec) +
                           ": the store service takes one conductor at rank 0 (or two, at ranks "
                           "0 and 1: the second is the standby) and store ranks only (at least "
                           "one)");
  }
  return RoleTable(std::move(*roles));
}

Result<std::vector<Role>> RoleTable::Parse(std::string_view spec, int world_size,
                                           std::vector<Role> defaults) {
  std::vector<Role> roles;
  auto words = SplitOn(spec, " \t");
  if (words.empty()) return defaults;
  if (spec.find(':') != std::string_view::npos) {
    std::array<int, 4> counts{};
    for (std::string_view w : words) {
      size_t colon = w.find(':');
      auto role = colon == std::string_view::npos ? std::nullopt : ParseRole(w.substr(0, colon));
      int n = -1;
      std::string_view num = colon == std::string_view::npos ? "" : w.substr(colon + 1);
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
      if (!role || ec != std::errc() || p != num.data() + num.size() || n < 0) {
        return InvalidArgument(Quote(spec) + ": '" + std::string(w) +
                               "' is not ROLE:COUNT with ROLE one of conductor, store, prefill, "
                               "decode");
      }
      counts[static_cast<int>(*role)] += n;
    }
    int total = counts[0] + counts[1] + counts[2] + counts[3];
    if (total != world_size) {
      return InvalidArgument(Quote(spec) + " asks for " + std::to_string(total) +
                             " ranks but the job has " + std::to_string(world_size));
    }
    for (Role r : kAllRoles) roles.insert(roles.end(), counts[static_cast<int>(r)], r);
    return roles;
  }
  for (std::string_view w : SplitOn(spec, ", \t")) {
    auto role = ParseRole(w);
    if (!role) {
      return InvalidArgument(Quote(spec) + ": unknown role '" + std::string(w) +
                             "' (allowed: conductor, store, prefill, decode)");
    }
    roles.push_back(*role);
  }
  if (static_cast<int>(roles.size()) != world_size) {
    return InvalidArgument(Quote(spec) + " lists " + std::to_string(roles.size()) +
                           " ranks but the job has " + std::to_string(world_size));
  }
  return roles;
}

Rank RoleTable::conductor() const {
  for (int i = 0; i < size(); ++i) {
    if (roles_[i] == Role::kConductor) return Rank{i};
  }
  return Rank{-1};  // not reached: Build and BuildStoreService need one
}

Rank RoleTable::standby() const {
  const std::vector<int> conductors = RanksOf(Role::kConductor);
  return conductors.size() > 1 ? Rank{conductors[1]} : Rank{-1};
}

Membership RoleTable::InitialMembership() const {
  std::vector<Member> members;
  for (int i = 0; i < size(); ++i) members.push_back({Rank{i}, roles_[i]});
  return Membership(conductor(), members);
}

std::vector<int> RoleTable::RanksOf(Role role) const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i) {
    if (roles_[i] == role) out.push_back(i);
  }
  return out;
}

int RoleTable::IndexInRole(int rank) const {
  int index = 0;
  for (int i = 0; i < rank; ++i) {
    if (roles_[i] == roles_[rank]) ++index;
  }
  return index;
}

std::string RoleTable::Summary() const {
  // Roles the layout has (the store service has no prefill or decode ranks).
  std::ostringstream os;
  for (Role r : kAllRoles) {
    if (count(r) == 0) continue;
    if (r != Role::kConductor) os << ' ';
    os << RoleName(r) << ':' << count(r);
  }
  return os.str();
}

void PrintRoleTable(const RoleTable& roles, const std::vector<std::string>& hosts,
                    const std::vector<std::string>& paths) {
  std::printf("%-6s %-10s %-24s %s\n", "rank", "role", "host",
              paths.empty() ? "" : "ucx path from rank 0");
  for (int r = 0; r < roles.size(); ++r) {
    std::printf("%-6d %-10s %-24s %s\n", r, std::string(RoleName(roles.role(r))).c_str(),
                hosts[r].c_str(), paths.empty() ? "" : paths[r].c_str());
  }
  std::fflush(stdout);
}

}  // namespace mooncake::cluster
