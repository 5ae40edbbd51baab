#include "serve/workload.h"

#include <cmath>

namespace mooncake::serve {

Result<Workload> LoadWorkload(const WorkloadSpec& spec) {
  Workload w;
  if (spec.none) {
    w.source = "HTTP requests only";
    return w;
  }
  if (!spec.trace_path.empty()) {
    auto requests = trace::ReadTrace(spec.trace_path, spec.trace_read, &w.stats);
    if (!requests.ok()) return requests.status();
    w.requests = std::move(*requests);
    w.source = spec.trace_path;
  } else {
    w.requests = trace::GenerateSynthetic(spec.synthetic);
    w.source = "synthetic (seed " + std::to_string(spec.synthetic.seed) + ", " +
               std::to_string(w.requests.size()) + " requests)";
  }
  if (w.requests.empty()) return InvalidArgument("the workload has no requests (" + w.source + ")");
  // Requests are numbered by position: the conductor indexes its records by id. Faster replays
  // divide the arrival times (rounded to the trace's millisecond).
  for (size_t i = 0; i < w.requests.size(); ++i) {
    w.requests[i].id = RequestId{i};
    if (spec.max_output > 0 && w.requests[i].output_length > spec.max_output) {
      w.requests[i].output_length = static_cast<int32_t>(spec.max_output);
    }
    if (spec.load_scale != 1.0) {
      w.requests[i].timestamp_ms = std::llround(w.requests[i].timestamp_ms / spec.load_scale);
    }
  }
  return w;
}

}  // namespace mooncake::serve
