#include "serve/serve_endpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "common/replace_file.h"

namespace mooncake::serve {

// A stop token from /dev/urandom: only who can read endpoint.json (mode 0600) can stop the job.
std::string NewStopToken() {
  std::string token;
  if (std::FILE* f = std::fopen("/dev/urandom", "rb")) {
    unsigned char bytes[16];
    if (std::fread(bytes, 1, sizeof bytes, f) == sizeof bytes) {
      for (unsigned char b : bytes) token += fmt::format("{:02x}", b);
    }
    std::fclose(f);
  }
  return token;
}

ServeHttpOptions EndpointOptions(const ServeOptions& serve, const engine::EngineOptions& options,
                                 const JobEngine& engine, const std::string& cost_model_name,
                                 double time_scale) {
  ServeHttpOptions o;
  o.port = serve.http;
  o.model_name = options.reference ? engine.layout->model_name() : cost_model_name;
  o.time_scale = time_scale;
  o.limits.vocab_size = engine.vocab_size;
  if (options.max_output > 0) o.limits.max_tokens = options.max_output;
  o.limits.default_max_tokens = std::min<int64_t>(16, o.limits.max_tokens);
  o.eos_token_id = engine.eos_token_id;
  o.synthetic_tokens = !options.reference;
  o.stop_token = NewStopToken();
  o.request_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(serve.job_deadline);
  o.idle_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(serve.http_idle);
  return o;
}

Result<std::unique_ptr<http::HttpServer>> StartServeEndpoint(const ServeHttpOptions& options,
                                                             ServeNode& node,
                                                             const std::string& host,
                                                             const std::string& run_dir) {
  auto server = StartServeHttp(options, node);
  if (!server.ok()) return server.status();
  const int port = (*server)->port();
  const std::string url = "http://" + host + ":" + std::to_string(port);
  if (!run_dir.empty()) {
    const nlohmann::json j = {
        {"url", url}, {"host", host}, {"port", port}, {"stop_token", options.stop_token}};
    // 0600: it holds the stop token. Replaced whole, since clients poll for it.
    const Status written = ReplaceFile(run_dir + "/endpoint.json", j.dump() + "\n", 0600);
    if (!written.ok()) log::Error("{}", written.message());
  }
  std::printf(
      "http: %s (POST /v1/completions; GET /metrics, /health, /v1/models; stop with mooncake "
      "serve stop %s/endpoint.json)\n",
      url.c_str(), run_dir.c_str());
  std::fflush(stdout);
  return std::move(*server);
}

namespace {

// Set by the stop signals' handler, read by StopSignalWatch's thread.
volatile std::sig_atomic_t g_serve_stop_signal = 0;

extern "C" void OnServeStopSignal(int) { g_serve_stop_signal = 1; }

}  // namespace

void InstallServeStopSignals(bool conductor) {
  struct sigaction sa {};
  sa.sa_handler = conductor ? OnServeStopSignal : SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);
  if (!conductor) return;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

StopSignalWatch::StopSignalWatch(ConductorRole& conductor)
    : thread_([this, &conductor] {
        while (!done_.load()) {
          if (g_serve_stop_signal != 0) {
            std::printf("stop signal: no new requests; draining those in flight\n");
            std::fflush(stdout);
            conductor.RequestStop();
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }) {}

StopSignalWatch::~StopSignalWatch() {
  done_ = true;
  thread_.join();
}

}  // namespace mooncake::serve
