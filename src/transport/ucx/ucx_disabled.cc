// The disabled twin of the UCX backend, built when CMake finds no UCX: the job still builds
// (loopback, the simulator, `mooncake eval`) and a UCX run says why it cannot start.
#include "transport/ucx/ucx_transport.h"

namespace mooncake::transport {

Result<std::unique_ptr<Transport>> CreateUcxTransport(const UcxConfig& config, Rank self,
                                                      int world_size) {
  (void)config;
  (void)self;
  (void)world_size;
  return NotSupported(
      "this mooncake was built without UCX (CMake found no ucx package): install libucx-dev "
      "and rebuild");
}

}  // namespace mooncake::transport
