#include "app/options.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/run.h"
#include "common/data_dir.h"
#include "common/units.h"
#include "eval/config_file.h"
#include "gpu/gpu.h"

namespace po = boost::program_options;

namespace mooncake::app {
namespace {

constexpr const char* kVersion = "mooncake 0.1.0";
constexpr double kLiveDefaultTimeScale = 10.0;
constexpr Nanos kStoreServiceFailureTimeout = std::chrono::seconds(10);

struct RawOptions {
  std::string out, log_level, roles, tls, devices, data_path, rma_slice, am_slice, store_dram,
      block_size, rpc_timeout, phase_timeout;
  bool busy_poll = false;
  bool dry_run = false;
  std::string mode, kv_scale, decode_buffer, prefill_staging, admission_margin, job_deadline,
      progress_interval, plots;
  std::string ssd, ssd_dir, ssd_capacity, recover, when_full, spill_queue;
  int promote_after = 2;
  int replicas = 1;
  double model_error = 1.0;
  int ping_rounds = 20;
  int silent_rank = -1;
  std::string heartbeat_interval, failure_timeout, survive, fault_kill, fault_stop, status_file,
      address_file;
  std::string listen, connect_file, lease, put_timeout, metrics_port, serve_http, serve_http_linger,
      serve_drain, serve_http_idle;
  int port = 0;
  RawEngineOptions engine;
};

po::options_description General(std::string* config, RawOptions* raw) {
  po::options_description d("General");
  d.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
      "config", po::value<std::string>(config)->value_name("FILE"),
      "INI file with any of the options below (e.g. configs/serve/small.ini); the command line "
      "overrides it")("dry-run", po::bool_switch(&raw->dry_run),
                      "print the role table (rank, role, host) and exit")(
      "out", po::value<std::string>(&raw->out)->value_name("DIR"),
      "run folder for summary.json and CSVs (default: runs/<yyyymmdd-hhmmss, UTC>)")(
      "log-level", po::value<std::string>(&raw->log_level)->default_value("warn"),
      "debug | info | warn | error");
  return d;
}

po::options_description Cluster(RawOptions* raw) {
  po::options_description d("Cluster");
  d.add_options()("roles", po::value<std::string>(&raw->roles)->value_name("LAYOUT"),
                  "role layout: counts 'conductor:1 store:1 prefill:1 decode:1' (in rank order) "
                  "or a per-rank list 'conductor,store,prefill,decode'. Default: rank 0 "
                  "conductor; of the other r ranks, max(1,r/4) store, max(1,(r-store)/2) decode, "
                  "the rest prefill");
  return d;
}

po::options_description Faults(RawOptions* raw) {
  po::options_description d("Failures (serve: a rank that dies or hangs mid-run)");
  d.add_options()("cluster.heartbeat_interval",
                  po::value<std::string>(&raw->heartbeat_interval)->default_value("100ms"),
                  "wall time between a rank's heartbeats to the conductor (10ms..10s)")(
      "cluster.failure_timeout", po::value<std::string>(&raw->failure_timeout)->default_value("1s"),
      "a rank not heard from for this long is declared dead and fenced (100ms..10min; the "
      "store service's default is 10s)")(
      "job.survive_rank_loss", po::value<std::string>(&raw->survive)->default_value("on"),
      "on: the job goes on when a rank other than the conductor dies (launch with "
      "launch/mooncake-mpirun, or mpirun --mca orte_enable_recovery 1); off: fail-stop")(
      "job.status_file", po::value<std::string>(&raw->status_file)->value_name("FILE"),
      "rank 0 writes the job's exit status here (mpirun with orte_enable_recovery exits 0 "
      "whatever its ranks return; launch/mooncake-mpirun reads this file)")(
      "job.address_file", po::value<std::string>(&raw->address_file)->value_name("FILE"),
      "rank 0 writes every rank's UCX worker address here after the bootstrap (hex, a line per "
      "rank), for tools that attach to a running job; frames without the job token are refused")(
      "fault.kill", po::value<std::string>(&raw->fault_kill)->value_name("RANK@TIME"),
      "test hook: rank RANK kills itself (SIGKILL) TIME of wall time after the replay starts; "
      "RANK@mpi_init: just before MPI_Init, RANK@bootstrap: just before the bootstrap exchange")(
      "fault.stop", po::value<std::string>(&raw->fault_stop)->value_name("RANK@TIME"),
      "test hook: rank RANK stops itself (SIGSTOP) TIME of wall time after the replay starts");
  return d;
}

po::options_description Transport(RawOptions* raw) {
  po::options_description d("Transport (UCX)");
  d.add_options()("transport.tls", po::value<std::string>(&raw->tls)->default_value("auto"),
                  "auto | shm | tcp | rdma | a raw UCX_TLS list (e.g. posix,cma,self)")(
      "transport.devices", po::value<std::string>(&raw->devices)->default_value(""),
      "raw UCX_NET_DEVICES (e.g. mlx5_0:1); empty lets UCX choose")(
      "transport.data_path", po::value<std::string>(&raw->data_path)->default_value("auto"),
      "auto | rma | am: how READ/WRITE bytes move (auto: AM rendezvous on tcp, RMA elsewhere)")(
      "transport.rma_slice", po::value<std::string>(&raw->rma_slice)->default_value("1MiB"),
      "slice size of RMA transfers (4KiB..1GiB; 1MiB measured best, docs/TRANSFER.md)")(
      "transport.am_slice", po::value<std::string>(&raw->am_slice)->default_value("4MiB"),
      "slice size of active-message transfers (4KiB..1GiB)")(
      "transport.busy_poll", po::bool_switch(&raw->busy_poll),
      "progress thread never sleeps (benchmarks on dedicated cores)");
  return d;
}

po::options_description StoreAndJob(RawOptions* raw) {
  po::options_description d("Store and job");
  d.add_options()("store.dram", po::value<std::string>(&raw->store_dram)->default_value("64MiB"),
                  "DRAM registered by each store rank (1MiB..1TiB)")(
      "job.block_size", po::value<std::string>(&raw->block_size)->default_value("1MiB"),
      "size of the block the default job writes and verifies (1B..store.dram)")(
      "job.rpc_timeout", po::value<std::string>(&raw->rpc_timeout)->default_value("2s"),
      "deadline of every RPC (1ms..10min)")(
      "job.phase_timeout", po::value<std::string>(&raw->phase_timeout)->default_value("60s"),
      "deadline of each job phase and barrier (1s..24h)")(
      "job.ping_rounds", po::value<int>(&raw->ping_rounds)->default_value(20),
      "RPC pings per pair of ranks (1..100000)")(
      "job.silent_rank", po::value<int>(&raw->silent_rank)->default_value(-1),
      "test hook: this rank never answers pings (-1: none)")(
      "store.ssd", po::value<std::string>(&raw->ssd)->default_value("off"),
      "on | off: spill blocks evicted from DRAM to HDF5 files of their store rank")(
      "store.ssd_dir", po::value<std::string>(&raw->ssd_dir)->value_name("DIR"),
      "folder of the SSD tier; each store rank uses DIR/rank<r> (default: <run folder>/ssd; "
      "a persistent folder is reused by --store.recover)")(
      "store.ssd_capacity", po::value<std::string>(&raw->ssd_capacity)->default_value("4GiB"),
      "HDF5 bucket files per store rank (64MiB..64TiB)")(
      "store.promote_after", po::value<int>(&raw->promote_after)->default_value(2),
      "gets served from SSD before a block is promoted back to DRAM (0 never, up to 1000000)")(
      "store.when_full", po::value<std::string>(&raw->when_full)->value_name("keep|evict"),
      "keep: an object leaves DRAM only once spilled to SSD and the SSD tier deletes nothing; "
      "puts get NoSpace when both are full (default in job.mode = store). evict: a KV cache, "
      "LRU drops from DRAM and SSD (default in job.mode = serve)")(
      "store.spill_queue", po::value<std::string>(&raw->spill_queue)->value_name("SIZE"),
      "bytes of evicted blocks waiting for the SSD tier, per store rank (1MiB..store.dram; "
      "default store.dram / 4)")(
      "store.recover", po::value<std::string>(&raw->recover)->value_name("DIR"),
      "restart over an existing SSD folder: store.ssd = on, store.ssd_dir = DIR; store ranks "
      "verify their files and report their blocks before requests are admitted");
  return d;
}

po::options_description StoreService(RawOptions* raw) {
  po::options_description d("Store service (job.mode = store, docs/CLIENT.md)");
  d.add_options()("store.listen", po::value<std::string>(&raw->listen)->default_value("0.0.0.0"),
                  "IPv4 address the master and the store ranks accept clients on (0.0.0.0: "
                  "every interface; the connection file lists them)")(
      "store.port", po::value<int>(&raw->port)->default_value(0),
      "TCP port of the master's listener (0: any free port; store ranks always take free ones)")(
      "store.connect_file", po::value<std::string>(&raw->connect_file)->value_name("FILE"),
      "where rank 0 writes the connection file, mode 0600 (default: <run folder>/connect.json)")(
      "store.lease", po::value<std::string>(&raw->lease)->default_value("10s"),
      "a get or exists keeps the object from eviction and removal this long (10ms..1h), as "
      "Mooncake Store's kv lease")(
      "store.put_timeout", po::value<std::string>(&raw->put_timeout)->default_value("30s"),
      "a put not ended within this (its writer died) is revoked and its space freed "
      "(100ms..1h)")(
      "store.metrics_port",
      po::value<std::string>(&raw->metrics_port)->default_value("off")->value_name("PORT"),
      "off, or a TCP port on store.listen where rank 0 serves /metrics in the Prometheus text "
      "format and /health (0: any free port; the address goes to <run folder>/metrics.json)");
  return d;
}

po::options_description Serving(RawOptions* raw) {
  po::options_description d("Serving (job.mode = serve)");
  d.add_options()("job.mode", po::value<std::string>(&raw->mode)->default_value("serve"),
                  "serve: replay the trace (or the synthetic workload) through the roles; "
                  "check: bring-up check (RPC RTTs, a verified one-sided put/get); store: the "
                  "store as a service for processes outside the job, until SIGTERM or "
                  "`mooncake store stop FILE`")(
      "kv_scale", po::value<std::string>(&raw->kv_scale)->default_value("0.000122"),
      "bytes moved per KV block = kv_scale x the model's real block size (1e-6..1; also "
      "--kv_scale). Default 1/8192: a 160 MiB LLaMA3-70B block moves as 20 KiB")(
      "store.replicas", po::value<int>(&raw->replicas)->default_value(1),
      "replicas of each KV block, on distinct store ranks (1..store ranks)")(
      "decode.buffer", po::value<std::string>(&raw->decode_buffer)->default_value("64MiB"),
      "KV receive buffer registered by each decode rank (1MiB..1TiB)")(
      "conductor.admission_margin",
      po::value<std::string>(&raw->admission_margin)->default_value("25ms"),
      "wall time of the live job's own overhead on a TTFT (dispatch, clocks, wake-ups): "
      "admission keeps this headroom under slo.ttft (0ns..10s)")(
      "engine.model_error", po::value<double>(&raw->model_error)->default_value(1.0),
      "the live ranks' compute takes this factor times what the cost model (and so the "
      "conductor's prediction) says: 1.25 = 25 % slower than predicted (0.1..10; "
      "benchmarks/overload.sh --model-error)")(
      "prefill.staging", po::value<std::string>(&raw->prefill_staging)->default_value("256MiB"),
      "KV staging a prefill rank holds at once; it loads no further prefix above it (1MiB..1TiB)")(
      "job.deadline", po::value<std::string>(&raw->job_deadline)->default_value("30min"),
      "wall time after which unfinished requests are reported lost (1s..7d)")(
      "job.progress_interval", po::value<std::string>(&raw->progress_interval)->default_value("5s"),
      "wall time between progress lines on long runs (100ms..1h)")(
      "job.plots", po::value<std::string>(&raw->plots)->default_value("on"),
      "on: the conductor draws the run folder's plots at the end (tools/plot_run.py, needs "
      "/usr/bin/python3 with matplotlib); off")(
      "serve.http",
      po::value<std::string>(&raw->serve_http)->default_value("off")->value_name("PORT"),
      "off, or a TCP port where the conductor serves POST /v1/completions (OpenAI-compatible, "
      "token-id prompts), GET /metrics (Prometheus), /health and /v1/models while the job runs "
      "(0: any free port; the address goes to <run folder>/endpoint.json). With no trace the "
      "job serves HTTP alone until `mooncake serve stop` or job.deadline (a synthetic.* option "
      "still asks for the synthetic workload)")(
      "serve.drain", po::value<std::string>(&raw->serve_drain)->default_value("60s"),
      "once stopped, requests in flight are waited for this long (0s..1h)")(
      "serve.http_linger", po::value<std::string>(&raw->serve_http_linger)->default_value("0s"),
      "the endpoint stays up this long after the summary is written, so that a scraper reads "
      "the final numbers (0s..1h)")(
      "serve.http_idle", po::value<std::string>(&raw->serve_http_idle)->default_value("5s"),
      "an HTTP connection is closed when its next request has not come (or a read or write "
      "stalled) this long; each open connection holds a thread of the conductor (1s..1h)");
  return d;
}

// One line naming the option, the value and what is allowed; exit status 2. Under a launcher
// every rank parses the same arguments: only rank 0 says so.
int UsageError(const std::string& message) {
  if (LauncherRank() <= 0) std::cerr << "mooncake: " << message << " (see mooncake --help)\n";
  return 2;
}

Status SizeOption(const char* name, const std::string& value, uint64_t lo, uint64_t hi,
                  uint64_t* out) {
  auto bytes = ParseBytes(value);
  if (!bytes.ok()) {
    return InvalidArgument(std::string(name) + " = '" + value + "': " + bytes.status().message());
  }
  if (*bytes < lo || *bytes > hi) {
    return OutOfRange(std::string(name) + " = '" + value + "' is out of range (allowed " +
                      FormatBytes(lo) + " to " + FormatBytes(hi) + ")");
  }
  *out = *bytes;
  return Status::Ok();
}

Status DurationOption(const char* name, const std::string& value, Nanos lo, Nanos hi, Nanos* out) {
  auto d = ParseDuration(value);
  if (!d.ok()) {
    return InvalidArgument(std::string(name) + " = '" + value + "': " + d.status().message());
  }
  if (*d < lo || *d > hi) {
    return OutOfRange(std::string(name) + " = '" + value + "' is out of range (allowed " +
                      FormatDuration(lo) + " to " + FormatDuration(hi) + ")");
  }
  *out = *d;
  return Status::Ok();
}

Status SsdOptions(const RawOptions& raw, JobOptions* o) {
  if (raw.ssd == "on") {
    o->store_ssd = true;
  } else if (raw.ssd != "off") {
    return InvalidArgument("store.ssd = '" + raw.ssd + "' (allowed: on, off)");
  }
  MC_RETURN_IF_ERROR(SizeOption("store.ssd_capacity", raw.ssd_capacity, 64ull << 20, 64ull << 40,
                                &o->store_ssd_capacity));
  if (raw.promote_after < 0 || raw.promote_after > 1000000) {
    return OutOfRange("store.promote_after = " + std::to_string(raw.promote_after) +
                      " (allowed 0 to 1000000)");
  }
  o->store_promote_after = static_cast<uint32_t>(raw.promote_after);
  if (raw.when_full.empty()) {
    o->store_keep_when_full = o->mode == JobMode::kStore;
  } else if (raw.when_full == "keep" || raw.when_full == "evict") {
    o->store_keep_when_full = raw.when_full == "keep";
  } else {
    return InvalidArgument("store.when_full = '" + raw.when_full + "' (allowed: keep, evict)");
  }
  o->store_spill_queue = std::max<uint64_t>(o->store_dram / 4, 1ull << 20);
  if (!raw.spill_queue.empty()) {
    MC_RETURN_IF_ERROR(SizeOption("store.spill_queue", raw.spill_queue, 1ull << 20,
                                  std::max<uint64_t>(o->store_dram, 1ull << 20),
                                  &o->store_spill_queue));
  }
  o->store_ssd_dir = raw.ssd_dir;
  if (!raw.recover.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(raw.recover, ec)) {
      return InvalidArgument("store.recover = '" + raw.recover + "': not an existing folder");
    }
    // The folder holds rank<r>/ subfolders (an SSD folder); a run folder holds them under ssd/.
    bool has_ranks = false;
    for (const auto& e : std::filesystem::directory_iterator(raw.recover, ec)) {
      has_ranks |= e.is_directory() && e.path().filename().string().rfind("rank", 0) == 0;
    }
    if (!has_ranks) {
      const bool run_folder = std::filesystem::is_directory(raw.recover + "/ssd", ec);
      return InvalidArgument(
          "store.recover = '" + raw.recover + "': no rank<r>/ folders of SSD buckets there" +
          (run_folder ? " (a run folder: its SSD folder is '" + raw.recover + "/ssd')" : ""));
    }
    if (!raw.ssd_dir.empty() && raw.ssd_dir != raw.recover) {
      return InvalidArgument("store.recover = '" + raw.recover + "' and store.ssd_dir = '" +
                             raw.ssd_dir + "' name different folders");
    }
    o->store_ssd = true;
    o->store_recover = true;
    o->store_ssd_dir = raw.recover;
  }
  return Status::Ok();
}

