// The serving job (job.mode = serve): every role of a live Mooncake cluster on real ranks, real
// UCX transfers of real (scaled) KV bytes, and the conductor's scheduler in the middle.
#pragma once

#include "app/job_context.h"
#include "app/serve/workload.h"

namespace mooncake::app::serve {

// Collective. `workload` is only read on the conductor. Returns the process exit code: 0 when
// every request was completed or rejected (none lost) and no KV block failed verification.
int RunServeJob(JobContext& ctx, const Workload& workload);

}  // namespace mooncake::app::serve
