#pragma once

// The serving job's HTTP endpoint on the conductor (--serve.http): GET /metrics (the requests
// resolved so far by outcome and reject reason, TTFT and TBT histograms in model and wall time,
// prefix blocks reused, requests in flight, dead ranks, and the store's metadata master), GET
// /health and GET /v1/models. Metrics are collected at each scrape from the conductor's records.
// Completions over HTTP (POST /v1/completions) are not served yet.

#include <memory>
#include <string>

#include "common/status.h"
#include "http/http_server.h"
#include "http/prometheus_text.h"

namespace mooncake::serve {

class ServeNode;

// Appends the conductor's serving metrics (and the master's, when the node holds it) to `out`.
// `time_scale` converts model time to wall time (wall = model / time_scale).
void AppendServingMetrics(ServeNode& node, double time_scale, http::PrometheusText* out);

struct ServeHttpOptions {
  std::string host = "0.0.0.0";
  int port = 0;            // 0: any free port
  std::string model_name;  // /v1/models' id
  double time_scale = 1.0;
};

// Starts the endpoint; the node (a conductor, started) must outlive the returned server.
Result<std::unique_ptr<http::HttpServer>> StartServeHttp(const ServeHttpOptions& options,
                                                         ServeNode& node);

}  // namespace mooncake::serve
