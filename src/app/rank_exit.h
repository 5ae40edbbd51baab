// How a rank of the live job (the serving job, the store service) ends when it is cut off: its
// conductor unreachable (exit 4), or it was fenced, a former active conductor that a standby
// replaced or a standby the active declared dead (exit 5: it must decide and acknowledge nothing
// more). At once: the reason on stderr, no destructors (its peers may be gone, and Open MPI's
// MPI_Finalize hangs then).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <utility>

#include "common/log.h"
#include "common/status.h"

namespace mooncake::app {

inline constexpr int kExitConductorLost = 4;
inline constexpr int kExitFenced = 5;

// Writes "rank R ends: <what>: <why>" and ends the process with `code`.
[[noreturn]] inline void EndRankNow(int rank, std::string_view what, const Status& why, int code) {
  log::Error("rank {} ends: {}{}{}", rank, what, what.empty() ? "" : ": ", why.ToString());
  std::fflush(nullptr);
  std::_Exit(code);
}

// Sets `node`'s OnConductorLost and OnFenced to end the rank. `leaving` (optional): true when the
// conductor let this rank go (drained), so its loss is no failure.
template <typename Node>
void EndRankWhenCutOff(Node& node, int rank, std::function<bool()> leaving = {}) {
  node.OnConductorLost([rank, leaving = std::move(leaving)](const Status& why) {
    if (leaving && leaving()) return;
    EndRankNow(rank, "", why, kExitConductorLost);
  });
  node.OnFenced([rank](const Status& why) {
    EndRankNow(rank, "it is no longer the conductor", why, kExitFenced);
  });
}

}  // namespace mooncake::app