// "RANK@TIME", e.g. "2@8s": rank 2, 8 s after the replay starts; fault.kill also takes
// "RANK@mpi_init" and "RANK@bootstrap".
Status FaultSpecOption(const char* name, const std::string& value, FaultSpec* out) {
  if (value.empty()) return Status::Ok();
  const size_t at = value.find('@');
  char* end = nullptr;
  const long rank = at == std::string::npos ? -1 : std::strtol(value.c_str(), &end, 10);
  if (at == std::string::npos || end != value.c_str() + at || rank < 1 || rank > 1000000) {
    return InvalidArgument(std::string(name) + " = '" + value +
                           "' (allowed: RANK@TIME with RANK >= 1, e.g. 2@8s; the conductor, "
                           "rank 0, cannot be the target)");
  }
  out->rank = static_cast<int>(rank);
  const std::string when = value.substr(at + 1);
  if (std::string(name) == "fault.kill" && (when == "mpi_init" || when == "bootstrap")) {
    out->point = when == "mpi_init" ? FaultPoint::kBeforeMpiInit : FaultPoint::kBootstrapExchange;
    return Status::Ok();
  }
  return DurationOption(name, when, Nanos(0), Nanos(86'400'000'000'000), &out->at);
}

Status FailureOptions(const RawOptions& raw, JobOptions* o) {
  MC_RETURN_IF_ERROR(DurationOption("cluster.heartbeat_interval", raw.heartbeat_interval,
                                    Nanos(10'000'000), Nanos(10'000'000'000),
                                    &o->heartbeat_interval));
  MC_RETURN_IF_ERROR(DurationOption("cluster.failure_timeout", raw.failure_timeout,
                                    Nanos(100'000'000), Nanos(600'000'000'000),
                                    &o->failure_timeout));
  if (o->failure_timeout < 2 * o->heartbeat_interval) {
    return InvalidArgument(
        "cluster.failure_timeout must be at least twice "
        "cluster.heartbeat_interval");
  }
  if (raw.survive != "on" && raw.survive != "off") {
    return InvalidArgument("job.survive_rank_loss = '" + raw.survive + "' (allowed: on, off)");
  }
  o->survive_rank_loss = raw.survive == "on";
  o->status_file = raw.status_file;
  o->address_file = raw.address_file;
  MC_RETURN_IF_ERROR(FaultSpecOption("fault.kill", raw.fault_kill, &o->fault_kill));
  return FaultSpecOption("fault.stop", raw.fault_stop, &o->fault_stop);
}

// Replicas, buffers and headroom of the serving roles (docs/RELIABILITY.md: their memory bounds).
Status ServingBudgets(const RawOptions& raw, JobOptions* o) {
  if (raw.replicas < 1 || raw.replicas > 64) {
    return OutOfRange("store.replicas = " + std::to_string(raw.replicas) + " (allowed 1 to 64)");
  }
  o->replicas = raw.replicas;
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

// "off" (-1) or a TCP port 0..65535 (0: any free one).
Status PortOption(const char* name, const std::string& value, int* out) {
  if (value == "off") {
    *out = -1;
    return Status::Ok();
  }
  char* end = nullptr;
  const long port = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || port < 0 || port > 65535) {
    return InvalidArgument(std::string(name) + " = '" + value +
                           "' (allowed: off, or a port 0 to 65535)");
  }
  *out = static_cast<int>(port);
  return Status::Ok();
}

Status StoreServiceOptions(const RawOptions& raw, JobOptions* o) {
  in_addr parsed{};
  if (inet_pton(AF_INET, raw.listen.c_str(), &parsed) != 1) {
    return InvalidArgument("store.listen = '" + raw.listen + "' (allowed: an IPv4 address)");
  }
  if (raw.port < 0 || raw.port > 65535) {
    return OutOfRange("store.port = " + std::to_string(raw.port) + " (allowed 0 to 65535)");
  }
  o->store_listen = raw.listen;
  o->store_port = static_cast<uint16_t>(raw.port);
  o->connect_file = raw.connect_file;
  MC_RETURN_IF_ERROR(PortOption("store.metrics_port", raw.metrics_port, &o->metrics_port));
  MC_RETURN_IF_ERROR(PortOption("serve.http", raw.serve_http, &o->serve_http));
  MC_RETURN_IF_ERROR(DurationOption("serve.drain", raw.serve_drain, Nanos(0),
                                    Nanos(3'600'000'000'000), &o->serve_drain));
  MC_RETURN_IF_ERROR(DurationOption("serve.http_linger", raw.serve_http_linger, Nanos(0),
                                    Nanos(3'600'000'000'000), &o->serve_http_linger));
  MC_RETURN_IF_ERROR(DurationOption("serve.http_idle", raw.serve_http_idle, Nanos(1'000'000'000),
                                    Nanos(3'600'000'000'000), &o->serve_http_idle));
  MC_RETURN_IF_ERROR(DurationOption("store.lease", raw.lease, Nanos(10'000'000),
                                    Nanos(3'600'000'000'000), &o->store_lease));
  return DurationOption("store.put_timeout", raw.put_timeout, Nanos(100'000'000),
                        Nanos(3'600'000'000'000), &o->store_put_timeout);
}

}  // namespace

Status ParseLogLevel(const std::string& word, log::Level* level) {
  static const std::pair<const char*, log::Level> kLevels[] = {{"debug", log::Level::kDebug},
                                                               {"info", log::Level::kInfo},
                                                               {"warn", log::Level::kWarn},
                                                               {"error", log::Level::kError}};
  for (const auto& [name, value] : kLevels) {
    if (word == name) {
      *level = value;
      return Status::Ok();
    }
  }
  return InvalidArgument("log-level = '" + word + "' (allowed: debug, info, warn, error)");
}

Status ParseDataPath(const std::string& word, transport::DataPath* path) {
  if (word == "auto") {
    *path = transport::DataPath::kAuto;
  } else if (word == "rma") {
    *path = transport::DataPath::kRma;
  } else if (word == "am") {
    *path = transport::DataPath::kActiveMessage;
  } else {
    return InvalidArgument("transport.data_path = '" + word + "' (allowed: auto, rma, am)");
  }
  return Status::Ok();
}

namespace {

Status Convert(const RawOptions& raw, JobOptions* o) {
  o->out_dir = raw.out;
  o->roles = raw.roles;
  MC_RETURN_IF_ERROR(ParseLogLevel(raw.log_level, &o->log_level));
  auto& ucx = o->transport.ucx;
  ucx.tls = raw.tls;
  ucx.devices = raw.devices;
  ucx.busy_poll = raw.busy_poll;
  MC_RETURN_IF_ERROR(ParseDataPath(raw.data_path, &ucx.data_path));
  if (raw.tls.empty())
    return InvalidArgument("transport.tls = '' (allowed: auto, shm, tcp, rdma or a UCX_TLS list)");
  uint64_t v = 0;
  MC_RETURN_IF_ERROR(SizeOption("transport.rma_slice", raw.rma_slice, 4096, 1ull << 30, &v));
  ucx.rma_slice = v;
  MC_RETURN_IF_ERROR(SizeOption("transport.am_slice", raw.am_slice, 4096, 1ull << 30, &v));
  ucx.am_slice = v;
  MC_RETURN_IF_ERROR(
      SizeOption("store.dram", raw.store_dram, 1ull << 20, 1ull << 40, &o->store_dram));
  MC_RETURN_IF_ERROR(
      SizeOption("job.block_size", raw.block_size, 1, o->store_dram, &o->block_size));
  MC_RETURN_IF_ERROR(DurationOption("job.rpc_timeout", raw.rpc_timeout, Nanos(1'000'000),
                                    Nanos(600'000'000'000), &o->rpc_timeout));
  MC_RETURN_IF_ERROR(DurationOption("job.phase_timeout", raw.phase_timeout, Nanos(1'000'000'000),
                                    Nanos(86'400'000'000'000), &o->phase_timeout));
  if (raw.ping_rounds < 1 || raw.ping_rounds > 100000) {
    return OutOfRange("job.ping_rounds = " + std::to_string(raw.ping_rounds) +
                      " is out of range (allowed 1 to 100000)");
  }
  o->ping_rounds = raw.ping_rounds;
  o->silent_rank = raw.silent_rank;
  if (raw.mode == "serve") {
    o->mode = JobMode::kServe;
  } else if (raw.mode == "check") {
    o->mode = JobMode::kCheck;
  } else if (raw.mode == "store") {
    o->mode = JobMode::kStore;
  } else {
    return InvalidArgument("job.mode = '" + raw.mode + "' (allowed: serve, check, store)");
  }
  MC_RETURN_IF_ERROR(StoreServiceOptions(raw, o));
  char* end = nullptr;
  o->kv_scale = std::strtod(raw.kv_scale.c_str(), &end);
  if (end == raw.kv_scale.c_str() || *end != '\0' || !(o->kv_scale >= 1e-6 && o->kv_scale <= 1)) {
    return OutOfRange("kv_scale = '" + raw.kv_scale + "' (allowed: a number from 1e-6 to 1)");
  }
  MC_RETURN_IF_ERROR(ServingBudgets(raw, o));
  MC_RETURN_IF_ERROR(SsdOptions(raw, o));
  MC_RETURN_IF_ERROR(FailureOptions(raw, o));
  MC_RETURN_IF_ERROR(DurationOption("job.deadline", raw.job_deadline, Nanos(1'000'000'000),
                                    Nanos(604'800'000'000'000), &o->job_deadline));
  MC_RETURN_IF_ERROR(DurationOption("job.progress_interval", raw.progress_interval,
                                    Nanos(100'000'000), Nanos(3'600'000'000'000),
                                    &o->progress_interval));
  if (raw.plots != "on" && raw.plots != "off") {
    return InvalidArgument("job.plots = '" + raw.plots + "' (allowed: on, off)");
  }
  o->plots = raw.plots == "on";
  return Status::Ok();
}

}  // namespace

namespace {

// Reads the command line, then the --config file beneath it, into `vm`. Handles --help and
// --version. Returns an exit code when main() should stop here (0 after help), -1 to go on.
int ReadArguments(int argc, char** argv, const po::options_description& all,
                  po::variables_map* vm) {
  try {
    std::vector<std::string> args =
        eval::CanonicalArgs(std::vector<std::string>(argv + 1, argv + argc));
    for (std::string& a : args) {
      if (a == "--kv-scale") a = "--kv_scale";
      if (a.rfind("--kv-scale=", 0) == 0) a = "--kv_scale" + a.substr(10);
    }
    po::store(eval::ParseCommandLine(args, all), *vm);
    if (vm->count("help")) {
      std::cout << all
                << "\nUnits: sizes take B, KiB, MiB, GiB, TiB (or KB, MB, GB); durations "
                   "take ns, us, ms, s, min, h.\n";
      return 0;
    }
    if (vm->count("version")) {
      std::cout << kVersion << "\n" << gpu::Describe(gpu::Probe()) << "\n";
      return 0;
    }
    if (vm->count("config")) eval::StoreConfigFile((*vm)["config"].as<std::string>(), all, *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    return UsageError(e.what());
  }
  return -1;
}

// The scheduling and synthetic-workload settings shared with `mooncake eval`.
Status ConvertShared(const po::variables_map& vm, JobOptions* opts) {
  auto sched = eval::SchedulingFromVariables(vm);
  if (!sched.ok()) return sched.status();
  opts->sched = *sched;
  // The live job replays in wall time; without --time_scale it runs 10x faster than the
  // modelled cluster, so the embedded default ends in seconds (eval keeps 1: it is virtual).
  if (vm["time_scale"].defaulted()) opts->sched.time_scale = kLiveDefaultTimeScale;
  auto synthetic = eval::SyntheticFromVariables(vm, opts->sched.seed);
  if (!synthetic.ok()) return synthetic.status();
  opts->synthetic = *synthetic;
  // An explicit synthetic.* option asks for the synthetic workload even beside serve.http.
  for (const auto& [name, value] : vm) {
    if (name.rfind("synthetic.", 0) == 0 && !value.defaulted()) opts->synthetic_given = true;
  }
  opts->load_scale = vm["load.scale"].as<double>();
  if (!(opts->load_scale > 0) || opts->load_scale > 1e6) {
    return InvalidArgument(fmt::format("load.scale = {}: allowed (0, 1e6]", opts->load_scale));
  }
  return Status::Ok();
}

}  // namespace

ParseOutcome ParseJobOptions(int argc, char** argv) {
  ParseOutcome outcome;
  JobOptions opts;
  RawOptions raw;
  po::options_description all(
      "Usage: mpirun -np N mooncake [options]   (N >= 4)\n"
      "       mpirun -np N mooncake --job.mode store [options]   (N >= 2: the store as a "
      "service)\n"
      "       mooncake store stop|inspect ...     (see mooncake store --help)\n"
      "       mooncake eval [options]            (trace evaluation, see "
      "mooncake eval --help)\n"
      "       mpirun -np N mooncake p2p --source PATH --dest DIR   (distribute files, see "
      "mooncake p2p --help)\n"
      "       mooncake generate --model DIR|PRESET ...   (the reference model's greedy output, "
      "see mooncake generate --help)\n"
      "       mooncake calibrate --model DIR|PRESET ...  (a hardware preset fitted to the "
      "reference model's measured times, see mooncake calibrate --help)\n\nOptions");
  all.add(General(&opts.config_file, &raw))
      .add(Cluster(&raw))
      .add(Transport(&raw))
      .add(StoreAndJob(&raw))
      .add(Serving(&raw))
      .add(StoreService(&raw))
      .add(Faults(&raw))
      .add(EngineOptionsDescription(&raw.engine));
  eval::AddSchedulingOptions(all, DataDir("configs"));
  po::options_description synthetic("Synthetic workload (serve, when no trace is given)");
  eval::AddSyntheticOptions(synthetic);
  all.add(synthetic);
  po::variables_map vm;
  if (int code = ReadArguments(argc, argv, all, &vm); code >= 0) {
    outcome.exit_code = code;
    return outcome;
  }
  opts.dry_run = raw.dry_run;
  Status s = Convert(raw, &opts);
  if (s.ok()) s = ConvertShared(vm, &opts);
  if (s.ok()) s = ConvertEngineOptions(raw.engine, opts.sched.time_scale, &opts.engine);
  if (s.ok() && opts.mode == JobMode::kStore && vm["cluster.failure_timeout"].defaulted()) {
    // A service runs for days on machines that also run other work: a stall of a few seconds
    // must not end it (measured: 1 s was missed under a load of 9 on 2 cores).
    opts.failure_timeout = kStoreServiceFailureTimeout;
  }
  if (!s.ok()) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    std::string where = eval::ConfigFileWhere(s.message(), args, opts.config_file);
    if (where.empty() && !opts.config_file.empty()) {
      where = " (command line or " + opts.config_file + ")";
    }
    outcome.exit_code = UsageError(s.message() + where);
    return outcome;
  }
  outcome.options = std::move(opts);
  return outcome;
}

}  // namespace mooncake::app
