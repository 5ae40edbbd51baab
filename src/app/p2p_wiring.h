// `mooncake p2p` wiring: options, checks that need no MPI (exit 2), MPI for the bootstrap only
// (every rank then leaves MPI, so a rank may die alone: docs/FAULTS.md), the UCX transport and
// the RPC, then p2p::P2pCommand on every rank (docs/P2P.md).
#pragma once

namespace mooncake::app {

int RunP2p(int argc, char** argv);  // argv[0] is "p2p"

}  // namespace mooncake::app
