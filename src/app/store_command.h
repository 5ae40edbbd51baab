// `mooncake store ...`: offline tools over the store's files.
//   mooncake store inspect FILE   lists an SSD bucket file's attributes and blocks and verifies
//                                 every checksum; exit 0 intact, 1 corruption, 2 not a bucket file
#pragma once

namespace mooncake::app {

// argv[0] is "store". Returns the process exit code (2 on a usage error).
int RunStoreCommand(int argc, char** argv);

}  // namespace mooncake::app
