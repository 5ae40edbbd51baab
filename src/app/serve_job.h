// The serving job (job.mode = serve): every role of a live Mooncake cluster on real ranks, real
// UCX transfers of real (scaled) KV bytes, and the conductor's scheduler in the middle. The roles
// live in src/serve; this file wires them to the MPI job: bootstrap barriers, the SSD tier, the
// final gather of reports and the run folder.
#pragma once

#include "app/job_context.h"
#include "app/options.h"
#include "serve/serve_config.h"
#include "serve/serve_node.h"
#include "serve/workload.h"

namespace mooncake::app {

// The serving roles' settings and workload source, from the job's options.
serve::ServeConfig ServeConfigFrom(const JobOptions& options);
serve::WorkloadSpec WorkloadSpecFrom(const JobOptions& options);
// Every store rank's segment, from the bootstrap records. Aborts the job when a store rank
// exported no segment.
store::StoreTopology StoreTopologyOf(JobContext& ctx);
// What a ServeNode takes from the job: this rank's transport and RPC, who plays which role, the
// store ranks' segments (from the bootstrap records), this rank's registered buffer. Aborts the
// job when a store rank exported no segment.
serve::ServeNodeDeps NodeDeps(JobContext& ctx);

// One line on stdout, for rank 0 at start, when a rank loss would end the job because its
// launcher is fail-stop (plain mpirun, srun without --kill-on-bad-exit=0) although the job asks
// to survive it (job.survive_rank_loss = on). The serving job and the store service print it.
void PrintSurvivalHint(const JobOptions& options);

// Every rank calls it (the start is collective over MPI; the end goes over the RPC, so ranks
// that died are skipped). `workload` is only read on the conductor. Returns the process exit
// code: 0 when every request was completed or rejected (none lost or failed) and no KV block
// failed verification. `*peers_lost`: a rank was declared dead (MPI_Finalize would hang).
int RunServeJob(JobContext& ctx, const serve::Workload& workload, bool* peers_lost);

}  // namespace mooncake::app
