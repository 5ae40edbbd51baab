// The cluster's options: the role layout (--roles, group "Cluster") and failure detection
// (cluster.heartbeat_interval, cluster.failure_timeout, added to the job's "Failures" group).
// Errors name the option.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake::cluster {

struct ClusterOptions {
  std::string roles;  // empty: the default rule (cluster/role_table.h)
  Nanos heartbeat_interval = Nanos(100'000'000);
  Nanos failure_timeout = Nanos(1'000'000'000);
};

// The option strings as parsed, converted by ConvertClusterOptions.
struct RawClusterOptions {
  std::string roles, heartbeat_interval, failure_timeout;
};

// Group "Cluster": --roles.
boost::program_options::options_description ClusterOptionsDescription(RawClusterOptions* raw);
// cluster.heartbeat_interval and cluster.failure_timeout, into the caller's group.
void AddFailureDetectionOptions(boost::program_options::options_description& d,
                                RawClusterOptions* raw);

Status ConvertClusterOptions(const RawClusterOptions& raw, ClusterOptions* out);

}  // namespace mooncake::cluster
