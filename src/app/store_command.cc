#include "app/store_command.h"

#include <cstring>
#include <filesystem>
#include <iostream>

#include "client/service_control.h"
#include "store/hdf5/inspect.h"

namespace mooncake::app {

namespace {
constexpr const char* kUsage =
    "usage: mooncake store inspect FILE\n"
    "  lists an SSD bucket file's attributes and blocks and verifies every checksum\n"
    "  (exit 0 intact, 1 a block is corrupt or torn, 2 not a bucket file)\n"
    "usage: mooncake store stop CONNECT_FILE\n"
    "  asks the store service job (mpirun ... mooncake --job.mode store) behind its connection\n"
    "  file to stop in order, and waits up to 60 s until it has ended\n"
    "  (exit 0 stopped, 1 it did not stop in time or refused, 2 bad connection file)\n";

int Stop(const char* connect_file) {
  Status s = client::StopStoreService(connect_file, std::chrono::seconds(60));
  if (s.ok()) {
    std::cout << "mooncake store stop: the store job behind " << connect_file << " has stopped\n";
    return 0;
  }
  std::cerr << "mooncake store stop: " << s.ToString() << "\n";
  return s.code() == ErrorCode::kInvalidArgument ? 2 : 1;
}

}  // namespace

int RunStoreCommand(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << kUsage;
    return 0;
  }
  if (argc == 3 && (std::strcmp(argv[1], "inspect") == 0 || std::strcmp(argv[1], "stop") == 0) &&
      (std::strcmp(argv[2], "--help") == 0 || std::strcmp(argv[2], "-h") == 0)) {
    std::cout << kUsage;
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "stop") == 0) return Stop(argv[2]);
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
  return store::hdf5::InspectFile(argv[2], std::cout, std::cerr);
}

}  // namespace mooncake::app
