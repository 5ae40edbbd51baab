// `mooncake eval` wiring: runs the evaluation serially, or, when started by an MPI launcher with
// more than one rank, spreads the sweep points over the ranks through an MPI-backed SweepComm.
#pragma once

namespace mooncake::app {

int RunEval(int argc, char** argv);  // argv[0] is "eval"

}  // namespace mooncake::app
