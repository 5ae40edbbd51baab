// Command-line and INI options of the `mooncake` job. Every option has both forms
// (`--store.dram 2GiB` and `store.dram = 2GiB` or `[store] dram = 2GiB` in the file given by
// --config); the command line overrides the file. Values are validated here, before MPI starts:
// a bad one yields one line naming the option, the value and what is allowed, and exit status 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_options.h"
#include "cluster/fault_hooks.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/status.h"
#include "engine/engine_options.h"
#include "eval/scheduling_options.h"
#include "serve/serve_options.h"
#include "store/node/store_options.h"
#include "trace/synthetic.h"
#include "transport/factory/transport_factory.h"

namespace mooncake::app {

// What the ranks do: `serve` replays a trace (or the seeded synthetic workload) through the
// conductor, prefill, decode and store ranks; `check` is the bring-up check (all-pairs RPC
// RTTs, a verified one-sided put and get, orderly stop); `store` runs the store as a service
// that processes outside the job attach to (docs/CLIENT.md) until it is told to stop.
enum class JobMode { kServe, kCheck, kStore };

// The job's options, each component's own struct beside the job's (cluster.*, transport.*,
// store.*, the serving job's, engine.*): each component declares its option table and checks
// its values (cluster/cluster_options.h, transport/factory/transport_options.h,
// store/node/store_options.h, serve/serve_options.h, engine/engine_options.h); this file
// composes them into the help's groups and keeps the job's own (job.*, fault.*).
struct JobOptions {
  JobMode mode = JobMode::kServe;
  std::string config_file;
  std::string out_dir;  // empty: runs/<UTC timestamp>
  bool dry_run = false;
  log::Level log_level = log::Level::kWarn;
  cluster::ClusterOptions cluster;  // roles, heartbeats and the failure timeout
  transport::TransportConfig transport;
  store::StoreOptions store;     // DRAM, replicas, the SSD tier, the store service's listener
  serve::ServeOptions serve;     // the serving roles' budgets, deadline and HTTP endpoint
  engine::EngineOptions engine;  // engine.kind, engine.model, ...
  // The bring-up check (job.mode = check) and every job's deadlines.
  uint64_t block_size = 1ull << 20;  // bytes of the verified block of the default job
  Nanos rpc_timeout = Nanos(2'000'000'000);
  Nanos phase_timeout = Nanos(60'000'000'000);
  int ping_rounds = 20;
  int silent_rank = -1;  // test hook: this rank never answers pings

  // Serving (job.mode = serve). Scheduling keys are shared with `mooncake eval`.
  eval::SchedulingSettings sched;
  trace::SyntheticConfig synthetic;
  bool synthetic_given = false;  // a synthetic.* option was set (not only defaulted)
  double load_scale = 1.0;       // load.scale: arrival times divided by it (benchmarks/overload.sh)
  // Failures.
  bool survive_rank_loss = true;
  std::string status_file;   // rank 0 writes the exit status here (empty: nowhere)
  std::string address_file;  // rank 0 writes the worker addresses here (empty: nowhere)
  cluster::FaultSpec fault_kill, fault_stop;
};

// What main() should do after parsing.
struct ParseOutcome {
  std::optional<JobOptions> options;  // set when the job should run
  int exit_code = 0;                  // otherwise: exit with this (0 after --help/--version)
};

// Parses argv (argv[0] is the program). Prints --help / --version / errors itself.
ParseOutcome ParseJobOptions(int argc, char** argv);

}  // namespace mooncake::app
