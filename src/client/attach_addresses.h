// Attaching to one rank of a store job at whichever of its addresses takes the connection
// (docs/CLIENT.md, "How a process attaches"). A connection file lists every address of the
// master's host, and the directory every address of a store rank's host; which of them this
// process reaches depends on its routes and on the devices UCX was allowed (UCX_NET_DEVICES).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "transport/transport.h"

namespace mooncake::client {

// Tries each "host:port" of `addresses` in order, each with `timeout`, until one attaches.
// Stops at once on an answer that another address cannot change (PermissionDenied: wrong
// token; InvalidArgument: another job). Otherwise the status of the last try, its message
// naming every address tried and why each failed, and the devices UCX was limited to when it
// was. `*nothing_listens` (if given) is set when every address refused the TCP connection: the
// job behind them has stopped.
Status AttachAtAnyAddress(transport::Transport& transport, Rank rank,
                          const std::vector<std::string>& addresses,
                          std::span<const std::byte> credential, Nanos timeout,
                          bool* nothing_listens = nullptr);

}  // namespace mooncake::client
