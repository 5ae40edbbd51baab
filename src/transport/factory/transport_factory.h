// The one place that picks a transport backend (STYLE.md habit 6).
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"
#include "transport/ucx/ucx_config.h"

namespace mooncake::transport {

enum class Backend { kUcx, kLoopback };

struct TransportConfig {
  Backend backend = Backend::kUcx;
  UcxConfig ucx;
};

// Creates this rank's transport. For kLoopback use CreateLoopbackCluster (one process, N ranks).
Result<std::unique_ptr<Transport>> CreateTransport(const TransportConfig& config, Rank self,
                                                   int world_size);

}  // namespace mooncake::transport
