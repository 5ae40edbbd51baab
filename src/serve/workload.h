// The requests a serving run replays: a Mooncake trace (validated line by line, with offset /
// limit / skip_invalid) or the seeded synthetic workload. The live job loads it before MPI
// starts, so a malformed line fails the job before any rank works.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"
#include "trace/trace_request.h"

namespace mooncake::serve {

struct Workload {
  std::vector<trace::TraceRequest> requests;
  trace::TraceReadStats stats;  // lines, skipped (trace only)
  std::string source;           // the trace path, or "synthetic (seed N)"
};

// Where the requests come from: the trace at `trace_path`, or (empty path) `synthetic`.
struct WorkloadSpec {
  std::string trace_path;
  trace::TraceReadOptions trace_read;
  trace::SyntheticConfig synthetic;
  double load_scale = 1.0;  // arrival times divided by it (as `mooncake eval --load.scale`)
  // Output lengths capped to this (engine.max_output under the reference engine, whose decode
  // really computes every token); 0: as the workload says.
  int64_t max_output = 0;
  // No workload at all: the requests come from elsewhere (serve.http with no trace).
  bool none = false;
};

Result<Workload> LoadWorkload(const WorkloadSpec& spec);

}  // namespace mooncake::serve
