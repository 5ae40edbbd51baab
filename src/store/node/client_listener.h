// How processes outside the job reach the store (docs/CLIENT.md): every rank of the store
// service listens, admitting only those that present the job token; the master's rank then
// answers the directory of where each store rank listens (MasterNode::ServeClients).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/wire_fields.h"
#include "transport/transport.h"

namespace mooncake::store {

// Where one rank accepts processes from outside the job (travels in the bootstrap's gather).
struct ListenerRecord {
  std::vector<std::string> hosts;  // addresses of the interfaces the transport may use
  uint16_t port = 0;
  // A standby conductor's liveness watch (cluster/liveness_link.h), at the same hosts; 0 on the
  // other ranks. Not for clients: the active conductor links to it.
  uint16_t liveness_port = 0;
  MC_WIRE_FIELDS(hosts, port, liveness_port)
};

// Listens on `config` for processes whose credential equals `token` (the job token's bytes).
// An error names the options store.listen / store.port.
Result<ListenerRecord> ListenForClients(transport::Transport& transport,
                                        const transport::ListenConfig& config,
                                        std::vector<std::byte> token);

}  // namespace mooncake::store
