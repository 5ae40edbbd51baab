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

Result<Records> Bootstrap::Gather(std::span<const std::byte> mine, int root, std::string_view step,
                                  Nanos timeout) const {
  if (root < 0 || root >= size()) {
    return InvalidArgument(
        fmt::format("step '{}': gather to rank {} in a job of {}", step, root, size()));
  }
  return DoGather(mine, root, step, timeout);
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

Result<std::vector<std::string>> AllGatherText(const Bootstrap& bootstrap, std::string_view mine,
                                               std::string_view step, Nanos timeout) {
  auto all = bootstrap.AllGather(std::as_bytes(std::span<const char>(mine.data(), mine.size())),
                                 step, timeout);
  if (!all.ok()) return all.status();
  std::vector<std::string> texts;
  for (const auto& record : *all) {
    texts.emplace_back(reinterpret_cast<const char*>(record.data()), record.size());
  }
  return texts;
}

}  // namespace mooncake::cluster
