// Controlling a store service job from outside it: `mooncake store stop CONNECT_FILE`.
#pragma once

#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake::client {

// Attaches to the master of the job behind `connection_file` and asks the job to stop in order
// (spills finished, files closed, exit 0). Returns once the master accepted; then waits up to
// `timeout` for its listener to close (the job has ended) and says so: Timeout if it is still
// there.
Status StopStoreService(const std::string& connection_file, Nanos timeout);

}  // namespace mooncake::client
