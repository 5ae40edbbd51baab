// The help's groups of the `mooncake` job, composed from each component's options (cluster,
// transport, store, serve, engine) and the job's own (job.*, fault.*), in the order --help lists
// them. RawJobOptions holds every option's text as Boost stored it; options.cc converts it.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "cluster/cluster_options.h"
#include "engine/engine_options.h"
#include "serve/serve_options.h"
#include "store/node/store_options.h"
#include "transport/factory/transport_options.h"

namespace mooncake::app {

struct RawJobOptions {
  std::string config, out, log_level, block_size, rpc_timeout, phase_timeout, mode;
  bool dry_run = false;
  int ping_rounds = 20;
  int silent_rank = -1;
  std::string survive, status_file, address_file;
  cluster::RawClusterOptions cluster;
  transport::RawTransportOptions transport;
  store::RawStoreOptions store;
  serve::RawServeOptions serve;
  engine::RawEngineOptions engine;
};

// Every group of the job's options but the scheduling and synthetic ones (src/eval), whose
// values Boost keeps in its variables_map.
void AddJobOptionGroups(boost::program_options::options_description& all, RawJobOptions* raw);

}  // namespace mooncake::app
