// How a serving role counts what went wrong, the same in prefill and decode ranks.
#pragma once

#include <mutex>

#include "common/log.h"
#include "common/status.h"

namespace mooncake::serve {

// `s` failed: a peer declared dead (PeerFailure) is a peer-loss abort, logged as a warning (the
// conductor re-dispatches what it held; not this rank's error); anything else is an error,
// logged, and the first one kept. `Stats` has peer_loss_aborts, errors and first_error; `mutex`
// guards it.
template <typename Stats>
void CountRoleFailure(const Status& s, std::mutex& mutex, Stats* stats) {
  if (s.code() == ErrorCode::kPeerFailure) {
    log::Warn("{}", s.ToString());
    std::lock_guard<std::mutex> lock(mutex);
    ++stats->peer_loss_aborts;
    return;
  }
  log::Error("{}", s.ToString());
  std::lock_guard<std::mutex> lock(mutex);
  ++stats->errors;
  if (stats->first_error.empty()) stats->first_error = s.ToString();
}

}  // namespace mooncake::serve
