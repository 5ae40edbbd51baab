// `mooncake p2p` on one rank (docs/P2P.md): the checks that need no bootstrap (exit 2), then,
// over the job's bootstrap, the UCX transport and the RPC, the peer exchange, and P2pCommand.
// Every rank leaves the bootstrap (cluster::Bootstrap::Leave) before the distribution, so a
// rank may die alone (docs/FAULTS.md). src/app starts MPI between the two.
#pragma once

#include "cluster/bootstrap.h"
#include "common/status.h"
#include "p2p/p2p_options.h"

namespace mooncake::p2p {

// Checks this rank can do before the bootstrap (`rank` and `world` from the launcher's
// environment; world 0: unknown): a source rank can read PATH, a receiving rank can create DIR,
// and DIR is not PATH. InvalidArgument names the option and the rank.
Status CheckBeforeBootstrap(const P2pOptions& o, int rank, int world);

// Collective over `bootstrap` until it is left. Returns the process exit code (docs/P2P.md).
int RunP2pJob(P2pOptions o, const cluster::Bootstrap& bootstrap);

}  // namespace mooncake::p2p
