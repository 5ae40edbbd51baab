// The serving job's options (job.mode = serve): the scaled KV bytes, the roles' buffers and
// headroom, the job's deadline and progress lines, and the HTTP endpoint (serve.*). Errors name
// the option, the value and what is allowed. ServeConfigFrom (src/app) turns them into a
// ServeConfig.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake::serve {

struct ServeOptions {
  double kv_scale = 1.0 / 8192;                // bytes moved = kv_scale x the model's real KV bytes
  uint64_t decode_buffer = 64ull << 20;        // KV receive buffer of each decode rank (bytes)
  uint64_t prefill_staging = 256ull << 20;     // KV staging a prefill rank holds at once (bytes)
  Nanos admission_margin = Nanos(25'000'000);  // conductor.admission_margin (wall time)
  double model_error = 1.0;  // engine.model_error: real compute / the cost model's prediction
  Nanos job_deadline = Nanos(1'800'000'000'000);  // wall time after which requests are lost
  Nanos progress_interval = Nanos(5'000'000'000);
  bool plots = true;  // job.plots: the run folder's plots at the end (tools/plot_run.py)
  int http = -1;      // serve.http: the conductor's /metrics, /health, /v1/models (-1: off)
  Nanos drain{60'000'000'000};     // serve.drain: requests in flight waited for once stopped
  Nanos http_linger{0};            // serve.http_linger: the endpoint stays up this long after
  Nanos http_idle{5'000'000'000};  // serve.http_idle: an idle connection is closed after it
};

// The option strings as parsed, converted by ConvertServeOptions.
struct RawServeOptions {
  std::string kv_scale, decode_buffer, prefill_staging, admission_margin, job_deadline,
      progress_interval, plots, http, http_linger, drain, http_idle;
  double model_error = 1.0;
};

// Each adds its options to the caller's group "Serving (job.mode = serve)": kv_scale, then (after
// the store's replicas) the rest.
void AddKvScaleOption(boost::program_options::options_description& d, RawServeOptions* raw);
void AddServingOptions(boost::program_options::options_description& d, RawServeOptions* raw);

Status ConvertServeOptions(const RawServeOptions& raw, ServeOptions* out);

}  // namespace mooncake::serve
