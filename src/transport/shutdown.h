// The end of a rank's transport, the same in every job mode and command.
#pragma once

#include "common/clock.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::transport {

// No new operations (BeginShutdown), the RPC's dispatcher stopped, then the transport closed
// within `timeout`. A failure to close is logged, not returned: the outcome is known by then.
void StopAndClose(Transport& transport, Rpc& rpc, Nanos timeout);

}  // namespace mooncake::transport
