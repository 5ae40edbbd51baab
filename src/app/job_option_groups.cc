#include "app/job_option_groups.h"

#include "common/cli/option_table.h"

namespace po = boost::program_options;

namespace mooncake::app {
namespace {

po::options_description General(RawJobOptions* raw) {
  po::options_description d("General");
  cli::AddOptionRows(
      d, {cli::HelpRow(),
          {"version", cli::Flag(), "print the version and exit"},
          cli::ConfigRow(&raw->config,
                         "INI file with any of the options below (e.g. configs/serve/small.ini); "
                         "the command line overrides it"),
          {"dry-run", po::bool_switch(&raw->dry_run),
           "print the role table (rank, role, host) and exit"},
          {"out", cli::Named(&raw->out, "DIR"),
           "run folder for summary.json and CSVs (default: runs/<yyyymmdd-hhmmss, UTC>)"},
          cli::LogLevelRow(&raw->log_level)});
  return d;
}

po::options_description Faults(RawJobOptions* raw) {
  po::options_description d("Failures (serve: a rank that dies or hangs mid-run)");
  cluster::AddFailureDetectionOptions(d, &raw->cluster);
  cli::AddOptionRows(
      d,
      {{"job.survive_rank_loss", cli::Text(&raw->survive, "on"),
        "on: the job goes on when a rank other than the conductor dies (launch with "
        "launch/mooncake-mpirun, or mpirun --mca orte_enable_recovery 1); off: fail-stop"},
       {"job.status_file", cli::Named(&raw->status_file, "FILE"),
        "rank 0 writes the job's exit status here (mpirun with orte_enable_recovery exits 0 "
        "whatever its ranks return; launch/mooncake-mpirun reads this file)"},
       {"job.address_file", cli::Named(&raw->address_file, "FILE"),
        "rank 0 writes every rank's UCX worker address here after the bootstrap (hex, a line per "
        "rank), for tools that attach to a running job; frames without the job token are "
        "refused"}});
  cluster::AddFaultOptions(d, &raw->cluster);
  return d;
}

po::options_description StoreAndJob(RawJobOptions* raw) {
  po::options_description d("Store and job");
  store::AddStoreDramOption(d, &raw->store);
  cli::AddOptionRows(d, {{"job.block_size", cli::Text(&raw->block_size, "1MiB"),
                          "size of the block the default job writes and verifies (1B..store.dram)"},
                         {"job.rpc_timeout", cli::Text(&raw->rpc_timeout, "2s"),
                          "deadline of every RPC (1ms..10min)"},
                         {"job.phase_timeout", cli::Text(&raw->phase_timeout, "60s"),
                          "deadline of each job phase and barrier (1s..24h)"},
                         {"job.ping_rounds", cli::Number(&raw->ping_rounds, 20),
                          "RPC pings per pair of ranks (1..100000)"},
                         {"job.silent_rank", cli::Number(&raw->silent_rank, -1),
                          "test hook: this rank never answers pings (-1: none)"}});
  store::AddStoreSsdOptions(d, &raw->store);
  return d;
}

po::options_description Serving(RawJobOptions* raw) {
  po::options_description d("Serving (job.mode = serve)");
  cli::AddOptionRows(d,
                     {{"job.mode", cli::Text(&raw->mode, "serve"),
                       "serve: replay the trace (or the synthetic workload) through the roles; "
                       "check: bring-up check (RPC RTTs, a verified one-sided put/get); store: the "
                       "store as a service for processes outside the job, until SIGTERM or "
                       "`mooncake store stop FILE`"}});
  serve::AddKvScaleOption(d, &raw->serve);
  store::AddStoreReplicasOption(d, &raw->store);
  serve::AddServingOptions(d, &raw->serve);
  return d;
}

}  // namespace

void AddJobOptionGroups(po::options_description& all, RawJobOptions* raw) {
  all.add(General(raw))
      .add(cluster::ClusterOptionsDescription(&raw->cluster))
      .add(transport::TransportOptionsDescription(&raw->transport))
      .add(StoreAndJob(raw))
      .add(Serving(raw))
      .add(store::StoreServiceOptionsDescription(&raw->store))
      .add(Faults(raw))
      .add(engine::EngineOptionsDescription(&raw->engine));
}

}  // namespace mooncake::app
