#pragma once

// The serving job's HTTP endpoint on the conductor (--serve.http): GET /metrics (the requests
// resolved so far by outcome and reject reason, TTFT and TBT histograms in model and wall time,
// prefix blocks reused, requests in flight, dead ranks, and the store's metadata master), GET
// /health and GET /v1/models. Metrics are collected at each scrape from the conductor's records.
// POST /v1/completions (completions.h) hands a client's request to the conductor (the same
// scheduler as the trace's requests) and answers when it resolves: 200 with the tokens, 429 with
// Retry-After when the scheduler rejected it, 400 for a bad body, 503 while the job is not
// taking requests. With "stream": true the tokens come as server-sent events as they are
// generated (the prefill's first, then the decode rank's DecodeTokens). POST /admin/stop
// (the stop token of endpoint.json in the body) ends the serving: `mooncake serve stop`.

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "http/http_server.h"
#include "http/prometheus_text.h"
#include "serve/completions.h"

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
  CompletionLimits limits;
  int32_t eos_token_id = -1;      // -1: none (the cost model's synthetic tokens)
  bool synthetic_tokens = false;  // the cost model: the response says its tokens are not real
  std::string stop_token;         // POST /admin/stop must carry it
  std::chrono::milliseconds request_timeout{600'000};  // a completion waited for at most
  // A connection is closed when its next request has not come, or a read or a write of it
  // stalled, this long (serve.http_idle).
  std::chrono::milliseconds idle_timeout{5'000};
  // Connections served at once, a thread each (a completion holds one while it runs, an idle
  // connection until the read deadline, 5 s); each needs a file descriptor of the conductor.
  int threads = 4096;
};

// Starts the endpoint; the node (a conductor, started) must outlive the returned server.
Result<std::unique_ptr<http::HttpServer>> StartServeHttp(const ServeHttpOptions& options,
                                                         ServeNode& node);

}  // namespace mooncake::serve
