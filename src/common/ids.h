// Strong id types: a BlockHash cannot be passed where a Rank is expected (STYLE.md habit 7).
#pragma once

#include <cstdint>
#include <functional>

namespace mooncake {

struct Rank {
  int32_t value = -1;
  // Its wire form (common/wire_fields.h).
  template <typename Self, typename Visit>
  static void Fields(Self& r, Visit&& visit) {
    visit(r.value);
  }
  friend bool operator==(Rank, Rank) = default;
  friend auto operator<=>(Rank, Rank) = default;
};

// A 512-token block's id in a trace (a remapped rolling prefix hash).
struct BlockHash {
  uint64_t value = 0;
  friend bool operator==(BlockHash, BlockHash) = default;
  friend auto operator<=>(BlockHash, BlockHash) = default;
};

struct RequestId {
  uint64_t value = 0;
  friend bool operator==(RequestId, RequestId) = default;
  friend auto operator<=>(RequestId, RequestId) = default;
};

}  // namespace mooncake

template <>
struct std::hash<mooncake::Rank> {
  size_t operator()(mooncake::Rank r) const noexcept { return std::hash<int32_t>()(r.value); }
};
template <>
struct std::hash<mooncake::BlockHash> {
  size_t operator()(mooncake::BlockHash b) const noexcept { return std::hash<uint64_t>()(b.value); }
};
template <>
struct std::hash<mooncake::RequestId> {
  size_t operator()(mooncake::RequestId r) const noexcept { return std::hash<uint64_t>()(r.value); }
};
