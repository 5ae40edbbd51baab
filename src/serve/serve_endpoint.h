// The conductor's HTTP endpoint as the serving job runs it (serve.http, docs/HTTP.md): started
// over StartServeHttp, its address printed and written to <run folder>/endpoint.json with the
// stop token (mode 0600: only who can read it can stop the job); and the stop signals that stop
// the serving as `mooncake serve stop` does.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "engine/engine_options.h"
#include "http/http_server.h"
#include "serve/conductor_role.h"
#include "serve/job_engine.h"
#include "serve/serve_http.h"
#include "serve/serve_node.h"
#include "serve/serve_options.h"

namespace mooncake::serve {

// 32 hex digits from /dev/urandom (empty when it cannot be read).
std::string NewStopToken();

// The endpoint's settings: serve.http's port and the serving deadlines (`serve`), the model the
// job runs (`engine`: the reference model's name, vocabulary and end token, or `cost_model_name`
// with synthetic tokens), a fresh stop token.
ServeHttpOptions EndpointOptions(const ServeOptions& serve, const engine::EngineOptions& options,
                                 const JobEngine& engine, const std::string& cost_model_name,
                                 double time_scale);

// Starts the endpoint on `options.port`, prints "http: <url> ..." and writes
// <run_dir>/endpoint.json (url, host, port, stop_token; nothing when run_dir is empty). An error:
// the port could not be had.
Result<std::unique_ptr<http::HttpServer>> StartServeEndpoint(const ServeHttpOptions& options,
                                                             ServeNode& node,
                                                             const std::string& host,
                                                             const std::string& run_dir);

// SIGUSR1 (what launch/mooncake-mpirun turns a TERM or INT into, as mpirun passes it on to every
// rank and leaves the rest to them), and SIGTERM / SIGINT sent to the conductor itself, stop the
// serving as `mooncake serve stop` does. The other ranks ignore SIGUSR1: the conductor stops
// them in order. Process-wide: call once, before the signals may come.
void InstallServeStopSignals(bool conductor);

// Turns a stop signal into the conductor's stop (a signal handler may only set the flag): a
// thread polls the flag every 100 ms while the watch lives. `conductor` must outlive it.
class StopSignalWatch {
 public:
  explicit StopSignalWatch(ConductorRole& conductor);
  ~StopSignalWatch();
  StopSignalWatch(const StopSignalWatch&) = delete;
  StopSignalWatch& operator=(const StopSignalWatch&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace mooncake::serve
