#include "cluster/bootstrap.h"

#include <cstdlib>

#include <fmt/format.h>

#include "common/log.h"
#include "common/units.h"

namespace mooncake::cluster {
namespace {
constexpr Nanos kNoDeadline = std::chrono::hours(24);
}  // namespace

Status StepTimeout(std::string_view step, Nanos timeout, int rank, int root,
                   const std::vector<int>& missing) {
  if (rank != root) {
    return Timeout(
        fmt::format("step '{}' did not complete within {}: a rank is missing (rank {} "
                    "names it)",
                    step, FormatDuration(timeout), root));
  }
  if (missing.empty()) {
    return Timeout(
        fmt::format("step '{}': every rank arrived, but the step did not complete "
                    "within {} (a rank died during it)",
                    step, FormatDuration(timeout)));
  }
  std::string names;
  for (int r : missing) names += (names.empty() ? "" : ", ") + std::to_string(r);
  return Timeout(
      fmt::format("rank{} {} never reached step '{}' within {} (killed, crashed or "
                  "stuck before it)",
                  missing.size() > 1 ? "s" : "", names, step, FormatDuration(timeout)));
}

Records Bootstrap::AllGather(std::span<const std::byte> mine) const {
  auto all = AllGather(mine, "all-gather", kNoDeadline);
  if (all.ok()) return std::move(*all);
  log::Error("{}", all.status().ToString());
  Abort(1);
  std::abort();  // not reached: Abort does not return (a virtual call hides that from the compiler)
}

Records Bootstrap::Gather(std::span<const std::byte> mine, int root) const {
  auto all = Gather(mine, root, "gather", kNoDeadline);
  if (all.ok()) return std::move(*all);
  log::Error("{}", all.status().ToString());
  Abort(1);
  std::abort();  // not reached: Abort does not return (a virtual call hides that from the compiler)
}

}  // namespace mooncake::cluster
