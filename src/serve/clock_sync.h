// Offset of this rank's steady clock to the conductor's, NTP-style: of `rounds` pings, the one
// with the smallest round trip gives offset = conductor_time - (send + receive) / 2. On one node
// the offset is ~0 (CLOCK_MONOTONIC is shared); across nodes it removes the boot-time difference.
#pragma once

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "transport/rpc.h"

namespace mooncake::serve {

// On the conductor: answer kMsgClockSync with its steady clock.
void ServeClock(transport::Rpc& rpc);
Result<Nanos> SyncClock(transport::Rpc& rpc, Rank conductor, int rounds, Nanos timeout);

}  // namespace mooncake::serve
