// Command-line and INI options of the `mooncake` job. Every option has both forms
// (`--store.dram 2GiB` and `store.dram = 2GiB` or `[store] dram = 2GiB` in the file given by
// --config); the command line overrides the file. Values are validated here, before MPI starts:
// a bad one yields one line naming the option, the value and what is allowed, and exit status 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "common/status.h"
#include "transport/transport_factory.h"

namespace mooncake::app {

struct JobOptions {
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
};

// What main() should do after parsing.
struct ParseOutcome {
  std::optional<JobOptions> options;  // set when the job should run
  int exit_code = 0;                  // otherwise: exit with this (0 after --help/--version)
};

// Parses argv (argv[0] is the program). Prints --help / --version / errors itself.
ParseOutcome ParseJobOptions(int argc, char** argv);

}  // namespace mooncake::app
