// Options of `mooncake p2p` (docs/P2P.md): every one has a command-line and an INI form
// (--config FILE), units are explicit, and a bad value is one line naming the option, exit 2,
// before any MPI work.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/status.h"
#include "p2p/command.h"
#include "transport/factory/transport_factory.h"

namespace mooncake::p2p {

struct P2pOptions {
  CommandConfig command;
  transport::TransportConfig transport;
  // "0", "0,3", or "readable" (the ranks that can read --source; resolved after MPI starts).
  std::string source_ranks = "0";
  bool sources_readable = false;
  log::Level log_level = log::Level::kWarn;
  std::string status_file;
};

struct P2pParse {
  std::optional<P2pOptions> options;  // set when the command should run
  int exit_code = 0;                  // otherwise: exit with this (0 after --help)
};

// argv[0] is "p2p". Prints --help and errors itself.
P2pParse ParseP2pOptions(int argc, char** argv);

// "0,3" -> {0, 3}; ranks must be distinct and below `world` (0: unknown yet).
Result<std::vector<int32_t>> ParseRankList(const std::string& text, int world);

}  // namespace mooncake::p2p
