#include "app/serve/workload.h"

#include "trace/synthetic.h"

namespace mooncake::app::serve {

Result<Workload> LoadWorkload(const JobOptions& o) {
  Workload w;
  if (!o.sched.trace_path.empty()) {
    auto requests = trace::ReadTrace(o.sched.trace_path, o.sched.trace_read, &w.stats);
    if (!requests.ok()) return requests.status();
    w.requests = std::move(*requests);
    w.source = o.sched.trace_path;
  } else {
    w.requests = trace::GenerateSynthetic(o.synthetic);
    w.source = "synthetic (seed " + std::to_string(o.synthetic.seed) + ", " +
               std::to_string(w.requests.size()) + " requests)";
  }
  if (w.requests.empty()) return InvalidArgument("the workload has no requests (" + w.source + ")");
  // Requests are numbered by position: the conductor indexes its records by id.
  for (size_t i = 0; i < w.requests.size(); ++i) w.requests[i].id = RequestId{i};
  return w;
}

}  // namespace mooncake::app::serve
