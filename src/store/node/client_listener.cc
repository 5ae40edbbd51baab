#include "store/node/client_listener.h"

#include "common/host_addresses.h"
#include "common/secret.h"

namespace mooncake::store {

Result<ListenerRecord> ListenForClients(transport::Transport& transport,
                                        const transport::ListenConfig& config,
                                        std::vector<std::byte> token) {
  auto port = transport.Listen(config, [token](std::span<const std::byte> credential) {
    return SecretEquals(credential, std::span<const std::byte>(token));
  });
  if (!port.ok()) return port.status().WithContext("store.listen / store.port");
  // Only addresses of the interfaces UCX may use: a connection through another is refused.
  return ListenerRecord{ListenerAddresses(config.address, transport.NetDevices()), *port};
}

}  // namespace mooncake::store
