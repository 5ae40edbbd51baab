// The default job of the foundation: proves every plane works end to end.
//  1. every rank pings every other rank over the RPC (RTT min/median/max);
//  2. each prefill rank writes a block into a store rank's registered DRAM (one-sided WRITE);
//  3. each decode rank reads a block back (one-sided READ) and verifies its bytes;
//  4. the conductor tells every rank to stop, gathers the results and writes summary.json.
#pragma once

#include "app/job_context.h"

namespace mooncake::app {

// Collective. Returns the process exit code (0 when every block verified and nothing hung).
int RunFoundationJob(JobContext& ctx);

}  // namespace mooncake::app
