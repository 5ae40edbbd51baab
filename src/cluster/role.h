// The four roles a rank can take (DESIGN.md "Roles").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mooncake::cluster {

enum class Role : uint8_t { kConductor = 0, kStore = 1, kPrefill = 2, kDecode = 3 };

inline constexpr Role kAllRoles[] = {Role::kConductor, Role::kStore, Role::kPrefill, Role::kDecode};

std::string_view RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);

}  // namespace mooncake::cluster
