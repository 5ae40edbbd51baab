#include "serve/serve_http.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <map>
#include <mutex>
#include <utility>

#include "serve/conductor_role.h"
#include "serve/master_metrics.h"
#include "serve/serve_node.h"
#include "trace/trace_request.h"

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

// Responses by path and status, for /metrics: bad input is counted, not only answered.
struct HttpCounts {
  void Add(const std::string& path, int status) {
    std::lock_guard<std::mutex> lock(mutex);
    ++counts[{path, status}];
  }
  void Append(http::PrometheusText& t) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [key, n] : counts) {
      t.Counter("mooncake_http_responses_total", "HTTP responses, by path and status code.",
                static_cast<double>(n),
                {{"path", key.first}, {"code", std::to_string(key.second)}});
    }
  }
  std::mutex mutex;
  std::map<std::pair<std::string, int>, uint64_t> counts;
};

http::Response Json(int status, std::string body) {
  return http::Response{status, "application/json", std::move(body), {}};
}

http::Response Error(int status, const std::string& message, const std::string& type) {
  http::Response r = Json(status, ErrorBody(message, type, status));
  if (status == 429 || status == 503) r.headers.emplace_back("Retry-After", "1");
  return r;
}

// The JSON objects of one completion's answer: a chunk of tokens, and the usage.
class CompletionChunks {
 public:
  CompletionChunks(const ServeHttpOptions& o, const CompletionRequest& req, uint64_t id)
      : synthetic_(o.synthetic_tokens),
        prompt_tokens_(req.prompt_ids.size()),
        cid_("cmpl-" + std::to_string(id)),
        created_(static_cast<int64_t>(std::time(nullptr))),
        model_(req.model.empty() ? o.model_name : req.model) {}

  nlohmann::json Chunk(const std::vector<int32_t>& ids, const nlohmann::json& reason) const {
    nlohmann::json c = {{"index", 0},
                        {"text", ""},
                        {"token_ids", ids},
                        {"logprobs", nullptr},
                        {"finish_reason", reason}};
    nlohmann::json j = {{"id", cid_},
                        {"object", "text_completion"},
                        {"created", created_},
                        {"model", model_},
                        {"choices", {c}}};
    if (synthetic_) j["synthetic_tokens"] = true;
    return j;
  }
  // The last chunk: no tokens, the finish reason and the usage.
  nlohmann::json Last(size_t completion_tokens, const std::string& finish) const {
    nlohmann::json j = Chunk({}, finish);
    j["usage"] = {{"prompt_tokens", prompt_tokens_},
                  {"completion_tokens", completion_tokens},
                  {"total_tokens", prompt_tokens_ + completion_tokens}};
    return j;
  }

 private:
  bool synthetic_;
  size_t prompt_tokens_;
  std::string cid_;
  int64_t created_;
  std::string model_;
};

std::string Event(const std::string& data) { return "data: " + data + "\n\n"; }

// An error answer's body as one event (its JSON without the line end).
std::string ErrorEvent(const http::Response& error) {
  std::string body = error.body;
  while (!body.empty() && body.back() == '\n') body.pop_back();
  return Event(body);
}

// The tokens a client gets of `output_ids` (so far), cut after the end of sequence unless
// asked not to.
std::vector<int32_t> Visible(const ServeHttpOptions& o, const CompletionRequest& req,
                             const std::vector<int32_t>& output_ids, std::string* finish) {
  return ClientTokens(output_ids, req.ignore_eos || o.eos_token_id < 0, o.eos_token_id, finish);
}

// The answer to a request that resolved without completing: 429 for a scheduler rejection,
// 503 for a request that failed or was lost.
http::Response NotCompleted(uint64_t id, const trace::RequestRecord& record) {
  if (record.outcome == trace::Outcome::kRejected) {
    return Error(429, "rejected by the scheduler (" + record.reject_reason + "): retry later",
                 "overloaded");
  }
  return Error(503,
               "request " + std::to_string(id) + " " + trace::OutcomeName(record.outcome) +
                   (record.reject_reason.empty() ? "" : " (" + record.reject_reason + ")"),
               "unavailable");
}

