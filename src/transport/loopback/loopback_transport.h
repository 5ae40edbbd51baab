// In-process transport: N ranks inside one process share a LoopbackHub; READ and WRITE are
// range-checked memcpys, messages go through a per-rank delivery thread; peers' registered
// regions are also mapped (MappedAddress), as over shared memory. For unit tests and
// single-process runs. A rank can be paused (tests use it to play a peer that stopped
// progressing): transfers to it and messages for it wait until it is resumed.
#pragma once

#include <memory>
#include <vector>

#include "transport/transport.h"

namespace mooncake::transport {

class LoopbackHub;

// Creates a hub for `world_size` ranks and one connected Transport per rank.
std::vector<std::unique_ptr<Transport>> CreateLoopbackCluster(int world_size,
                                                              std::shared_ptr<LoopbackHub>* hub);

// Pauses or resumes the delivery of transfers and messages to `rank`. (A paused rank's memory
// stays mapped: like shared memory, MappedAddress needs no progress from its owner.)
void SetLoopbackRankPaused(LoopbackHub& hub, Rank rank, bool paused);

// Whether Transport::MappedAddress maps peers' regions (default true, as ucx over shared memory
// does); false plays a network transport, where every byte goes through Submit.
void SetLoopbackMapping(LoopbackHub& hub, bool mapped);

}  // namespace mooncake::transport
