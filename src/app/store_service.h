// The store as a service (job.mode = store, docs/CLIENT.md): rank 0 is the store's metadata
// master, every other rank a store rank (its DRAM segment, and the HDF5 tier with store.ssd =
// on). Rank 0 and every store rank listen for processes outside the job (src/client), and rank 0
// writes the connection file they attach with. The job runs until SIGTERM or SIGINT reaches
// rank 0 or a client sends `mooncake store stop FILE`; then it stops in order (spills finished,
// files closed, every store rank's report collected) and exits 0.
#pragma once

#include "app/job_context.h"

namespace mooncake::app {

// Every rank calls it (its start is collective over MPI; its end goes over the RPC). Returns
// the process exit code. `*peers_lost`: a rank was declared dead (MPI_Finalize would hang).
int RunStoreService(JobContext& ctx, bool* peers_lost);

}  // namespace mooncake::app
