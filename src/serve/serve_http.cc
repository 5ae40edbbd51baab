#include "serve/serve_http.h"

#include <nlohmann/json.hpp>

#include <map>

#include "serve/master_metrics.h"
#include "serve/serve_node.h"

namespace mooncake::serve {

namespace {

// Bucket bounds in seconds: TTFT spans queueing (seconds to the 30 s SLO and past it), TBT the
// decode step (tens of ms to the 100-300 ms SLOs).
const std::vector<double> kTtftBounds = {0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60};
const std::vector<double> kTbtBounds = {0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1};

struct Histogram {
  explicit Histogram(const std::vector<double>& bounds) : counts(bounds.size() + 1, 0) {}
  void Add(const std::vector<double>& bounds, double v) {
    size_t i = 0;
    while (i < bounds.size() && v > bounds[i]) ++i;
    ++counts[i];
    sum += v;
  }
  std::vector<uint64_t> counts;
  double sum = 0;
};

void AddHistograms(http::PrometheusText& t, const char* name, const char* help,
                   const std::vector<double>& bounds, const std::vector<double>& model_s,
                   double time_scale) {
  Histogram model(bounds), wall(bounds);
  for (double v : model_s) {
    model.Add(bounds, v);
    wall.Add(bounds, v / time_scale);
  }
  t.Histogram(name, help, bounds, model.counts, model.sum, {{"clock", "model"}});
  t.Histogram(name, help, bounds, wall.counts, wall.sum, {{"clock", "wall"}});
}

}  // namespace

void AppendServingMetrics(ServeNode& node, double time_scale, http::PrometheusText* out) {
  http::PrometheusText& t = *out;
  ConductorRole* conductor = node.conductor_role();
  if (conductor != nullptr) {
    const ConductorRole::Snapshot s = conductor->TakeSnapshot();
    std::map<std::string, uint64_t> by_outcome = {
        {"completed", 0}, {"rejected", 0}, {"failed", 0}, {"lost", 0}};
    std::map<std::string, uint64_t> by_reason;
    std::vector<double> ttft, tbt;
    uint64_t blocks = 0, hit = 0;
    for (const trace::RequestRecord& r : s.resolved) {
      ++by_outcome[trace::OutcomeName(r.outcome)];
      if (r.outcome == trace::Outcome::kRejected) ++by_reason[r.reject_reason];
      if (r.outcome == trace::Outcome::kCompleted) {
        ttft.push_back(r.ttft_s);
        tbt.push_back(r.tbt_s);
      }
      if (r.prefilled) {
        blocks += static_cast<uint64_t>(r.blocks);
        hit += static_cast<uint64_t>(r.prefix_blocks_hit);
      }
    }
    for (const auto& [outcome, n] : by_outcome) {
      t.Counter("mooncake_requests_total", "Requests resolved, by outcome.", static_cast<double>(n),
                {{"outcome", outcome}});
    }
    for (const auto& [reason, n] : by_reason) {
      t.Counter("mooncake_requests_rejected_total", "Rejected requests, by reason.",
                static_cast<double>(n), {{"reason", reason}});
    }
    t.Gauge("mooncake_requests_in_flight", "Requests dispatched and not yet resolved.",
            static_cast<double>(s.in_flight));
    t.Gauge("mooncake_requests_in_workload", "Requests in the trace or synthetic workload.",
            static_cast<double>(s.requests));
    AddHistograms(t, "mooncake_ttft_seconds",
                  "Time to first token of completed requests (model clock, and wall = model / "
                  "time scale).",
                  kTtftBounds, ttft, time_scale);
    AddHistograms(t, "mooncake_tbt_seconds",
                  "Time between tokens of completed requests (mean of the longest 10 % of gaps).",
                  kTbtBounds, tbt, time_scale);
    t.Counter("mooncake_prefix_blocks_total", "Prompt blocks of requests that reached prefill.",
              static_cast<double>(blocks));
    t.Counter("mooncake_prefix_blocks_hit_total", "Of those, blocks reused from a cache.",
              static_cast<double>(hit));
  }
  const size_t dead = node.dead_ranks().size();
  if (store::MasterService* master = node.master()) {
    std::vector<Rank> store_ranks;
    for (const auto& seg : node.topology().segments) store_ranks.push_back(seg.rank);
    AppendMasterMetrics(*master, store_ranks, dead, &t);
  } else {
    t.Gauge("mooncake_store_dead_ranks", "Ranks the failure detector declared dead.",
            static_cast<double>(dead));
  }
}

Result<std::unique_ptr<http::HttpServer>> StartServeHttp(const ServeHttpOptions& options,
                                                         ServeNode& node) {
  http::ServerOptions server;
  server.host = options.host;
  server.port = options.port;
  const double time_scale = options.time_scale;
  auto metrics = [&node, time_scale](const http::Request&) {
    http::PrometheusText text;
    AppendServingMetrics(node, time_scale, &text);
    return http::Response{200, http::PrometheusText::kContentType, text.Text(), {}};
  };
  auto health = [&node](const http::Request&) {
    const bool ready = node.conductor_role() != nullptr;
    return http::Response{
        ready ? 200 : 503, "text/plain; charset=utf-8", ready ? "ok\n" : "not ready\n", {}};
  };
  const std::string models =
      nlohmann::json{
          {"object", "list"},
          {"data", {{{"id", options.model_name}, {"object", "model"}, {"owned_by", "mooncake"}}}}}
          .dump();
  auto list_models = [models](const http::Request&) {
    return http::Response{200, "application/json", models, {}};
  };
  return http::HttpServer::Start(server, {{"GET", "/metrics", metrics},
                                          {"GET", "/health", health},
                                          {"GET", "/v1/models", list_models}});
}

}  // namespace mooncake::serve
