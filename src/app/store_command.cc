#include "app/store_command.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "app/store_join.h"
#include "client/service_control.h"
#include "common/clock.h"
#include "common/units.h"
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
    "  (exit 0 stopped, 1 it did not stop in time or refused, 2 bad connection file)\n"
    "usage: mooncake store join CONNECT_FILE [options]   (options: mooncake store join --help)\n"
    "  this process becomes one more store rank of the running store job (run several under\n"
    "  their own mpirun or srun); exit 0 once the job stopped or drained it\n"
    "usage: mooncake store drain RANK CONNECT_FILE\n"
    "  moves every object of store rank RANK of the running store job to its other store ranks\n"
    "  and lets that rank leave (it exits 0); prints the progress; gives up after 30 min\n"
    "  (exit 0 drained, 1 refused (not enough free space) or not done in time, 2 not a store\n"
    "  rank, the last store rank, or a bad connection file)\n";

constexpr auto kDrainTimeout = std::chrono::minutes(30);

int Stop(const char* connect_file) {
  Status s = client::StopStoreService(connect_file, std::chrono::seconds(60));
  if (s.ok()) {
    std::cout << "mooncake store stop: the store job behind " << connect_file << " has stopped\n";
    return 0;
  }
  std::cerr << "mooncake store stop: " << s.ToString() << "\n";
  return s.code() == ErrorCode::kInvalidArgument ? 2 : 1;
}

bool IsHelp(const char* arg) {
  return std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0;
}

int Drain(const char* rank_text, const char* connect_file) {
  int rank = -1;
  const char* end = rank_text + std::strlen(rank_text);
  auto [at, ec] = std::from_chars(rank_text, end, rank);
  if (ec != std::errc() || at != end || rank < 0) {
    std::cerr << "mooncake store drain: RANK '" << rank_text
              << "' is not a rank number (the store rank to drain)\n";
    return 2;
  }
  SteadyClock clock;
  const Nanos start = clock.Now();
  Status s = client::DrainStoreRank(
      connect_file, rank, kDrainTimeout, std::chrono::milliseconds(200),
      [&](const store::DrainReply& r) {
        std::printf("mooncake store drain: rank %d holds %llu replica(s), %s; %llu copied (%s)\n",
                    rank, static_cast<unsigned long long>(r.dram_replicas),
                    FormatBytes(r.used_bytes).c_str(), static_cast<unsigned long long>(r.copied),
                    FormatSeconds(clock.Now() - start).c_str());
        std::fflush(stdout);
      });
  if (s.ok()) {
    std::printf("mooncake store drain: rank %d drained in %s and left the job\n", rank,
                FormatSeconds(clock.Now() - start).c_str());
    return 0;
  }
  std::cerr << "mooncake store drain: " << s.ToString() << "\n";
  return s.code() == ErrorCode::kInvalidArgument || s.code() == ErrorCode::kNotFound ? 2 : 1;
}

}  // namespace

int RunStoreCommand(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "join") == 0) return RunStoreJoin(argc - 1, argv + 1);
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << kUsage;
    return 0;
  }
  if (argc >= 3 &&
      (std::strcmp(argv[1], "inspect") == 0 || std::strcmp(argv[1], "stop") == 0 ||
       std::strcmp(argv[1], "drain") == 0) &&
      IsHelp(argv[2])) {
    std::cout << kUsage;
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "stop") == 0) return Stop(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "drain") == 0) return Drain(argv[2], argv[3]);
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
