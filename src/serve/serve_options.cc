#include "serve/serve_options.h"

#include <fmt/format.h>

#include <cstdlib>

#include "common/cli/option_table.h"
#include "common/cli/option_values.h"

namespace mooncake::serve {
namespace {

namespace po = boost::program_options;
using cli::DurationOption;
using cli::SizeOption;

constexpr Nanos kHour(3'600'000'000'000);

// The HTTP endpoint (serve.*).
Status HttpOptions(const RawServeOptions& raw, ServeOptions* o) {
  MC_RETURN_IF_ERROR(cli::PortOption("serve.http", raw.http, &o->http));
  MC_RETURN_IF_ERROR(DurationOption("serve.drain", raw.drain, Nanos(0), kHour, &o->drain));
  MC_RETURN_IF_ERROR(
      DurationOption("serve.http_linger", raw.http_linger, Nanos(0), kHour, &o->http_linger));
  return DurationOption("serve.http_idle", raw.http_idle, Nanos(1'000'000'000), kHour,
                        &o->http_idle);
}

// Buffers and headroom of the serving roles (docs/RELIABILITY.md: their memory bounds).
Status ServingBudgets(const RawServeOptions& raw, ServeOptions* o) {
  char* end = nullptr;
  o->kv_scale = std::strtod(raw.kv_scale.c_str(), &end);
  if (end == raw.kv_scale.c_str() || *end != '\0' || !(o->kv_scale >= 1e-6 && o->kv_scale <= 1)) {
    return OutOfRange("kv_scale = '" + raw.kv_scale + "' (allowed: a number from 1e-6 to 1)");
  }
  MC_RETURN_IF_ERROR(
      SizeOption("decode.buffer", raw.decode_buffer, 1ull << 20, 1ull << 40, &o->decode_buffer));
  MC_RETURN_IF_ERROR(DurationOption("conductor.admission_margin", raw.admission_margin, Nanos(0),
                                    Nanos(10'000'000'000), &o->admission_margin));
  if (!(raw.model_error >= 0.1 && raw.model_error <= 10)) {
    return OutOfRange(fmt::format("engine.model_error = {} (allowed 0.1 to 10)", raw.model_error));
  }
  o->model_error = raw.model_error;
  return SizeOption("prefill.staging", raw.prefill_staging, 1ull << 20, 1ull << 40,
                    &o->prefill_staging);
}

}  // namespace

void AddKvScaleOption(po::options_description& d, RawServeOptions* raw) {
  cli::AddOptionRows(
      d, {{"kv_scale", cli::Text(&raw->kv_scale, "0.000122"),
           "bytes moved per KV block = kv_scale x the model's real block size (1e-6..1; "
           "also --kv_scale). Default 1/8192: a 160 MiB LLaMA3-70B block moves as 20 KiB"}});
}

void AddServingOptions(po::options_description& d, RawServeOptions* raw) {
  cli::AddOptionRows(
      d,
      {{"decode.buffer", cli::Text(&raw->decode_buffer, "64MiB"),
        "KV receive buffer registered by each decode rank (1MiB..1TiB)"},
       {"conductor.admission_margin", cli::Text(&raw->admission_margin, "25ms"),
        "wall time of the live job's own overhead on a TTFT (dispatch, clocks, wake-ups): "
        "admission keeps this headroom under slo.ttft (0ns..10s)"},
       {"engine.model_error", cli::Number(&raw->model_error, 1.0),
        "the live ranks' compute takes this factor times what the cost model (and so the "
        "conductor's prediction) says: 1.25 = 25 % slower than predicted (0.1..10; "
        "benchmarks/overload.sh --model-error)"},
       {"prefill.staging", cli::Text(&raw->prefill_staging, "256MiB"),
        "KV staging a prefill rank holds at once; it loads no further prefix above it "
        "(1MiB..1TiB)"},
       {"job.deadline", cli::Text(&raw->job_deadline, "30min"),
        "wall time after which unfinished requests are reported lost (1s..7d)"},
       {"job.progress_interval", cli::Text(&raw->progress_interval, "5s"),
        "wall time between progress lines on long runs (100ms..1h)"},
       {"job.plots", cli::Text(&raw->plots, "on"),
        "on: the conductor draws the run folder's plots at the end (tools/plot_run.py, needs "
        "/usr/bin/python3 with matplotlib); off"},
       {"serve.http", cli::Text(&raw->http, "off")->value_name("PORT"),
        "off, or a TCP port where the conductor serves POST /v1/completions (OpenAI-compatible, "
        "token-id prompts), GET /metrics (Prometheus), /health and /v1/models while the job runs "
        "(0: any free port; the address goes to <run folder>/endpoint.json). With no trace the "
        "job serves HTTP alone until `mooncake serve stop` or job.deadline (a synthetic.* option "
        "still asks for the synthetic workload)"},
       {"serve.drain", cli::Text(&raw->drain, "60s"),
        "once stopped, requests in flight are waited for this long (0s..1h)"},
       {"serve.http_linger", cli::Text(&raw->http_linger, "0s"),
        "the endpoint stays up this long after the summary is written, so that a scraper reads "
        "the final numbers (0s..1h)"},
       {"serve.http_idle", cli::Text(&raw->http_idle, "5s"),
        "an HTTP connection is closed when its next request has not come (or a read or write "
        "stalled) this long; each open connection holds a thread of the conductor (1s..1h)"}});
}

Status ConvertServeOptions(const RawServeOptions& raw, ServeOptions* out) {
  MC_RETURN_IF_ERROR(HttpOptions(raw, out));
  MC_RETURN_IF_ERROR(ServingBudgets(raw, out));
  MC_RETURN_IF_ERROR(DurationOption("job.deadline", raw.job_deadline, Nanos(1'000'000'000),
                                    Nanos(604'800'000'000'000), &out->job_deadline));
  MC_RETURN_IF_ERROR(DurationOption("job.progress_interval", raw.progress_interval,
                                    Nanos(100'000'000), kHour, &out->progress_interval));
  return cli::OnOffOption("job.plots", raw.plots, &out->plots);
}

}  // namespace mooncake::serve
