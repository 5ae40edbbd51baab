// Starts MPI, assigns roles, brings up the transport and runs the job on this rank.
#pragma once

#include "app/options.h"

namespace mooncake::app {

// The number of ranks the launcher will start, read from its environment before MPI_Init
// (Open MPI, PMIx/Slurm, MPICH/Hydra), or 0 when unknown. Lets role counts be checked early.
int LauncherWorldSize();
// This process's rank as the launcher announced it (before MPI_Init), or -1 without a launcher.
int LauncherRank();

// Runs the whole job on this rank; returns the process exit code.
int Run(const JobOptions& options, int* argc, char*** argv);

}  // namespace mooncake::app
