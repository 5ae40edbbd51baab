#include "app/store_command.h"

#include <cstring>
#include <filesystem>
#include <iostream>

#include "store/hdf5/inspect.h"

namespace mooncake::app {

namespace {
constexpr const char* kUsage =
    "usage: mooncake store inspect FILE\n"
    "  lists an SSD bucket file's attributes and blocks and verifies every checksum\n"
    "  (exit 0 intact, 1 a block is corrupt or torn, 2 not a bucket file)\n";
}  // namespace

int RunStoreCommand(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << kUsage;
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "inspect") == 0 &&
      (std::strcmp(argv[2], "--help") == 0 || std::strcmp(argv[2], "-h") == 0)) {
    std::cout << kUsage;
    return 0;
  }
  if (argc != 3 || std::strcmp(argv[1], "inspect") != 0) {
    std::cerr << "mooncake: "
              << (argc >= 2 ? "unknown or incomplete store command" : "missing store command")
              << "\n"
              << kUsage;
    return 2;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(argv[2], ec)) {
    std::cerr << "mooncake store inspect: " << argv[2]
              << (std::filesystem::exists(argv[2], ec) ? ": not a regular file" : ": no such file")
              << "\n";
    return 2;
  }
  return store::hdf5::InspectFile(argv[2], std::cout);
}

}  // namespace mooncake::app
