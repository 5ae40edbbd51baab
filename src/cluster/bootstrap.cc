#include "cluster/bootstrap.h"

#include "common/log.h"

namespace mooncake::cluster {
namespace {
constexpr Nanos kNoDeadline = std::chrono::hours(24);
}  // namespace

Records Bootstrap::AllGather(std::span<const std::byte> mine) const {
  auto all = AllGather(mine, "all-gather", kNoDeadline);
  if (all.ok()) return std::move(*all);
  log::Error("{}", all.status().ToString());
  Abort(1);
}

Records Bootstrap::Gather(std::span<const std::byte> mine, int root) const {
  auto all = Gather(mine, root, "gather", kNoDeadline);
  if (all.ok()) return std::move(*all);
  log::Error("{}", all.status().ToString());
  Abort(1);
}

}  // namespace mooncake::cluster
