// Controlling a store service job from outside it: `mooncake store stop CONNECT_FILE` and
// `mooncake store drain RANK CONNECT_FILE`.
#pragma once

#include <functional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "store/net/join_drain_messages.h"

namespace mooncake::client {

// Attaches to the master of the job behind `connection_file` and asks the job to stop in order
// (spills finished, files closed, exit 0). Returns once the master accepted; then waits up to
// `timeout` for its listener to close (the job has ended) and says so: Timeout if it is still
// there.
Status StopStoreService(const std::string& connection_file, Nanos timeout);

// Attaches to the master of the job behind `connection_file` and drains store rank `rank`: asks
// (StoreMsg::kDrain) every `poll` until the answer says the rank left, calling `progress` with
// every answer. The master's refusal as it came (NotFound: not a store rank; InvalidArgument:
// the last one; NoSpace: the others cannot take its bytes); Timeout after `timeout`.
Status DrainStoreRank(const std::string& connection_file, int rank, Nanos timeout, Nanos poll,
                      const std::function<void(const store::DrainReply&)>& progress);

}  // namespace mooncake::client
