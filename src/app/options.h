// Command-line and INI options of the `mooncake` job. Every option has both forms
// (`--store.dram 2GiB` and `store.dram = 2GiB` or `[store] dram = 2GiB` in the file given by
// --config); the command line overrides the file. Values are validated here, before MPI starts:
// a bad one yields one line naming the option, the value and what is allowed, and exit status 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/engine_options.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/status.h"
#include "eval/scheduling_options.h"
#include "trace/synthetic.h"
#include "transport/factory/transport_factory.h"

namespace mooncake::app {

// What the ranks do: `serve` replays a trace (or the seeded synthetic workload) through the
// conductor, prefill, decode and store ranks; `check` is the bring-up check (all-pairs RPC
// RTTs, a verified one-sided put and get, orderly stop); `store` runs the store as a service
// that processes outside the job attach to (docs/CLIENT.md) until it is told to stop.
enum class JobMode { kServe, kCheck, kStore };

// fault.kill / fault.stop: rank `rank` signals itself `at` (wall time) after the replay starts;
// fault.kill can also strike during the bootstrap (docs/FAULTS.md), before MPI_Init or just
// before the bootstrap exchange.
enum class FaultPoint { kReplay, kBeforeMpiInit, kBootstrapExchange };
struct FaultSpec {
  int rank = -1;  // -1: no fault
  Nanos at{0};
  FaultPoint point = FaultPoint::kReplay;
};

struct JobOptions {
  JobMode mode = JobMode::kServe;
  std::string config_file;
  std::string out_dir;  // empty: runs/<UTC timestamp>
  bool dry_run = false;
  log::Level log_level = log::Level::kWarn;
  std::string roles;  // empty: the default rule (cluster/role_table.h)
  transport::TransportConfig transport;
  uint64_t store_dram = 64ull << 20;  // bytes registered by each store rank
  uint64_t block_size = 1ull << 20;   // bytes of the verified block of the default job
  Nanos rpc_timeout = Nanos(2'000'000'000);
  Nanos phase_timeout = Nanos(60'000'000'000);
  int ping_rounds = 20;
  int silent_rank = -1;  // test hook: this rank never answers pings

  // Serving (job.mode = serve). Scheduling keys are shared with `mooncake eval`.
  eval::SchedulingSettings sched;
  trace::SyntheticConfig synthetic;
  bool synthetic_given = false;             // a synthetic.* option was set (not only defaulted)
  double kv_scale = 1.0 / 8192;             // bytes moved = kv_scale x the model's real KV bytes
  int replicas = 1;                         // store replicas of each KV block
  uint64_t decode_buffer = 64ull << 20;     // KV receive buffer of each decode rank (bytes)
  uint64_t prefill_staging = 256ull << 20;  // KV staging a prefill rank holds at once (bytes)
  // SSD tier (store ranks). Files live in <ssd_dir>/rank<r>; empty ssd_dir: <run folder>/ssd.
  bool store_ssd = false;
  std::string store_ssd_dir;
  uint64_t store_ssd_capacity = 4ull << 30;  // bytes of HDF5 bucket files per store rank
  uint32_t store_promote_after = 2;          // SSD hits before a block returns to DRAM (0: never)
  bool store_recover = false;                // --store.recover DIR: ssd on over DIR, must exist
  // store.when_full: true (keep, a store) keeps an object in DRAM until its spill is durable and
  // never lets the SSD tier delete a bucket; false (evict, a KV cache) drops by LRU.
  bool store_keep_when_full = false;
  uint64_t store_spill_queue = 16ull << 20;  // per store rank: coordinator bound and tier queue
  Nanos job_deadline = Nanos(1'800'000'000'000);  // wall time after which requests are lost
  Nanos progress_interval = Nanos(5'000'000'000);
  bool plots = true;  // job.plots: the run folder's plots at the end (tools/plot_run.py)
  // Failures (serve).
  Nanos heartbeat_interval = Nanos(100'000'000);
  Nanos failure_timeout = Nanos(1'000'000'000);
  bool survive_rank_loss = true;
  std::string status_file;   // rank 0 writes the exit status here (empty: nowhere)
  std::string address_file;  // rank 0 writes the worker addresses here (empty: nowhere)
  double load_scale = 1.0;   // load.scale: arrival times divided by it (benchmarks/overload.sh)
  Nanos admission_margin = Nanos(25'000'000);  // conductor.admission_margin (wall time)
  double model_error = 1.0;  // engine.model_error: real compute / the cost model's prediction
  EngineOptions engine;      // engine.kind, engine.model, ... (app/engine_options.h)
  FaultSpec fault_kill, fault_stop;
  // Store service (job.mode = store).
  std::string store_listen = "0.0.0.0";       // IPv4 address the master and store ranks listen on
  uint16_t store_port = 0;                    // the master's port (0: any free one)
  std::string connect_file;                   // empty: <run folder>/connect.json
  Nanos store_lease = Nanos(10'000'000'000);  // a get or exists protects the object this long
  Nanos store_put_timeout = Nanos(30'000'000'000);  // a put not ended by then is revoked
  int metrics_port = -1;  // store.metrics_port: /metrics on rank 0 (-1: off, 0: any free port)
  int serve_http = -1;    // serve.http: the conductor's /metrics, /health, /v1/models (-1: off)
  Nanos serve_drain{60'000'000'000};  // serve.drain: requests in flight waited for once stopped
  Nanos serve_http_linger{0};  // serve.http_linger: the endpoint stays up this long after the end
  Nanos serve_http_idle{5'000'000'000};  // serve.http_idle: an idle connection is closed after it
};

// What main() should do after parsing.
struct ParseOutcome {
  std::optional<JobOptions> options;  // set when the job should run
  int exit_code = 0;                  // otherwise: exit with this (0 after --help/--version)
};

// The word options the main command and `mooncake p2p` share. A word outside the allowed ones
// is InvalidArgument naming the option and the allowed words.
Status ParseLogLevel(const std::string& word, log::Level* level);          // log-level
Status ParseDataPath(const std::string& word, transport::DataPath* path);  // transport.data_path

// Parses argv (argv[0] is the program). Prints --help / --version / errors itself.
ParseOutcome ParseJobOptions(int argc, char** argv);

}  // namespace mooncake::app
