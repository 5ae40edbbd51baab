#include "app/job_option_groups.h"

namespace po = boost::program_options;

namespace mooncake::app {
namespace {

po::options_description General(RawJobOptions* raw) {
  po::options_description d("General");
  d.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
      "config", po::value<std::string>(&raw->config)->value_name("FILE"),
      "INI file with any of the options below (e.g. configs/serve/small.ini); the command line "
      "overrides it")("dry-run", po::bool_switch(&raw->dry_run),
                      "print the role table (rank, role, host) and exit")(
      "out", po::value<std::string>(&raw->out)->value_name("DIR"),
      "run folder for summary.json and CSVs (default: runs/<yyyymmdd-hhmmss, UTC>)")(
      "log-level", po::value<std::string>(&raw->log_level)->default_value("warn"),
      "debug | info | warn | error");
  return d;
}

po::options_description Faults(RawJobOptions* raw) {
  po::options_description d("Failures (serve: a rank that dies or hangs mid-run)");
  cluster::AddFailureDetectionOptions(d, &raw->cluster);
  d.add_options()(
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

po::options_description StoreAndJob(RawJobOptions* raw) {
  po::options_description d("Store and job");
  store::AddStoreDramOption(d, &raw->store);
  d.add_options()("job.block_size", po::value<std::string>(&raw->block_size)->default_value("1MiB"),
                  "size of the block the default job writes and verifies (1B..store.dram)")(
      "job.rpc_timeout", po::value<std::string>(&raw->rpc_timeout)->default_value("2s"),
      "deadline of every RPC (1ms..10min)")(
      "job.phase_timeout", po::value<std::string>(&raw->phase_timeout)->default_value("60s"),
      "deadline of each job phase and barrier (1s..24h)")(
      "job.ping_rounds", po::value<int>(&raw->ping_rounds)->default_value(20),
      "RPC pings per pair of ranks (1..100000)")(
      "job.silent_rank", po::value<int>(&raw->silent_rank)->default_value(-1),
      "test hook: this rank never answers pings (-1: none)");
  store::AddStoreSsdOptions(d, &raw->store);
  return d;
}

po::options_description Serving(RawJobOptions* raw) {
  po::options_description d("Serving (job.mode = serve)");
  d.add_options()("job.mode", po::value<std::string>(&raw->mode)->default_value("serve"),
                  "serve: replay the trace (or the synthetic workload) through the roles; "
                  "check: bring-up check (RPC RTTs, a verified one-sided put/get); store: the "
                  "store as a service for processes outside the job, until SIGTERM or "
                  "`mooncake store stop FILE`");
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
