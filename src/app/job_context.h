// Everything a role needs once bootstrap is done. Owned by Run() (run.cc); roles borrow it.
#pragma once

#include <memory>
#include <vector>

#include "app/options.h"
#include "cluster/bootstrap.h"
#include "cluster/peer_exchange.h"
#include "cluster/role_table.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::app {

struct JobContext {
  const JobOptions& options;
  const cluster::Bootstrap& mpi;
  const cluster::RoleTable& roles;
  transport::Transport& transport;
  transport::Rpc& rpc;
  std::vector<cluster::PeerInfo> peers;  // index = rank
  std::byte* local_buffer = nullptr;     // the registered buffer of this rank (may be null)
  size_t local_buffer_size = 0;

  int rank() const { return mpi.rank(); }
  cluster::Role role() const { return roles.role(mpi.rank()); }
};

}  // namespace mooncake::app