// A non-streamed completion's answer: one JSON object.
http::Response CompletionBody(const ServeHttpOptions& o, const CompletionRequest& req, uint64_t id,
                              const std::vector<int32_t>& output_ids) {
  std::string finish;
  const std::vector<int32_t> tokens = Visible(o, req, output_ids, &finish);
  const CompletionChunks chunks(o, req, id);
  nlohmann::json j = chunks.Last(tokens.size(), finish);
  j["choices"][0]["token_ids"] = tokens;
  return Json(200, j.dump() + "\n");
}

// A streamed completion: server-sent events, one per token as the conductor gets it (the
// prefill's first token, then the decode rank's DecodeTokens), the last with the finish reason
// and usage, then [DONE]. The status (200, or 429 / 503 / 504 as for a non-streamed request) is
// chosen when the first token or the request's end comes; an end other than completion after
// that (rejected at the decode rank's admission, a rank lost twice) is an error event.
http::Response StreamedCompletion(const ServeHttpOptions& o, ConductorRole& conductor,
                                  const CompletionRequest& req, uint64_t id) {
  const auto deadline = std::chrono::steady_clock::now() + o.request_timeout;
  ConductorRole::OnlineResult first = conductor.AwaitTokens(id, 0, o.request_timeout);
  if (!first.resolved && first.output_ids.empty()) {
    return Error(504, "request " + std::to_string(id) + " did not start within the timeout",
                 "timeout");
  }
  if (first.resolved && first.record.outcome != trace::Outcome::kCompleted) {
    return NotCompleted(id, first.record);
  }
  http::Response r{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
  // The options are copied: the stream runs after this handler has returned.
  r.stream = [o, &conductor, req, id, first = std::move(first),
              deadline](const http::StreamWrite& write) {
    const CompletionChunks chunks(o, req, id);
    std::vector<int32_t> all = first.output_ids;
    ConductorRole::OnlineResult at = first;
    size_t sent = 0;
    for (;;) {
      std::string finish;
      const std::vector<int32_t> visible = Visible(o, req, all, &finish);
      std::string events;
      for (; sent < visible.size(); ++sent) {
        events += Event(chunks.Chunk({visible[sent]}, nullptr).dump());
      }
      if (at.resolved) {
        events += at.record.outcome == trace::Outcome::kCompleted
                      ? Event(chunks.Last(visible.size(), finish).dump())
                      : ErrorEvent(NotCompleted(id, at.record));
        write(events + Event("[DONE]"));
        return;
      }
      // A client that went away ends its stream here; its request runs to its end.
      if (!events.empty() && !write(events)) return;
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= Nanos(0)) {
        write(ErrorEvent(
                  Error(504, "request " + std::to_string(id) + " did not finish within the timeout",
                        "timeout")) +
              Event("[DONE]"));
        return;
      }
      at = conductor.AwaitTokens(id, all.size(), std::chrono::duration_cast<Nanos>(left));
      all.insert(all.end(), at.output_ids.begin(), at.output_ids.end());
    }
  };
  return r;
}

http::Response Complete(const ServeHttpOptions& o, ServeNode& node, const http::Request& request) {
  auto req = ParseCompletionRequest(request.body, o.limits);
  if (!req.ok()) return Error(400, req.status().message(), "invalid_request_error");
  if (!req->model.empty() && req->model != o.model_name) {
    return Error(
        404, "model " + req->model + " is not served here (GET /v1/models: " + o.model_name + ")",
        "invalid_request_error");
  }
  ConductorRole* conductor = node.conductor_role();
  if (conductor == nullptr) return Error(503, "the job is not ready", "unavailable");
  std::vector<BlockHash> hashes = PromptBlockHashes(req->prompt_ids, trace::kTraceBlockTokens);
  auto id = conductor->Submit(req->prompt_ids, req->max_tokens, std::move(hashes), req->stream);
  if (!id.ok()) return Error(503, id.status().message(), "unavailable");
  if (req->stream) return StreamedCompletion(o, *conductor, *req, *id);
  const ConductorRole::OnlineResult r = conductor->Await(*id, o.request_timeout);
  if (!r.resolved) {
    return Error(504, "request " + std::to_string(*id) + " did not finish within the timeout",
                 "timeout");
  }
  if (r.record.outcome != trace::Outcome::kCompleted) return NotCompleted(*id, r.record);
  return CompletionBody(o, *req, *id, r.output_ids);
}

