#include "transport/shutdown.h"

#include "common/log.h"

namespace mooncake::transport {

void StopAndClose(Transport& transport, Rpc& rpc, Nanos timeout) {
  transport.BeginShutdown();
  rpc.Stop();
  Status closed = transport.Close(timeout);
  if (!closed.ok()) log::Warn("closing the transport: {}", closed.ToString());
}

}  // namespace mooncake::transport
