#include "cluster/cluster_options.h"

#include "common/cli/option_table.h"
#include "common/cli/option_values.h"

namespace mooncake::cluster {

namespace po = boost::program_options;

po::options_description ClusterOptionsDescription(RawClusterOptions* raw) {
  po::options_description d("Cluster");
  cli::AddOptionRows(
      d, {{"roles", cli::Named(&raw->roles, "LAYOUT"),
           "role layout: counts 'conductor:1 store:1 prefill:1 decode:1' (in rank order) "
           "or a per-rank list 'conductor,store,prefill,decode'. Default: rank 0 "
           "conductor; of the other r ranks, max(1,r/4) store, max(1,(r-store)/2) decode, "
           "the rest prefill"}});
  return d;
}

void AddFailureDetectionOptions(po::options_description& d, RawClusterOptions* raw) {
  cli::AddOptionRows(
      d, {{"cluster.heartbeat_interval", cli::Text(&raw->heartbeat_interval, "100ms"),
           "wall time between a rank's heartbeats to the conductor (10ms..10s)"},
          {"cluster.failure_timeout", cli::Text(&raw->failure_timeout, "1s"),
           "a rank not heard from for this long is declared dead and fenced (100ms..10min; the "
           "store service's default is 10s)"}});
}

Status ConvertClusterOptions(const RawClusterOptions& raw, ClusterOptions* out) {
  out->roles = raw.roles;
  MC_RETURN_IF_ERROR(cli::DurationOption("cluster.heartbeat_interval", raw.heartbeat_interval,
                                         Nanos(10'000'000), Nanos(10'000'000'000),
                                         &out->heartbeat_interval));
  MC_RETURN_IF_ERROR(cli::DurationOption("cluster.failure_timeout", raw.failure_timeout,
                                         Nanos(100'000'000), Nanos(600'000'000'000),
                                         &out->failure_timeout));
  if (out->failure_timeout < 2 * out->heartbeat_interval) {
    return InvalidArgument(
        "cluster.failure_timeout must be at least twice "
        "cluster.heartbeat_interval");
  }
  return Status::Ok();
}

void AddFaultOptions(po::options_description& d, RawClusterOptions* raw) {
  cli::AddOptionRows(
      d,
      {{"fault.kill", cli::Named(&raw->fault_kill, "RANK@TIME"),
        "test hook: rank RANK kills itself (SIGKILL) TIME of wall time after the replay starts; "
        "RANK@mpi_init: just before MPI_Init, RANK@bootstrap: just before the bootstrap exchange"},
       {"fault.stop", cli::Named(&raw->fault_stop, "RANK@TIME"),
        "test hook: rank RANK stops itself (SIGSTOP) TIME of wall time after the replay starts"}});
}

Status ConvertFaultOptions(const RawClusterOptions& raw, FaultSpec* kill, FaultSpec* stop) {
  MC_RETURN_IF_ERROR(FaultSpecOption("fault.kill", raw.fault_kill, kill));
  return FaultSpecOption("fault.stop", raw.fault_stop, stop);
}

}  // namespace mooncake::cluster