http::Response Stop(const ServeHttpOptions& o, ServeNode& node, const http::Request& request) {
  const nlohmann::json j = nlohmann::json::parse(request.body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("token") || !j["token"].is_string()) {
    return Error(400, "the body must be {\"token\": ...} from endpoint.json",
                 "invalid_request_error");
  }
  if (o.stop_token.empty() || j["token"].get<std::string>() != o.stop_token) {
    return Error(403, "wrong stop token", "permission_error");
  }
  ConductorRole* conductor = node.conductor_role();
  if (conductor == nullptr) return Error(503, "the job is not ready", "unavailable");
  conductor->RequestStop();
  return Json(202, "{\"stopping\": true}\n");
}

// Counts each response by path and status.
http::Handler Counted(std::shared_ptr<HttpCounts> counts, std::string path, http::Handler h) {
  return [counts, path, h = std::move(h)](const http::Request& r) {
    http::Response out = h(r);
    counts->Add(path, out.status);
    return out;
  };
}

// Each instance's queue and the scheduler's prediction for it, what early rejection acts on.
void AddInstanceLoads(http::PrometheusText& t, const ConductorRole::Snapshot& s) {
  for (size_t i = 0; i < s.prefill.size(); ++i) {
    const http::Labels l = {{"instance", std::to_string(i)}};
    t.Gauge("mooncake_prefill_queue_requests", "Requests queued or running on a prefill instance.",
            s.prefill[i].requests, l);
    t.Gauge("mooncake_prefill_queue_predicted_seconds",
            "Predicted model time until a prefill instance's queue drains.",
            s.prefill[i].predicted_s, l);
  }
  for (size_t i = 0; i < s.decode.size(); ++i) {
    const http::Labels l = {{"instance", std::to_string(i)}};
    t.Gauge("mooncake_decode_batch_requests", "Requests in a decode instance's batch.",
            s.decode[i].requests, l);
    t.Gauge("mooncake_decode_batch_tokens", "Context tokens of a decode instance's batch.",
            static_cast<double>(s.decode[i].decode_tokens), l);
    // An idle instance predicts no step: reported as 0 rather than +Inf.
    const double tbt = std::isfinite(s.decode[i].predicted_s) ? s.decode[i].predicted_s : 0.0;
    t.Gauge("mooncake_decode_predicted_tbt_seconds",
            "Predicted model time of a decode instance's next step.", tbt, l);
  }
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
    AddInstanceLoads(t, s);
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
  server.threads = options.threads;
  server.read_timeout = options.idle_timeout;
  server.write_timeout = options.idle_timeout;
  const double time_scale = options.time_scale;
  auto counts = std::make_shared<HttpCounts>();
  auto metrics = [&node, time_scale, counts](const http::Request&) {
    http::PrometheusText text;
    AppendServingMetrics(node, time_scale, &text);
    counts->Append(text);
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
  auto complete = [options, &node](const http::Request& r) { return Complete(options, node, r); };
  auto stop = [options, &node](const http::Request& r) { return Stop(options, node, r); };
  return http::HttpServer::Start(
      server, {{"GET", "/metrics", metrics},
               {"GET", "/health", health},
               {"GET", "/v1/models", list_models},
               {"POST", "/v1/completions", Counted(counts, "/v1/completions", complete)},
               {"POST", "/admin/stop", Counted(counts, "/admin/stop", stop)}});
}

}  // namespace mooncake::serve
