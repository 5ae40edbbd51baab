// The requests a serving run replays: a Mooncake trace (--trace, validated line by line, with
// --trace.offset / --trace.limit / --trace.skip_invalid) or the seeded synthetic workload.
// Loaded before MPI starts, so a malformed line fails the job before any rank works.
#pragma once

#include <vector>

#include "app/options.h"
#include "trace/trace_reader.h"
#include "trace/trace_request.h"

namespace mooncake::app::serve {

struct Workload {
  std::vector<trace::TraceRequest> requests;
  trace::TraceReadStats stats;  // lines, skipped (trace only)
  std::string source;           // the trace path, or "synthetic (seed N)"
};

Result<Workload> LoadWorkload(const JobOptions& options);

}  // namespace mooncake::app::serve
