// The cluster's options: the role layout (--roles, group "Cluster") and failure detection
// (cluster.heartbeat_interval, cluster.failure_timeout, added to the job's "Failures" group).
// Errors name the option.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "cluster/fault_hooks.h"
#include "common/clock.h"
#include "common/status.h"

namespace mooncake::cluster {

struct ClusterOptions {
  std::string roles;  // empty: the default rule (cluster/role_table.h)
  Nanos heartbeat_interval = Nanos(100'000'000);
  Nanos failure_timeout = Nanos(1'000'000'000);
};

// The store service's cluster.failure_timeout when none is given: a service runs for days on
// machines that also run other work, and a stall of a few seconds must not end it (measured: 1 s
// was missed under a load of 9 on 2 cores). The store job and `mooncake store join` share it.
inline constexpr Nanos kStoreServiceFailureTimeout = Nanos(10'000'000'000);

// The option strings as parsed, converted by ConvertClusterOptions (and ConvertFaultOptions).
struct RawClusterOptions {
  std::string roles, heartbeat_interval, failure_timeout;
  std::string fault_kill, fault_stop;
};

// Group "Cluster": --roles.
boost::program_options::options_description ClusterOptionsDescription(RawClusterOptions* raw);
// cluster.heartbeat_interval and cluster.failure_timeout, into the caller's group.
void AddFailureDetectionOptions(boost::program_options::options_description& d,
                                RawClusterOptions* raw);

Status ConvertClusterOptions(const RawClusterOptions& raw, ClusterOptions* out);

// The test hooks fault.kill and fault.stop (cluster/fault_hooks.h), into the caller's group.
void AddFaultOptions(boost::program_options::options_description& d, RawClusterOptions* raw);
Status ConvertFaultOptions(const RawClusterOptions& raw, FaultSpec* kill, FaultSpec* stop);

}  // namespace mooncake::cluster
