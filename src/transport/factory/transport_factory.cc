#include "transport/factory/transport_factory.h"

#include "transport/ucx/ucx_transport.h"

namespace mooncake::transport {

Result<std::unique_ptr<Transport>> CreateTransport(const TransportConfig& config, Rank self,
                                                   int world_size) {
  switch (config.backend) {
    case Backend::kUcx:
      return CreateUcxTransport(config.ucx, self, world_size);
    case Backend::kLoopback:
      return NotSupported(
          "the loopback backend serves several ranks in one process: "
          "use CreateLoopbackCluster");
  }
  return Internal("unknown transport backend");
}

}  // namespace mooncake::transport
