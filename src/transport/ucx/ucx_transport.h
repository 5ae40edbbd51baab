// The UCX backend of Transport. The only folder that includes <ucp/...> (with its .cc files).
#pragma once

#include <memory>

#include "transport/transport.h"
#include "transport/ucx/ucx_config.h"

namespace mooncake::transport {

// Creates the UCX context and a multi-threaded worker, and starts its progress thread.
// Endpoints are created by ConnectAll once every rank's LocalAddress() has been exchanged.
Result<std::unique_ptr<Transport>> CreateUcxTransport(const UcxConfig& config, Rank self,
                                                      int world_size);

}  // namespace mooncake::transport
