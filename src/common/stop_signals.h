// SIGTERM, SIGINT and SIGUSR1 as a request to stop in order (a service's end: its spills
// finished, files closed, reports collected), read by polling. SIGUSR1 is the one mpirun passes on
// to its ranks and leaves them to act on (Open MPI ends the job itself on SIGTERM and SIGINT, with
// SIGKILL a second later): launch/mooncake-mpirun turns a TERM or INT into it.
#pragma once

namespace mooncake {

// Installs the handler of the three signals: each sets the flag that StopSignalled() reads.
void InstallStopSignals();

// True once one of them arrived (async-signal-safe to set, safe to read from any thread).
bool StopSignalled();

}  // namespace mooncake
